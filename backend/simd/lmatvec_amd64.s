//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Matrix-vector kernels of the legacy block formats other than Q8_0
// (legacy.go): eight rows a block iteration, each row's 32 values unpacked
// to bytes and multiplied with the token's int8 block by VPMADDUBSW and
// VPMADDWD, the eight rows' int32 sums gathered by VPHADDD, then as dot32
// acc += float32(s)*(d*dx) (+ m*sx). Unsigned values (Q4_0: q+8, Q5_0:
// q+16) are corrected by the block sum of the token exactly, from its
// -128*sum (cx): -8*sum = cx>>4, -16*sum = cx>>3.

SPLAT32(lNib<>, $0x0f0f0f0f0f0f0f0f)
SPLAT32(lOnes16<>, $0x0001000100010001)

// Byte k takes byte k/8 of the high bits; then bit k%8 of it.
DATA lBitShuf<>+0(SB)/8, $0x0000000000000000
DATA lBitShuf<>+8(SB)/8, $0x0101010101010101
DATA lBitShuf<>+16(SB)/8, $0x0202020202020202
DATA lBitShuf<>+24(SB)/8, $0x0303030303030303
GLOBL lBitShuf<>(SB), RODATA|NOPTR, $32

SPLAT32(lBitMask<>, $0x8040201008040201)
SPLAT32(l10<>, $0x1010101010101010)

E8M0CONSTS

// LNIB32 sets Yt to the 32 nibbles of the 16 bytes at off(AX), in value
// order (low nibbles, then high ones); Xu is clobbered.
#define LNIB32(off, Xt, Yt, Xu) \
	VMOVDQU off(AX), Xt; \
	VPSRLW $4, Xt, Xu; \
	VINSERTI128 $1, Xu, Yt, Yt; \
	VPAND Y14, Yt, Yt

// LQH ors into Yt the fifth bits (the 32 bits at off(AX)) at bit 4; Yu is
// clobbered.
#define LQH(off, Yt, Yu) \
	VPBROADCASTD off(AX), Yu; \
	VPSHUFB lBitShuf<>(SB), Yu, Yu; \
	VPAND lBitMask<>(SB), Yu, Yu; \
	VPCMPEQB lBitMask<>(SB), Yu, Yu; \
	VPAND l10<>(SB), Yu, Yu; \
	VPOR Yu, Yt, Yt

// The loop of every kernel here, func(y *float32, w *byte, rb int, groups
// int, qs *int8, ds *float32, sums *T, nb int) with sums the token's cx
// (*int32) or sx (*float32): per group of eight rows (R12, R10 groups
// left) and block (R8, CX blocks left), LBLOCK, ROWTREE over the format's
// row macro (the row's int32 products in dst), LSUM8, the format's
// corrections, and LNEXT. DI prefetches the group after next; SI, R11
// and BX walk the token's values, scales and sums; Y15 accumulates.
#define LMVARGS \
	MVARGS; \
	VMOVDQU lNib<>(SB), Y14; \
	VMOVDQU lOnes16<>(SB), Y13

#define LMVGROUP(sums) \
	MOVQ R12, R8; \
	LEAQ (R12)(DX*8), DI; \
	LEAQ (DI)(DX*8), DI; \
	MOVQ qs+32(FP), SI; \
	MOVQ ds+40(FP), R11; \
	MOVQ sums+48(FP), BX; \
	MOVQ nb+56(FP), CX; \
	VXORPS Y15, Y15, Y15

// LBLOCK prefetches the size bytes of a block of the group after next and
// points R13, R14 at rows 3 and 6.
#define LBLOCK(size) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	ADDQ $size, DI; \
	ROW36

// LSUM8 leaves the eight rows' int32 sums in Y4.
#define LSUM8 \
	VPERM2I128 $0x20, Y9, Y8, Y4; \
	VPERM2I128 $0x31, Y9, Y8, Y5; \
	VPADDD Y5, Y4, Y4

// LCORR adds the token's cx >> shift to the sums: minus 8 (shift 4) or
// minus 16 (shift 3) times its block sum.
#define LCORR(shift) \
	VPBROADCASTD (BX), Y5; \
	VPSRAD $shift, Y5, Y5; \
	VPADDD Y5, Y4, Y4

// LSCALE sets Y4 = float32(sums) * (d*dx), d the rows' float16 at 0;
// LSCALEY0 the same with the rows' d in Y0.
#define LSCALE \
	ROWF16(0, X0, Y0); \
	LSCALEY0

#define LSCALEY0 \
	VBROADCASTSS (R11), Y2; \
	VMULPS Y2, Y0, Y0; \
	VCVTDQ2PS Y4, Y4; \
	VMULPS Y0, Y4, Y4

// LMIN adds m*sx to Y4, m the rows' float16 at 2.
#define LMIN \
	ROWF16(2, X1, Y1); \
	VBROADCASTSS (BX), Y3; \
	VMULPS Y3, Y1, Y1; \
	VADDPS Y1, Y4, Y4

// LNEXT moves to the next block, of size bytes, and counts it.
#define LNEXT(size) \
	ADDQ $size, R8; \
	ADDQ $32, SI; \
	ADDQ $4, R11; \
	ADDQ $4, BX; \
	DECQ CX

// LDOT multiplies the row's 32 unsigned values in Y0 with the token's
// int8 values into the row's int32 products in dst.
#define LDOT(dst) \
	VPMADDUBSW (SI), Y0, Y0; \
	VPMADDWD Y13, Y0, dst

// The row macros of the formats, for ROWTREE, the row at AX: Q4_0 (q+8),
// Q5_0 (q+16), Q4_1, Q5_1 (unsigned already), and the table formats
// (TABROW, AX at the indices: the levels, table in Y12, signed: their
// sign moved onto the token's values, kept in Y11).
#define Q40ROW(dst) \
	LNIB32(2, X0, Y0, X1); \
	LDOT(dst)

#define Q50ROW(dst) \
	LNIB32(6, X0, Y0, X1); \
	LQH(2, Y0, Y1); \
	LDOT(dst)

#define Q41ROW(dst) \
	LNIB32(4, X0, Y0, X1); \
	LDOT(dst)

#define Q51ROW(dst) \
	LNIB32(8, X0, Y0, X1); \
	LQH(4, Y0, Y1); \
	LDOT(dst)

#define TABROW(dst) \
	LNIB32(0, X0, Y0, X1); \
	VPSHUFB Y0, Y12, Y0; \
	VPSIGNB Y0, Y11, Y1; \
	VPABSB Y0, Y0; \
	VPMADDUBSW Y1, Y0, Y0; \
	VPMADDWD Y13, Y0, dst

// func q4_0MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int)
TEXT ·q4_0MatVecAVX2(SB), NOSPLIT, $0-64
	LMVARGS

q4_0group:
	LMVGROUP(cx)

q4_0block:
	LBLOCK(144)
	ROWTREE(Q40ROW, Y8, Y9, Y10, Y4)
	LSUM8
	LCORR(4)
	LSCALE
	VADDPS Y4, Y15, Y15
	LNEXT(18)
	JNZ  q4_0block
	MVSTORE
	JNZ  q4_0group
	VZEROUPPER
	RET

// func q5_0MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int)
TEXT ·q5_0MatVecAVX2(SB), NOSPLIT, $0-64
	LMVARGS

q5_0group:
	LMVGROUP(cx)

q5_0block:
	LBLOCK(176)
	ROWTREE(Q50ROW, Y8, Y9, Y10, Y4)
	LSUM8
	LCORR(3)
	LSCALE
	VADDPS Y4, Y15, Y15
	LNEXT(22)
	JNZ  q5_0block
	MVSTORE
	JNZ  q5_0group
	VZEROUPPER
	RET

// func q4_1MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, sx *float32, nb int)
TEXT ·q4_1MatVecAVX2(SB), NOSPLIT, $0-64
	LMVARGS

q4_1group:
	LMVGROUP(sx)

q4_1block:
	LBLOCK(160)
	ROWTREE(Q41ROW, Y8, Y9, Y10, Y4)
	LSUM8
	LSCALE
	LMIN
	VADDPS Y4, Y15, Y15
	LNEXT(20)
	JNZ  q4_1block
	MVSTORE
	JNZ  q4_1group
	VZEROUPPER
	RET

// func q5_1MatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, sx *float32, nb int)
TEXT ·q5_1MatVecAVX2(SB), NOSPLIT, $0-64
	LMVARGS

q5_1group:
	LMVGROUP(sx)

q5_1block:
	LBLOCK(192)
	ROWTREE(Q51ROW, Y8, Y9, Y10, Y4)
	LSUM8
	LSCALE
	LMIN
	VADDPS Y4, Y15, Y15
	LNEXT(24)
	JNZ  q5_1block
	MVSTORE
	JNZ  q5_1group
	VZEROUPPER
	RET

// func tabMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int, kv *[32]int8, mx int)
//
// The table formats (tab.go), IQ4_NL (mx 0: a float16 d, then the 16
// bytes of indices; 18 bytes a block) and MXFP4 (mx 1: an E8M0 exponent,
// d = 2^(e-128), then the indices; 17 bytes), kv their levels in both
// lanes. R8 walks the blocks' indices (the scale is the 2 or 1 bytes
// before), R9 is the block size.
TEXT ·tabMatVecAVX2(SB), NOSPLIT, $0-80
	LMVARGS
	MOVQ kv+64(FP), AX
	VMOVDQU (AX), Y12
	MOVQ $18, R9
	SUBQ mx+72(FP), R9

tabgroup:
	LMVGROUP(cx)
	LEAQ -16(R8)(R9*1), R8

tabblock:
	PREFETCHT0 (DI)
	PREFETCHT0 64(DI)
	PREFETCHT0 128(DI)
	LEAQ (DI)(R9*8), DI
	ROW36
	VMOVDQU (SI), Y11
	ROWTREE(TABROW, Y8, Y9, Y10, Y4)
	LSUM8
	CMPQ mx+72(FP), $0
	JNE  tabe8m0
	ROWF16(-2, X0, Y0)
	JMP  tabscale

tabe8m0:
	ROWE8M0(-1, X0, Y0, Y1, Y3)

tabscale:
	LSCALEY0
	VADDPS Y4, Y15, Y15
	ADDQ R9, R8
	ADDQ $32, SI
	ADDQ $4, R11
	ADDQ $4, BX
	DECQ CX
	JNZ  tabblock
	MVSTORE
	JNZ  tabgroup
	VZEROUPPER
	RET
