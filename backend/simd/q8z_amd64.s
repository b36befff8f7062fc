//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// The 512-bit VNNI tiles of the Q8_0-like formats: sixteen rows, two
// repacked tiles of eight interleaved by 32-byte pieces (vector k of a
// block, 64 bytes, holds bytes 4k..4k+3 of rows 0..15 plus 128; then the
// sixteen rows' float32 scales), times eight or four tokens. As in
// q8VNNI8x4AVX512, each row's exact block sum ends in its own lane (the
// accumulator starts at the token's -128*sum(x)) and then
// acc += float32(sum) * (dw * dx), so the bits are the other kernels'.
// Z16..Z23 hold the block's weights, Z24 the rows' scales, Z0..Z7 the
// tokens' int32 block sums, Z8..Z15 their float sums.

// Q8ZDOT adds token t's products with the block's weights to acc; q is
// the address of the token's block.
#define Q8ZDOT(q, acc) \
	VPDPBUSD.BCST 0 q, Z16, acc; \
	VPDPBUSD.BCST 4 q, Z17, acc; \
	VPDPBUSD.BCST 8 q, Z18, acc; \
	VPDPBUSD.BCST 12 q, Z19, acc; \
	VPDPBUSD.BCST 16 q, Z20, acc; \
	VPDPBUSD.BCST 20 q, Z21, acc; \
	VPDPBUSD.BCST 24 q, Z22, acc; \
	VPDPBUSD.BCST 28 q, Z23, acc

// Q8ZSCALE scales the block sums acc by the rows' scales times the
// token's (at dx) and adds them to fa.
#define Q8ZSCALE(acc, dx, fa) \
	VCVTDQ2PS acc, acc; \
	VMULPS.BCST dx, Z24, Z25; \
	VMULPS Z25, acc, acc; \
	VADDPS acc, fa, fa

// PREFETCH576 prefetches the 576 bytes at r (one block of the pack).
#define PREFETCH576(r) \
	PREFETCHT0 (r); \
	PREFETCHT0 64(r); \
	PREFETCHT0 128(r); \
	PREFETCHT0 192(r); \
	PREFETCHT0 256(r); \
	PREFETCHT0 320(r); \
	PREFETCHT0 384(r); \
	PREFETCHT0 448(r); \
	PREFETCHT0 512(r)

// Q8ZLOAD loads the block's weights into Z16..Z23 and the rows' scales
// into Z24.
#define Q8ZLOAD \
	VMOVDQU32 0(R8), Z16; \
	VMOVDQU32 64(R8), Z17; \
	VMOVDQU32 128(R8), Z18; \
	VMOVDQU32 192(R8), Z19; \
	VMOVDQU32 256(R8), Z20; \
	VMOVDQU32 320(R8), Z21; \
	VMOVDQU32 384(R8), Z22; \
	VMOVDQU32 448(R8), Z23; \
	VMOVUPS 512(R8), Z24

// func q8VNNI16x8AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int, pf *byte, pfs int)
//
// Sixteen rows times eight tokens qstride bytes apart, whose scales and
// corrections are dstride values apart. Token t's activations are at
// SI, SI+DX, SI+2DX, R12 (SI+3DX), SI+4DX, R12+2DX, R13 (SI+6DX), R12+4DX;
// its scale likewise from R9, R14, DI (stride R11) and its correction
// from R10, AX, BX. Each block prefetches 576 bytes from pf on, and pf
// moves on pfs bytes (the weights of the next rows, in their own
// encoding, while these compute).
TEXT ·q8VNNI16x8AVX512(SB), NOSPLIT, $0-88
	MOVQ pack+16(FP), R8
	MOVQ qs+24(FP), SI
	MOVQ qstride+32(FP), DX
	LEAQ (SI)(DX*2), R12
	ADDQ DX, R12
	LEAQ (R12)(DX*2), R13
	ADDQ DX, R13
	MOVQ ds+40(FP), R9
	MOVQ cx+48(FP), R10
	MOVQ dstride+56(FP), R11
	SHLQ $2, R11
	LEAQ (R9)(R11*2), R14
	ADDQ R11, R14
	LEAQ (R14)(R11*2), DI
	ADDQ R11, DI
	LEAQ (R10)(R11*2), AX
	ADDQ R11, AX
	LEAQ (AX)(R11*2), BX
	ADDQ R11, BX
	MOVQ nb+64(FP), CX    // the loop ends where the pack does
	IMULQ $576, CX
	ADDQ R8, CX
	MOVQ CX, nb+64(FP)
	MOVQ pf+72(FP), CX
	CLEAR4(VPXORD, Z8, Z9, Z10, Z11)
	CLEAR4(VPXORD, Z12, Z13, Z14, Z15)

z8loop:
	PREFETCH576(CX)
	ADDQ pfs+80(FP), CX
	Q8ZLOAD
	VPBROADCASTD (R10), Z0
	VPBROADCASTD (R10)(R11*1), Z1
	VPBROADCASTD (R10)(R11*2), Z2
	VPBROADCASTD (AX), Z3
	VPBROADCASTD (R10)(R11*4), Z4
	VPBROADCASTD (AX)(R11*2), Z5
	VPBROADCASTD (BX), Z6
	VPBROADCASTD (AX)(R11*4), Z7
	Q8ZDOT((SI), Z0)
	Q8ZDOT((SI)(DX*1), Z1)
	Q8ZDOT((SI)(DX*2), Z2)
	Q8ZDOT((R12), Z3)
	Q8ZDOT((SI)(DX*4), Z4)
	Q8ZDOT((R12)(DX*2), Z5)
	Q8ZDOT((R13), Z6)
	Q8ZDOT((R12)(DX*4), Z7)
	Q8ZSCALE(Z0, (R9), Z8)
	Q8ZSCALE(Z1, (R9)(R11*1), Z9)
	Q8ZSCALE(Z2, (R9)(R11*2), Z10)
	Q8ZSCALE(Z3, (R14), Z11)
	Q8ZSCALE(Z4, (R9)(R11*4), Z12)
	Q8ZSCALE(Z5, (R14)(R11*2), Z13)
	Q8ZSCALE(Z6, (DI), Z14)
	Q8ZSCALE(Z7, (R14)(R11*4), Z15)
	ADDQ $32, SI
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $576, R8
	ADDQ $4, R9
	ADDQ $4, R14
	ADDQ $4, DI
	ADDQ $4, R10
	ADDQ $4, AX
	ADDQ $4, BX
	CMPQ R8, nb+64(FP)
	JLT  z8loop

	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), AX
	SHLQ $2, AX
	VMOVUPS Z8, (DI)
	ADDQ AX, DI
	VMOVUPS Z9, (DI)
	ADDQ AX, DI
	VMOVUPS Z10, (DI)
	ADDQ AX, DI
	VMOVUPS Z11, (DI)
	ADDQ AX, DI
	VMOVUPS Z12, (DI)
	ADDQ AX, DI
	VMOVUPS Z13, (DI)
	ADDQ AX, DI
	VMOVUPS Z14, (DI)
	ADDQ AX, DI
	VMOVUPS Z15, (DI)
	VZEROUPPER
	RET

// func q8VNNI16x4AVX512(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, cx *int32, dstride int, nb int, pf *byte, pfs int)
//
// Sixteen rows times four tokens: tokens at SI, SI+DX, SI+2DX, R12
// (SI+3DX); scales from R9 and R14, corrections from R10 and AX; the
// prefetches as in q8VNNI16x8AVX512, from BX.
TEXT ·q8VNNI16x4AVX512(SB), NOSPLIT, $0-88
	MOVQ pack+16(FP), R8
	MOVQ qs+24(FP), SI
	MOVQ qstride+32(FP), DX
	LEAQ (SI)(DX*2), R12
	ADDQ DX, R12
	MOVQ ds+40(FP), R9
	MOVQ cx+48(FP), R10
	MOVQ dstride+56(FP), R11
	SHLQ $2, R11
	LEAQ (R9)(R11*2), R14
	ADDQ R11, R14
	LEAQ (R10)(R11*2), AX
	ADDQ R11, AX
	MOVQ nb+64(FP), CX
	MOVQ pf+72(FP), BX
	MOVQ pfs+80(FP), R13
	CLEAR4(VPXORD, Z8, Z9, Z10, Z11)

z4loop:
	PREFETCH576(BX)
	ADDQ R13, BX
	Q8ZLOAD
	VPBROADCASTD (R10), Z0
	VPBROADCASTD (R10)(R11*1), Z1
	VPBROADCASTD (R10)(R11*2), Z2
	VPBROADCASTD (AX), Z3
	Q8ZDOT((SI), Z0)
	Q8ZDOT((SI)(DX*1), Z1)
	Q8ZDOT((SI)(DX*2), Z2)
	Q8ZDOT((R12), Z3)
	Q8ZSCALE(Z0, (R9), Z8)
	Q8ZSCALE(Z1, (R9)(R11*1), Z9)
	Q8ZSCALE(Z2, (R9)(R11*2), Z10)
	Q8ZSCALE(Z3, (R14), Z11)
	ADDQ $32, SI
	ADDQ $32, R12
	ADDQ $576, R8
	ADDQ $4, R9
	ADDQ $4, R14
	ADDQ $4, R10
	ADDQ $4, AX
	DECQ CX
	JNZ  z4loop

	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), AX
	SHLQ $2, AX
	VMOVUPS Z8, (DI)
	ADDQ AX, DI
	VMOVUPS Z9, (DI)
	ADDQ AX, DI
	VMOVUPS Z10, (DI)
	ADDQ AX, DI
	VMOVUPS Z11, (DI)
	VZEROUPPER
	RET
