//go:build arm64 && !purego

#include "textflag.h"
#include "simd_arm64.h"

// Float weight products, conversion to half precision and the memory
// checksum.

// DOT4 is the body of the dot4 kernels: four rows of weights, rb bytes
// apart from w, times x, n columns, 8 at a time; LOAD loads the next 8
// columns of the row at register r to float32 in V(lo), V(hi). Each row
// sums in two vectors of four lanes with fused multiply-adds (columns
// 0..3 and 4..7 of each 8), added at the end, then their lanes as
// (0+1)+(2+3). LOAD gets the register names and numbers of lo and hi.
#define DOT4(LOAD) \
	MOVD y+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD rb+16(FP), R2; \
	MOVD x+24(FP), R3; \
	MOVD n+32(FP), R4; \
	ADD  R2, R1, R5; \
	ADD  R2, R5, R6; \
	ADD  R2, R6, R7; \
	ZERO(0); \
	ZERO(1); \
	ZERO(2); \
	ZERO(3); \
	ZERO(4); \
	ZERO(5); \
	ZERO(6); \
	ZERO(7); \
dot8: \
	VLD1.P 32(R3), [V16.D2, V17.D2]; \
	LOAD(R1, V18, V19, 18, 19); \
	LOAD(R5, V20, V21, 20, 21); \
	LOAD(R6, V22, V23, 22, 23); \
	LOAD(R7, V24, V25, 24, 25); \
	FMLA4S(0, 18, 16); \
	FMLA4S(1, 19, 17); \
	FMLA4S(2, 20, 16); \
	FMLA4S(3, 21, 17); \
	FMLA4S(4, 22, 16); \
	FMLA4S(5, 23, 17); \
	FMLA4S(6, 24, 16); \
	FMLA4S(7, 25, 17); \
	SUBS $8, R4; \
	BNE  dot8; \
	FADD4S(0, 0, 1); \
	FADD4S(2, 2, 3); \
	FADD4S(4, 4, 5); \
	FADD4S(6, 6, 7); \
	FADDP4S(0, 0, 2); \
	FADDP4S(4, 4, 6); \
	FADDP4S(0, 0, 4); \
	VST1 [V0.D2], (R0); \
	RET

// LOADBF16 is the LOAD of DOT4 (see LOADF32) for bfloat16, widened with
// SHLL (a shift by 16).
#define LOADBF16(r, vlo, vhi, lo, hi) \
	VLD1.P 16(r), [vlo.D2]; \
	SHLL216(hi, lo); \
	SHLL16(lo, lo)

// func dot4F32Asm(y *float32, w *byte, rb int, x *float32, n int)
//
// y[r] = w_r . x[:n] for the four float32 rows w_r, rb bytes apart from w;
// n is a positive multiple of 8.
TEXT ·dot4F32Asm(SB), NOSPLIT, $0-40
	DOT4(LOADF32)

// func dot4F16Asm(y *float32, w *byte, rb int, x *float32, n int)
//
// dot4F32Asm for half-precision rows.
TEXT ·dot4F16Asm(SB), NOSPLIT, $0-40
	DOT4(LOADF16)

// func dot4BF16Asm(y *float32, w *byte, rb int, x *float32, n int)
//
// dot4F32Asm for bfloat16 rows.
TEXT ·dot4BF16Asm(SB), NOSPLIT, $0-40
	DOT4(LOADBF16)

// func toF16Asm(dst *uint16, src *float32, n int)
//
// dst[i] = the half-precision bits of src[i], FCVTN rounding as the FPCR
// says (to nearest even: Go programs leave it so); n is a positive
// multiple of 8.
TEXT ·toF16Asm(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2

tof16:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	FCVTN4H(2, 0)
	FCVTN28H(2, 1)
	VST1.P [V2.D2], 16(R0)
	SUBS   $8, R2
	BNE    tof16
	RET

// func memSumAsm(p *byte, n int) uint64
//
// Returns the sum of the n bytes at p as little-endian 64-bit words, 256
// bytes a step; n is a positive multiple of 256.
TEXT ·memSumAsm(SB), NOSPLIT, $0-24
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	ZERO(0)
	ZERO(1)
	ZERO(2)
	ZERO(3)

memsum:
	VLD1.P 64(R0), [V4.D2, V5.D2, V6.D2, V7.D2]
	VLD1.P 64(R0), [V16.D2, V17.D2, V18.D2, V19.D2]
	VLD1.P 64(R0), [V20.D2, V21.D2, V22.D2, V23.D2]
	VLD1.P 64(R0), [V24.D2, V25.D2, V26.D2, V27.D2]
	ADD2D(0, 0, 4)
	ADD2D(1, 1, 5)
	ADD2D(2, 2, 6)
	ADD2D(3, 3, 7)
	ADD2D(0, 0, 16)
	ADD2D(1, 1, 17)
	ADD2D(2, 2, 18)
	ADD2D(3, 3, 19)
	ADD2D(0, 0, 20)
	ADD2D(1, 1, 21)
	ADD2D(2, 2, 22)
	ADD2D(3, 3, 23)
	ADD2D(0, 0, 24)
	ADD2D(1, 1, 25)
	ADD2D(2, 2, 26)
	ADD2D(3, 3, 27)
	SUBS $256, R1
	BNE  memsum
	ADD2D(0, 0, 1)
	ADD2D(2, 2, 3)
	ADD2D(0, 0, 2)
	VMOV V0.D[0], R2
	VMOV V0.D[1], R3
	ADD  R3, R2
	MOVD R2, ret+16(FP)
	RET
