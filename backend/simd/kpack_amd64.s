//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Packers of eight K-quant rows into the tiles of the multi-token kernels
// (kquant.go: kPackBytes, packKGo gives the same bytes). Rows are rb = DX
// bytes apart from R8 (R13 = row 3, R14 = row 6: simd_amd64.h); DI is the
// tile.

SPLAT32(pNib<>, $0x0f0f0f0f0f0f0f0f)
SPLAT32(pMask30<>, $0x3030303030303030)
SPLAT32(pLow16<>, $0x0000ffff0000ffff)

DATA pScShift<>+0(SB)/4, $0
DATA pScShift<>+4(SB)/4, $0
DATA pScShift<>+8(SB)/4, $0
DATA pScShift<>+12(SB)/4, $4
GLOBL pScShift<>(SB), RODATA|NOPTR, $16

DATA pScMask1<>+0(SB)/4, $0x3f3f3f3f
DATA pScMask1<>+4(SB)/4, $0x0f0f0f0f
DATA pScMask1<>+8(SB)/4, $0x3f3f3f3f
DATA pScMask1<>+12(SB)/4, $0x0f0f0f0f
GLOBL pScMask1<>(SB), RODATA|NOPTR, $16

DATA pScMask2<>+0(SB)/4, $0
DATA pScMask2<>+4(SB)/4, $0x30303030
DATA pScMask2<>+8(SB)/4, $0
DATA pScMask2<>+12(SB)/4, $0x30303030
GLOBL pScMask2<>(SB), RODATA|NOPTR, $16

DATA pHalfSplit<>+0(SB)/8, $0x0d0c090805040100
DATA pHalfSplit<>+8(SB)/8, $0x0f0e0b0a07060302
DATA pHalfSplit<>+16(SB)/8, $0x0d0c090805040100
DATA pHalfSplit<>+24(SB)/8, $0x0f0e0b0a07060302
GLOBL pHalfSplit<>(SB), RODATA|NOPTR, $32

// TRANSPOSE8 transposes the 8x8 matrix of dwords in Y0..Y7 (row r in Yr)
// and stores column k (dword k of every row, as one vector) at
// off+k*stride(DI). Clobbers Y8..Y11.
#define TRANSPOSE8(off, stride) \
	TRANSPOSE8X8; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y9; \
	VMOVDQU Y8, off(DI); \
	VMOVDQU Y9, off+4*stride(DI); \
	VPERM2I128 $0x20, Y5, Y1, Y8; \
	VPERM2I128 $0x31, Y5, Y1, Y9; \
	VMOVDQU Y8, off+stride(DI); \
	VMOVDQU Y9, off+5*stride(DI); \
	VPERM2I128 $0x20, Y6, Y2, Y8; \
	VPERM2I128 $0x31, Y6, Y2, Y9; \
	VMOVDQU Y8, off+2*stride(DI); \
	VMOVDQU Y9, off+6*stride(DI); \
	VPERM2I128 $0x20, Y7, Y3, Y8; \
	VPERM2I128 $0x31, Y7, Y3, Y9; \
	VMOVDQU Y8, off+3*stride(DI); \
	VMOVDQU Y9, off+7*stride(DI)

// TRANSPOSE4 is TRANSPOSE8 storing only columns 0..3.
#define TRANSPOSE4(off, stride) \
	TRANSPOSE8X8; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VMOVDQU Y8, off(DI); \
	VPERM2I128 $0x20, Y5, Y1, Y8; \
	VMOVDQU Y8, off+stride(DI); \
	VPERM2I128 $0x20, Y6, Y2, Y8; \
	VMOVDQU Y8, off+2*stride(DI); \
	VPERM2I128 $0x20, Y7, Y3, Y8; \
	VMOVDQU Y8, off+3*stride(DI)

// LOAD8 loads 32 bytes at off of each of the eight rows into Y0..Y7.
#define LOADROW(addr, x, y) VMOVDQU addr, y
#define LOAD8(off) EACHROWAT(LOADROW, off)

// EACHY runs M(Yr) for r = 0..7.
#define EACHY(M) \
	M(Y0); \
	M(Y1); \
	M(Y2); \
	M(Y3); \
	M(Y4); \
	M(Y5); \
	M(Y6); \
	M(Y7)

// NIBLO8 and NIBHI8 keep the low or the high nibbles of Y0..Y7.
#define NIBLO1(r) VPAND Y15, r, r
#define NIBHI1(r) \
	VPSRLW $4, r, r; \
	VPAND Y15, r, r
#define NIBLO8 EACHY(NIBLO1)
#define NIBHI8 EACHY(NIBHI1)

// NIB32 sets y to the 32 nibbles of the 16 bytes at addr, in value order
// (low nibbles, then high ones); x is y's X form.
#define NIB32(addr, x, y) \
	VMOVDQU addr, x; \
	VPSRLW $4, x, X8; \
	VINSERTI128 $1, X8, y, y; \
	VPAND Y15, y, y

// P45SC decodes the Q4_K/Q5_K scales of the block at AX into X12: bytes
// sc0..7, m0..7.
#define P45SC \
	VMOVDQU 4(AX), X12; \
	VPSHUFD $0x98, X12, X10; \
	VPSRLVD pScShift<>(SB), X10, X10; \
	VPAND pScMask1<>(SB), X10, X10; \
	VPSHUFD $0x50, X12, X11; \
	VPSRLD $2, X11, X11; \
	VPAND pScMask2<>(SB), X11, X11; \
	VPOR X11, X10, X12

// The row macros for EACHROW, on the block at AX into row register r (x
// its X form). P45SCALE: the eight scales as int32. P45MIN: in the low
// lane, the eight mins as int16 (pairs (m0, m1) .. (m6, m7) in dwords).
#define P45SCALE(x, r) \
	P45SC; \
	VPMOVZXBD X12, r

#define P45MIN(x, r) \
	P45SC; \
	VPSRLDQ $8, X12, X12; \
	VPMOVZXBW X12, X12; \
	VINSERTI128 $0, X12, r, r

// P6SCALE0 and P6SCALE1: scales 0..7 and 8..15 of the Q6_K block as
// int32. P6CF: 32 times the 16 scales as int16.
#define P6SCALE0(x, r) VPMOVSXBD 192(AX), r
#define P6SCALE1(x, r) VPMOVSXBD 200(AX), r

#define P6CF(x, r) \
	VPMOVSXBW 192(AX), r; \
	VPSLLW $5, r, r

// SC16ONE turns the vector of int32 scales at off(DI) into the vector of
// the scales twice as int16 at off+32*nsub(DI).
#define SC16ONE(off, nsub) \
	VMOVDQU off(DI), Y0; \
	VPAND Y14, Y0, Y1; \
	VPSLLD $16, Y0, Y0; \
	VPOR Y1, Y0, Y0; \
	VMOVDQU Y0, off+32*nsub(DI)

#define SC16X8(off, nsub) \
	SC16ONE(off, nsub); \
	SC16ONE(off+32, nsub); \
	SC16ONE(off+64, nsub); \
	SC16ONE(off+96, nsub); \
	SC16ONE(off+128, nsub); \
	SC16ONE(off+160, nsub); \
	SC16ONE(off+192, nsub); \
	SC16ONE(off+224, nsub)

// PDDMIN stores the float32 of the float16 at off (d) and off+2 (dm) of
// the eight rows at doff(DI) and doff+32(DI).
#define PDDMIN(off, doff) \
	ROWF16X2(off, pHalfSplit<>(SB)); \
	VMOVUPS Y0, doff(DI); \
	VMOVUPS Y1, doff+32(DI)

// PD1 stores the float32 of the float16 at off of the eight rows at
// doff(DI), and zeros at doff+32(DI); PDF only the former.
#define PD1(off, doff) \
	PDF(off, doff); \
	VXORPS Y1, Y1, Y1; \
	VMOVUPS Y1, doff+32(DI)

#define PDF(off, doff) \
	ROWF16(off, X0, Y0); \
	VMOVUPS Y0, doff(DI)

// HIGHBITS ors high bits into Y0..Y7: for each row, LO(Yr), then the
// row's bytes at off shifted by SH (a macro on Y8) and masked by mask.
#define HIGHBITS1(addr, r, LO, SH, mask) \
	LO(r); \
	VMOVDQU addr, Y8; \
	SH; \
	VPAND mask, Y8, Y8; \
	VPOR Y8, r, r

#define HIGHBITS(off, LO, SH, mask) \
	HIGHBITS1(off(R8), Y0, LO, SH, mask); \
	HIGHBITS1(off(R8)(DX*1), Y1, LO, SH, mask); \
	HIGHBITS1(off(R8)(DX*2), Y2, LO, SH, mask); \
	HIGHBITS1(off(R13), Y3, LO, SH, mask); \
	HIGHBITS1(off(R8)(DX*4), Y4, LO, SH, mask); \
	HIGHBITS1(off(R13)(DX*2), Y5, LO, SH, mask); \
	HIGHBITS1(off(R14), Y6, LO, SH, mask); \
	HIGHBITS1(off(R14)(DX*1), Y7, LO, SH, mask)

// KEEP, for LO, leaves the row register as it is. SHLn, SHRn and NOSHIFT
// are the shifts of Y8 for SH; SH0 moves Y8 to itself, a no-op the packers
// were measured with.
#define KEEP(r)

#define SHL4 VPSLLW $4, Y8, Y8
#define SHL3 VPSLLW $3, Y8, Y8
#define SHL2 VPSLLW $2, Y8, Y8
#define SHL1 VPSLLW $1, Y8, Y8
#define SH0 VMOVDQU Y8, Y8
#define NOSHIFT
#define SHR1 VPSRLW $1, Y8, Y8
#define SHR2 VPSRLW $2, Y8, Y8
#define SHR3 VPSRLW $3, Y8, Y8
#define SHR4 VPSRLW $4, Y8, Y8
#define SHR5 VPSRLW $5, Y8, Y8

// P6H ors into Y0..Y7 the high bits of a Q6_K chunk: each row's qh at
// off, shifted by SH, masked to 0x30. P5H ors the fifth bits of a Q5_K
// chunk: each row's qh (at 16), shifted by SH, masked to 0x10.
#define P6H(off, SH) HIGHBITS(off, KEEP, SH, Y13)
#define P5H(SH) HIGHBITS(16, KEEP, SH, p10<>(SB))

// PACKARGS loads the arguments, func(dst, w *byte, rb, nb int), and the
// constants of the packers.
#define PACKARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ w+8(FP), R8; \
	MOVQ rb+16(FP), DX; \
	MOVQ nb+24(FP), CX; \
	VMOVDQU pNib<>(SB), Y15; \
	VMOVDQU pLow16<>(SB), Y14; \
	VMOVDQU pMask30<>(SB), Y13

// func packQ4KAVX2(dst, w *byte, rb, nb int)
TEXT ·packQ4KAVX2(SB), NOSPLIT, $0-32
	PACKARGS

pq4block:
	ROW36
	LOAD8(16)
	NIBLO8
	TRANSPOSE8(0, 32)
	LOAD8(16)
	NIBHI8
	TRANSPOSE8(256, 32)
	LOAD8(48)
	NIBLO8
	TRANSPOSE8(512, 32)
	LOAD8(48)
	NIBHI8
	TRANSPOSE8(768, 32)
	LOAD8(80)
	NIBLO8
	TRANSPOSE8(1024, 32)
	LOAD8(80)
	NIBHI8
	TRANSPOSE8(1280, 32)
	LOAD8(112)
	NIBLO8
	TRANSPOSE8(1536, 32)
	LOAD8(112)
	NIBHI8
	TRANSPOSE8(1792, 32)
	EACHROW(P45SCALE)
	TRANSPOSE8(2048, 32)
	SC16X8(2048, 8)
	EACHROW(P45MIN)
	TRANSPOSE4(2560, 32)
	PDDMIN(0, 2688)
	ADDQ $2752, DI
	ADDQ $144, R8
	DECQ CX
	JNZ  pq4block
	VZEROUPPER
	RET

// func packQ6KAVX2(dst, w *byte, rb, nb int)
TEXT ·packQ6KAVX2(SB), NOSPLIT, $0-32
	PACKARGS

pq6block:
	ROW36
	LOAD8(0)
	NIBLO8
	P6H(128, SHL4)
	TRANSPOSE8(0, 32)
	LOAD8(32)
	NIBLO8
	P6H(128, SHL2)
	TRANSPOSE8(256, 32)
	LOAD8(0)
	NIBHI8
	P6H(128, SH0)
	TRANSPOSE8(512, 32)
	LOAD8(32)
	NIBHI8
	P6H(128, SHR2)
	TRANSPOSE8(768, 32)
	LOAD8(64)
	NIBLO8
	P6H(160, SHL4)
	TRANSPOSE8(1024, 32)
	LOAD8(96)
	NIBLO8
	P6H(160, SHL2)
	TRANSPOSE8(1280, 32)
	LOAD8(64)
	NIBHI8
	P6H(160, SH0)
	TRANSPOSE8(1536, 32)
	LOAD8(96)
	NIBHI8
	P6H(160, SHR2)
	TRANSPOSE8(1792, 32)
	EACHROW(P6SCALE0)
	TRANSPOSE8(2048, 32)
	EACHROW(P6SCALE1)
	TRANSPOSE8(2304, 32)
	SC16X8(2048, 16)
	SC16X8(2304, 16)
	EACHROW(P6CF)
	TRANSPOSE8(3072, 32)
	PD1(208, 3328)
	ADDQ $3392, DI
	ADDQ $210, R8
	DECQ CX
	JNZ  pq6block
	VZEROUPPER
	RET

// The packers of the legacy formats other than Q8_0 for the Q8_0 VNNI
// tile (packQ8Go): per block, vector k holds values 4k..4k+3 of each row
// plus 128, then the rows' scales as float32.

DATA pBitShuf<>+0(SB)/8, $0x0000000000000000
DATA pBitShuf<>+8(SB)/8, $0x0101010101010101
DATA pBitShuf<>+16(SB)/8, $0x0202020202020202
DATA pBitShuf<>+24(SB)/8, $0x0303030303030303
GLOBL pBitShuf<>(SB), RODATA|NOPTR, $32

SPLAT32(pBitMask<>, $0x8040201008040201)
SPLAT32(p10<>, $0x1010101010101010)

// The 16 levels of IQ4_NL plus 128, in both lanes (IQ4_XS's packer).
DATA pKV128<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA pKV128<>+8(SB)/8, $0xf1d9c5b5a6998d81
DATA pKV128<>+16(SB)/8, $0x766a5d4f3f2d1801
DATA pKV128<>+24(SB)/8, $0xf1d9c5b5a6998d81
GLOBL pKV128<>(SB), RODATA|NOPTR, $32

E8M0CONSTS

// OFFSET12 sets the dwords of Y12 to v (the offset to add to each value).
#define OFFSET12(v) \
	MOVQ v, AX; \
	VMOVQ AX, X12; \
	VPBROADCASTD X12, Y12

// Q40ROW, Q50ROW and TABROW, for EACHROW, set the row register to the
// block's 32 values plus 128: Q4_0's nibbles plus 0x78 (8 less than the
// offset, Q4_0 being q-8), Q5_0's nibbles with the fifth bits (the 32
// bits at 2(AX)) at bit 4 plus 0x70, a table format's levels plus 128
// (the table in Y12, AX at the indices).
#define Q40ROW(x, y) \
	NIB32(2(AX), x, y); \
	VPADDB Y12, y, y

#define Q50ROW(x, y) \
	NIB32(6(AX), x, y); \
	VPBROADCASTD 2(AX), Y9; \
	VPSHUFB pBitShuf<>(SB), Y9, Y9; \
	VPAND pBitMask<>(SB), Y9, Y9; \
	VPCMPEQB pBitMask<>(SB), Y9, Y9; \
	VPAND p10<>(SB), Y9, Y9; \
	VPOR Y9, y, y; \
	VPADDB Y12, y, y

#define TABROW(x, y) \
	NIB32(0(AX), x, y); \
	VPSHUFB y, Y12, y

// func packQ4_0AVX2(dst, w *byte, rb, nb int)
TEXT ·packQ4_0AVX2(SB), NOSPLIT, $0-32
	PACKARGS
	OFFSET12($0x78787878)

pq4_0block:
	ROW36
	EACHROW(Q40ROW)
	TRANSPOSE8(0, 32)
	PDF(0, 256)
	ADDQ $288, DI
	ADDQ $18, R8
	DECQ CX
	JNZ  pq4_0block
	VZEROUPPER
	RET

// func packQ5_0AVX2(dst, w *byte, rb, nb int)
TEXT ·packQ5_0AVX2(SB), NOSPLIT, $0-32
	PACKARGS
	OFFSET12($0x70707070)

pq5_0block:
	ROW36
	EACHROW(Q50ROW)
	TRANSPOSE8(0, 32)
	PDF(0, 256)
	ADDQ $288, DI
	ADDQ $22, R8
	DECQ CX
	JNZ  pq5_0block
	VZEROUPPER
	RET

// func packTabAVX2(dst, w *byte, rb, nb int, kv *[32]uint8, mx int)
//
// The table formats (tab.go, tabMatVecAVX2): IQ4_NL (mx 0, float16 d) and
// MXFP4 (mx 1, E8M0 exponent), kv their levels plus 128 in both lanes.
// R8 walks the blocks' indices, R9 is the block size.
TEXT ·packTabAVX2(SB), NOSPLIT, $0-48
	PACKARGS
	MOVQ kv+32(FP), AX
	VMOVDQU (AX), Y12
	MOVQ $18, R9
	SUBQ mx+40(FP), R9
	LEAQ -16(R8)(R9*1), R8

ptabblock:
	ROW36
	EACHROW(TABROW)
	TRANSPOSE8(0, 32)
	CMPQ mx+40(FP), $0
	JNE  ptabe8m0
	ROWF16(-2, X0, Y0)
	JMP  ptabscale

ptabe8m0:
	ROWE8M0(-1, X0, Y0, Y1, Y2)

ptabscale:
	VMOVUPS Y0, 256(DI)
	ADDQ $288, DI
	ADDQ R9, R8
	DECQ CX
	JNZ  ptabblock
	VZEROUPPER
	RET

// func packQ5KAVX2(dst, w *byte, rb, nb int)
TEXT ·packQ5KAVX2(SB), NOSPLIT, $0-32
	PACKARGS

pq5block:
	ROW36
	LOAD8(48)
	NIBLO8
	P5H(SHL4)
	TRANSPOSE8(0, 32)
	LOAD8(48)
	NIBHI8
	P5H(SHL3)
	TRANSPOSE8(256, 32)
	LOAD8(80)
	NIBLO8
	P5H(SHL2)
	TRANSPOSE8(512, 32)
	LOAD8(80)
	NIBHI8
	P5H(SHL1)
	TRANSPOSE8(768, 32)
	LOAD8(112)
	NIBLO8
	P5H(SH0)
	TRANSPOSE8(1024, 32)
	LOAD8(112)
	NIBHI8
	P5H(SHR1)
	TRANSPOSE8(1280, 32)
	LOAD8(144)
	NIBLO8
	P5H(SHR2)
	TRANSPOSE8(1536, 32)
	LOAD8(144)
	NIBHI8
	P5H(SHR3)
	TRANSPOSE8(1792, 32)
	EACHROW(P45SCALE)
	TRANSPOSE8(2048, 32)
	SC16X8(2048, 8)
	EACHROW(P45MIN)
	TRANSPOSE4(2560, 32)
	PDDMIN(0, 2688)
	ADDQ $2752, DI
	ADDQ $176, R8
	DECQ CX
	JNZ  pq5block
	VZEROUPPER
	RET

// The packers of Q2_K, Q3_K and IQ4_XS.

SPLAT32(p03<>, $0x0303030303030303)
SPLAT32(p04<>, $0x0404040404040404)
SPLAT16(p20b<>, $0x2020202020202020)
SPLAT16(p30b<>, $0x3030303030303030)

DATA p3Shift1<>+0(SB)/4, $0
DATA p3Shift1<>+4(SB)/4, $0
DATA p3Shift1<>+8(SB)/4, $4
DATA p3Shift1<>+12(SB)/4, $4
GLOBL p3Shift1<>(SB), RODATA|NOPTR, $16

DATA p3Shift2<>+0(SB)/4, $0
DATA p3Shift2<>+4(SB)/4, $2
DATA p3Shift2<>+8(SB)/4, $4
DATA p3Shift2<>+12(SB)/4, $6
GLOBL p3Shift2<>(SB), RODATA|NOPTR, $16

DATA pXSShift<>+0(SB)/4, $0
DATA pXSShift<>+4(SB)/4, $2
DATA pXSShift<>+8(SB)/4, $4
DATA pXSShift<>+12(SB)/4, $6
DATA pXSShift<>+16(SB)/4, $8
DATA pXSShift<>+20(SB)/4, $10
DATA pXSShift<>+24(SB)/4, $12
DATA pXSShift<>+28(SB)/4, $14
GLOBL pXSShift<>(SB), RODATA|NOPTR, $32

DATA pD3<>+0(SB)/4, $3
GLOBL pD3<>(SB), RODATA|NOPTR, $4

DATA pD32<>+0(SB)/4, $32
GLOBL pD32<>(SB), RODATA|NOPTR, $4

// P3SC decodes the 16 6-bit scales of the Q3_K block at AX, minus 32,
// into the bytes of X12.
#define P3SC \
	VMOVDQU 94(AX), X12; \
	VPSRLDQ $2, X12, X12; \
	VPSHUFD $0x44, X12, X10; \
	VPSRLVD p3Shift1<>(SB), X10, X10; \
	VPAND X15, X10, X10; \
	VPSHUFD $0xaa, X12, X11; \
	VPSRLVD p3Shift2<>(SB), X11, X11; \
	VPSLLD $4, X11, X11; \
	VPAND p30b<>(SB), X11, X11; \
	VPOR X11, X10, X12; \
	VPSUBB p20b<>(SB), X12, X12

// PXSSC decodes the 8 scales of the IQ4_XS block at AX, minus 32, into
// the int32 lanes of r.
#define PXSSC(r) \
	VPMOVZXBW 4(AX), X10; \
	VPSLLW $4, X10, X11; \
	VPOR X11, X10, X10; \
	VPAND X15, X10, X10; \
	VPMOVZXBD X10, r; \
	VPBROADCASTD 2(AX), Y11; \
	VPSRLVD pXSShift<>(SB), Y11, Y11; \
	VPBROADCASTD pD3<>(SB), Y10; \
	VPAND Y10, Y11, Y11; \
	VPSLLD $4, Y11, Y11; \
	VPOR Y11, r, r; \
	VPBROADCASTD pD32<>(SB), Y10; \
	VPSUBD Y10, r, r

// Q2Bs, on row register r: the two bits s, s+1 of each byte.
#define Q2B0(r) VPAND p03<>(SB), r, r
#define Q2B2(r) \
	VPSRLW $2, r, r; \
	Q2B0(r)
#define Q2B4(r) \
	VPSRLW $4, r, r; \
	Q2B0(r)
#define Q2B6(r) \
	VPSRLW $6, r, r; \
	Q2B0(r)

// The Q2_K scale rows for EACHROW: the low nibbles of scales 0..7 and
// 8..15 as int32, and the 16 high nibbles (the mins) as int16.
#define Q2SC0(x, y) \
	VPMOVZXBD (AX), y; \
	VPAND Y15, y, y
#define Q2SC1(x, y) \
	VPMOVZXBD 8(AX), y; \
	VPAND Y15, y, y
#define Q2MIN(x, y) \
	VPMOVZXBW (AX), y; \
	VPSRLW $4, y, y

// func packQ2KAVX2(dst, w *byte, rb, nb int)
TEXT ·packQ2KAVX2(SB), NOSPLIT, $0-32
	PACKARGS

pq2kblk:
	ROW36
	LOAD8(16)
	EACHY(Q2B0)
	TRANSPOSE8(0, 32)
	LOAD8(16)
	EACHY(Q2B2)
	TRANSPOSE8(256, 32)
	LOAD8(16)
	EACHY(Q2B4)
	TRANSPOSE8(512, 32)
	LOAD8(16)
	EACHY(Q2B6)
	TRANSPOSE8(768, 32)
	LOAD8(48)
	EACHY(Q2B0)
	TRANSPOSE8(1024, 32)
	LOAD8(48)
	EACHY(Q2B2)
	TRANSPOSE8(1280, 32)
	LOAD8(48)
	EACHY(Q2B4)
	TRANSPOSE8(1536, 32)
	LOAD8(48)
	EACHY(Q2B6)
	TRANSPOSE8(1792, 32)
	EACHROW(Q2SC0)
	TRANSPOSE8(2048, 32)
	EACHROW(Q2SC1)
	TRANSPOSE8(2304, 32)
	SC16X8(2048, 16)
	SC16X8(2304, 16)
	EACHROW(Q2MIN)
	TRANSPOSE8(3072, 32)
	PDDMIN(80, 3328)
	ADDQ $3392, DI
	ADDQ $84, R8
	DECQ CX
	JNZ  pq2kblk
	VZEROUPPER
	RET

// Q3H takes the Q3_K values of chunk j from Y0..Y7 (the qs bytes): LO
// keeps their two low bits, and their third bit is or'ed in at bit 2 from
// the hmask bytes (at 0), shifted by SH.
#define Q3H(LO, SH) HIGHBITS(0, LO, SH, p04<>(SB))

// The Q3_K scale rows for EACHROW: scales 0..7 and 8..15 as int32, 4
// times the 16 scales as int16.
#define Q3SC0(x, y) \
	P3SC; \
	VPMOVSXBD X12, y
#define Q3SC1(x, y) \
	P3SC; \
	VPSRLDQ $8, X12, X12; \
	VPMOVSXBD X12, y
#define Q3CF(x, y) \
	P3SC; \
	VPMOVSXBW X12, y; \
	VPSLLW $2, y, y

// func packQ3KAVX2(dst, w *byte, rb, nb int)
TEXT ·packQ3KAVX2(SB), NOSPLIT, $0-32
	PACKARGS

pq3kblk:
	ROW36
	LOAD8(32)
	Q3H(Q2B0, SHL2)
	TRANSPOSE8(0, 32)
	LOAD8(32)
	Q3H(Q2B2, SHL1)
	TRANSPOSE8(256, 32)
	LOAD8(32)
	Q3H(Q2B4, NOSHIFT)
	TRANSPOSE8(512, 32)
	LOAD8(32)
	Q3H(Q2B6, SHR1)
	TRANSPOSE8(768, 32)
	LOAD8(64)
	Q3H(Q2B0, SHR2)
	TRANSPOSE8(1024, 32)
	LOAD8(64)
	Q3H(Q2B2, SHR3)
	TRANSPOSE8(1280, 32)
	LOAD8(64)
	Q3H(Q2B4, SHR4)
	TRANSPOSE8(1536, 32)
	LOAD8(64)
	Q3H(Q2B6, SHR5)
	TRANSPOSE8(1792, 32)
	EACHROW(Q3SC0)
	TRANSPOSE8(2048, 32)
	EACHROW(Q3SC1)
	TRANSPOSE8(2304, 32)
	SC16X8(2048, 16)
	SC16X8(2304, 16)
	EACHROW(Q3CF)
	TRANSPOSE8(3072, 32)
	PD1(108, 3328)
	ADDQ $3392, DI
	ADDQ $110, R8
	DECQ CX
	JNZ  pq3kblk
	VZEROUPPER
	RET

// XSNIB, for EACHROWAT, sets the row register to the IQ4_XS levels
// (plus 128, from Y12) of the 32 nibbles at addr.
#define XSNIB(addr, x, y) \
	NIB32(addr, x, y); \
	VPSHUFB y, Y12, y

// The IQ4_XS scale rows for EACHROW: the eight scales as int32, and 128
// times them as int16 in the low lane.
#define XSSC(x, y) PXSSC(y)
#define XSCF(x, y) \
	PXSSC(y); \
	VPSLLD $7, y, y; \
	VPACKSSDW y, y, y; \
	VPERMQ $0x08, y, y

// func packIQ4XSAVX2(dst, w *byte, rb, nb int)
TEXT ·packIQ4XSAVX2(SB), NOSPLIT, $0-32
	PACKARGS

piq4xsblk:
	ROW36
	VMOVDQU pKV128<>(SB), Y12
	EACHROWAT(XSNIB, 8)
	TRANSPOSE8(0, 32)
	EACHROWAT(XSNIB, 24)
	TRANSPOSE8(256, 32)
	EACHROWAT(XSNIB, 40)
	TRANSPOSE8(512, 32)
	EACHROWAT(XSNIB, 56)
	TRANSPOSE8(768, 32)
	EACHROWAT(XSNIB, 72)
	TRANSPOSE8(1024, 32)
	EACHROWAT(XSNIB, 88)
	TRANSPOSE8(1280, 32)
	EACHROWAT(XSNIB, 104)
	TRANSPOSE8(1536, 32)
	EACHROWAT(XSNIB, 120)
	TRANSPOSE8(1792, 32)
	EACHROW(XSSC)
	TRANSPOSE8(2048, 32)
	SC16X8(2048, 8)
	EACHROW(XSCF)
	TRANSPOSE4(2560, 32)
	PD1(0, 2688)
	ADDQ $2752, DI
	ADDQ $136, R8
	DECQ CX
	JNZ  piq4xsblk
	VZEROUPPER
	RET
