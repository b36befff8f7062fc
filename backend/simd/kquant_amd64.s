//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// K-quant kernels: the Q8_K activation quantizer, the matrix-vector
// kernels of each K format (eight rows at a time, reading the weights as
// the file stores them), and the tile kernels over packed rows (kquant.go
// defines the arithmetic and the packed layout). Every kernel computes the
// integers A and B of a super-block exactly, then
//
//	acc += float32(A)*(d*dx) - float32(B)*(dm*dx)
//
// (without mins: acc += float32(A)*(d*dx)) with one rounding per
// operation, eight rows (or four tokens) per vector.

// VPERMD indices that undo the lane interleaving of VPACKSSDW/VPACKSSWB.
DATA kPackPerm<>+0(SB)/4, $0
DATA kPackPerm<>+4(SB)/4, $4
DATA kPackPerm<>+8(SB)/4, $1
DATA kPackPerm<>+12(SB)/4, $5
DATA kPackPerm<>+16(SB)/4, $2
DATA kPackPerm<>+20(SB)/4, $6
DATA kPackPerm<>+24(SB)/4, $3
DATA kPackPerm<>+28(SB)/4, $7
GLOBL kPackPerm<>(SB), RODATA|NOPTR, $32

// Byte and word constants.
SPLAT32(kOnes8<>, $0x0101010101010101)
SPLAT32(kOnes16<>, $0x0001000100010001)
SPLAT32(kNib<>, $0x0f0f0f0f0f0f0f0f)

// Constants of the Q4_K/Q5_K scale decoding (see Q45SCALES).
DATA kScShift<>+0(SB)/4, $0
DATA kScShift<>+4(SB)/4, $0
DATA kScShift<>+8(SB)/4, $0
DATA kScShift<>+12(SB)/4, $4
GLOBL kScShift<>(SB), RODATA|NOPTR, $16

DATA kScMask1<>+0(SB)/4, $0x3f3f3f3f
DATA kScMask1<>+4(SB)/4, $0x0f0f0f0f
DATA kScMask1<>+8(SB)/4, $0x3f3f3f3f
DATA kScMask1<>+12(SB)/4, $0x0f0f0f0f
GLOBL kScMask1<>(SB), RODATA|NOPTR, $16

DATA kScMask2<>+0(SB)/4, $0
DATA kScMask2<>+4(SB)/4, $0x30303030
DATA kScMask2<>+8(SB)/4, $0
DATA kScMask2<>+12(SB)/4, $0x30303030
GLOBL kScMask2<>(SB), RODATA|NOPTR, $16

// The word shuffle that gathers, in each lane, the low halves of four
// dwords then their high halves (the d and dmin of four rows).
DATA kHalfSplit<>+0(SB)/8, $0x0d0c090805040100
DATA kHalfSplit<>+8(SB)/8, $0x0f0e0b0a07060302
DATA kHalfSplit<>+16(SB)/8, $0x0d0c090805040100
DATA kHalfSplit<>+24(SB)/8, $0x0f0e0b0a07060302
GLOBL kHalfSplit<>(SB), RODATA|NOPTR, $32

// Q45SCALES decodes the 12 packed 6-bit scales and mins of the Q4_K or
// Q5_K block at AX: the scales sc0..7, each twice as int16 in a dword, to
// 0..15(SP) (sc0..3) and 32..47(SP) (sc4..7), and the mins m0..7 as int16
// to X4.
//
//	sc0..3 = b0..3 & 63              m0..3 = b4..7 & 63
//	sc4..7 = b8..11 & 15 | (b0..3 >> 6) << 4
//	m4..7  = b8..11 >> 4 | (b4..7 >> 6) << 4
#define Q45SCALES \
	VMOVDQU 4(AX), X0; \
	VPSHUFD $0x98, X0, X1; \
	VPSRLVD kScShift<>(SB), X1, X1; \
	VPAND kScMask1<>(SB), X1, X1; \
	VPSHUFD $0x50, X0, X2; \
	VPSRLD $2, X2, X2; \
	VPAND kScMask2<>(SB), X2, X2; \
	VPOR X2, X1, X1; \
	VPMOVZXBW X1, Y1; \
	VPUNPCKLWD Y1, Y1, Y2; \
	VPUNPCKHWD Y1, Y1, Y3; \
	VMOVDQU Y2, 0(SP); \
	VMOVDQU Y3, 32(SP); \
	VEXTRACTI128 $1, Y1, X4

// KNIBS loads the 32 bytes of nibbles at off(AX): low nibbles to Y7, high
// ones to Y6.
#define KNIBS(off) \
	VMOVDQU off(AX), Y6; \
	VPAND Y14, Y6, Y7; \
	VPSRLW $4, Y6, Y6; \
	VPAND Y14, Y6, Y6

// KSCALE2 adds to Y5 the products of the values in Y7 and Y6 with the
// activations 64j..(SI), times their sub-block scales (2j, 2j+1) at
// sclo(SP) and schi(SP). KSCALE2V is KSCALE2 with VNNI: VPDPWSSD scales
// and adds in one.
#define KSCALE2(j, sclo, schi) \
	VPMADDUBSW 64*j(SI), Y7, Y7; \
	VPBROADCASTD sclo(SP), Y8; \
	VPMADDWD Y8, Y7, Y7; \
	VPMADDUBSW 64*j+32(SI), Y6, Y6; \
	VPBROADCASTD schi(SP), Y9; \
	VPMADDWD Y9, Y6, Y6; \
	VPADDD Y7, Y5, Y5; \
	VPADDD Y6, Y5, Y5

#define KSCALE2V(j, sclo, schi) \
	VPMADDUBSW 64*j(SI), Y7, Y7; \
	VPDPWSSD.BCST sclo(SP), Y7, Y5; \
	VPMADDUBSW 64*j+32(SI), Y6, Y6; \
	VPDPWSSD.BCST schi(SP), Y6, Y5

// KROWAB finishes a row with mins: dst = its A (Y5) in four int32 lanes
// (to sum) | its B (X4) in four.
#define KROWAB(dst) \
	VEXTRACTI128 $1, Y5, X6; \
	VPADDD X6, X5, X5; \
	VINSERTI128 $1, X4, Y5, dst

// Q4KCHUNK adds to Y5 the products of the 64 values of Q4_K bytes
// 16+32j..(AX) with the activations 64j..(SI), times their sub-block
// scales (2j, 2j+1) at sclo(SP) and schi(SP).
#define Q4KCHUNK(j, sclo, schi) \
	KNIBS(16+32*j); \
	KSCALE2(j, sclo, schi)

// Q4KROW computes the row at AX: dst = its A in four int32 lanes (to sum)
// | its B in four.
#define Q4KROW(dst) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	ADDQ $144, DI; \
	Q45SCALES; \
	VPMADDWD 32(BX), X4, X4; \
	VPXOR Y5, Y5, Y5; \
	Q4KCHUNK(0, 0, 4); \
	Q4KCHUNK(1, 8, 12); \
	Q4KCHUNK(2, 32, 36); \
	Q4KCHUNK(3, 40, 44); \
	KROWAB(dst)

SPLAT32(k10<>, $0x1010101010101010)

// Q5KCHUNK is Q4KCHUNK for Q5_K (nibbles at 48+32j(AX)), with the fifth
// bits of the two halves from the qh bytes in Y0, moved to bit 4 by SLO
// and SHI (into Y1 and Y2), scaled by SCALE (KSCALE2 or KSCALE2V).
#define Q5KCHUNK(j, sclo, schi, SLO, SHI, SCALE) \
	KNIBS(48+32*j); \
	SLO; \
	VPAND k10<>(SB), Y1, Y1; \
	VPOR Y1, Y7, Y7; \
	SHI; \
	VPAND k10<>(SB), Y2, Y2; \
	VPOR Y2, Y6, Y6; \
	SCALE(j, sclo, schi)

#define Q5B0 VPSLLW $4, Y0, Y1
#define Q5B1 VPSLLW $3, Y0, Y2
#define Q5B2 VPSLLW $2, Y0, Y1
#define Q5B3 VPSLLW $1, Y0, Y2
#define Q5B4 VMOVDQU Y0, Y1
#define Q5B5 VPSRLW $1, Y0, Y2
#define Q5B6 VPSRLW $2, Y0, Y1
#define Q5B7 VPSRLW $3, Y0, Y2

// Q5KROW is Q4KROW for Q5_K; Q5KROWV the same with VNNI.
#define Q5KROWS(dst, SCALE) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	ADDQ $176, DI; \
	Q45SCALES; \
	VPMADDWD 32(BX), X4, X4; \
	VMOVDQU 16(AX), Y0; \
	VPXOR Y5, Y5, Y5; \
	Q5KCHUNK(0, 0, 4, Q5B0, Q5B1, SCALE); \
	Q5KCHUNK(1, 8, 12, Q5B2, Q5B3, SCALE); \
	Q5KCHUNK(2, 32, 36, Q5B4, Q5B5, SCALE); \
	Q5KCHUNK(3, 40, 44, Q5B6, Q5B7, SCALE); \
	KROWAB(dst)

#define Q5KROW(dst) Q5KROWS(dst, KSCALE2)
#define Q5KROWV(dst) Q5KROWS(dst, KSCALE2V)

SPLAT32(k03<>, $0x0303030303030303)
SPLAT32(k04<>, $0x0404040404040404)
SPLAT16(k20b<>, $0x2020202020202020)
SPLAT16(k30b<>, $0x3030303030303030)
SPLAT16(k0f0f<>, $0x0f0f0f0f0f0f0f0f)

DATA k3Shift1<>+0(SB)/4, $0
DATA k3Shift1<>+4(SB)/4, $0
DATA k3Shift1<>+8(SB)/4, $4
DATA k3Shift1<>+12(SB)/4, $4
GLOBL k3Shift1<>(SB), RODATA|NOPTR, $16

DATA k3Shift2<>+0(SB)/4, $0
DATA k3Shift2<>+4(SB)/4, $2
DATA k3Shift2<>+8(SB)/4, $4
DATA k3Shift2<>+12(SB)/4, $6
GLOBL k3Shift2<>(SB), RODATA|NOPTR, $16

DATA kXSShift<>+0(SB)/4, $0
DATA kXSShift<>+4(SB)/4, $2
DATA kXSShift<>+8(SB)/4, $4
DATA kXSShift<>+12(SB)/4, $6
DATA kXSShift<>+16(SB)/4, $8
DATA kXSShift<>+20(SB)/4, $10
DATA kXSShift<>+24(SB)/4, $12
DATA kXSShift<>+28(SB)/4, $14
GLOBL kXSShift<>(SB), RODATA|NOPTR, $32

DATA kD3<>+0(SB)/4, $3
GLOBL kD3<>(SB), RODATA|NOPTR, $4

DATA kD32<>+0(SB)/4, $32
GLOBL kD32<>(SB), RODATA|NOPTR, $4

DATA kLow16<>+0(SB)/4, $0xffff
GLOBL kLow16<>(SB), RODATA|NOPTR, $4

// The 16 levels of IQ4_NL, in both lanes.
DATA kKV<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kKV<>+8(SB)/8, $0x7159453526190d01
DATA kKV<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA kKV<>+24(SB)/8, $0x7159453526190d01
GLOBL kKV<>(SB), RODATA|NOPTR, $32

// Q2KCHUNK adds to Y5 the products of values 128c+32j.. (bits 2j of the
// qs bytes in Y6, shifted by SH into Y7) with the activations, times the
// scales of shuffle j from S.
#define Q2KCHUNK(c, j, S, SH) \
	SH; \
	VPAND k03<>(SB), Y7, Y7; \
	VPMADDUBSW 128*c+32*j(SI), Y7, Y7; \
	VPSHUFB kQ6Shuf<>+32*j(SB), S, Y8; \
	VPMADDWD Y8, Y7, Y7; \
	VPADDD Y7, Y5, Y5

#define Q2S0 VMOVDQU Y6, Y7
#define Q2S1 VPSRLW $2, Y6, Y7
#define Q2S2 VPSRLW $4, Y6, Y7
#define Q2S3 VPSRLW $6, Y6, Y7

#define Q2KHALF(c, S) \
	VMOVDQU 16+32*c(AX), Y6; \
	Q2KCHUNK(c, 0, S, Q2S0); \
	Q2KCHUNK(c, 1, S, Q2S1); \
	Q2KCHUNK(c, 2, S, Q2S2); \
	Q2KCHUNK(c, 3, S, Q2S3)

// Q2KROW computes the Q2_K row at AX as Q4KROW: dst = A in four int32
// lanes | B in four.
#define Q2KROW(dst) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	ADDQ $84, DI; \
	VMOVDQU (AX), X0; \
	VPAND X14, X0, X1; \
	VPSRLW $4, X0, X2; \
	VPAND X14, X2, X2; \
	VPMOVZXBW X2, Y2; \
	VPMADDWD (BX), Y2, Y2; \
	VEXTRACTI128 $1, Y2, X3; \
	VPADDD X3, X2, X4; \
	VPMOVZXBW X1, Y1; \
	VPERMQ $0xee, Y1, Y3; \
	VPERMQ $0x44, Y1, Y1; \
	VPXOR Y5, Y5, Y5; \
	Q2KHALF(0, Y1); \
	Q2KHALF(1, Y3); \
	KROWAB(dst)

// Q3KCHUNK adds to Y5 the products of values 128c+32j.. (low bits: bits 2j
// of the qs bytes in Y6, by SL into Y7; high bit: bit 4c+j of the hmask
// bytes in Y0, by SH into Y8 at bit 2) with the activations, times the
// scales of shuffle j from S.
#define Q3KCHUNK(c, j, S, SL, SH) \
	SL; \
	VPAND Y13, Y7, Y7; \
	SH; \
	VPAND k04<>(SB), Y8, Y8; \
	VPOR Y8, Y7, Y7; \
	VPMADDUBSW 128*c+32*j(SI), Y7, Y7; \
	VPSHUFB kQ6Shuf<>+32*j(SB), S, Y8; \
	VPMADDWD Y8, Y7, Y7; \
	VPADDD Y7, Y5, Y5

#define Q3H0 VPSLLW $2, Y0, Y8
#define Q3H1 VPSLLW $1, Y0, Y8
#define Q3H2 VMOVDQU Y0, Y8
#define Q3H3 VPSRLW $1, Y0, Y8
#define Q3H4 VPSRLW $2, Y0, Y8
#define Q3H5 VPSRLW $3, Y0, Y8
#define Q3H6 VPSRLW $4, Y0, Y8
#define Q3H7 VPSRLW $5, Y0, Y8

// Q3KROW computes the Q3_K row at AX: dst = A in eight int32 lanes (to
// sum). The values are taken plus 4 (0..7) and 4 times the scale-weighted
// sums of the activations subtracted.
#define Q3KROW(dst) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	ADDQ $110, DI; \
	VMOVDQU 94(AX), X0; \
	VPSRLDQ $2, X0, X0; \
	VPSHUFD $0x44, X0, X1; \
	VPSRLVD k3Shift1<>(SB), X1, X1; \
	VPAND k0f0f<>(SB), X1, X1; \
	VPSHUFD $0xaa, X0, X2; \
	VPSRLVD k3Shift2<>(SB), X2, X2; \
	VPSLLD $4, X2, X2; \
	VPAND k30b<>(SB), X2, X2; \
	VPOR X2, X1, X1; \
	VPSUBB k20b<>(SB), X1, X1; \
	VPMOVSXBW X1, Y1; \
	VPMADDWD (BX), Y1, Y2; \
	VPSLLD $2, Y2, Y2; \
	VPXOR Y5, Y5, Y5; \
	VPSUBD Y2, Y5, Y5; \
	VPERMQ $0xee, Y1, Y3; \
	VPERMQ $0x44, Y1, Y1; \
	VMOVDQU (AX), Y0; \
	VMOVDQU 32(AX), Y6; \
	Q3KCHUNK(0, 0, Y1, Q2S0, Q3H0); \
	Q3KCHUNK(0, 1, Y1, Q2S1, Q3H1); \
	Q3KCHUNK(0, 2, Y1, Q2S2, Q3H2); \
	Q3KCHUNK(0, 3, Y1, Q2S3, Q3H3); \
	VMOVDQU 64(AX), Y6; \
	Q3KCHUNK(1, 0, Y3, Q2S0, Q3H4); \
	Q3KCHUNK(1, 1, Y3, Q2S1, Q3H5); \
	Q3KCHUNK(1, 2, Y3, Q2S2, Q3H6); \
	Q3KCHUNK(1, 3, Y3, Q2S3, Q3H7); \
	VMOVDQU Y5, dst

// XSCHUNK adds to Y5 the products of sub-block ib of the IQ4_XS block at
// AX (levels of its nibbles, signed: the sign moved onto the activations)
// with the activations, times its scale at 4*ib(SP).
#define XSCHUNK(ib) \
	VMOVDQU 8+16*ib(AX), X6; \
	VPSRLW $4, X6, X7; \
	VINSERTI128 $1, X7, Y6, Y6; \
	VPAND Y14, Y6, Y6; \
	VPSHUFB Y6, Y13, Y6; \
	VMOVDQU 32*ib(SI), Y7; \
	VPSIGNB Y6, Y7, Y7; \
	VPABSB Y6, Y6; \
	VPMADDUBSW Y7, Y6, Y6; \
	VPBROADCASTD 4*ib(SP), Y8; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y6, Y5, Y5

// XSROW computes the IQ4_XS row at AX: dst = A in eight int32 lanes (to
// sum). The eight 6-bit scales minus 32, each twice as int16, go to
// 0..31(SP).
#define XSROW(dst) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	ADDQ $136, DI; \
	VPMOVZXBW 4(AX), X0; \
	VPSLLW $4, X0, X1; \
	VPOR X1, X0, X0; \
	VPAND k0f0f<>(SB), X0, X0; \
	VPMOVZXBD X0, Y0; \
	VPBROADCASTD 2(AX), Y1; \
	VPSRLVD kXSShift<>(SB), Y1, Y1; \
	VPBROADCASTD kD3<>(SB), Y2; \
	VPAND Y2, Y1, Y1; \
	VPSLLD $4, Y1, Y1; \
	VPOR Y1, Y0, Y0; \
	VPBROADCASTD kD32<>(SB), Y2; \
	VPSUBD Y2, Y0, Y0; \
	VPBROADCASTD kLow16<>(SB), Y2; \
	VPAND Y2, Y0, Y1; \
	VPSLLD $16, Y0, Y0; \
	VPOR Y1, Y0, Y0; \
	VMOVDQU Y0, 0(SP); \
	VPXOR Y5, Y5, Y5; \
	XSCHUNK(0); \
	XSCHUNK(1); \
	XSCHUNK(2); \
	XSCHUNK(3); \
	XSCHUNK(4); \
	XSCHUNK(5); \
	XSCHUNK(6); \
	XSCHUNK(7); \
	VMOVDQU Y5, dst

// KDDMIN loads the float16 d and dmin at off of the eight rows of the
// block at R8 as float32: d to Y0, dmin to Y1.
#define KDDMIN(off) ROWF16X2(off, kHalfSplit<>(SB))

// KACCMIN adds to Y15 the eight rows' A*(d*dx) - B*(dmin*dx), from the
// row tree's rows 0..3 in Y10 and 4..7 in Y11 (A in the low lane, B in
// the high one) and d, dmin in Y0, Y1. KACC adds A*(d*dx), from the row
// tree's Y9 and Y10 (A in both lanes) and d in Y0.
#define KACCMIN \
	VBROADCASTSS (R11), Y2; \
	VMULPS Y2, Y0, Y0; \
	VMULPS Y2, Y1, Y1; \
	VPERM2I128 $0x20, Y11, Y10, Y3; \
	VPERM2I128 $0x31, Y11, Y10, Y4; \
	VCVTDQ2PS Y3, Y3; \
	VCVTDQ2PS Y4, Y4; \
	VMULPS Y0, Y3, Y3; \
	VMULPS Y1, Y4, Y4; \
	VSUBPS Y4, Y3, Y3; \
	VADDPS Y3, Y15, Y15

#define KACC \
	VBROADCASTSS (R11), Y2; \
	VMULPS Y2, Y0, Y0; \
	VPERM2I128 $0x20, Y10, Y9, Y1; \
	VPERM2I128 $0x31, Y10, Y9, Y3; \
	VPADDD Y3, Y1, Y1; \
	VCVTDQ2PS Y1, Y1; \
	VMULPS Y0, Y1, Y1; \
	VADDPS Y1, Y15, Y15

// The matrix-vector kernels below share one loop (simd_amd64.h): per
// group of eight rows and super-block, ROWTREE over the format's row
// macro, the rows' d (and dmin), then KACCMIN or KACC.

// func q4KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q4_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q4KMatVecAVX2(SB), NOSPLIT, $64-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14

q4kgroup:
	KMVGROUP

q4kblock:
	ROW36
	ROWTREE(Q4KROW, Y10, Y11, Y12, Y13)
	KDDMIN(0)
	KACCMIN
	KMVNEXT(144)
	JNZ  q4kblock
	MVSTORE
	JNZ  q4kgroup
	VZEROUPPER
	RET

// func q5KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q5_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q5KMatVecAVX2(SB), NOSPLIT, $64-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14

q5kgroup:
	KMVGROUP

q5kblock:
	ROW36
	ROWTREE(Q5KROW, Y10, Y11, Y12, Y13)
	KDDMIN(0)
	KACCMIN
	KMVNEXT(176)
	JNZ  q5kblock
	MVSTORE
	JNZ  q5kgroup
	VZEROUPPER
	RET

// The words of the Q6_K scale shuffles: chunk c of a half (32 values,
// sub-blocks 2c and 2c+1) takes scale word 2c in the low lane and 2c+1 in
// the high lane.
DATA kQ6Shuf<>+0(SB)/8, $0x0100010001000100
DATA kQ6Shuf<>+8(SB)/8, $0x0100010001000100
DATA kQ6Shuf<>+16(SB)/8, $0x0302030203020302
DATA kQ6Shuf<>+24(SB)/8, $0x0302030203020302
DATA kQ6Shuf<>+32(SB)/8, $0x0504050405040504
DATA kQ6Shuf<>+40(SB)/8, $0x0504050405040504
DATA kQ6Shuf<>+48(SB)/8, $0x0706070607060706
DATA kQ6Shuf<>+56(SB)/8, $0x0706070607060706
DATA kQ6Shuf<>+64(SB)/8, $0x0908090809080908
DATA kQ6Shuf<>+72(SB)/8, $0x0908090809080908
DATA kQ6Shuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kQ6Shuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kQ6Shuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kQ6Shuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kQ6Shuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kQ6Shuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kQ6Shuf<>(SB), RODATA|NOPTR, $128

SPLAT32(kMask30<>, $0x3030303030303030)

// Q6KCHUNK adds to Y2 the products of one chunk of 32 values (low bits in
// Y6, high bits in Y7, both in place) with the activations at xoff(SI),
// times the scales picked by shuffle soff from S.
#define Q6KCHUNK(xoff, soff, S) \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	VPMADDUBSW xoff(SI), Y6, Y6; \
	VPSHUFB kQ6Shuf<>+soff(SB), S, Y7; \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, Y2, Y2

// Q6KHALF adds to Y2 the products of half h (128 values) of the Q6_K
// block at AX, whose scales (as int16, both lanes) are in S.
#define Q6KHALF(h, S) \
	VMOVDQU 64*h(AX), Y3; \
	VMOVDQU 64*h+32(AX), Y4; \
	VMOVDQU 128+32*h(AX), Y5; \
	VPAND Y14, Y3, Y6; \
	VPSLLW $4, Y5, Y7; \
	Q6KCHUNK(128*h, 0, S); \
	VPAND Y14, Y4, Y6; \
	VPSLLW $2, Y5, Y7; \
	Q6KCHUNK(128*h+32, 32, S); \
	VPSRLW $4, Y3, Y6; \
	VPAND Y14, Y6, Y6; \
	VMOVDQU Y5, Y7; \
	Q6KCHUNK(128*h+64, 64, S); \
	VPSRLW $4, Y4, Y6; \
	VPAND Y14, Y6, Y6; \
	VPSRLW $2, Y5, Y7; \
	Q6KCHUNK(128*h+96, 96, S)

// Q6KROW computes the row at AX: dst = its A in eight int32 lanes (to
// sum). The values are taken unsigned (0..63) and 32 times the
// scale-weighted sums of the activations subtracted.
#define Q6KROW(dst) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	PREFETCHT0 192(DI); \
	ADDQ $210, DI; \
	VPMOVSXBW 192(AX), Y0; \
	VPMADDWD (BX), Y0, Y6; \
	VPSLLD $5, Y6, Y6; \
	VPXOR Y2, Y2, Y2; \
	VPSUBD Y6, Y2, Y2; \
	VPERMQ $0xee, Y0, Y1; \
	VPERMQ $0x44, Y0, Y0; \
	Q6KHALF(0, Y0); \
	Q6KHALF(1, Y1); \
	VMOVDQU Y2, dst

// func q6KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q6_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q6KMatVecAVX2(SB), NOSPLIT, $0-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14
	VMOVDQU kMask30<>(SB), Y13

q6kgroup:
	KMVGROUP

q6kblock:
	ROW36
	ROWTREE(Q6KROW, Y9, Y10, Y11, Y12)
	ROWF16(208, X0, Y0)
	KACC
	KMVNEXT(210)
	JNZ  q6kblock
	MVSTORE
	JNZ  q6kgroup
	VZEROUPPER
	RET

// QK8CHUNK quantizes the 32 floats at off(SI) with the scale inverse in
// Y7 to 32 int8 at qoff(DI), and leaves their sums of four in dst (eight
// int32: lanes 0..3 the first 16 values, 4..7 the last 16).
#define QK8CHUNK(off, qoff, dst) \
	VMULPS off(SI), Y7, Y0; \
	VMULPS off+32(SI), Y7, Y1; \
	VMULPS off+64(SI), Y7, Y2; \
	VMULPS off+96(SI), Y7, Y3; \
	VCVTPS2DQ Y0, Y0; \
	VCVTPS2DQ Y1, Y1; \
	VCVTPS2DQ Y2, Y2; \
	VCVTPS2DQ Y3, Y3; \
	VPACKSSDW Y1, Y0, Y0; \
	VPACKSSDW Y3, Y2, Y2; \
	VPACKSSWB Y2, Y0, Y0; \
	VPERMD Y0, Y11, Y0; \
	VMOVDQU Y0, qoff(DI); \
	VPMADDUBSW Y0, Y10, Y0; \
	VPMADDWD Y9, Y0, dst

// func quantizeQ8KAVX2(qs *int8, ds *float32, bs *int16, x *float32, nb int)
//
// Quantizes nb blocks of 256 floats as quantizeQ8KGo: d = max|x|/127 to
// ds[b], x * (1/d) rounded to nearest even to qs[b*256:], the 16 sums of
// 16 values and the 8 sums of 32 to bs[b*24:].
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-40
	MOVQ qs+0(FP), DI
	MOVQ ds+8(FP), R8
	MOVQ bs+16(FP), R9
	MOVQ x+24(FP), SI
	MOVQ nb+32(FP), CX
	MOVL $0x7fffffff, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15 // abs mask
	VMOVDQU kPackPerm<>(SB), Y11
	VMOVDQU kOnes8<>(SB), Y10
	VMOVDQU kOnes16<>(SB), Y9

kqblock:
	VANDPS (SI), Y15, Y0
	VANDPS 32(SI), Y15, Y1
	VANDPS 64(SI), Y15, Y2
	VANDPS 96(SI), Y15, Y3
	LEAQ 128(SI), AX
	MOVQ $7, DX

kqmax:
	VANDPS (AX), Y15, Y4
	VMAXPS Y4, Y0, Y0
	VANDPS 32(AX), Y15, Y5
	VMAXPS Y5, Y1, Y1
	VANDPS 64(AX), Y15, Y4
	VMAXPS Y4, Y2, Y2
	VANDPS 96(AX), Y15, Y5
	VMAXPS Y5, Y3, Y3
	ADDQ $128, AX
	DECQ DX
	JNZ  kqmax
	VMAXPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VMAXPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS  X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VMAXPS  X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VMAXPS  X1, X0, X0   // amax
	MOVL $0x42fe0000, AX // 127
	VMOVQ AX, X1
	VDIVSS  X1, X0, X6   // d = amax / 127
	VMOVSS  X6, (R8)
	MOVL $0x3f800000, AX // 1
	VMOVQ AX, X1
	VDIVSS  X6, X1, X7   // 1 / d
	VXORPS  X2, X2, X2
	VCMPSS  $4, X2, X6, X8 // d != 0
	VANDPS  X8, X7, X7   // id = d != 0 ? 1/d : 0
	VBROADCASTSS X7, Y7

	QK8CHUNK(0, 0, Y5)
	QK8CHUNK(128, 32, Y6)
	VPHADDD Y6, Y5, Y5
	QK8CHUNK(256, 64, Y6)
	QK8CHUNK(384, 96, Y8)
	VPHADDD Y8, Y6, Y6
	VPHADDD Y6, Y5, Y5 // sums of 16: #0 #2 #4 #6 | #1 #3 #5 #7
	QK8CHUNK(512, 128, Y6)
	QK8CHUNK(640, 160, Y8)
	VPHADDD Y8, Y6, Y6
	QK8CHUNK(768, 192, Y8)
	QK8CHUNK(896, 224, Y12)
	VPHADDD Y12, Y8, Y8
	VPHADDD Y8, Y6, Y6 // #8 #10 #12 #14 | #9 #11 #13 #15
	VPERM2I128 $0x20, Y6, Y5, Y8  // #0 #2 #4 #6 | #8 #10 #12 #14
	VPERM2I128 $0x31, Y6, Y5, Y12 // #1 #3 #5 #7 | #9 #11 #13 #15
	VPADDD Y12, Y8, Y13           // the sums of 32, in order
	VPUNPCKLDQ Y12, Y8, Y5        // #0..#3 | #8..#11
	VPUNPCKHDQ Y12, Y8, Y6        // #4..#7 | #12..#15
	VPACKSSDW Y6, Y5, Y5
	VMOVDQU Y5, (R9)
	VPACKSSDW Y13, Y13, Y13
	VPERMQ $0x08, Y13, Y13
	VMOVDQU X13, 32(R9)

	ADDQ $1024, SI
	ADDQ $256, DI
	ADDQ $4, R8
	ADDQ $48, R9
	DECQ CX
	JNZ  kqblock
	VZEROUPPER
	RET

// func q2KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q2_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q2KMatVecAVX2(SB), NOSPLIT, $0-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14

q2kgroup:
	KMVGROUP

q2kblock:
	ROW36
	ROWTREE(Q2KROW, Y10, Y11, Y12, Y13)
	KDDMIN(80)
	KACCMIN
	KMVNEXT(84)
	JNZ  q2kblock
	MVSTORE
	JNZ  q2kgroup
	VZEROUPPER
	RET

// func q3KMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q3_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q3KMatVecAVX2(SB), NOSPLIT, $0-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14
	VMOVDQU k03<>(SB), Y13

q3kgroup:
	KMVGROUP

q3kblock:
	ROW36
	ROWTREE(Q3KROW, Y9, Y10, Y11, Y12)
	ROWF16(108, X0, Y0)
	KACC
	KMVNEXT(110)
	JNZ  q3kblock
	MVSTORE
	JNZ  q3kgroup
	VZEROUPPER
	RET

// func iq4XSMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of IQ4_XS (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·iq4XSMatVecAVX2(SB), NOSPLIT, $32-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14
	VMOVDQU kKV<>(SB), Y13

xsgroup:
	KMVGROUP

xsblock:
	ROW36
	ROWTREE(XSROW, Y9, Y10, Y11, Y12)
	ROWF16(0, X0, Y0)
	KACC
	KMVNEXT(136)
	JNZ  xsblock
	MVSTORE
	JNZ  xsgroup
	VZEROUPPER
	RET

// func q5KMatVecVNNI(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q5_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q5KMatVecVNNI(SB), NOSPLIT, $64-72
	MVARGS
	VMOVDQU kNib<>(SB), Y14

q5kvgroup:
	KMVGROUP

q5kvblock:
	ROW36
	ROWTREE(Q5KROWV, Y10, Y11, Y12, Y13)
	KDDMIN(0)
	KACCMIN
	KMVNEXT(176)
	JNZ  q5kvblock
	MVSTORE
	JNZ  q5kvgroup
	VZEROUPPER
	RET
