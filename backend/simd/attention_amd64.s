//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Attention kernels. A score is scale * (q . k) with one accumulator of
// eight lanes over the columns, 8 at a time, its lanes summed as
// ((0+1)+(2+3))+((4+5)+(6+7)); an output column is o*corr followed by
// o += p[j]*v_j for the keys in order (fused multiply-adds). The kernels
// for two heads and for one compute each value the same way; the two-head
// ones read each key and value once for both heads of a KV group.

// HSUM4 leaves in ta, for each 128-bit half, the sums of that half's four
// lanes of a, b, c and d; tb is a temporary.
#define HSUM4(a, b, c, d, ta, tb) \
	VHADDPS b, a, ta; \
	VHADDPS d, c, tb; \
	VHADDPS tb, ta, ta

// SCORES4 stores at dst the scores of four keys from their accumulators
// a, b, c, d: HSUM4 into ta (tb a temporary; xa, xb their X forms), the
// two halves added and scaled by X15.
#define SCORES4(a, b, c, d, ta, tb, xa, xb, dst) \
	HSUM4(a, b, c, d, ta, tb); \
	VEXTRACTF128 $1, ta, xb; \
	VADDPS xb, xa, xa; \
	VMULPS X15, xa, xa; \
	VMOVUPS xa, dst

// SCORE1 stores at dst the score of one key from its accumulator a (x
// its X form), scaled by X15. It clobbers X2.
#define SCORE1(a, x, dst) \
	VHADDPS a, a, a; \
	VHADDPS a, a, a; \
	VEXTRACTF128 $1, a, X2; \
	VADDPS X2, x, x; \
	VMULSS X15, x, x; \
	VMOVSS x, dst

// S2STEP multiplies 8 columns of the two heads' queries (SI and R10, at
// qo(.)(BX*qs)) with the four keys at ko bytes on from R8, R8+DX, R8+2*DX
// and R9, loaded to float32 by LD, into Y0..Y7 (key k: Y2k first head,
// Y2k+1 second).
#define S2STEP(LD, qs, qo, ko) \
	VMOVUPS qo(SI)(BX*qs), Y8; \
	VMOVUPS qo(R10)(BX*qs), Y9; \
	LD ko(R8), Y10; \
	VFMADD231PS Y10, Y8, Y0; \
	VFMADD231PS Y10, Y9, Y1; \
	LD ko(R8)(DX*1), Y11; \
	VFMADD231PS Y11, Y8, Y2; \
	VFMADD231PS Y11, Y9, Y3; \
	LD ko(R8)(DX*2), Y12; \
	VFMADD231PS Y12, Y8, Y4; \
	VFMADD231PS Y12, Y9, Y5; \
	LD ko(R9), Y13; \
	VFMADD231PS Y13, Y8, Y6; \
	VFMADD231PS Y13, Y9, Y7

// OCORR4 loads four vectors of output columns at reg, times corr, into a,
// b, c, d; OSTORE4 stores them back.
#define OCORR4(reg, corr, a, b, c, d) \
	VMULPS (reg), corr, a; \
	VMULPS 32(reg), corr, b; \
	VMULPS 64(reg), corr, c; \
	VMULPS 96(reg), corr, d

#define OSTORE4(reg, a, b, c, d) \
	VMOVUPS a, (reg); \
	VMOVUPS b, 32(reg); \
	VMOVUPS c, 64(reg); \
	VMOVUPS d, 96(reg)

// A2STEP adds p[j]*v_j of the two heads (p[j] at (SI)(BX*4) and
// (R11)(BX*4)) to Y0..Y3 and Y4..Y7, the value's 32 columns at R9, w bytes
// a group of 8, loaded to float32 by LD.
#define A2STEP(LD, w) \
	VBROADCASTSS (SI)(BX*4), Y8; \
	VBROADCASTSS (R11)(BX*4), Y9; \
	LD (R9), Y10; \
	VFMADD231PS Y10, Y8, Y0; \
	VFMADD231PS Y10, Y9, Y4; \
	LD w(R9), Y11; \
	VFMADD231PS Y11, Y8, Y1; \
	VFMADD231PS Y11, Y9, Y5; \
	LD 2*w(R9), Y12; \
	VFMADD231PS Y12, Y8, Y2; \
	VFMADD231PS Y12, Y9, Y6; \
	LD 3*w(R9), Y13; \
	VFMADD231PS Y13, Y8, Y3; \
	VFMADD231PS Y13, Y9, Y7

// func attnScores2Asm(s *float32, sstride int, q *float32, k *float32, kstride, nkeys, hd int, scale float32)
//
// s[j] and s[sstride/4 + j] are the scores of key j (kstride bytes apart)
// for the heads q[:hd] and q[hd:2*hd]; hd is a multiple of 8.
TEXT ·attnScores2Asm(SB), NOSPLIT, $0-60
	MOVQ s+0(FP), DI
	MOVQ sstride+8(FP), R14
	MOVQ q+16(FP), SI
	MOVQ k+24(FP), R8
	MOVQ kstride+32(FP), DX
	MOVQ nkeys+40(FP), CX
	MOVQ hd+48(FP), R12
	SHLQ $2, R12
	LEAQ (SI)(R12*1), R10 // second head
	VBROADCASTSS scale+56(FP), Y15
	LEAQ (DX)(DX*2), R13

s2keys4:
	CMPQ CX, $4
	JB   s2keys1
	LEAQ (R8)(R13*1), R9
	LEAQ (R8)(DX*8), AX // the keys two groups ahead, prefetched
	XORQ BX, BX
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)
	CLEAR4(VXORPS, Y4, Y5, Y6, Y7)

s2cols4:
	S2STEP(VMOVUPS, 1, 0, 0)
	PREFETCHT0 (AX)
	PREFETCHT0 (AX)(DX*1)
	PREFETCHT0 (AX)(DX*2)
	PREFETCHT0 (AX)(R13*1)
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, BX
	CMPQ BX, R12
	JB   s2cols4
	SUBQ R12, R8
	SCORES4(Y0, Y2, Y4, Y6, Y8, Y9, X8, X9, (DI))
	SCORES4(Y1, Y3, Y5, Y7, Y10, Y11, X10, X11, (DI)(R14*1))
	ADDQ $16, DI
	LEAQ (R8)(DX*4), R8
	SUBQ $4, CX
	JMP  s2keys4

s2keys1:
	TESTQ CX, CX
	JZ    s2done
	XORQ BX, BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

s2cols1:
	VMOVUPS (R8)(BX*1), Y10
	VFMADD231PS (SI)(BX*1), Y10, Y0
	VFMADD231PS (R10)(BX*1), Y10, Y1
	ADDQ $32, BX
	CMPQ BX, R12
	JB   s2cols1
	SCORE1(Y0, X0, (DI))
	SCORE1(Y1, X1, (DI)(R14*1))
	ADDQ $4, DI
	ADDQ DX, R8
	DECQ CX
	JMP  s2keys1

s2done:
	VZEROUPPER
	RET

// func attnScores1Asm(s, q, k *float32, kstride, nkeys, hd int, scale float32)
//
// The scores of one head q[:hd]; see attnScores2Asm.
TEXT ·attnScores1Asm(SB), NOSPLIT, $0-52
	MOVQ s+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ kstride+24(FP), DX
	MOVQ nkeys+32(FP), CX
	MOVQ hd+40(FP), R12
	SHLQ $2, R12
	VBROADCASTSS scale+48(FP), Y15
	LEAQ (DX)(DX*2), R13

s1keys4:
	CMPQ CX, $4
	JB   s1keys1
	LEAQ (R8)(R13*1), R9
	LEAQ (R8)(DX*8), AX
	XORQ BX, BX
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)

s1cols4:
	VMOVUPS (SI)(BX*1), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R8)(DX*1), Y8, Y1
	VFMADD231PS (R8)(DX*2), Y8, Y2
	VFMADD231PS (R9), Y8, Y3
	PREFETCHT0 (AX)
	PREFETCHT0 (AX)(DX*1)
	PREFETCHT0 (AX)(DX*2)
	PREFETCHT0 (AX)(R13*1)
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, BX
	CMPQ BX, R12
	JB   s1cols4
	SUBQ R12, R8
	SCORES4(Y0, Y1, Y2, Y3, Y8, Y9, X8, X9, (DI))
	ADDQ $16, DI
	LEAQ (R8)(DX*4), R8
	SUBQ $4, CX
	JMP  s1keys4

s1keys1:
	TESTQ CX, CX
	JZ    s1done
	XORQ BX, BX
	VXORPS Y0, Y0, Y0

s1cols1:
	VMOVUPS (R8)(BX*1), Y10
	VFMADD231PS (SI)(BX*1), Y10, Y0
	ADDQ $32, BX
	CMPQ BX, R12
	JB   s1cols1
	SCORE1(Y0, X0, (DI))
	ADDQ $4, DI
	ADDQ DX, R8
	DECQ CX
	JMP  s1keys1

s1done:
	VZEROUPPER
	RET

// func attnAccum2Asm(o *float32, ostride int, p *float32, pstride int, v *float32, vstride, nkeys, hd int, corr0, corr1 float32)
//
// For the two heads (o, p, corr0) and (o + ostride bytes, p + pstride
// bytes, corr1): o = o*corr + sum over j of p[j]*v_j, for nkeys values
// vstride bytes apart; hd is a multiple of 32.
TEXT ·attnAccum2Asm(SB), NOSPLIT, $0-72
	MOVQ o+0(FP), DI
	MOVQ ostride+8(FP), R13
	ADDQ DI, R13
	MOVQ p+16(FP), SI
	MOVQ pstride+24(FP), R11
	ADDQ SI, R11
	MOVQ v+32(FP), R8
	MOVQ vstride+40(FP), DX
	MOVQ nkeys+48(FP), R12
	MOVQ hd+56(FP), AX
	VBROADCASTSS corr0+64(FP), Y14
	VBROADCASTSS corr1+68(FP), Y15

a2cols:
	OCORR4(DI, Y14, Y0, Y1, Y2, Y3)
	OCORR4(R13, Y15, Y4, Y5, Y6, Y7)
	MOVQ R8, R9
	XORQ BX, BX
	MOVQ R12, CX

a2keys:
	A2STEP(VMOVUPS, 32)
	PREFETCHT0 (R9)(DX*8) // the value eight keys ahead
	PREFETCHT0 64(R9)(DX*8)
	ADDQ DX, R9
	INCQ BX
	CMPQ BX, CX
	JB   a2keys

	OSTORE4(DI, Y0, Y1, Y2, Y3)
	OSTORE4(R13, Y4, Y5, Y6, Y7)
	ADDQ $128, DI
	ADDQ $128, R13
	ADDQ $128, R8
	SUBQ $32, AX
	JNZ  a2cols
	VZEROUPPER
	RET

// func attnAccum1Asm(o, p, v *float32, vstride, nkeys, hd int, corr float32)
//
// One head of attnAccum2Asm.
TEXT ·attnAccum1Asm(SB), NOSPLIT, $0-52
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ vstride+24(FP), DX
	MOVQ nkeys+32(FP), R12
	MOVQ hd+40(FP), AX
	VBROADCASTSS corr+48(FP), Y14

a1cols:
	OCORR4(DI, Y14, Y0, Y1, Y2, Y3)
	MOVQ R8, R9
	XORQ BX, BX

a1keys:
	VBROADCASTSS (SI)(BX*4), Y8
	VFMADD231PS (R9), Y8, Y0
	VFMADD231PS 32(R9), Y8, Y1
	VFMADD231PS 64(R9), Y8, Y2
	VFMADD231PS 96(R9), Y8, Y3
	PREFETCHT0 (R9)(DX*8)
	PREFETCHT0 64(R9)(DX*8)
	ADDQ DX, R9
	INCQ BX
	CMPQ BX, R12
	JB   a1keys

	OSTORE4(DI, Y0, Y1, Y2, Y3)
	ADDQ $128, DI
	ADDQ $128, R8
	SUBQ $32, AX
	JNZ  a1cols
	VZEROUPPER
	RET

// The F16 kernels below are the ones above for keys and values stored as
// half precision: each group of 8 is widened with VCVTPH2PS where the
// float32 kernels load it, and every other arithmetic instruction is the
// same, so the results are those of the float32 kernels on the widened
// values. Strides (kstride, vstride) are in bytes, as above.
//
// Half-precision keys and values take half the time to read, the same to
// multiply, so more of the time of a decode step's attention is memory
// latency that the arithmetic must hide. The score kernels prefetch, two
// groups of four keys ahead, both the keys and their values (which the
// accumulation reads next, without prefetching), one prefetch per 64-byte
// line where a key's size is a multiple of 64 bytes. This took 15-20%
// off a decode step's attention at position 4095 with Qwen3-0.6B's
// heads, against prefetching only the keys here and the values there.

// H2STEP multiplies 8 columns (q at byte qo, keys at byte ko on from R8)
// of the two heads (SI, R10) with the keys R8, R8+DX, R8+2*DX and R9.
#define H2STEP(qo, ko) S2STEP(VCVTPH2PS, 2, qo, ko)

// H1STEP is H2STEP for the one head SI.
#define H1STEP(qo, ko) \
	VMOVUPS qo(SI)(BX*2), Y8; \
	VCVTPH2PS ko(R8), Y10; \
	VFMADD231PS Y10, Y8, Y0; \
	VCVTPH2PS ko(R8)(DX*1), Y11; \
	VFMADD231PS Y11, Y8, Y1; \
	VCVTPH2PS ko(R8)(DX*2), Y12; \
	VFMADD231PS Y12, Y8, Y2; \
	VCVTPH2PS ko(R9), Y13; \
	VFMADD231PS Y13, Y8, Y3

// PREFETCH8 prefetches the line at AX of the four keys AX, AX+DX, AX+2*DX,
// AX+R13 and of their values, R11 bytes on.
#define PREFETCH8 \
	PREFETCHT0 (AX); \
	PREFETCHT0 (AX)(DX*1); \
	PREFETCHT0 (AX)(DX*2); \
	PREFETCHT0 (AX)(R13*1); \
	ADDQ R11, AX; \
	PREFETCHT0 (AX); \
	PREFETCHT0 (AX)(DX*1); \
	PREFETCHT0 (AX)(DX*2); \
	PREFETCHT0 (AX)(R13*1); \
	SUBQ R11, AX

// func attnScores2F16AVX2(s *float32, sstride int, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)
//
// The scores of attnScores2Asm for half-precision keys k; v is where the
// values of the keys are, to prefetch them.
TEXT ·attnScores2F16AVX2(SB), NOSPLIT, $0-68
	MOVQ s+0(FP), DI
	MOVQ sstride+8(FP), R14
	MOVQ q+16(FP), SI
	MOVQ k+24(FP), R8
	MOVQ v+32(FP), R11
	SUBQ R8, R11 // from a key to its value
	MOVQ kstride+40(FP), DX
	MOVQ nkeys+48(FP), CX
	MOVQ hd+56(FP), R12
	SHLQ $1, R12          // bytes of one key; the queries' are twice as many
	LEAQ (SI)(R12*2), R10 // second head
	VBROADCASTSS scale+64(FP), Y15
	LEAQ (DX)(DX*2), R13

h2keys4:
	CMPQ CX, $4
	JB   h2keys1
	LEAQ (R8)(R13*1), R9
	LEAQ (R8)(DX*8), AX // the keys two groups ahead, prefetched
	XORQ BX, BX
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)
	CLEAR4(VXORPS, Y4, Y5, Y6, Y7)
	TESTQ $63, R12
	JNZ   h2cols4

h2lines4: // a 64-byte line of each key per iteration
	H2STEP(0, 0)
	H2STEP(32, 16)
	H2STEP(64, 32)
	H2STEP(96, 48)
	PREFETCH8
	ADDQ $64, AX
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, BX
	CMPQ BX, R12
	JB   h2lines4
	JMP  h2sum4

h2cols4: // 8 columns per iteration
	H2STEP(0, 0)
	PREFETCH8
	ADDQ $16, AX
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $16, BX
	CMPQ BX, R12
	JB   h2cols4

h2sum4:
	SUBQ R12, R8
	SCORES4(Y0, Y2, Y4, Y6, Y8, Y9, X8, X9, (DI))
	SCORES4(Y1, Y3, Y5, Y7, Y10, Y11, X10, X11, (DI)(R14*1))
	ADDQ $16, DI
	LEAQ (R8)(DX*4), R8
	SUBQ $4, CX
	JMP  h2keys4

h2keys1:
	TESTQ CX, CX
	JZ    h2done
	XORQ BX, BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

h2cols1:
	VCVTPH2PS (R8)(BX*1), Y10
	VFMADD231PS (SI)(BX*2), Y10, Y0
	VFMADD231PS (R10)(BX*2), Y10, Y1
	ADDQ $16, BX
	CMPQ BX, R12
	JB   h2cols1
	SCORE1(Y0, X0, (DI))
	SCORE1(Y1, X1, (DI)(R14*1))
	ADDQ $4, DI
	ADDQ DX, R8
	DECQ CX
	JMP  h2keys1

h2done:
	VZEROUPPER
	RET

// func attnScores1F16AVX2(s, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)
//
// The scores of one head q[:hd]; see attnScores2F16AVX2.
TEXT ·attnScores1F16AVX2(SB), NOSPLIT, $0-60
	MOVQ s+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ v+24(FP), R11
	SUBQ R8, R11
	MOVQ kstride+32(FP), DX
	MOVQ nkeys+40(FP), CX
	MOVQ hd+48(FP), R12
	SHLQ $1, R12
	VBROADCASTSS scale+56(FP), Y15
	LEAQ (DX)(DX*2), R13

h1keys4:
	CMPQ CX, $4
	JB   h1keys1
	LEAQ (R8)(R13*1), R9
	LEAQ (R8)(DX*8), AX
	XORQ BX, BX
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)
	TESTQ $63, R12
	JNZ   h1cols4

h1lines4:
	H1STEP(0, 0)
	H1STEP(32, 16)
	H1STEP(64, 32)
	H1STEP(96, 48)
	PREFETCH8
	ADDQ $64, AX
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, BX
	CMPQ BX, R12
	JB   h1lines4
	JMP  h1sum4

h1cols4:
	H1STEP(0, 0)
	PREFETCH8
	ADDQ $16, AX
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $16, BX
	CMPQ BX, R12
	JB   h1cols4

h1sum4:
	SUBQ R12, R8
	SCORES4(Y0, Y1, Y2, Y3, Y8, Y9, X8, X9, (DI))
	ADDQ $16, DI
	LEAQ (R8)(DX*4), R8
	SUBQ $4, CX
	JMP  h1keys4

h1keys1:
	TESTQ CX, CX
	JZ    h1done
	XORQ BX, BX
	VXORPS Y0, Y0, Y0

h1cols1:
	VCVTPH2PS (R8)(BX*1), Y10
	VFMADD231PS (SI)(BX*2), Y10, Y0
	ADDQ $16, BX
	CMPQ BX, R12
	JB   h1cols1
	SCORE1(Y0, X0, (DI))
	ADDQ $4, DI
	ADDQ DX, R8
	DECQ CX
	JMP  h1keys1

h1done:
	VZEROUPPER
	RET

// func attnAccum2F16AVX2(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)
TEXT ·attnAccum2F16AVX2(SB), NOSPLIT, $0-72
	MOVQ o+0(FP), DI
	MOVQ ostride+8(FP), R13
	ADDQ DI, R13
	MOVQ p+16(FP), SI
	MOVQ pstride+24(FP), R11
	ADDQ SI, R11
	MOVQ v+32(FP), R8
	MOVQ vstride+40(FP), DX
	MOVQ nkeys+48(FP), R12
	MOVQ hd+56(FP), AX
	VBROADCASTSS corr0+64(FP), Y14
	VBROADCASTSS corr1+68(FP), Y15

h2acols:
	OCORR4(DI, Y14, Y0, Y1, Y2, Y3)
	OCORR4(R13, Y15, Y4, Y5, Y6, Y7)
	MOVQ R8, R9
	XORQ BX, BX
	MOVQ R12, CX

h2akeys:
	A2STEP(VCVTPH2PS, 16)
	ADDQ DX, R9
	INCQ BX
	CMPQ BX, CX
	JB   h2akeys

	OSTORE4(DI, Y0, Y1, Y2, Y3)
	OSTORE4(R13, Y4, Y5, Y6, Y7)
	ADDQ $128, DI
	ADDQ $128, R13
	ADDQ $64, R8
	SUBQ $32, AX
	JNZ  h2acols
	VZEROUPPER
	RET

// func attnAccum1F16AVX2(o, p *float32, v *uint16, vstride, nkeys, hd int, corr float32)
TEXT ·attnAccum1F16AVX2(SB), NOSPLIT, $0-52
	MOVQ o+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ vstride+24(FP), DX
	MOVQ nkeys+32(FP), R12
	MOVQ hd+40(FP), AX
	VBROADCASTSS corr+48(FP), Y14

h1acols:
	OCORR4(DI, Y14, Y0, Y1, Y2, Y3)
	MOVQ R8, R9
	XORQ BX, BX

h1akeys:
	VBROADCASTSS (SI)(BX*4), Y8
	VCVTPH2PS (R9), Y10
	VFMADD231PS Y10, Y8, Y0
	VCVTPH2PS 16(R9), Y11
	VFMADD231PS Y11, Y8, Y1
	VCVTPH2PS 32(R9), Y12
	VFMADD231PS Y12, Y8, Y2
	VCVTPH2PS 48(R9), Y13
	VFMADD231PS Y13, Y8, Y3
	ADDQ DX, R9
	INCQ BX
	CMPQ BX, R12
	JB   h1akeys

	OSTORE4(DI, Y0, Y1, Y2, Y3)
	ADDQ $128, DI
	ADDQ $64, R8
	SUBQ $32, AX
	JNZ  h1acols
	VZEROUPPER
	RET

// func toF16Asm(dst *uint16, src *float32, n int)
//
// dst = src in half precision, rounded to nearest even (VCVTPS2PH with
// immediate 0); n is a positive multiple of 8.
TEXT ·toF16Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX

tof16loop:
	VMOVUPS (SI)(BX*4), Y0
	VCVTPS2PH $0, Y0, (DI)(BX*2)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   tof16loop
	VZEROUPPER
	RET
