//go:build amd64 && !purego

#include "textflag.h"

// The attention kernels over half-precision keys and values on 512-bit
// vectors, for two heads of a KV group. Each computes every value with
// the instructions of its 256-bit counterpart in attention_amd64.s, on
// one lane or one 256-bit half of a vector, so the results are the same
// bits.
//
// The scores: the 8 columns of two keys widened into the halves of one
// vector, times the 8 columns of a query repeated in both halves, added
// (fused) to one vector of accumulators per pair of keys and head: the
// 8-lane accumulators of attnScores2F16AVX2, two keys in one vector, half
// the multiply-adds and conversions. The halves are summed as there.
//
// The accumulation: attnAccum2F16AVX2's sums, each output column computed
// by the same instructions on one lane (o*corr, then a fused multiply-add
// of p[j]*v_j for the keys in order), sixteen columns a vector and 128 a
// pass over the keys, so that a value's 256 bytes are read in one go.

// HSUM4 and SCORES4 are attention_amd64.s's: the scores of four keys from
// their 8-lane accumulators a, b, c, d, scaled by X15, stored at dst.
#define HSUM4(a, b, c, d, ta, tb) \
	VHADDPS b, a, ta; \
	VHADDPS d, c, tb; \
	VHADDPS tb, ta, ta

#define SCORES4(a, b, c, d, ta, tb, xa, xb, dst) \
	HSUM4(a, b, c, d, ta, tb); \
	VEXTRACTF128 $1, ta, xb; \
	VADDPS xb, xa, xa; \
	VMULPS X15, xa, xa; \
	VMOVUPS xa, dst

// ZPAIR widens 8 columns of two keys, at ma and mb, into the low and
// high halves of z (y its Y form, x its X form).
#define ZPAIR(ma, mb, x, y, z) \
	VMOVDQU ma, x; \
	VINSERTI128 $1, mb, y, y; \
	VCVTPH2PS y, z

// Z2STEP multiplies 8 columns (q at byte qo, keys at byte ko) of the two
// heads (SI, R10) with the eight keys R8, R8+DX, R8+2*DX, R8+R13, R9,
// R9+DX, R9+2*DX, R9+R13, into Z0..Z3 (first head, pairs of keys) and
// Z4..Z7 (second head).
#define Z2STEP(qo, ko) \
	VBROADCASTF64X4 qo(SI)(BX*2), Z16; \
	VBROADCASTF64X4 qo(R10)(BX*2), Z17; \
	ZPAIR(ko(R8), ko(R8)(DX*1), X8, Y8, Z8); \
	ZPAIR(ko(R8)(DX*2), ko(R8)(R13*1), X9, Y9, Z9); \
	ZPAIR(ko(R9), ko(R9)(DX*1), X10, Y10, Z10); \
	ZPAIR(ko(R9)(DX*2), ko(R9)(R13*1), X11, Y11, Z11); \
	VFMADD231PS Z8, Z16, Z0; \
	VFMADD231PS Z8, Z17, Z4; \
	VFMADD231PS Z9, Z16, Z1; \
	VFMADD231PS Z9, Z17, Z5; \
	VFMADD231PS Z10, Z16, Z2; \
	VFMADD231PS Z10, Z17, Z6; \
	VFMADD231PS Z11, Z16, Z3; \
	VFMADD231PS Z11, Z17, Z7

// ZPREFETCH prefetches the line at AX of the eight keys AX, AX+DX, ...,
// AX+7*DX (R15 = AX+4*DX) and of their values, R11 bytes on.
#define ZPREFETCH \
	LEAQ (AX)(DX*4), R15; \
	PREFETCHT0 (AX); \
	PREFETCHT0 (AX)(DX*1); \
	PREFETCHT0 (AX)(DX*2); \
	PREFETCHT0 (AX)(R13*1); \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(DX*1); \
	PREFETCHT0 (R15)(DX*2); \
	PREFETCHT0 (R15)(R13*1); \
	ADDQ R11, AX; \
	ADDQ R11, R15; \
	PREFETCHT0 (AX); \
	PREFETCHT0 (AX)(DX*1); \
	PREFETCHT0 (AX)(DX*2); \
	PREFETCHT0 (AX)(R13*1); \
	PREFETCHT0 (R15); \
	PREFETCHT0 (R15)(DX*1); \
	PREFETCHT0 (R15)(DX*2); \
	PREFETCHT0 (R15)(R13*1); \
	SUBQ R11, AX

// ZSCORES4 stores at dst the scores of the four keys whose 8-lane
// accumulators are the halves of za and zb (ya, yb their low halves): the
// high halves extracted into Y8 and Y9, then SCORES4.
#define ZSCORES4(za, zb, ya, yb, dst) \
	VEXTRACTF64X4 $1, za, Y8; \
	VEXTRACTF64X4 $1, zb, Y9; \
	SCORES4(ya, Y8, yb, Y9, Y10, Y11, X10, X11, dst)

// func attnScores2F16AVX512(s *float32, sstride int, q *float32, k, v *uint16, kstride, nkeys, hd int, scale float32)
//
// The scores of attnScores2F16AVX2 for nkeys keys, a multiple of 8; hd is
// a multiple of 32.
TEXT ·attnScores2F16AVX512(SB), NOSPLIT, $0-68
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

z2keys8:
	CMPQ CX, $8
	JB   z2done
	LEAQ (R8)(DX*4), R9
	LEAQ (R8)(DX*8), AX // the next eight keys, prefetched
	XORQ BX, BX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

z2lines8: // a 64-byte line of each key per iteration
	Z2STEP(0, 0)
	Z2STEP(32, 16)
	Z2STEP(64, 32)
	Z2STEP(96, 48)
	ZPREFETCH
	ADDQ $64, AX
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, BX
	CMPQ BX, R12
	JB   z2lines8

	SUBQ R12, R8
	ZSCORES4(Z0, Z1, Y0, Y1, (DI))
	ZSCORES4(Z2, Z3, Y2, Y3, 16(DI))
	ZSCORES4(Z4, Z5, Y4, Y5, (DI)(R14*1))
	ZSCORES4(Z6, Z7, Y6, Y7, 16(DI)(R14*1))
	ADDQ $32, DI
	LEAQ (R8)(DX*8), R8
	SUBQ $8, CX
	JMP  z2keys8

z2done:
	VZEROUPPER
	RET

// ZACC8 adds p times the value's 128 columns, widened into Z24..Z31, to
// the accumulators z0..z7; p is the broadcast p[j].
#define ZACC8(p, z0, z1, z2, z3, z4, z5, z6, z7) \
	VFMADD231PS Z24, p, z0; \
	VFMADD231PS Z25, p, z1; \
	VFMADD231PS Z26, p, z2; \
	VFMADD231PS Z27, p, z3; \
	VFMADD231PS Z28, p, z4; \
	VFMADD231PS Z29, p, z5; \
	VFMADD231PS Z30, p, z6; \
	VFMADD231PS Z31, p, z7

// ZLOAD8 loads the 128 output columns at reg times corr into z0..z7.
#define ZLOAD8(reg, corr, z0, z1, z2, z3, z4, z5, z6, z7) \
	VMULPS (reg), corr, z0; \
	VMULPS 64(reg), corr, z1; \
	VMULPS 128(reg), corr, z2; \
	VMULPS 192(reg), corr, z3; \
	VMULPS 256(reg), corr, z4; \
	VMULPS 320(reg), corr, z5; \
	VMULPS 384(reg), corr, z6; \
	VMULPS 448(reg), corr, z7

// ZSTORE8 stores z0..z7 to the 128 output columns at reg.
#define ZSTORE8(reg, z0, z1, z2, z3, z4, z5, z6, z7) \
	VMOVUPS z0, (reg); \
	VMOVUPS z1, 64(reg); \
	VMOVUPS z2, 128(reg); \
	VMOVUPS z3, 192(reg); \
	VMOVUPS z4, 256(reg); \
	VMOVUPS z5, 320(reg); \
	VMOVUPS z6, 384(reg); \
	VMOVUPS z7, 448(reg)

// func attnAccum2F16AVX512(o *float32, ostride int, p *float32, pstride int, v *uint16, vstride, nkeys, hd int, corr0, corr1 float32)
//
// For the two heads (o, p, corr0) and (o + ostride bytes, p + pstride
// bytes, corr1): o = o*corr + sum over j of p[j]*v_j, for nkeys
// half-precision values vstride bytes apart; hd is a multiple of 128 and
// nkeys is positive. The results are attnAccum2F16AVX2's, bit for bit.
TEXT ·attnAccum2F16AVX512(SB), NOSPLIT, $0-72
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
	VBROADCASTSS corr0+64(FP), Z22
	VBROADCASTSS corr1+68(FP), Z23

z2acols:
	ZLOAD8(DI, Z22, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZLOAD8(R13, Z23, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	MOVQ R8, R9
	XORQ BX, BX

z2akeys:
	VBROADCASTSS (SI)(BX*4), Z16
	VBROADCASTSS (R11)(BX*4), Z17
	VCVTPH2PS (R9), Z24
	VCVTPH2PS 32(R9), Z25
	VCVTPH2PS 64(R9), Z26
	VCVTPH2PS 96(R9), Z27
	VCVTPH2PS 128(R9), Z28
	VCVTPH2PS 160(R9), Z29
	VCVTPH2PS 192(R9), Z30
	VCVTPH2PS 224(R9), Z31
	ZACC8(Z16, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZACC8(Z17, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ADDQ DX, R9
	INCQ BX
	CMPQ BX, R12
	JB   z2akeys

	ZSTORE8(DI, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZSTORE8(R13, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ADDQ $512, DI
	ADDQ $512, R13
	ADDQ $256, R8
	SUBQ $128, AX
	JNZ  z2acols
	VZEROUPPER
	RET
