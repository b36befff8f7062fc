//go:build arm64 && !purego

#include "textflag.h"
#include "simd_arm64.h"

// func q8TileSMMLA(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)
//
// q8TileSDOT with SMMLA (FEAT_I8MM), which multiplies a pair of rows by a
// pair of tokens, 8 bytes of each, into the four int32 lanes [row 0 token
// 0, row 0 token 1, row 1 token 0, row 1 token 1]: ZIP1 and ZIP2 pair the
// 8-byte pieces of rows 0 and 1 (A), 2 and 3 (B), and of tokens 0 and 1
// (P), 2 and 3 (Q); four SMMLAs give a pair of rows times a pair of tokens
// over a block, its exact int32 sums, which are combined with the scales
// (dw of the rows paired as the lanes, times dx of the tokens) as q8DotGo
// does: each element's sums have the bits of the other kernels'. UZP1
// and UZP2 put each token's four rows together at the end.
TEXT ·q8TileSMMLA(SB), NOSPLIT, $0-56
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	LSL  $2, R1
	MOVD w+16(FP), R6
	MOVD rb+24(FP), R2
	ADD  R2, R6, R7
	ADD  R2, R7, R8
	ADD  R2, R8, R9
	MOVD qs+32(FP), R4
	MOVD dsx+40(FP), R5
	MOVD nb+48(FP), R15
	ZERO(28)
	ZERO(29)
	ZERO(30)
	ZERO(31)

mmblock:
	VLD1.P 2(R6), V10.H[0]
	VLD1.P 32(R6), [V2.D2, V3.D2]
	VLD1.P 2(R7), V10.H[1]
	VLD1.P 32(R7), [V4.D2, V5.D2]
	VLD1.P 2(R8), V10.H[2]
	VLD1.P 32(R8), [V6.D2, V7.D2]
	VLD1.P 2(R9), V10.H[3]
	VLD1.P 32(R9), [V8.D2, V9.D2]
	VLD1.P 64(R4), [V11.D2, V12.D2, V13.D2, V14.D2]
	VLD1.P 64(R4), [V15.D2, V16.D2, V17.D2, V18.D2]
	VLD1.P 64(R5), [V24.D2, V25.D2, V26.D2, V27.D2]
	FCVTL4S(10, 10)

	// The pieces of 8 bytes, paired: A = {V2, V19, V3, V4}, B = {V6, V20,
	// V7, V8}, P = {V11, V21, V12, V13}, Q = {V15, V22, V16, V17}.
	ZIP22D(19, 2, 4)
	ZIP12D(2, 2, 4)
	ZIP22D(4, 3, 5)
	ZIP12D(3, 3, 5)
	ZIP22D(20, 6, 8)
	ZIP12D(6, 6, 8)
	ZIP22D(8, 7, 9)
	ZIP12D(7, 7, 9)
	ZIP22D(21, 11, 13)
	ZIP12D(11, 11, 13)
	ZIP22D(13, 12, 14)
	ZIP12D(12, 12, 14)
	ZIP22D(22, 15, 17)
	ZIP12D(15, 15, 17)
	ZIP22D(17, 16, 18)
	ZIP12D(16, 16, 18)

	// AP in V0, AQ in V1, BP in V5, BQ in V9.
	ZERO(0)
	ZERO(1)
	ZERO(5)
	ZERO(9)
	SMMLA(0, 2, 11)
	SMMLA(1, 2, 15)
	SMMLA(5, 6, 11)
	SMMLA(9, 6, 15)
	SMMLA(0, 19, 21)
	SMMLA(1, 19, 22)
	SMMLA(5, 20, 21)
	SMMLA(9, 20, 22)
	SMMLA(0, 3, 12)
	SMMLA(1, 3, 16)
	SMMLA(5, 7, 12)
	SMMLA(9, 7, 16)
	SMMLA(0, 4, 13)
	SMMLA(1, 4, 17)
	SMMLA(5, 8, 13)
	SMMLA(9, 8, 17)

	// dw * dx in the lanes' order: rows [0, 0, 1, 1] (A) or [2, 2, 3, 3]
	// (B) times tokens [0, 1, 0, 1] (P) or [2, 3, 2, 3] (Q).
	ZIP14S(14, 10, 10)
	ZIP24S(18, 10, 10)
	ZIP14S(23, 24, 25)
	ZIP14S(24, 26, 27)
	FMUL4S(10, 14, 23)
	FMUL4S(14, 14, 24)
	FMUL4S(19, 18, 23)
	FMUL4S(18, 18, 24)

	SCVTF4S(0, 0)
	SCVTF4S(1, 1)
	SCVTF4S(5, 5)
	SCVTF4S(9, 9)
	FMUL4S(0, 0, 10)
	FMUL4S(1, 1, 14)
	FMUL4S(5, 5, 19)
	FMUL4S(9, 9, 18)
	FADD4S(28, 28, 0)
	FADD4S(29, 29, 1)
	FADD4S(30, 30, 5)
	FADD4S(31, 31, 9)
	SUBS $1, R15
	BNE  mmblock

	UZP14S(0, 28, 30)
	UZP24S(1, 28, 30)
	UZP14S(2, 29, 31)
	UZP24S(3, 29, 31)
	VST1 [V0.D2], (R0)
	ADD  R1, R0
	VST1 [V1.D2], (R0)
	ADD  R1, R0
	VST1 [V2.D2], (R0)
	ADD  R1, R0
	VST1 [V3.D2], (R0)
	RET
