//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// The multi-token K kernels: eight packed rows (kquant.go, kPackBytes)
// times four tokens. Per super-block and token, in int32 lanes (one row a
// lane): Au = sum_j sc_j * (sum over sub-block j of (q+off)*x) and
// C = sum_j c_j * xsum_j, then as dotK: with mins
// acc += float32(Au)*(d*dx) - float32(C)*(dm*dx), without
// acc += float32(Au-C)*(d*dx).

// KTMIN and KTOFF finish the super-block sums of one token: A (Au) and C
// in int32 lanes, the token's scale at dx, the rows' d in Y12 and dm in
// Y13 as float32, the accumulator F; KTMIN for formats with mins, KTOFF
// for those without. They clobber Y14 and Y15.
#define KTMIN(A, C, dx, F) \
	VBROADCASTSS dx, Y14; \
	VMULPS Y14, Y12, Y15; \
	VCVTDQ2PS A, A; \
	VMULPS Y15, A, A; \
	VMULPS Y14, Y13, Y14; \
	VCVTDQ2PS C, C; \
	VMULPS Y14, C, C; \
	VSUBPS C, A, A; \
	VADDPS A, F, F

#define KTOFF(A, C, dx, F) \
	VBROADCASTSS dx, Y14; \
	VMULPS Y14, Y12, Y15; \
	VPSUBD C, A, A; \
	VCVTDQ2PS A, A; \
	VMULPS Y15, A, A; \
	VADDPS A, F, F

#define KTALL(K) \
	K(Y4, Y8, (R9), Y0); \
	K(Y5, Y9, (R9)(R14*1), Y1); \
	K(Y6, Y10, (R9)(R14*2), Y2); \
	K(Y7, Y11, (AX), Y3)

// VNNIG multiplies group g of a sub-block (weights Wg, bytes 4g of each
// token) into the tokens' int32 sums Y8..Y11; VNNIG2 into the second set
// of sums, Y24..Y27.
#define VNNIG(g, Wg) VNNI4T(g, Wg, Y8, Y9, Y10, Y11)
#define VNNIG2(g, Wg) VNNI4T(g, Wg, Y24, Y25, Y26, Y27)

// VNNISUB scales the sub-block sums Y8..Y11 by the rows' scales at (AX)
// and adds them to A (Y4..Y7).
#define VNNISUB \
	VPMULLD (AX), Y8, Y8; \
	VPMULLD (AX), Y9, Y9; \
	VPMULLD (AX), Y10, Y10; \
	VPMULLD (AX), Y11, Y11; \
	VPADDD Y8, Y4, Y4; \
	VPADDD Y9, Y5, Y5; \
	VPADDD Y10, Y6, Y6; \
	VPADDD Y11, Y7, Y7

// VNNICF adds pair k of the xsum terms: the rows' (c_2k, c_2k+1) at
// cf(R8) times each token's pair of sums at xoff+4k (tokens BX bytes
// apart from R10; token 3 at DI), into Y8..Y11.
#define VNNICF(k, cf, xoff) \
	VMOVDQU cf+32*k(R8), Y12; \
	VPDPWSSD.BCST xoff+4*k(R10), Y12, Y8; \
	VPDPWSSD.BCST xoff+4*k(R10)(BX*1), Y12, Y9; \
	VPDPWSSD.BCST xoff+4*k(R10)(BX*2), Y12, Y10; \
	VPDPWSSD.BCST xoff+4*k(DI), Y12, Y11

// KTILEVNNI is the body of a VNNI tile kernel for sub-blocks of 32 (G = 8
// groups, nsub = 8) or 16 values (G = 4, nsub = 16).
//
// Registers: R8 the packed tile, SI token 0's values (tokens DX apart, R12
// token 3), R9 token 0's scales (tokens R14 bytes apart), R10 its sums
// (BX bytes apart), CX super-blocks left, R13 whether the format has mins.
// Y0..Y3 the tokens' float accumulators, Y4..Y7 their Au, Y8..Y11 the
// sub-block sums, then C.
#define KTILEVNNIARGS \
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
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)

#define KTILESTORE \
	MOVQ y+0(FP), DI; \
	MOVQ ldy+8(FP), AX; \
	SHLQ $2, AX; \
	VMOVUPS Y0, (DI); \
	VMOVUPS Y1, (DI)(AX*1); \
	VMOVUPS Y2, (DI)(AX*2); \
	LEAQ (AX)(AX*2), BX; \
	VMOVUPS Y3, (DI)(BX*1); \
	VZEROUPPER; \
	RET

// KTILEC computes C into Y8..Y11 (ncf pairs of cf at 64*nsub(R8), the
// sums at xoff of each token's Q8_K sums), and loads d, dm into Y12, Y13
// and the address of token 3's scale into AX; R8 points at the tile's
// sc32.
#define KTILEC(nsub, KCF, xoff) \
	LEAQ (R10)(BX*2), DI; \
	ADDQ BX, DI; \
	CLEAR4(VPXOR, Y8, Y9, Y10, Y11); \
	KCF(64*nsub, xoff); \
	VMOVUPS 80*nsub(R8), Y12; \
	VMOVUPS 80*nsub+32(R8), Y13; \
	LEAQ (R9)(R14*2), AX; \
	ADDQ R14, AX

// KTILENEXT moves to the next super-block.
#define KTILENEXT(nsub) \
	ADDQ $80*nsub+64, R8; \
	ADDQ $4, R9; \
	ADDQ $48, R10

#define KCF4(cf, xoff) \
	VNNICF(0, cf, xoff); \
	VNNICF(1, cf, xoff); \
	VNNICF(2, cf, xoff); \
	VNNICF(3, cf, xoff)

#define KCF8(cf, xoff) \
	KCF4(cf, xoff); \
	VNNICF(4, cf, xoff); \
	VNNICF(5, cf, xoff); \
	VNNICF(6, cf, xoff); \
	VNNICF(7, cf, xoff)

// func kTile32VNNI(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 32 values (Q4_K, Q5_K, IQ4_XS).
TEXT ·kTile32VNNI(SB), NOSPLIT, $0-72
	KTILEVNNIARGS

k32block:
	CLEAR4(VPXOR, Y4, Y5, Y6, Y7)
	LEAQ 2048(R8), AX
	MOVQ $8, DI

k32sub:
	VNNIW8
	CLEAR4(VPXOR, Y8, Y9, Y10, Y11)
	CLEAR4(VPXORD, Y24, Y25, Y26, Y27)
	VNNIG(0, Y16)
	VNNIG2(4, Y20)
	VNNIG(1, Y17)
	VNNIG2(5, Y21)
	VNNIG(2, Y18)
	VNNIG2(6, Y22)
	VNNIG(3, Y19)
	VNNIG2(7, Y23)
	VPADDD Y24, Y8, Y8
	VPADDD Y25, Y9, Y9
	VPADDD Y26, Y10, Y10
	VPADDD Y27, Y11, Y11
	VNNISUB
	ADDQ $256, R8
	ADDQ $32, AX
	ADDQ $32, SI
	ADDQ $32, R12
	DECQ DI
	JNZ  k32sub

	KTILEC(8, KCF4, 32)
	TESTQ R13, R13
	JZ   k32off
	KTALL(KTMIN)
	JMP  k32next

k32off:
	KTALL(KTOFF)

k32next:
	KTILENEXT(8)
	DECQ CX
	JNZ  k32block
	KTILESTORE

// func kTile16VNNI(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 16 values (Q2_K, Q3_K, Q6_K).
TEXT ·kTile16VNNI(SB), NOSPLIT, $0-72
	KTILEVNNIARGS

k16block:
	CLEAR4(VPXOR, Y4, Y5, Y6, Y7)
	LEAQ 2048(R8), AX
	MOVQ $16, DI

k16sub:
	VMOVDQU32 0(R8), Y16
	VMOVDQU32 32(R8), Y17
	VMOVDQU32 64(R8), Y18
	VMOVDQU32 96(R8), Y19
	CLEAR4(VPXOR, Y8, Y9, Y10, Y11)
	VNNIG(0, Y16)
	VNNIG(1, Y17)
	VNNIG(2, Y18)
	VNNIG(3, Y19)
	VNNISUB
	ADDQ $128, R8
	ADDQ $32, AX
	ADDQ $16, SI
	ADDQ $16, R12
	DECQ DI
	JNZ  k16sub

	KTILEC(16, KCF8, 0)
	TESTQ R13, R13
	JZ   k16off
	KTALL(KTMIN)
	JMP  k16next

k16off:
	KTALL(KTOFF)

k16next:
	KTILENEXT(16)
	DECQ CX
	JNZ  k16block
	KTILESTORE

// The AVX2 tile kernels: as the VNNI ones, with VPMADDUBSW (the rows'
// unsigned values times a token's four bytes, in int16 pairs that cannot
// saturate: the values are below 64) and VPMADDWD by the rows' scales
// twice as int16 (sc16), so that each group adds sc_j times its four
// products to the token's Au directly.

// AVX2T multiplies the group in Y8 by token t's bytes at addr into A,
// with the scales in Y9; tmp is clobbered.
#define AVX2T(addr, tmp, A) \
	VPBROADCASTD addr, tmp; \
	VPMADDUBSW tmp, Y8, tmp; \
	VPMADDWD Y9, tmp, tmp; \
	VPADDD tmp, A, A

#define AVX2G(g) \
	VMOVDQU 32*g(R8), Y8; \
	AVX2T(4*g(SI), Y10, Y4); \
	AVX2T(4*g(SI)(DX*1), Y11, Y5); \
	AVX2T(4*g(SI)(DX*2), Y12, Y6); \
	AVX2T(4*g(R12), Y13, Y7)

// AVX2CF adds pair k of the xsum terms into Y8..Y11 (see VNNICF).
#define AVX2CF1(addr, C) \
	VPBROADCASTD addr, Y13; \
	VPMADDWD Y13, Y12, Y13; \
	VPADDD Y13, C, C

#define AVX2CF(k, cf, xoff) \
	VMOVDQU cf+32*k(R8), Y12; \
	AVX2CF1(xoff+4*k(R10), Y8); \
	AVX2CF1(xoff+4*k(R10)(BX*1), Y9); \
	AVX2CF1(xoff+4*k(R10)(BX*2), Y10); \
	AVX2CF1(xoff+4*k(DI), Y11)

#define ACF4(cf, xoff) \
	AVX2CF(0, cf, xoff); \
	AVX2CF(1, cf, xoff); \
	AVX2CF(2, cf, xoff); \
	AVX2CF(3, cf, xoff)

#define ACF8(cf, xoff) \
	ACF4(cf, xoff); \
	AVX2CF(4, cf, xoff); \
	AVX2CF(5, cf, xoff); \
	AVX2CF(6, cf, xoff); \
	AVX2CF(7, cf, xoff)

// func kTile32AVX2(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 32 values (Q4_K, Q5_K).
TEXT ·kTile32AVX2(SB), NOSPLIT, $0-72
	KTILEVNNIARGS

a32block:
	CLEAR4(VPXOR, Y4, Y5, Y6, Y7)
	LEAQ 2048+256(R8), AX // sc16
	MOVQ $8, DI

a32sub:
	VMOVDQU (AX), Y9
	AVX2G(0)
	AVX2G(1)
	AVX2G(2)
	AVX2G(3)
	AVX2G(4)
	AVX2G(5)
	AVX2G(6)
	AVX2G(7)
	ADDQ $256, R8
	ADDQ $32, AX
	ADDQ $32, SI
	ADDQ $32, R12
	DECQ DI
	JNZ  a32sub

	KTILEC(8, ACF4, 32)
	TESTQ R13, R13
	JZ   a32off
	KTALL(KTMIN)
	JMP  a32next

a32off:
	KTALL(KTOFF)

a32next:
	KTILENEXT(8)
	DECQ CX
	JNZ  a32block
	KTILESTORE

// func kTile16AVX2(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, min int)
//
// Sub-blocks of 16 values (Q2_K, Q3_K, Q6_K).
TEXT ·kTile16AVX2(SB), NOSPLIT, $0-72
	KTILEVNNIARGS

a16block:
	CLEAR4(VPXOR, Y4, Y5, Y6, Y7)
	LEAQ 2048+512(R8), AX // sc16
	MOVQ $16, DI

a16sub:
	VMOVDQU (AX), Y9
	AVX2G(0)
	AVX2G(1)
	AVX2G(2)
	AVX2G(3)
	ADDQ $128, R8
	ADDQ $32, AX
	ADDQ $16, SI
	ADDQ $16, R12
	DECQ DI
	JNZ  a16sub

	KTILEC(16, ACF8, 0)
	TESTQ R13, R13
	JZ   a16off
	KTALL(KTMIN)
	JMP  a16next

a16off:
	KTALL(KTOFF)

a16next:
	KTILENEXT(16)
	DECQ CX
	JNZ  a16block
	KTILESTORE
