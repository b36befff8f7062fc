//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Q8_0 kernels. A weight block is a float16 scale dw and 32 int8 values; a
// quantized token block is 32 int8 values and a float32 scale dx. Per block
// and (row, token) pair the int8 dot product is computed exactly in int32
// with the sign trick of ggml (VPSIGNB moves the weight's sign onto the
// activation, VPMADDUBSW multiplies |w| by it into int16 pairs, VPMADDWD
// sums pairs into int32), the eight int32 lanes are summed with VPHADDD,
// and then, in float32,
//
//	acc += float32(sum) * (dw * dx)
//
// with one rounding per operation, eight (row, token) pairs per vector.
// Every kernel here and q8DotGo do these operations in this order, so the
// result of a pair does not depend on the kernel that computed it.

// VPERMD indices that undo the lane interleaving of VPACKSSDW/VPACKSSWB.
DATA packPerm<>+0(SB)/4, $0
DATA packPerm<>+4(SB)/4, $4
DATA packPerm<>+8(SB)/4, $1
DATA packPerm<>+12(SB)/4, $5
DATA packPerm<>+16(SB)/4, $2
DATA packPerm<>+20(SB)/4, $6
DATA packPerm<>+24(SB)/4, $3
DATA packPerm<>+28(SB)/4, $7
GLOBL packPerm<>(SB), RODATA|NOPTR, $32

// func quantizeQ8Asm(qs *int8, qstride int, ds *float32, cx *int32, x *float32, nb int)
//
// Quantizes nb blocks of 32 floats: d = max|x|/127 to ds[b], x * (1/d)
// rounded to nearest even to qs[b*qstride:][:32], and -128 times the sum
// of those to cx[b].
TEXT ·quantizeQ8Asm(SB), NOSPLIT, $0-48
	MOVQ qs+0(FP), DI
	MOVQ qstride+8(FP), DX
	MOVQ ds+16(FP), R8
	MOVQ cx+24(FP), R9
	MOVQ x+32(FP), SI
	MOVQ nb+40(FP), CX
	MOVL $0x80808080, AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10 // byte 128
	MOVL $0x7fffffff, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15 // abs mask
	MOVL $0x42fe0000, AX  // 127
	VMOVQ AX, X14
	MOVL $0x3f800000, AX  // 1
	VMOVQ AX, X13
	VXORPS X12, X12, X12
	VMOVDQU packPerm<>(SB), Y11

qloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y15, Y0, Y4
	VANDPS  Y15, Y1, Y5
	VANDPS  Y15, Y2, Y6
	VANDPS  Y15, Y3, Y7
	VMAXPS  Y5, Y4, Y4
	VMAXPS  Y7, Y6, Y6
	VMAXPS  Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VMAXPS  X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VMAXPS  X5, X4, X4   // amax in every lane
	VDIVSS  X14, X4, X6  // d = amax / 127
	VMOVSS  X6, (R8)
	VDIVSS  X6, X13, X7  // 1 / d
	VCMPSS  $4, X12, X6, X8 // d != 0
	VANDPS  X8, X7, X7   // id = d != 0 ? 1/d : 0
	VBROADCASTSS X7, Y7
	VMULPS  Y7, Y0, Y0
	VMULPS  Y7, Y1, Y1
	VMULPS  Y7, Y2, Y2
	VMULPS  Y7, Y3, Y3
	VCVTPS2DQ Y0, Y0     // rounds to nearest even
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD  Y0, Y11, Y0
	VMOVDQU Y0, (DI)
	// The sum S of the q+128 as unsigned bytes is sum(q) + 4096, and
	// -128*sum(q) = 524288 - 128*S.
	VPXOR   Y10, Y0, Y1
	VPXOR   Y2, Y2, Y2
	VPSADBW Y2, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDQ  X2, X1, X1
	VPSHUFD $0x4e, X1, X2
	VPADDQ  X2, X1, X1
	VMOVD   X1, AX
	SHLL    $7, AX
	NEGL    AX
	ADDL    $524288, AX
	MOVL    AX, (R9)
	ADDQ $128, SI
	ADDQ DX, DI
	ADDQ $4, R8
	ADDQ $4, R9
	DECQ CX
	JNZ  qloop
	VZEROUPPER
	RET

// Q8ROW sets dst to the int32 products (eight lanes, to sum) of the
// weight row's block at addr with the token's block in Y12; t is
// clobbered.
#define Q8ROW(addr, t, dst) \
	VMOVDQU addr, t; \
	VPSIGNB t, Y12, dst; \
	VPABSB  t, t; \
	VPMADDUBSW dst, t, dst; \
	VPMADDWD Y15, dst, dst

// func q8MatVecAsm(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, nb int)
//
// Computes groups*8 rows of rb bytes each times one contiguous token:
// y[r] = row r . x. Eight rows per block iteration, one vector of eight
// accumulators.
TEXT ·q8MatVecAsm(SB), NOSPLIT, $0-56
	MOVQ w+8(FP), R12
	MOVQ rb+16(FP), DX
	MOVQ groups+24(FP), R13
	LEAQ (DX)(DX*2), R14  // 3 rows
	MOVL $0x00010001, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15 // int16 ones

mvgroup:
	MOVQ R12, R8          // row 0
	LEAQ (R12)(R14*1), R9 // row 3
	LEAQ (R9)(R14*1), R10 // row 6
	LEAQ (R12)(DX*8), DI  // the group after next, prefetched 272 bytes a block
	LEAQ (DI)(DX*8), DI
	ADDQ $-272, DI
	MOVQ qs+32(FP), SI
	MOVQ ds+40(FP), R11
	MOVQ nb+48(FP), CX
	VXORPS Y11, Y11, Y11

mvblock:
	Q8D8 // the eight float16 weight scales, rows 0..7

	ADDQ $272, DI
	PREFETCHT0 (DI)
	PREFETCHT0 64(DI)
	PREFETCHT0 128(DI)
	PREFETCHT0 192(DI)
	PREFETCHT0 256(DI)

	VMOVDQU (SI), Y12        // x
	VBROADCASTSS (R11), Y13  // dx

	Q8ROW(2(R8), Y8, Y0)
	Q8ROW(2(R8)(DX*1), Y9, Y1)
	Q8ROW(2(R8)(DX*2), Y8, Y2)
	Q8ROW(2(R9), Y9, Y3)
	VPHADDD Y1, Y0, Y0
	VPHADDD Y3, Y2, Y2
	VPHADDD Y2, Y0, Y0 // rows 0..3, low halves | high halves
	Q8ROW(2(R8)(DX*4), Y8, Y4)
	Q8ROW(2(R9)(DX*2), Y9, Y5)
	Q8ROW(2(R10), Y8, Y6)
	Q8ROW(2(R10)(DX*1), Y9, Y7)
	VPHADDD Y5, Y4, Y4
	VPHADDD Y7, Y6, Y6
	VPHADDD Y6, Y4, Y4 // rows 4..7

	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD Y2, Y1, Y1 // the block sums of rows 0..7
	VCVTDQ2PS Y1, Y1
	VMULPS Y13, Y14, Y2 // dw * dx
	VMULPS Y2, Y1, Y1
	VADDPS Y1, Y11, Y11

	ADDQ $34, R8
	ADDQ $34, R9
	ADDQ $34, R10
	ADDQ $32, SI
	ADDQ $4, R11
	DECQ CX
	JNZ  mvblock

	MOVQ y+0(FP), AX
	VMOVUPS Y11, (AX)
	ADDQ $32, AX
	MOVQ AX, y+0(FP)
	LEAQ (R12)(DX*8), R12
	DECQ R13
	JNZ  mvgroup
	VZEROUPPER
	RET

// Q8TOKEN computes the block sums of weight rows 0..3 (|w| in Y0..Y3, w at
// 2(R8..R11)(BX*1)) with the token block at off(SI), leaving them in dst as
// rows 0..3 of the low halves | rows 0..3 of the high halves.
#define Q8TOKEN(off, dst) \
	VMOVDQU off(SI), Y4; \
	VPSIGNB 2(R8)(BX*1), Y4, Y5; \
	VPMADDUBSW Y5, Y0, Y5; \
	VPMADDWD Y15, Y5, Y5; \
	VPSIGNB 2(R9)(BX*1), Y4, Y6; \
	VPMADDUBSW Y6, Y1, Y6; \
	VPMADDWD Y15, Y6, Y6; \
	VPSIGNB 2(R10)(BX*1), Y4, Y7; \
	VPMADDUBSW Y7, Y2, Y7; \
	VPMADDWD Y15, Y7, Y7; \
	VPSIGNB 2(R11)(BX*1), Y4, Y8; \
	VPMADDUBSW Y8, Y3, Y8; \
	VPMADDWD Y15, Y8, Y8; \
	VPHADDD Y6, Y5, Y5; \
	VPHADDD Y8, Y7, Y7; \
	VPHADDD Y7, Y5, dst

// Q8TOKENS adds to acc rows 0..3 of the two tokens at off(SI) and
// off+32(SI) (as rows 0..3 of the first | of the second), scaled by the
// weights' scales in Y14 times the tokens' at doff(DI).
#define Q8TOKENS(off, doff, acc) \
	Q8TOKEN(off, Y9); \
	Q8TOKEN(off+32, Y5); \
	VPERM2I128 $0x20, Y5, Y9, Y10; \
	VPERM2I128 $0x31, Y5, Y9, Y11; \
	VPADDD Y11, Y10, Y10; \
	VCVTDQ2PS Y10, Y10; \
	VMULPS doff(DI), Y14, Y11; \
	VMULPS Y11, Y10, Y10; \
	VADDPS Y10, acc, acc

// func q8TileAsm(y *float32, ldy int, w *byte, rb int, qs *int8, dsx *float32, nb int)
//
// Computes four rows of rb bytes times a group of four tokens, stored
// block-interleaved (4 x 32 bytes per block) with scales dsx expanded to
// dx0 x4, dx1 x4, dx2 x4, dx3 x4 per block. Token j's four results go to
// y[j*ldy:][:4]. Accumulators: Y12 = rows 0..3 of tokens 0 and 1, Y13 of
// tokens 2 and 3.
TEXT ·q8TileAsm(SB), NOSPLIT, $0-56
	MOVQ w+16(FP), R8
	MOVQ rb+24(FP), DX
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	MOVQ qs+32(FP), SI
	MOVQ dsx+40(FP), DI
	MOVQ nb+48(FP), CX
	XORQ BX, BX
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	MOVL $0x00010001, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15

tblock:
	// dw of rows 0..3, twice: 8 float16 to floats.
	MOVWQZX (R8)(BX*1), AX
	MOVWQZX (R9)(BX*1), DX
	SHLQ $16, DX
	ORQ  DX, AX
	MOVWQZX (R10)(BX*1), DX
	SHLQ $32, DX
	ORQ  DX, AX
	MOVWQZX (R11)(BX*1), DX
	SHLQ $48, DX
	ORQ  DX, AX
	VMOVQ AX, X14
	VPUNPCKLQDQ X14, X14, X14
	VCVTPH2PS X14, Y14

	VMOVDQU 2(R8)(BX*1), Y0
	VPABSB  Y0, Y0
	VMOVDQU 2(R9)(BX*1), Y1
	VPABSB  Y1, Y1
	VMOVDQU 2(R10)(BX*1), Y2
	VPABSB  Y2, Y2
	VMOVDQU 2(R11)(BX*1), Y3
	VPABSB  Y3, Y3

	Q8TOKENS(0, 0, Y12)
	Q8TOKENS(64, 32, Y13)

	ADDQ $34, BX
	ADDQ $128, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  tblock

	MOVQ y+0(FP), DI
	MOVQ ldy+8(FP), DX
	SHLQ $2, DX
	VMOVUPS X12, (DI)
	VEXTRACTF128 $1, Y12, X0
	VMOVUPS X0, (DI)(DX*1)
	VMOVUPS X13, (DI)(DX*2)
	LEAQ (DX)(DX*2), AX
	VEXTRACTF128 $1, Y13, X1
	VMOVUPS X1, (DI)(AX*1)
	VZEROUPPER
	RET
