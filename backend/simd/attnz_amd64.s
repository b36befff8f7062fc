//go:build amd64 && !purego

#include "textflag.h"

// The attention accumulation over half-precision values on 512-bit
// vectors: attnAccum2F16AVX2's sums, each output column computed by the
// same instructions on one lane (o*corr, then a fused multiply-add of
// p[j]*v_j for the keys in order), sixteen columns a vector and 128 a
// pass over the keys, so that a value's 256 bytes are read in one go.

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
