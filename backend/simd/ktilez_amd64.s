//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// The multi-token K tiles on 512-bit vectors: sixteen rows (two packed
// tiles of eight, interleaved by 32-byte pieces: kPack16) times four
// tokens, the VNNI tile kernels of ktile_amd64.s with every vector twice
// as wide. Registers as there: R8 the packed tile, SI token 0's values
// (tokens DX apart, R12 token 3), R9 token 0's scales (tokens R14 bytes
// apart), R10 its sums (BX bytes apart), CX super-blocks left, R13 whether
// the format has mins; Z0..Z3 the tokens' float accumulators, Z4..Z7
// their Au, Z8..Z11 the sub-block sums, then C.

#define ZTMIN(A, C, dx, F) \
	VBROADCASTSS dx, Z14; \
	VMULPS Z14, Z12, Z15; \
	VCVTDQ2PS A, A; \
	VMULPS Z15, A, A; \
	VMULPS Z14, Z13, Z14; \
	VCVTDQ2PS C, C; \
	VMULPS Z14, C, C; \
	VSUBPS C, A, A; \
	VADDPS A, F, F

#define ZTOFF(A, C, dx, F) \
	VBROADCASTSS dx, Z14; \
	VMULPS Z14, Z12, Z15; \
	VPSUBD C, A, A; \
	VCVTDQ2PS A, A; \
	VMULPS Z15, A, A; \
	VADDPS A, F, F

#define ZTALL(K) \
	K(Z4, Z8, (R9), Z0); \
	K(Z5, Z9, (R9)(R14*1), Z1); \
	K(Z6, Z10, (R9)(R14*2), Z2); \
	K(Z7, Z11, (AX), Z3)

#define ZNNIG(g, Wg) VNNI4T(g, Wg, Z8, Z9, Z10, Z11)
#define ZNNIG2(g, Wg) VNNI4T(g, Wg, Z24, Z25, Z26, Z27)

#define ZNNISUB \
	VPMULLD (AX), Z8, Z8; \
	VPMULLD (AX), Z9, Z9; \
	VPMULLD (AX), Z10, Z10; \
	VPMULLD (AX), Z11, Z11; \
	VPADDD Z8, Z4, Z4; \
	VPADDD Z9, Z5, Z5; \
	VPADDD Z10, Z6, Z6; \
	VPADDD Z11, Z7, Z7

#define ZNNICF(k, cf, xoff) \
	VMOVDQU64 cf+64*k(R8), Z12; \
	VPDPWSSD.BCST xoff+4*k(R10), Z12, Z8; \
	VPDPWSSD.BCST xoff+4*k(R10)(BX*1), Z12, Z9; \
	VPDPWSSD.BCST xoff+4*k(R10)(BX*2), Z12, Z10; \
	VPDPWSSD.BCST xoff+4*k(DI), Z12, Z11

#define ZCF4(cf, xoff) \
	ZNNICF(0, cf, xoff); \
	ZNNICF(1, cf, xoff); \
	ZNNICF(2, cf, xoff); \
	ZNNICF(3, cf, xoff)

#define ZCF8(cf, xoff) \
	ZCF4(cf, xoff); \
	ZNNICF(4, cf, xoff); \
	ZNNICF(5, cf, xoff); \
	ZNNICF(6, cf, xoff); \
	ZNNICF(7, cf, xoff)

#define ZTILEARGS \
	MOVQ pack+16(FP), R8; \
	MOVQ qs+24(FP), SI; \
	MOVQ qstride+32(FP), DX; \
	LEAQ (SI)(DX*2), R12; \
	ADDQ DX, R12; \
	MOVQ ds+40(FP), R9; \
	MOVQ bs+48(FP), R10; \
	MOVQ nb+56(FP), CX; \
	MOVQ min+64(FP), R13; \
	MOVQ CX, R14; \
	SHLQ $2, R14; \
	LEAQ (R14)(R14*2), BX; \
	SHLQ $2, BX; \
	CLEAR4(VPXORD, Z0, Z1, Z2, Z3)

#define ZTILESTORE \
	MOVQ y+0(FP), DI; \
	MOVQ ldy+8(FP), AX; \
	SHLQ $2, AX; \
	VMOVUPS Z0, (DI); \
	VMOVUPS Z1, (DI)(AX*1); \
	VMOVUPS Z2, (DI)(AX*2); \
	LEAQ (AX)(AX*2), BX; \
	VMOVUPS Z3, (DI)(BX*1); \
	VZEROUPPER; \
	RET

// ZTILEC computes C into Z8..Z11 and loads d, dm into Z12, Z13 and the
// address of token 3's scale into AX; R8 points at the tile's sc32.
#define ZTILEC(nsub, KCF, xoff) \
	LEAQ (R10)(BX*2), DI; \
	ADDQ BX, DI; \
	CLEAR4(VPXORD, Z8, Z9, Z10, Z11); \
	KCF(128*nsub, xoff); \
	VMOVUPS 160*nsub(R8), Z12; \
	VMOVUPS 160*nsub+64(R8), Z13; \
	LEAQ (R9)(R14*2), AX; \
	ADDQ R14, AX

#define ZTILENEXT(nsub) \
	ADDQ $160*nsub+128, R8; \
	ADDQ $4, R9; \
	ADDQ $48, R10

// func kTile32ZMM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 32 values (Q4_K, Q5_K, IQ4_XS), sixteen rows.
TEXT ·kTile32ZMM(SB), NOSPLIT, $0-72
	ZTILEARGS

z32block:
	CLEAR4(VPXORD, Z4, Z5, Z6, Z7)
	LEAQ 4096(R8), AX
	MOVQ $8, DI

z32sub:
	VMOVDQU64 0(R8), Z16
	VMOVDQU64 64(R8), Z17
	VMOVDQU64 128(R8), Z18
	VMOVDQU64 192(R8), Z19
	VMOVDQU64 256(R8), Z20
	VMOVDQU64 320(R8), Z21
	VMOVDQU64 384(R8), Z22
	VMOVDQU64 448(R8), Z23
	CLEAR4(VPXORD, Z8, Z9, Z10, Z11)
	CLEAR4(VPXORD, Z24, Z25, Z26, Z27)
	ZNNIG(0, Z16)
	ZNNIG2(4, Z20)
	ZNNIG(1, Z17)
	ZNNIG2(5, Z21)
	ZNNIG(2, Z18)
	ZNNIG2(6, Z22)
	ZNNIG(3, Z19)
	ZNNIG2(7, Z23)
	VPADDD Z24, Z8, Z8
	VPADDD Z25, Z9, Z9
	VPADDD Z26, Z10, Z10
	VPADDD Z27, Z11, Z11
	ZNNISUB
	ADDQ $512, R8
	ADDQ $64, AX
	ADDQ $32, SI
	ADDQ $32, R12
	DECQ DI
	JNZ  z32sub

	ZTILEC(8, ZCF4, 32)
	TESTQ R13, R13
	JZ   z32off
	ZTALL(ZTMIN)
	JMP  z32next

z32off:
	ZTALL(ZTOFF)

z32next:
	ZTILENEXT(8)
	DECQ CX
	JNZ  z32block
	ZTILESTORE

// func kTile16ZMM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 16 values (Q2_K, Q3_K, Q6_K), sixteen rows.
TEXT ·kTile16ZMM(SB), NOSPLIT, $0-72
	ZTILEARGS

z16block:
	CLEAR4(VPXORD, Z4, Z5, Z6, Z7)
	LEAQ 4096(R8), AX
	MOVQ $16, DI

z16sub:
	VMOVDQU64 0(R8), Z16
	VMOVDQU64 64(R8), Z17
	VMOVDQU64 128(R8), Z18
	VMOVDQU64 192(R8), Z19
	CLEAR4(VPXORD, Z8, Z9, Z10, Z11)
	ZNNIG(0, Z16)
	ZNNIG(1, Z17)
	ZNNIG(2, Z18)
	ZNNIG(3, Z19)
	ZNNISUB
	ADDQ $256, R8
	ADDQ $64, AX
	ADDQ $16, SI
	ADDQ $16, R12
	DECQ DI
	JNZ  z16sub

	ZTILEC(16, ZCF8, 0)
	TESTQ R13, R13
	JZ   z16off
	ZTALL(ZTMIN)
	JMP  z16next

z16off:
	ZTALL(ZTOFF)

z16next:
	ZTILENEXT(16)
	DECQ CX
	JNZ  z16block
	ZTILESTORE
