//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Float weight kernels: four rows of rb bytes times one float32 token of n
// columns, n a positive multiple of 8. Each row has two accumulators, for
// columns 16k..16k+7 and 16k+8..16k+15 (the last 8 columns, when n%16 is 8,
// go to the first); the two are added and the eight lanes summed as
// ((0+1)+(2+3))+((4+5)+(6+7)). With rb = 0 the four results are the same
// row's, computed the same way.

// DOT4REDUCE sums the accumulators Y0..Y7 and stores the four row results.
#define DOT4REDUCE \
	VADDPS Y1, Y0, Y0; \
	VADDPS Y3, Y2, Y2; \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y7, Y6, Y6; \
	VHADDPS Y2, Y0, Y0; \
	VHADDPS Y6, Y4, Y4; \
	VHADDPS Y4, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	MOVQ y+0(FP), DI; \
	VMOVUPS X0, (DI)

#define DOT4PROLOGUE \
	MOVQ w+8(FP), R8; \
	MOVQ rb+16(FP), DX; \
	LEAQ (R8)(DX*1), R9; \
	LEAQ (R9)(DX*1), R10; \
	LEAQ (R10)(DX*1), R11; \
	MOVQ x+24(FP), SI; \
	MOVQ n+32(FP), CX; \
	MOVQ CX, AX; \
	ANDQ $-16, AX; \
	XORQ BX, BX; \
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3); \
	CLEAR4(VXORPS, Y4, Y5, Y6, Y7)

// DOT4STEP accumulates 16 columns of the four rows, from BX on, into
// Y0..Y7: ROW(k, row, x, acc) multiplies the row's columns 8k..8k+7 with
// x's (in Y8, Y9). DOT4TAIL does 8 columns into the first accumulators.
#define DOT4STEP(ROW) \
	VMOVUPS (SI)(BX*4), Y8; \
	VMOVUPS 32(SI)(BX*4), Y9; \
	ROW(0, R8, Y8, Y0); \
	ROW(1, R8, Y9, Y1); \
	ROW(0, R9, Y8, Y2); \
	ROW(1, R9, Y9, Y3); \
	ROW(0, R10, Y8, Y4); \
	ROW(1, R10, Y9, Y5); \
	ROW(0, R11, Y8, Y6); \
	ROW(1, R11, Y9, Y7)

#define DOT4TAIL(ROW) \
	VMOVUPS (SI)(BX*4), Y8; \
	ROW(0, R8, Y8, Y0); \
	ROW(0, R9, Y8, Y2); \
	ROW(0, R10, Y8, Y4); \
	ROW(0, R11, Y8, Y6)

// F32ROW, F16ROW and BF16ROW, for DOT4STEP: 8 float32, float16 or
// bfloat16 (widened to float32 by a shift of 16) of row reg at column
// BX+8k, times xr, into acc.
#define F32ROW(k, reg, xr, acc) \
	VFMADD231PS 32*k(reg)(BX*4), xr, acc

#define F16ROW(k, reg, xr, acc) \
	VCVTPH2PS 16*k(reg)(BX*2), Y10; \
	VFMADD231PS Y10, xr, acc

#define BF16ROW(k, reg, xr, acc) \
	VPMOVZXWD 16*k(reg)(BX*2), Y10; \
	VPSLLD $16, Y10, Y10; \
	VFMADD231PS Y10, xr, acc

// func dot4F32Asm(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4F32Asm(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    f32tail

f32loop:
	DOT4STEP(F32ROW)
	ADDQ $16, BX
	CMPQ BX, AX
	JB   f32loop

f32tail:
	CMPQ BX, CX
	JAE  f32done
	DOT4TAIL(F32ROW)

f32done:
	DOT4REDUCE
	VZEROUPPER
	RET

// func dot4F16Asm(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4F16Asm(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    f16tail

f16loop:
	DOT4STEP(F16ROW)
	ADDQ $16, BX
	CMPQ BX, AX
	JB   f16loop

f16tail:
	CMPQ BX, CX
	JAE  f16done
	DOT4TAIL(F16ROW)

f16done:
	DOT4REDUCE
	VZEROUPPER
	RET

// func dot4BF16Asm(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4BF16Asm(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    bf16tail

bf16loop:
	DOT4STEP(BF16ROW)
	ADDQ $16, BX
	CMPQ BX, AX
	JB   bf16loop

bf16tail:
	CMPQ BX, CX
	JAE  bf16done
	DOT4TAIL(BF16ROW)

bf16done:
	DOT4REDUCE
	VZEROUPPER
	RET
