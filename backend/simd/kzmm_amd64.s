//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// The Q4_K matrix-vector kernel on 512-bit vectors (AVX-512 BW and VNNI):
// eight rows at a time, two rows' scales decoded together, each 64 bytes
// of a row's nibbles read once into a vector holding two sub-blocks (low
// nibbles: sub-blocks 4k and 4k+2 of bytes 64k..64k+63, high nibbles:
// 4k+1 and 4k+3), multiplied by the activations gathered in that order
// (VPMADDUBSW) and by the sub-blocks' scales (VPERMW of the decoded
// scales, VPDPWSSD). The integers A and B of each row and super-block are
// exact and the float operations those of dotK, so the bits are the Go
// reference's.

// kZScIdx: the VPERMW indices (Z22..Z29) that spread each sub-block's
// scale word over the 32 bytes of its values in a nibble vector: vectors
// 0..3 for the first row of a pair (words 0..7), 4..7 for the second
// (words 16..23).
SPLAT32AT(kZScIdx<>, 0, $0x0000000000000000)
SPLAT32AT(kZScIdx<>, 32, $0x0002000200020002)
SPLAT32AT(kZScIdx<>, 64, $0x0001000100010001)
SPLAT32AT(kZScIdx<>, 96, $0x0003000300030003)
SPLAT32AT(kZScIdx<>, 128, $0x0004000400040004)
SPLAT32AT(kZScIdx<>, 160, $0x0006000600060006)
SPLAT32AT(kZScIdx<>, 192, $0x0005000500050005)
SPLAT32AT(kZScIdx<>, 224, $0x0007000700070007)
SPLAT32AT(kZScIdx<>, 256, $0x0010001000100010)
SPLAT32AT(kZScIdx<>, 288, $0x0012001200120012)
SPLAT32AT(kZScIdx<>, 320, $0x0011001100110011)
SPLAT32AT(kZScIdx<>, 352, $0x0013001300130013)
SPLAT32AT(kZScIdx<>, 384, $0x0014001400140014)
SPLAT32AT(kZScIdx<>, 416, $0x0016001600160016)
SPLAT32AT(kZScIdx<>, 448, $0x0015001500150015)
SPLAT32AT(kZScIdx<>, 480, $0x0017001700170017)
GLOBL kZScIdx<>(SB), RODATA|NOPTR, $512

DATA kZScShift<>+0(SB)/8, $0x0000000000000000
DATA kZScShift<>+8(SB)/8, $0x0000000400000000
DATA kZScShift<>+16(SB)/8, $0x0000000000000000
DATA kZScShift<>+24(SB)/8, $0x0000000400000000
GLOBL kZScShift<>(SB), RODATA|NOPTR, $32
SPLAT32(kZScMask1<>, $0x0f0f0f0f3f3f3f3f)
SPLAT32(kZScMask2<>, $0x3030303000000000)
DATA kZDDPerm<>+0(SB)/8, $0x0006000400020000
DATA kZDDPerm<>+8(SB)/8, $0x000e000c000a0008
DATA kZDDPerm<>+16(SB)/8, $0x0007000500030001
DATA kZDDPerm<>+24(SB)/8, $0x000f000d000b0009
GLOBL kZDDPerm<>(SB), RODATA|NOPTR, $32
DATA kZRowPerm<>+0(SB)/8, $0x0000000400000000
DATA kZRowPerm<>+8(SB)/8, $0x0000000500000001
DATA kZRowPerm<>+16(SB)/8, $0x0000000600000002
DATA kZRowPerm<>+24(SB)/8, $0x0000000700000003
GLOBL kZRowPerm<>(SB), RODATA|NOPTR, $32

// IDX8 loads the eight 64-byte VPERMW index vectors of table t into
// Z22..Z29.
#define IDX8(t) \
	VMOVDQU64 t+0(SB), Z22; \
	VMOVDQU64 t+64(SB), Z23; \
	VMOVDQU64 t+128(SB), Z24; \
	VMOVDQU64 t+192(SB), Z25; \
	VMOVDQU64 t+256(SB), Z26; \
	VMOVDQU64 t+320(SB), Z27; \
	VMOVDQU64 t+384(SB), Z28; \
	VMOVDQU64 t+448(SB), Z29

// PAIRSUM sums the partial sums of the four row pairs Z6..Z9 into Z2:
// each row's four dwords of a 128-bit lane added, the rows in the order
// 0,2,4,6, 1,3,5,7 within each lane.
#define PAIRSUM \
	VPUNPCKLDQ Z7, Z6, Z0; \
	VPUNPCKHDQ Z7, Z6, Z1; \
	VPADDD Z1, Z0, Z0; \
	VPUNPCKLDQ Z9, Z8, Z1; \
	VPUNPCKHDQ Z9, Z8, Z2; \
	VPADDD Z2, Z1, Z1; \
	VPUNPCKLQDQ Z1, Z0, Z2; \
	VPUNPCKHQDQ Z1, Z0, Z3; \
	VPADDD Z3, Z2, Z2

// Q4KZROW adds to ACC (VPMADDWD into it first) row AX's A partial sums:
// scales in Z1 as words (VPERMW indices I0..I3), activations Z16..Z19,
// nibble mask Z21. Clobbers Z2..Z5.
#define Q4KZROW(R, I0, I1, I2, I3, ACC) \
	VMOVDQU64 16(R), Z3; \
	VMOVDQU64 80(R), Z4; \
	VPANDD Z21, Z3, Z5; \
	VPSRLW $4, Z3, Z3; \
	VPANDD Z21, Z3, Z3; \
	VPMADDUBSW Z16, Z5, Z5; \
	VPERMW Z1, I0, Z2; \
	VPMADDWD Z2, Z5, ACC; \
	VPMADDUBSW Z17, Z3, Z3; \
	VPERMW Z1, I1, Z2; \
	VPDPWSSD Z2, Z3, ACC; \
	VPANDD Z21, Z4, Z5; \
	VPSRLW $4, Z4, Z4; \
	VPANDD Z21, Z4, Z4; \
	VPMADDUBSW Z18, Z5, Z5; \
	VPERMW Z1, I2, Z2; \
	VPDPWSSD Z2, Z5, ACC; \
	VPMADDUBSW Z19, Z4, Z4; \
	VPERMW Z1, I3, Z2; \
	VPDPWSSD Z2, Z4, ACC

// Q4KZPAIR computes rows AX and R9 of the current super-block into PR:
// 128-bit lanes A of row AX (four partial sums), its B, A of row R9, its
// B. Their first 16 bytes (d, dmin, scales) stay in YS for KZDD.
#define Q4KZPAIR(YS, XS, PR) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	PREFETCHT0 144(DI); \
	PREFETCHT0 208(DI); \
	PREFETCHT0 272(DI); \
	ADDQ $288, DI; \
	VMOVDQU (AX), XS; \
	VINSERTI128 $1, (R9), YS, YS; \
	VPSHUFD $0xED, YS, Y1; \
	VPSRLVD kZScShift<>(SB), Y1, Y1; \
	VPAND kZScMask1<>(SB), Y1, Y1; \
	VPSHUFD $0xA5, YS, Y2; \
	VPSRLD $2, Y2, Y2; \
	VPAND kZScMask2<>(SB), Y2, Y2; \
	VPOR Y2, Y1, Y1; \
	VPMOVZXBW Y1, Z1; \
	VPMADDWD Z20, Z1, PR; \
	Q4KZROW(AX, Z22, Z23, Z24, Z25, Z30); \
	Q4KZROW(R9, Z26, Z27, Z28, Z29, Z31); \
	VSHUFI64X2 $0x44, Z31, Z30, Z3; \
	VSHUFI64X2 $0xEE, Z31, Z30, Z4; \
	VPADDD Z4, Z3, Z3; \
	VSHUFI64X2 $0xB1, Z3, Z3, Z4; \
	VPADDD Z4, Z3, K1, PR

// func q4KMatVecZMM(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q4_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
TEXT ·q4KMatVecZMM(SB), NOSPLIT, $0-72
	MVARGS
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z21
	MOVL $0x0f0f, AX
	KMOVW AX, K1
	IDX8(kZScIdx<>)

q4kzgroup:
	KMVGROUP

q4kzblock:
	// The token's values in the order of the nibble vectors, and its
	// sums of 32 as words in every 128-bit lane.
	VMOVDQU64 0(SI), Y16
	VINSERTI64X4 $1, 64(SI), Z16, Z16
	VMOVDQU64 32(SI), Y17
	VINSERTI64X4 $1, 96(SI), Z17, Z17
	VMOVDQU64 128(SI), Y18
	VINSERTI64X4 $1, 192(SI), Z18, Z18
	VMOVDQU64 160(SI), Y19
	VINSERTI64X4 $1, 224(SI), Z19, Z19
	VBROADCASTI32X4 32(BX), Z20

	ROW36
	MOVQ R8, AX
	LEAQ (R8)(DX*1), R9
	Q4KZPAIR(Y10, X10, Z6)
	LEAQ (R8)(DX*2), AX
	MOVQ R13, R9
	Q4KZPAIR(Y11, X11, Z7)
	LEAQ (R8)(DX*4), AX
	LEAQ (R13)(DX*2), R9
	Q4KZPAIR(Y12, X12, Z8)
	MOVQ R14, AX
	LEAQ (R14)(DX*1), R9
	Q4KZPAIR(Y13, X13, Z9)

	// Sum each row's partial sums: Z2 = A of rows 0,2,4,6, 1,3,5,7, then
	// B of the same rows.
	PAIRSUM
	VSHUFI64X2 $0xD8, Z2, Z2, Z2
	VCVTDQ2PS Z2, Z2

	// d and dmin of the eight rows in the same order, as float32.
	VPUNPCKLDQ Y11, Y10, Y0
	VPUNPCKLDQ Y13, Y12, Y1
	VPUNPCKLQDQ Y1, Y0, Y0
	VMOVDQU kZDDPerm<>(SB), Y1
	VPERMW Y0, Y1, Y0
	VCVTPH2PS Y0, Z0
	VBROADCASTSS (R11), Z1
	VMULPS Z1, Z0, Z0 // d*dx | dmin*dx
	VMULPS Z0, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VSUBPS Y3, Y2, Y2
	VADDPS Y2, Y15, Y15

	KMVNEXT(144)
	JNZ  q4kzblock

	VMOVDQU kZRowPerm<>(SB), Y0
	VPERMD Y15, Y0, Y15
	MVSTORE
	JNZ  q4kzgroup
	VZEROUPPER
	RET

// kZQ6Idx: the VPERMW indices that spread each of the 16 Q6_K scale words
// of a row over its 16 values (words 0..15; 16..31 for the pair's second
// row). kZQ6Cnt: the VPSRLVW counts, 0 in the low 256-bit lane and 2 in
// the high one.
SPLAT16AT(kZQ6Idx<>, 0, $0x0000000000000000)
SPLAT16AT(kZQ6Idx<>, 16, $0x0001000100010001)
SPLAT16AT(kZQ6Idx<>, 32, $0x0002000200020002)
SPLAT16AT(kZQ6Idx<>, 48, $0x0003000300030003)
SPLAT16AT(kZQ6Idx<>, 64, $0x0004000400040004)
SPLAT16AT(kZQ6Idx<>, 80, $0x0005000500050005)
SPLAT16AT(kZQ6Idx<>, 96, $0x0006000600060006)
SPLAT16AT(kZQ6Idx<>, 112, $0x0007000700070007)
SPLAT16AT(kZQ6Idx<>, 128, $0x0008000800080008)
SPLAT16AT(kZQ6Idx<>, 144, $0x0009000900090009)
SPLAT16AT(kZQ6Idx<>, 160, $0x000a000a000a000a)
SPLAT16AT(kZQ6Idx<>, 176, $0x000b000b000b000b)
SPLAT16AT(kZQ6Idx<>, 192, $0x000c000c000c000c)
SPLAT16AT(kZQ6Idx<>, 208, $0x000d000d000d000d)
SPLAT16AT(kZQ6Idx<>, 224, $0x000e000e000e000e)
SPLAT16AT(kZQ6Idx<>, 240, $0x000f000f000f000f)
SPLAT16AT(kZQ6Idx<>, 256, $0x0010001000100010)
SPLAT16AT(kZQ6Idx<>, 272, $0x0011001100110011)
SPLAT16AT(kZQ6Idx<>, 288, $0x0012001200120012)
SPLAT16AT(kZQ6Idx<>, 304, $0x0013001300130013)
SPLAT16AT(kZQ6Idx<>, 320, $0x0014001400140014)
SPLAT16AT(kZQ6Idx<>, 336, $0x0015001500150015)
SPLAT16AT(kZQ6Idx<>, 352, $0x0016001600160016)
SPLAT16AT(kZQ6Idx<>, 368, $0x0017001700170017)
SPLAT16AT(kZQ6Idx<>, 384, $0x0018001800180018)
SPLAT16AT(kZQ6Idx<>, 400, $0x0019001900190019)
SPLAT16AT(kZQ6Idx<>, 416, $0x001a001a001a001a)
SPLAT16AT(kZQ6Idx<>, 432, $0x001b001b001b001b)
SPLAT16AT(kZQ6Idx<>, 448, $0x001c001c001c001c)
SPLAT16AT(kZQ6Idx<>, 464, $0x001d001d001d001d)
SPLAT16AT(kZQ6Idx<>, 480, $0x001e001e001e001e)
SPLAT16AT(kZQ6Idx<>, 496, $0x001f001f001f001f)
GLOBL kZQ6Idx<>(SB), RODATA|NOPTR, $512
SPLAT32AT(kZQ6Cnt<>, 0, $0x0000000000000000)
SPLAT32AT(kZQ6Cnt<>, 32, $0x0002000200020002)
GLOBL kZQ6Cnt<>(SB), RODATA|NOPTR, $64

// Q6KZHALF adds to ACC half h (128 values) of the Q6_K row R: the low
// and high nibbles of ql[64h..], each a vector of 64 consecutive values,
// with their two high bits from qh[32h..] (in both 256-bit lanes, shifted
// right by 0 in the first and 2 in the second), offset by 32 (0..63),
// times the activations XL and XH and the scales VPERMW'd by IL and IH.
// FIRST is VPMADDWD for the first half, VPDPWSSD for the second.
#define Q6KZHALF(R, h, XL, XH, IL, IH, FIRST, ACC) \
	VMOVDQU64 64*h(R), Z3; \
	VBROADCASTI64X4 128+32*h(R), Z4; \
	VPSRLVW kZQ6Cnt<>(SB), Z4, Z4; \
	VPANDD Z21, Z3, Z5; \
	VPSLLW $4, Z4, Z2; \
	VPTERNLOGD $0xF8, Z30, Z2, Z5; \
	VPSRLW $4, Z3, Z3; \
	VPANDD Z21, Z3, Z3; \
	VPTERNLOGD $0xF8, Z30, Z4, Z3; \
	VPMADDUBSW XL, Z5, Z5; \
	VPERMW Z1, IL, Z2; \
	FIRST Z2, Z5, ACC; \
	VPMADDUBSW XH, Z3, Z3; \
	VPERMW Z1, IH, Z2; \
	VPDPWSSD Z2, Z3, ACC

#define Q6KZROW(R, I0, I1, I2, I3, ACC) \
	Q6KZHALF(R, 0, Z16, Z17, I0, I1, VPMADDWD, ACC); \
	Q6KZHALF(R, 1, Z18, Z19, I2, I3, VPDPWSSD, ACC)

// Q6KZPAIR computes rows AX and R9 of the current super-block into PR:
// 128-bit lane 0 A of row AX (four partial sums), lane 2 A of row R9, and
// inserts their d at words p and 4+p of X10.
#define Q6KZPAIR(p, PR) \
	PREFETCHT0 (DI); \
	PREFETCHT0 64(DI); \
	PREFETCHT0 128(DI); \
	PREFETCHT0 192(DI); \
	PREFETCHT0 210(DI); \
	PREFETCHT0 274(DI); \
	PREFETCHT0 338(DI); \
	PREFETCHT0 402(DI); \
	ADDQ $420, DI; \
	VMOVDQU 192(AX), X1; \
	VINSERTI128 $1, 192(R9), Y1, Y1; \
	VPMOVSXBW Y1, Z1; \
	VPMADDWD Z20, Z1, Z0; \
	VPSLLD $5, Z0, Z0; \
	Q6KZROW(AX, Z22, Z23, Z24, Z25, Z14); \
	Q6KZROW(R9, Z26, Z27, Z28, Z29, Z31); \
	VSHUFI64X2 $0x44, Z31, Z14, Z3; \
	VSHUFI64X2 $0xEE, Z31, Z14, Z4; \
	VPADDD Z4, Z3, Z3; \
	VPSUBD Z0, Z3, Z3; \
	VSHUFI64X2 $0xB1, Z3, Z3, Z4; \
	VPADDD Z4, Z3, PR; \
	VPINSRW $p, 208(AX), X10, X10; \
	VPINSRW $(4+p), 208(R9), X10, X10

// func q6KMatVecZMM(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, bs *int16, nb int, pf int)
//
// groups*8 rows of rb bytes of Q6_K (nb super-blocks each) times one token
// (qs, ds, bs: Q8_K) into y, prefetching pf bytes past each block read.
// Per row and super-block A = sum_j sc_j*(sum_i (q_i+32)*x_i) -
// 32*sum_j sc_j*xsum_j, then acc += float32(A)*(d*dx).
TEXT ·q6KMatVecZMM(SB), NOSPLIT, $0-72
	MVARGS
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z21
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z30
	IDX8(kZQ6Idx<>)

q6kzgroup:
	KMVGROUP

q6kzblock:
	VMOVDQU64 0(SI), Z16
	VMOVDQU64 64(SI), Z17
	VMOVDQU64 128(SI), Z18
	VMOVDQU64 192(SI), Z19
	VBROADCASTI64X4 (BX), Z20 // the sums of 16

	ROW36
	MOVQ R8, AX
	LEAQ (R8)(DX*1), R9
	Q6KZPAIR(0, Z6)
	LEAQ (R8)(DX*2), AX
	MOVQ R13, R9
	Q6KZPAIR(1, Z7)
	LEAQ (R8)(DX*4), AX
	LEAQ (R13)(DX*2), R9
	Q6KZPAIR(2, Z8)
	MOVQ R14, AX
	LEAQ (R14)(DX*1), R9
	Q6KZPAIR(3, Z9)

	// A of rows 0,2,4,6, 1,3,5,7 in Y2 (see q4KMatVecZMM).
	PAIRSUM
	VSHUFI64X2 $0x08, Z2, Z2, Z2
	VCVTDQ2PS Y2, Y2

	VCVTPH2PS X10, Y0
	VBROADCASTSS (R11), Y1
	VMULPS Y1, Y0, Y0 // d*dx
	VMULPS Y0, Y2, Y2
	VADDPS Y2, Y15, Y15

	KMVNEXT(210)
	JNZ  q6kzblock

	VMOVDQU kZRowPerm<>(SB), Y0
	VPERMD Y15, Y0, Y15
	MVSTORE
	JNZ  q6kzgroup
	VZEROUPPER
	RET
