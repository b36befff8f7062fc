//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// The AVX-512 VNNI Q8_0 kernels for prompts: a tile of eight weight rows is
// repacked so that vector k of a block holds bytes 4k..4k+3 of each row
// (VPDPBUSD then sums four products per row and lane, so that a block's
// eight VPDPBUSD leave each row's exact block sum in its own lane: no
// horizontal sums), the weights offset by 128 to be unsigned. The offset
// adds 128*sum(x) per block, which the accumulator starts without: it is
// initialized to cx = -128*sum(x). Then, as in every Q8_0 kernel,
// acc += float32(sum) * (dw * dx).

// RPCOLS stores columns k and k+4 of the transposed rows (a = Yk, b =
// Yk+4; TRANSPOSE8X8) plus 128 at lo and hi.
#define RPCOLS(a, b, lo, hi) \
	VPERM2I128 $0x20, b, a, Y8; \
	VPERM2I128 $0x31, b, a, Y9; \
	VPXOR   Y15, Y8, Y8; \
	VPXOR   Y15, Y9, Y9; \
	VMOVDQU Y8, lo; \
	VMOVDQU Y9, hi

// func q8Repack8AVX2(dst *byte, w *byte, rb int, nb int, vs int)
//
// Vector k of a block goes vs*k bytes from the block's start, the scales
// vs*8 bytes, the next block vs*9: vs = 32 for a tile of eight rows, 64 for
// either half of a tile of sixteen (interleaved by 32-byte pieces, the
// second half 32 bytes on).
TEXT ·q8Repack8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ rb+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ vs+32(FP), R11
	LEAQ (R11)(R11*2), R12 // 3*vs
	LEAQ (R11)(R11*4), R13 // 5*vs
	LEAQ (R12)(R11*4), R14 // 7*vs
	LEAQ (DX)(DX*2), AX
	LEAQ (R8)(AX*1), R9   // row 3
	LEAQ (R9)(AX*1), R10  // row 6
	MOVL $0x80808080, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15

rploop:
	Q8D8
	VMOVUPS Y14, (DI)(R11*8)

	VMOVDQU 2(R8), Y0
	VMOVDQU 2(R8)(DX*1), Y1
	VMOVDQU 2(R8)(DX*2), Y2
	VMOVDQU 2(R9), Y3
	VMOVDQU 2(R8)(DX*4), Y4
	VMOVDQU 2(R9)(DX*2), Y5
	VMOVDQU 2(R10), Y6
	VMOVDQU 2(R10)(DX*1), Y7
	TRANSPOSE8X8
	RPCOLS(Y0, Y4, (DI), (DI)(R11*4))
	RPCOLS(Y1, Y5, (DI)(R11*1), (DI)(R13*1))
	RPCOLS(Y2, Y6, (DI)(R11*2), (DI)(R12*2))
	RPCOLS(Y3, Y7, (DI)(R12*1), (DI)(R14*1))

	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	LEAQ (DI)(R11*8), DI
	ADDQ R11, DI
	DECQ CX
	JNZ  rploop
	VZEROUPPER
	RET

// VNNITOKEN scales token t's block sums (int acc) and adds them to its
// float accumulator fa; dx is the address of the token's scale.
#define VNNITOKEN(acc, dx, fa) \
	VCVTDQ2PS acc, acc; \
	VMULPS.BCST dx, Y8, Y9; \
	VMULPS Y9, acc, acc; \
	VADDPS acc, fa, fa

// func q8VNNI8x4AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int)
//
// Eight repacked rows times four tokens qstride bytes apart, whose scales
// and corrections are dstride values apart. Y16..Y23 hold the block's
// weights, Y0..Y3 the tokens' int32 block sums, Y4..Y7 their float sums.
TEXT ·q8VNNI8x4AVX512(SB), NOSPLIT, $0-72
	MOVQ pack+16(FP), R8
	MOVQ qs+24(FP), SI
	MOVQ qstride+32(FP), DX
	LEAQ (SI)(DX*2), R12
	ADDQ DX, R12          // token 3
	MOVQ ds+40(FP), R9
	MOVQ cx+48(FP), R10
	MOVQ dstride+56(FP), R11
	SHLQ $2, R11
	LEAQ (R9)(R11*2), R13
	ADDQ R11, R13         // scale of token 3
	LEAQ (R10)(R11*2), R14
	ADDQ R11, R14         // correction of token 3
	MOVQ nb+64(FP), CX
	CLEAR4(VXORPS, Y4, Y5, Y6, Y7)

vnloop:
	VNNIW8
	VMOVUPS 256(R8), Y8
	VPBROADCASTD (R10), Y0
	VPBROADCASTD (R10)(R11*1), Y1
	VPBROADCASTD (R10)(R11*2), Y2
	VPBROADCASTD (R14), Y3
	VNNI4T(0, Y16, Y0, Y1, Y2, Y3)
	VNNI4T(1, Y17, Y0, Y1, Y2, Y3)
	VNNI4T(2, Y18, Y0, Y1, Y2, Y3)
	VNNI4T(3, Y19, Y0, Y1, Y2, Y3)
	VNNI4T(4, Y20, Y0, Y1, Y2, Y3)
	VNNI4T(5, Y21, Y0, Y1, Y2, Y3)
	VNNI4T(6, Y22, Y0, Y1, Y2, Y3)
	VNNI4T(7, Y23, Y0, Y1, Y2, Y3)
	VNNITOKEN(Y0, (R9), Y4)
	VNNITOKEN(Y1, (R9)(R11*1), Y5)
	VNNITOKEN(Y2, (R9)(R11*2), Y6)
	VNNITOKEN(Y3, (R13), Y7)
	ADDQ $32, SI
	ADDQ $32, R12
	ADDQ $288, R8
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R13
	ADDQ $4, R14
	DECQ CX
	JNZ  vnloop

	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), AX
	SHLQ $2, AX
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, (DI)(AX*1)
	VMOVUPS Y6, (DI)(AX*2)
	LEAQ (AX)(AX*2), BX
	VMOVUPS Y7, (DI)(BX*1)
	VZEROUPPER
	RET
