//go:build arm64 && !purego

#include "textflag.h"
#include "simd_arm64.h"

// Attention kernels. A score is scale * (q . k) with one accumulator of
// four lanes over the columns, fused multiply-adds 8 columns a step
// (columns 0..3, then 4..7), its lanes summed as (0+1)+(2+3); an output
// column is o*corr followed by o += p[j]*v_j for the keys in order (fused
// multiply-adds). The kernels for two heads and for one compute each value
// the same way, whether four keys go together or one; the two-head ones
// read each key and value once for both heads of a KV group. The F16
// kernels widen keys and values exactly (FCVTL, FCVTL2) and then compute
// as the float32 ones.

// SCORES is the body of the score kernels. Registers: R0 (R1) the first
// (second) head's scores, R2 (R7) its query, R3 the keys, R4 the key
// stride in bytes, R5 the number of keys, R6 hd, R19 1 for two heads and
// 0 for one, V31 the scale in every lane. LOADK loads 8 columns of a key
// (LOADF32, LOADF16).
#define SCORES(LOADK) \
keys4: \
	CMP   $4, R5; \
	BLT   keys1; \
	MOVD  R3, R8; \
	ADD   R4, R8, R9; \
	ADD   R4, R9, R10; \
	ADD   R4, R10, R11; \
	MOVD  R2, R12; \
	MOVD  R7, R13; \
	MOVD  R6, R14; \
	ZERO(0); \
	ZERO(1); \
	ZERO(2); \
	ZERO(3); \
	ZERO(4); \
	ZERO(5); \
	ZERO(6); \
	ZERO(7); \
cols4: \
	VLD1.P 32(R12), [V16.D2, V17.D2]; \
	LOADK(R8, V20, V21, 20, 21); \
	LOADK(R9, V22, V23, 22, 23); \
	LOADK(R10, V24, V25, 24, 25); \
	LOADK(R11, V26, V27, 26, 27); \
	FMLA4S(0, 16, 20); \
	FMLA4S(2, 16, 22); \
	FMLA4S(4, 16, 24); \
	FMLA4S(6, 16, 26); \
	FMLA4S(0, 17, 21); \
	FMLA4S(2, 17, 23); \
	FMLA4S(4, 17, 25); \
	FMLA4S(6, 17, 27); \
	CBZ    R19, cols4one; \
	VLD1.P 32(R13), [V18.D2, V19.D2]; \
	FMLA4S(1, 18, 20); \
	FMLA4S(3, 18, 22); \
	FMLA4S(5, 18, 24); \
	FMLA4S(7, 18, 26); \
	FMLA4S(1, 19, 21); \
	FMLA4S(3, 19, 23); \
	FMLA4S(5, 19, 25); \
	FMLA4S(7, 19, 27); \
cols4one: \
	SUBS  $8, R14; \
	BNE   cols4; \
	FADDP4S(8, 0, 2); \
	FADDP4S(9, 4, 6); \
	FADDP4S(8, 8, 9); \
	FMUL4S(8, 8, 31); \
	VST1.P [V8.D2], 16(R0); \
	CBZ   R19, next4; \
	FADDP4S(10, 1, 3); \
	FADDP4S(11, 5, 7); \
	FADDP4S(10, 10, 11); \
	FMUL4S(10, 10, 31); \
	VST1.P [V10.D2], 16(R1); \
next4: \
	ADD   R4<<2, R3; \
	SUB   $4, R5; \
	B     keys4; \
keys1: \
	CBZ   R5, done; \
	MOVD  R3, R8; \
	MOVD  R2, R12; \
	MOVD  R7, R13; \
	MOVD  R6, R14; \
	ZERO(0); \
	ZERO(1); \
cols1: \
	VLD1.P 32(R12), [V16.D2, V17.D2]; \
	LOADK(R8, V20, V21, 20, 21); \
	FMLA4S(0, 16, 20); \
	FMLA4S(0, 17, 21); \
	CBZ    R19, cols1one; \
	VLD1.P 32(R13), [V18.D2, V19.D2]; \
	FMLA4S(1, 18, 20); \
	FMLA4S(1, 19, 21); \
cols1one: \
	SUBS  $8, R14; \
	BNE   cols1; \
	FADDP4S(0, 0, 0); \
	FADDP4S(0, 0, 0); \
	FMUL4S(0, 0, 31); \
	FMOVS.P F0, 4(R0); \
	CBZ   R19, next1; \
	FADDP4S(1, 1, 1); \
	FADDP4S(1, 1, 1); \
	FMUL4S(1, 1, 31); \
	FMOVS.P F1, 4(R1); \
next1: \
	ADD   R4, R3; \
	SUB   $1, R5; \
	B     keys1; \
done: \
	RET

// SCORES2ARGS loads the arguments of the two-head score kernels.
#define SCORES2ARGS \
	MOVD  s+0(FP), R0; \
	MOVD  sstride+8(FP), R1; \
	ADD   R0, R1; \
	MOVD  q+16(FP), R2; \
	MOVD  k+24(FP), R3; \
	MOVD  kstride+32(FP), R4; \
	MOVD  nkeys+40(FP), R5; \
	MOVD  hd+48(FP), R6; \
	ADD   R6<<2, R2, R7; \
	MOVD  $1, R19; \
	FMOVS scale+56(FP), F31; \
	VDUP  V31.S[0], V31.S4

// SCORES1ARGS loads the arguments of the one-head score kernels.
#define SCORES1ARGS \
	MOVD  s+0(FP), R0; \
	MOVD  q+8(FP), R2; \
	MOVD  k+16(FP), R3; \
	MOVD  kstride+24(FP), R4; \
	MOVD  nkeys+32(FP), R5; \
	MOVD  hd+40(FP), R6; \
	MOVD  R2, R7; \
	MOVD  $0, R19; \
	FMOVS scale+48(FP), F31; \
	VDUP  V31.S[0], V31.S4

// LOADV32 and LOADV16 load 16 columns of a value at R10 as float32 to the
// four registers from V(a) (named va..vd), and move R10 on by R5 bytes.
#define LOADV32(va, vb, vc, vd, a) \
	VLD1 (R10), [va.D2, vb.D2, vc.D2, vd.D2]; \
	ADD  R5, R10

#define LOADV16(va, vb, vc, vd, a) \
	VLD1 (R10), [va.D2, vb.D2]; \
	ADD  R5, R10; \
	FCVTL24S(a+3, a+1); \
	FCVTL4S(a+2, a+1); \
	FCVTL24S(a+1, a); \
	FCVTL4S(a, a)

// AKEY adds p*v for one key: its 16 columns loaded by LOADV to V(a)..,
// its p for the first head in lane l of V20, for the second in lane l of
// V21 (when R19 is not 0), to V0..V3 and V4..V7.
#define AKEY(LOADV, va, vb, vc, vd, a, l, skip) \
	LOADV(va, vb, vc, vd, a); \
	FMLAEL4S(0, a, 20, l); \
	FMLAEL4S(1, a+1, 20, l); \
	FMLAEL4S(2, a+2, 20, l); \
	FMLAEL4S(3, a+3, 20, l); \
	CBZ R19, skip; \
	FMLAEL4S(4, a, 21, l); \
	FMLAEL4S(5, a+1, 21, l); \
	FMLAEL4S(6, a+2, 21, l); \
	FMLAEL4S(7, a+3, 21, l); \
skip:

// ACCUM is the body of the accumulation kernels. Registers: R0 (R19) the
// first (second) head's output, R2 (R20) its probabilities, R4 the
// values, R5 their stride in bytes, R6 the number of keys, R7 hd, R19 0
// for one head, V30 (V31) the first (second) head's correction in every
// lane; vstep the bytes of 16 columns of a value.
#define ACCUM(LOADV, vstep) \
cblock: \
	VLD1  (R0), [V0.D2, V1.D2, V2.D2, V3.D2]; \
	FMUL4S(0, 0, 30); \
	FMUL4S(1, 1, 30); \
	FMUL4S(2, 2, 30); \
	FMUL4S(3, 3, 30); \
	CBZ   R19, corrone; \
	VLD1  (R19), [V4.D2, V5.D2, V6.D2, V7.D2]; \
	FMUL4S(4, 4, 31); \
	FMUL4S(5, 5, 31); \
	FMUL4S(6, 6, 31); \
	FMUL4S(7, 7, 31); \
corrone: \
	MOVD  R2, R8; \
	MOVD  R20, R9; \
	MOVD  R4, R10; \
	MOVD  R6, R11; \
akeys4: \
	CMP   $4, R11; \
	BLT   akeys1; \
	VLD1.P 16(R8), [V20.D2]; \
	VLD1.P 16(R9), [V21.D2]; \
	AKEY(LOADV, V16, V17, V18, V19, 16, 0, ak0); \
	AKEY(LOADV, V22, V23, V24, V25, 22, 1, ak1); \
	AKEY(LOADV, V16, V17, V18, V19, 16, 2, ak2); \
	AKEY(LOADV, V22, V23, V24, V25, 22, 3, ak3); \
	SUB   $4, R11; \
	B     akeys4; \
akeys1: \
	CBZ   R11, astore; \
	FMOVS.P 4(R8), F20; \
	FMOVS.P 4(R9), F21; \
	AKEY(LOADV, V16, V17, V18, V19, 16, 0, ak4); \
	SUB   $1, R11; \
	B     akeys1; \
astore: \
	VST1.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R0); \
	CBZ   R19, storeone; \
	VST1.P [V4.D2, V5.D2, V6.D2, V7.D2], 64(R19); \
storeone: \
	ADD   $(vstep), R4; \
	SUBS  $16, R7; \
	BNE   cblock; \
	RET

// ACCUM2ARGS loads the arguments of the two-head accumulation kernels.
#define ACCUM2ARGS \
	MOVD  o+0(FP), R0; \
	MOVD  ostride+8(FP), R19; \
	ADD   R0, R19; \
	MOVD  p+16(FP), R2; \
	MOVD  pstride+24(FP), R20; \
	ADD   R2, R20; \
	MOVD  v+32(FP), R4; \
	MOVD  vstride+40(FP), R5; \
	MOVD  nkeys+48(FP), R6; \
	MOVD  hd+56(FP), R7; \
	FMOVS corr0+64(FP), F30; \
	VDUP  V30.S[0], V30.S4; \
	FMOVS corr1+68(FP), F31; \
	VDUP  V31.S[0], V31.S4

// ACCUM1ARGS loads the arguments of the one-head accumulation kernels.
#define ACCUM1ARGS \
	MOVD  o+0(FP), R0; \
	MOVD  $0, R19; \
	MOVD  p+8(FP), R2; \
	MOVD  R2, R20; \
	MOVD  v+16(FP), R4; \
	MOVD  vstride+24(FP), R5; \
	MOVD  nkeys+32(FP), R6; \
	MOVD  hd+40(FP), R7; \
	FMOVS corr+48(FP), F30; \
	VDUP  V30.S[0], V30.S4

// func attnScores2Asm(s *float32, sstride int, q *float32, k *float32, kstride, nkeys, hd int, scale float32)
//
// s[j] and s[sstride/4 + j] are the scores of key j (kstride bytes apart)
// for the heads q[:hd] and q[hd:2*hd]; hd is a multiple of 8.
TEXT ·attnScores2Asm(SB), NOSPLIT, $0-60
	SCORES2ARGS
	SCORES(LOADF32)

// func attnScores1Asm(s, q, k *float32, kstride, nkeys, hd int, scale float32)
//
// The scores of one head q[:hd]; see attnScores2Asm.
TEXT ·attnScores1Asm(SB), NOSPLIT, $0-52
	SCORES1ARGS
	SCORES(LOADF32)

// func attnScores2F16NEON(s *float32, sstride int, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)
//
// attnScores2Asm with half-precision keys.
TEXT ·attnScores2F16NEON(SB), NOSPLIT, $0-60
	SCORES2ARGS
	SCORES(LOADF16)

// func attnScores1F16NEON(s, q *float32, k *uint16, kstride, nkeys, hd int, scale float32)
//
// attnScores1Asm with half-precision keys.
TEXT ·attnScores1F16NEON(SB), NOSPLIT, $0-52
	SCORES1ARGS
	SCORES(LOADF16)

// func attnAccum2Asm(o *float32, ostride int, p *float32, pstride int, v *float32, vstride, nkeys, hd int, corr0, corr1 float32)
//
// For the two heads o[:hd] and o[ostride/4:][:hd] with probabilities p and
// p[pstride/4:]: o = o*corr + sum over j of p[j]*v_j, the nkeys values
// vstride bytes apart from v; hd is a multiple of 16.
TEXT ·attnAccum2Asm(SB), NOSPLIT, $0-72
	ACCUM2ARGS
	ACCUM(LOADV32, 64)

// func attnAccum1Asm(o, p, v *float32, vstride, nkeys, hd int, corr float32)
//
// attnAccum2Asm for one head.
TEXT ·attnAccum1Asm(SB), NOSPLIT, $0-52
	ACCUM1ARGS
	ACCUM(LOADV32, 64)

// func attnAccum2F16NEON(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)
//
// attnAccum2Asm with half-precision values.
TEXT ·attnAccum2F16NEON(SB), NOSPLIT, $0-72
	ACCUM2ARGS
	ACCUM(LOADV16, 32)

// func attnAccum1F16NEON(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)
//
// attnAccum1Asm with half-precision values.
TEXT ·attnAccum1F16NEON(SB), NOSPLIT, $0-52
	ACCUM1ARGS
	ACCUM(LOADV16, 32)
