//go:build amd64 && !purego

#include "textflag.h"

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
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func dot4F32AVX2(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4F32AVX2(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    f32tail

f32loop:
	VMOVUPS (SI)(BX*4), Y8
	VMOVUPS 32(SI)(BX*4), Y9
	VFMADD231PS (R8)(BX*4), Y8, Y0
	VFMADD231PS 32(R8)(BX*4), Y9, Y1
	VFMADD231PS (R9)(BX*4), Y8, Y2
	VFMADD231PS 32(R9)(BX*4), Y9, Y3
	VFMADD231PS (R10)(BX*4), Y8, Y4
	VFMADD231PS 32(R10)(BX*4), Y9, Y5
	VFMADD231PS (R11)(BX*4), Y8, Y6
	VFMADD231PS 32(R11)(BX*4), Y9, Y7
	ADDQ $16, BX
	CMPQ BX, AX
	JB   f32loop

f32tail:
	CMPQ BX, CX
	JAE  f32done
	VMOVUPS (SI)(BX*4), Y8
	VFMADD231PS (R8)(BX*4), Y8, Y0
	VFMADD231PS (R9)(BX*4), Y8, Y2
	VFMADD231PS (R10)(BX*4), Y8, Y4
	VFMADD231PS (R11)(BX*4), Y8, Y6

f32done:
	DOT4REDUCE
	VZEROUPPER
	RET

// F16ROW converts 8 float16 of row reg at column BX and accumulates it
// times x (xr) into acc.
#define F16ROW(off, reg, xr, acc) \
	VCVTPH2PS off(reg)(BX*2), Y10; \
	VFMADD231PS Y10, xr, acc

// func dot4F16AVX2(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4F16AVX2(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    f16tail

f16loop:
	VMOVUPS (SI)(BX*4), Y8
	VMOVUPS 32(SI)(BX*4), Y9
	F16ROW(0, R8, Y8, Y0)
	F16ROW(16, R8, Y9, Y1)
	F16ROW(0, R9, Y8, Y2)
	F16ROW(16, R9, Y9, Y3)
	F16ROW(0, R10, Y8, Y4)
	F16ROW(16, R10, Y9, Y5)
	F16ROW(0, R11, Y8, Y6)
	F16ROW(16, R11, Y9, Y7)
	ADDQ $16, BX
	CMPQ BX, AX
	JB   f16loop

f16tail:
	CMPQ BX, CX
	JAE  f16done
	VMOVUPS (SI)(BX*4), Y8
	F16ROW(0, R8, Y8, Y0)
	F16ROW(0, R9, Y8, Y2)
	F16ROW(0, R10, Y8, Y4)
	F16ROW(0, R11, Y8, Y6)

f16done:
	DOT4REDUCE
	VZEROUPPER
	RET

// BF16ROW widens 8 bfloat16 of row reg at column BX to float32 (a shift
// by 16) and accumulates it times x (xr) into acc.
#define BF16ROW(off, reg, xr, acc) \
	VPMOVZXWD off(reg)(BX*2), Y10; \
	VPSLLD $16, Y10, Y10; \
	VFMADD231PS Y10, xr, acc

// func dot4BF16AVX2(y *float32, w *byte, rb int, x *float32, n int)
TEXT ·dot4BF16AVX2(SB), NOSPLIT, $0-40
	DOT4PROLOGUE
	TESTQ AX, AX
	JZ    bf16tail

bf16loop:
	VMOVUPS (SI)(BX*4), Y8
	VMOVUPS 32(SI)(BX*4), Y9
	BF16ROW(0, R8, Y8, Y0)
	BF16ROW(16, R8, Y9, Y1)
	BF16ROW(0, R9, Y8, Y2)
	BF16ROW(16, R9, Y9, Y3)
	BF16ROW(0, R10, Y8, Y4)
	BF16ROW(16, R10, Y9, Y5)
	BF16ROW(0, R11, Y8, Y6)
	BF16ROW(16, R11, Y9, Y7)
	ADDQ $16, BX
	CMPQ BX, AX
	JB   bf16loop

bf16tail:
	CMPQ BX, CX
	JAE  bf16done
	VMOVUPS (SI)(BX*4), Y8
	BF16ROW(0, R8, Y8, Y0)
	BF16ROW(0, R9, Y8, Y2)
	BF16ROW(0, R10, Y8, Y4)
	BF16ROW(0, R11, Y8, Y6)

bf16done:
	DOT4REDUCE
	VZEROUPPER
	RET
