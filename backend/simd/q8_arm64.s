//go:build arm64 && !purego

#include "textflag.h"
#include "simd_arm64.h"

// Q8_0 kernels. A block's product is an exact int32 sum: SDOT, or without
// the dot product extension SMULL and SMULL2 (int16 products) added in
// pairs by SADDLP and SADALP. It is combined with the scales as q8DotGo
// does, acc += float32(s) * (dw * dx), each product and sum rounded (no
// fused multiply-add), blocks in order; so every kernel gives the bits of
// the Go reference.

// DOTNEON adds to int32 lanes acc the products of the 32 int8 values of
// wl, wh (a weight block) with those of xl, xh (an activation block):
// SMULL and SMULL2 give int16 products, SADDLP and SADALP add them in
// pairs; t and u are temporaries.
#define DOTNEON(acc, wl, wh, xl, xh, t, u) \
	SMULL8H(t, wl, xl); \
	SMULL28H(u, wl, xl); \
	SADDLP4S(acc, t); \
	SADALP4S(acc, u); \
	SMULL8H(t, wh, xh); \
	SMULL28H(u, wh, xh); \
	SADALP4S(acc, t); \
	SADALP4S(acc, u)

// DOTSDOT sets int32 lanes acc to the products of wl, wh with xl, xh as
// DOTNEON does, with SDOT.
#define DOTSDOT(acc, wl, wh, xl, xh, t, u) \
	ZERO(acc); \
	SDOT(acc, wl, xl); \
	SDOT(acc, wh, xh)

// MVLOAD loads the next block of the activation (V0, V1, its scale in
// every lane of V28) and of the eight weight rows at R6..R13: their
// scales to the half-precision lanes of V26, their values to V2..V17.
#define MVLOAD \
	VLD1.P  32(R4), [V0.D2, V1.D2]; \
	VLD1R.P 4(R5), [V28.S4]; \
	VLD1.P  2(R6), V26.H[0]; \
	VLD1.P  32(R6), [V2.D2, V3.D2]; \
	VLD1.P  2(R7), V26.H[1]; \
	VLD1.P  32(R7), [V4.D2, V5.D2]; \
	VLD1.P  2(R8), V26.H[2]; \
	VLD1.P  32(R8), [V6.D2, V7.D2]; \
	VLD1.P  2(R9), V26.H[3]; \
	VLD1.P  32(R9), [V8.D2, V9.D2]; \
	VLD1.P  2(R10), V26.H[4]; \
	VLD1.P  32(R10), [V10.D2, V11.D2]; \
	VLD1.P  2(R11), V26.H[5]; \
	VLD1.P  32(R11), [V12.D2, V13.D2]; \
	VLD1.P  2(R12), V26.H[6]; \
	VLD1.P  32(R12), [V14.D2, V15.D2]; \
	VLD1.P  2(R13), V26.H[7]; \
	VLD1.P  32(R13), [V16.D2, V17.D2]

// MVDOTS sets V18..V25 to the eight rows' block products with DOT.
#define MVDOTS(DOT) \
	DOT(18, 2, 3, 0, 1, 27, 31); \
	DOT(19, 4, 5, 0, 1, 27, 31); \
	DOT(20, 6, 7, 0, 1, 27, 31); \
	DOT(21, 8, 9, 0, 1, 27, 31); \
	DOT(22, 10, 11, 0, 1, 27, 31); \
	DOT(23, 12, 13, 0, 1, 27, 31); \
	DOT(24, 14, 15, 0, 1, 27, 31); \
	DOT(25, 16, 17, 0, 1, 27, 31)

// MVCOMBINE adds float32(s) * (dw * dx) of the eight rows to V29 (rows
// 0..3) and V30 (rows 4..7): V18..V25's lanes summed per row, converted,
// and multiplied by the scales.
#define MVCOMBINE \
	ADDP4S(18, 18, 19); \
	ADDP4S(20, 20, 21); \
	ADDP4S(18, 18, 20); \
	ADDP4S(22, 22, 23); \
	ADDP4S(24, 24, 25); \
	ADDP4S(22, 22, 24); \
	SCVTF4S(18, 18); \
	SCVTF4S(22, 22); \
	FCVTL4S(27, 26); \
	FCVTL24S(26, 26); \
	FMUL4S(27, 27, 28); \
	FMUL4S(26, 26, 28); \
	FMUL4S(18, 18, 27); \
	FMUL4S(22, 22, 26); \
	FADD4S(29, 29, 18); \
	FADD4S(30, 30, 22)

// Q8MATVEC is the body of q8MatVecSDOT and q8MatVecNEON: groups of eight
// rows, rb bytes apart from w, each times the activation (qs, ds) over nb
// blocks, results to y.
#define Q8MATVEC(DOT) \
	MOVD y+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD rb+16(FP), R2; \
	MOVD groups+24(FP), R3; \
	MOVD qs+32(FP), R19; \
	MOVD ds+40(FP), R20; \
	MOVD nb+48(FP), R21; \
mvgroup: \
	MOVD R1, R6; \
	ADD  R2, R6, R7; \
	ADD  R2, R7, R8; \
	ADD  R2, R8, R9; \
	ADD  R2, R9, R10; \
	ADD  R2, R10, R11; \
	ADD  R2, R11, R12; \
	ADD  R2, R12, R13; \
	ADD  R2<<3, R1; \
	MOVD R19, R4; \
	MOVD R20, R5; \
	MOVD R21, R15; \
	ZERO(29); \
	ZERO(30); \
mvblock: \
	MVLOAD; \
	MVDOTS(DOT); \
	MVCOMBINE; \
	SUBS $1, R15; \
	BNE  mvblock; \
	VST1.P [V29.D2, V30.D2], 32(R0); \
	SUBS $1, R3; \
	BNE  mvgroup; \
	RET

// TILEROWS loads the next block of the four weight rows at R6..R9: their
// scales widened to V10, their values to V2..V9; and the scales of the
// four tokens, each in every lane of V24..V27.
#define TILEROWS \
	VLD1.P 2(R6), V10.H[0]; \
	VLD1.P 32(R6), [V2.D2, V3.D2]; \
	VLD1.P 2(R7), V10.H[1]; \
	VLD1.P 32(R7), [V4.D2, V5.D2]; \
	VLD1.P 2(R8), V10.H[2]; \
	VLD1.P 32(R8), [V6.D2, V7.D2]; \
	VLD1.P 2(R9), V10.H[3]; \
	VLD1.P 32(R9), [V8.D2, V9.D2]; \
	FCVTL4S(10, 10); \
	VLD1.P 64(R5), [V24.D2, V25.D2, V26.D2, V27.D2]

// TILETOKEN adds to acc (the four rows' sums for one token) float32(s) *
// (dw * dx) for the token's block at xl, xh with scale dx: its products
// with the four rows in a0..a3, their lanes summed, converted, scaled; t
// and u are temporaries.
#define TILETOKEN(DOT, xl, xh, a0, a1, a2, a3, dx, acc, t, u) \
	DOT(a0, 2, 3, xl, xh, t, u); \
	DOT(a1, 4, 5, xl, xh, t, u); \
	DOT(a2, 6, 7, xl, xh, t, u); \
	DOT(a3, 8, 9, xl, xh, t, u); \
	ADDP4S(a0, a0, a1); \
	ADDP4S(a2, a2, a3); \
	ADDP4S(a0, a0, a2); \
	SCVTF4S(a0, a0); \
	FMUL4S(t, 10, dx); \
	FMUL4S(a0, a0, t); \
	FADD4S(acc, acc, a0)

// Q8TILE is the body of q8TileSDOT and q8TileNEON.
#define Q8TILE(DOT) \
	MOVD y+0(FP), R0; \
	MOVD ldy+8(FP), R1; \
	LSL  $2, R1; \
	MOVD w+16(FP), R6; \
	MOVD rb+24(FP), R2; \
	ADD  R2, R6, R7; \
	ADD  R2, R7, R8; \
	ADD  R2, R8, R9; \
	MOVD qs+32(FP), R4; \
	MOVD dsx+40(FP), R5; \
	MOVD nb+48(FP), R15; \
	ZERO(28); \
	ZERO(29); \
	ZERO(30); \
	ZERO(31); \
tblock: \
	TILEROWS; \
	VLD1.P 64(R4), [V11.D2, V12.D2, V13.D2, V14.D2]; \
	TILETOKEN(DOT, 11, 12, 16, 17, 18, 19, 24, 28, 0, 1); \
	TILETOKEN(DOT, 13, 14, 20, 21, 22, 23, 25, 29, 15, 1); \
	VLD1.P 64(R4), [V11.D2, V12.D2, V13.D2, V14.D2]; \
	TILETOKEN(DOT, 11, 12, 16, 17, 18, 19, 26, 30, 0, 1); \
	TILETOKEN(DOT, 13, 14, 20, 21, 22, 23, 27, 31, 15, 1); \
	SUBS $1, R15; \
	BNE  tblock; \
	VST1 [V28.D2], (R0); \
	ADD  R1, R0; \
	VST1 [V29.D2], (R0); \
	ADD  R1, R0; \
	VST1 [V30.D2], (R0); \
	ADD  R1, R0; \
	VST1 [V31.D2], (R0); \
	RET

// func quantizeQ8Asm(qs *int8, qstride int, ds *float32, cx *int32, x *float32, nb int)
//
// Quantizes nb blocks of 32 values from x as quantizeQ8Go: d = max|x|/127
// (FDIVS), id = 1/d (0 for a block of zeros), q = x*id rounded to nearest
// even (FCVTNS), cx = -128 * sum(q).
TEXT ·quantizeQ8Asm(SB), NOSPLIT, $0-48
	MOVD  qs+0(FP), R0
	MOVD  qstride+8(FP), R1
	MOVD  ds+16(FP), R2
	MOVD  cx+24(FP), R3
	MOVD  x+32(FP), R4
	MOVD  nb+40(FP), R5
	MOVW  $0x42fe0000, R6 // 127
	FMOVS R6, F30
	FMOVS $(1.0), F29

qblock:
	VLD1.P 64(R4), [V0.D2, V1.D2, V2.D2, V3.D2]
	VLD1.P 64(R4), [V4.D2, V5.D2, V6.D2, V7.D2]
	FABS4S(16, 0)
	FABS4S(17, 1)
	FABS4S(18, 2)
	FABS4S(19, 3)
	FABS4S(20, 4)
	FABS4S(21, 5)
	FABS4S(22, 6)
	FABS4S(23, 7)
	FMAX4S(16, 16, 17)
	FMAX4S(18, 18, 19)
	FMAX4S(20, 20, 21)
	FMAX4S(22, 22, 23)
	FMAX4S(16, 16, 18)
	FMAX4S(20, 20, 22)
	FMAX4S(16, 16, 20)
	FMAXV(16, 16)
	FDIVS   F30, F16, F17 // d
	FMOVS.P F17, 4(R2)
	FDIVS   F17, F29, F18 // 1/d
	FCMPS   $(0.0), F17
	FCSELS  EQ, F17, F18, F18 // id: 0 for a block of zeros
	FMULEL4S(0, 0, 18, 0)
	FMULEL4S(1, 1, 18, 0)
	FMULEL4S(2, 2, 18, 0)
	FMULEL4S(3, 3, 18, 0)
	FMULEL4S(4, 4, 18, 0)
	FMULEL4S(5, 5, 18, 0)
	FMULEL4S(6, 6, 18, 0)
	FMULEL4S(7, 7, 18, 0)
	FCVTNS4S(0, 0)
	FCVTNS4S(1, 1)
	FCVTNS4S(2, 2)
	FCVTNS4S(3, 3)
	FCVTNS4S(4, 4)
	FCVTNS4S(5, 5)
	FCVTNS4S(6, 6)
	FCVTNS4S(7, 7)
	ADD4S(16, 0, 1)
	ADD4S(17, 2, 3)
	ADD4S(18, 4, 5)
	ADD4S(19, 6, 7)
	ADD4S(16, 16, 17)
	ADD4S(18, 18, 19)
	ADD4S(16, 16, 18)
	ADDV4S(16, 16)
	FMOVS  F16, R7
	NEGW   R7, R7
	LSLW   $7, R7, R7
	MOVW.P R7, 4(R3)
	XTN4H(20, 0)
	XTN28H(20, 1)
	XTN4H(21, 2)
	XTN28H(21, 3)
	XTN4H(22, 4)
	XTN28H(22, 5)
	XTN4H(23, 6)
	XTN28H(23, 7)
	XTN8B(24, 20)
	XTN216B(24, 21)
	XTN8B(25, 22)
	XTN216B(25, 23)
	VST1 [V24.D2, V25.D2], (R0)
	ADD  R1, R0
	SUBS $1, R5
	BNE  qblock
	RET

// func q8MatVecSDOT(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)
//
// y[r] = q8DotGo of row r (rb bytes apart from w) with the activation
// (qs, ds) of nb blocks, for the groups*8 rows r; SDOT.
TEXT ·q8MatVecSDOT(SB), NOSPLIT, $0-56
	Q8MATVEC(DOTSDOT)

// func q8MatVecNEON(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)
//
// q8MatVecSDOT without SDOT.
TEXT ·q8MatVecNEON(SB), NOSPLIT, $0-56
	Q8MATVEC(DOTNEON)

// func q8TileSDOT(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)
//
// The 4x4 tile of q8TileGo: rows rb bytes apart from w, four tokens
// block-interleaved in qs, each block's scales four times each in dsx,
// token j's four results to y[j*ldy:]; SDOT.
TEXT ·q8TileSDOT(SB), NOSPLIT, $0-56
	Q8TILE(DOTSDOT)

// func q8TileNEON(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)
//
// q8TileSDOT without SDOT.
TEXT ·q8TileNEON(SB), NOSPLIT, $0-56
	Q8TILE(DOTNEON)
