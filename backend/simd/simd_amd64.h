// Macros shared by the amd64 kernels of this package (#include
// "simd_amd64.h"). The Go assembler expands a macro in place, as the C
// preprocessor does, so a kernel written with them assembles to the same
// instructions, in the same order, as one written out by hand; a macro
// that reads arguments (name+off(FP)) must be defined before the first
// TEXT of a .s file, or here, for go vet's frame check.

// SPLAT32AT defines bytes off..off+31 of name as the 8-byte value v four
// times, SPLAT16AT bytes off..off+15 as v twice. SPLAT32 and SPLAT16
// define the 32 or 16 read-only bytes name so.
#define SPLAT32AT(name, off, v) \
	DATA name+off(SB)/8, v; \
	DATA name+off+8(SB)/8, v; \
	DATA name+off+16(SB)/8, v; \
	DATA name+off+24(SB)/8, v

#define SPLAT16AT(name, off, v) \
	DATA name+off(SB)/8, v; \
	DATA name+off+8(SB)/8, v

#define SPLAT32(name, v) \
	SPLAT32AT(name, 0, v); \
	GLOBL name(SB), RODATA|NOPTR, $32

#define SPLAT16(name, v) \
	SPLAT16AT(name, 0, v); \
	GLOBL name(SB), RODATA|NOPTR, $16

// CLEAR4 clears the registers a, b, c, d with OP (VXORPS, VPXOR or
// VPXORD: OP r, r, r).
#define CLEAR4(OP, a, b, c, d) \
	OP a, a, a; \
	OP b, b, b; \
	OP c, c, c; \
	OP d, d, d

// Eight weight rows. The kernels that take eight rows of a matrix at a
// time (K-quant and legacy matrix-vector kernels, the packers) keep row 0
// at R8, the row size in DX, and, after ROW36, row 3 at R13 and row 6 at
// R14, so that every row is one addressing mode away:
//
//	row  0   1          2          3    4          5           6    7
//	     R8  R8+DX      R8+2*DX    R13  R8+4*DX    R13+2*DX    R14  R14+DX
#define ROW36 \
	LEAQ (R8)(DX*2), R13; \
	ADDQ DX, R13; \
	LEAQ (R13)(DX*2), R14; \
	ADDQ DX, R14

// AXROWr points AX at row r.
#define AXROW0 MOVQ R8, AX
#define AXROW1 LEAQ (R8)(DX*1), AX
#define AXROW2 LEAQ (R8)(DX*2), AX
#define AXROW3 MOVQ R13, AX
#define AXROW4 LEAQ (R8)(DX*4), AX
#define AXROW5 LEAQ (R13)(DX*2), AX
#define AXROW6 MOVQ R14, AX
#define AXROW7 LEAQ (R14)(DX*1), AX

// EACHROW runs M(Xr, Yr) with AX at row r, for r = 0..7.
#define EACHROW(M) \
	AXROW0; \
	M(X0, Y0); \
	AXROW1; \
	M(X1, Y1); \
	AXROW2; \
	M(X2, Y2); \
	AXROW3; \
	M(X3, Y3); \
	AXROW4; \
	M(X4, Y4); \
	AXROW5; \
	M(X5, Y5); \
	AXROW6; \
	M(X6, Y6); \
	AXROW7; \
	M(X7, Y7)

// EACHROWAT runs M(addr, Xr, Yr) with addr the address off bytes into row
// r, for r = 0..7.
#define EACHROWAT(M, off) \
	M(off(R8), X0, Y0); \
	M(off(R8)(DX*1), X1, Y1); \
	M(off(R8)(DX*2), X2, Y2); \
	M(off(R13), X3, Y3); \
	M(off(R8)(DX*4), X4, Y4); \
	M(off(R13)(DX*2), X5, Y5); \
	M(off(R14), X6, Y6); \
	M(off(R14)(DX*1), X7, Y7)

// ROWTREE runs ROW(dst) with AX at each row r = 0..7 and adds the eight
// row vectors up by VPHADDD as they come: then, in each 128-bit lane, a
// holds the sums of the lane's four dwords of rows 0..3 (row r in dword
// r) and b those of rows 4..7. c and d are clobbered.
#define ROWTREE(ROW, a, b, c, d) \
	AXROW0; \
	ROW(a); \
	AXROW1; \
	ROW(b); \
	VPHADDD b, a, a; \
	AXROW2; \
	ROW(b); \
	AXROW3; \
	ROW(c); \
	VPHADDD c, b, b; \
	VPHADDD b, a, a; \
	AXROW4; \
	ROW(b); \
	AXROW5; \
	ROW(c); \
	VPHADDD c, b, b; \
	AXROW6; \
	ROW(c); \
	AXROW7; \
	ROW(d); \
	VPHADDD d, c, c; \
	VPHADDD c, b, b

// ROWF16 loads the float16 at off of the eight rows as float32 into y
// (x its X form).
#define ROWF16(off, x, y) \
	MOVWQZX off(R8), AX; \
	VMOVD AX, x; \
	VPINSRW $1, off(R8)(DX*1), x, x; \
	VPINSRW $2, off(R8)(DX*2), x, x; \
	VPINSRW $3, off(R13), x, x; \
	VPINSRW $4, off(R8)(DX*4), x, x; \
	VPINSRW $5, off(R13)(DX*2), x, x; \
	VPINSRW $6, off(R14), x, x; \
	VPINSRW $7, off(R14)(DX*1), x, x; \
	VCVTPH2PS x, y

// ROWE8M0 loads the E8M0 exponent bytes e at off of the eight rows as
// the float32 2^(e-128) into y (x its X form), numfmt.E8M0Half: the bits
// (e<<23) - 2^23 for e >= 2, and 2^21 << e, subnormal, for e = 0 and 1,
// as the signed maximum of the two (the first is negative for e = 0, the
// second zero from e = 2 on: VPSRLVD counts of 32 or more give 0). t and
// u are clobbered, and AX; the file defines E8M0CONSTS.
#define ROWE8M0(off, x, y, t, u) \
	MOVBLZX off(R8), AX; \
	VMOVD AX, x; \
	VPINSRB $1, off(R8)(DX*1), x, x; \
	VPINSRB $2, off(R8)(DX*2), x, x; \
	VPINSRB $3, off(R13), x, x; \
	VPINSRB $4, off(R8)(DX*4), x, x; \
	VPINSRB $5, off(R13)(DX*2), x, x; \
	VPINSRB $6, off(R14), x, x; \
	VPINSRB $7, off(R14)(DX*1), x, x; \
	VPMOVZXBD x, y; \
	VPBROADCASTD e8m0One<>(SB), u; \
	VPSUBD y, u, u; \
	VPBROADCASTD e8m0Sub<>(SB), t; \
	VPSRLVD u, t, u; \
	VPSLLD $23, y, y; \
	VPSUBD e8m0Norm<>(SB), y, y; \
	VPMAXSD u, y, y

// E8M0CONSTS defines the constants of ROWE8M0, in a file that uses it.
#define E8M0CONSTS \
	DATA e8m0One<>+0(SB)/4, $1; \
	GLOBL e8m0One<>(SB), RODATA|NOPTR, $4; \
	DATA e8m0Sub<>+0(SB)/4, $0x00400000; \
	GLOBL e8m0Sub<>(SB), RODATA|NOPTR, $4; \
	SPLAT32(e8m0Norm<>, $0x0080000000800000)

// ROWF16X2 loads the float16 pairs at off and off+2 of the eight rows (the
// d and dmin of a K-quant block) as float32: the first of each pair into
// Y0, the second into Y1. split is the 32-byte word shuffle that gathers,
// in each lane, the low halves of four dwords then their high halves.
#define ROWF16X2(off, split) \
	MOVL off(R8), AX; \
	VMOVD AX, X0; \
	VPINSRD $1, off(R8)(DX*1), X0, X0; \
	VPINSRD $2, off(R8)(DX*2), X0, X0; \
	VPINSRD $3, off(R13), X0, X0; \
	MOVL off(R8)(DX*4), AX; \
	VMOVD AX, X1; \
	VPINSRD $1, off(R13)(DX*2), X1, X1; \
	VPINSRD $2, off(R14), X1, X1; \
	VPINSRD $3, off(R14)(DX*1), X1, X1; \
	VINSERTI128 $1, X1, Y0, Y0; \
	VPSHUFB split, Y0, Y0; \
	VPERMQ $0xd8, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VCVTPH2PS X0, Y0; \
	VCVTPH2PS X1, Y1

// The loop of the matrix-vector kernels over groups of eight rows
// (kquant_amd64.s, kzmm_amd64.s, lmatvec_amd64.s), func(y *float32, w
// *byte, rb int, groups int, qs *int8, ds *float32, ...): MVARGS loads R12
// = the group's first row, DX = rb, R10 = the groups left. Per group, Y15
// holds the eight rows' float accumulators and MVSTORE stores them.
//
// The K-quant ones, func(..., bs *int16, nb int, pf int), walk per group
// (KMVGROUP) R8 over the super-blocks, DI over the prefetched bytes (pf
// bytes on), SI, R11 and BX over the token's Q8_K values, scales and sums,
// with CX the super-blocks left.
#define MVARGS \
	MOVQ w+8(FP), R12; \
	MOVQ rb+16(FP), DX; \
	MOVQ groups+24(FP), R10

#define KMVGROUP \
	MOVQ R12, R8; \
	MOVQ pf+64(FP), DI; \
	ADDQ R12, DI; \
	MOVQ qs+32(FP), SI; \
	MOVQ ds+40(FP), R11; \
	MOVQ bs+48(FP), BX; \
	MOVQ nb+56(FP), CX; \
	VXORPS Y15, Y15, Y15

// KMVNEXT moves to the next super-block, of size bytes, and counts it.
#define KMVNEXT(size) \
	ADDQ $size, R8; \
	ADDQ $256, SI; \
	ADDQ $4, R11; \
	ADDQ $48, BX; \
	DECQ CX

// MVSTORE stores the group's eight results to y, moves y and R12 on and
// counts the group.
#define MVSTORE \
	MOVQ y+0(FP), AX; \
	VMOVUPS Y15, (AX); \
	ADDQ $32, AX; \
	MOVQ AX, y+0(FP); \
	LEAQ (R12)(DX*8), R12; \
	DECQ R10

// TRANSPOSE8X8 transposes the 8x8 matrix of dwords in Y0..Y7 (row r in Yr)
// within 128-bit lanes: for k = 0..3, lane l of Yk then holds dword 4l+k
// of rows 0..3 and lane l of Yk+4 the same of rows 4..7, so that
// VPERM2I128 $0x20 of Yk and Yk+4 is column k, and $0x31 column k+4.
// Clobbers Y8..Y11.
#define TRANSPOSE8X8 \
	VPUNPCKLDQ  Y1, Y0, Y8; \
	VPUNPCKHDQ  Y1, Y0, Y9; \
	VPUNPCKLDQ  Y3, Y2, Y10; \
	VPUNPCKHDQ  Y3, Y2, Y11; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLDQ  Y5, Y4, Y8; \
	VPUNPCKHDQ  Y5, Y4, Y9; \
	VPUNPCKLDQ  Y7, Y6, Y10; \
	VPUNPCKHDQ  Y7, Y6, Y11; \
	VPUNPCKLQDQ Y10, Y8, Y4; \
	VPUNPCKHQDQ Y10, Y8, Y5; \
	VPUNPCKLQDQ Y11, Y9, Y6; \
	VPUNPCKHQDQ Y11, Y9, Y7

// Q8D8 loads the float16 scales of the Q8_0 blocks at R8 of eight rows DX
// bytes apart (R9 = row 3, R10 = row 6) as float32 into Y14. It clobbers
// AX and BX.
#define Q8D8 \
	MOVWQZX (R8), AX; \
	MOVWQZX (R8)(DX*1), BX; \
	SHLQ $16, BX; \
	ORQ  BX, AX; \
	MOVWQZX (R8)(DX*2), BX; \
	SHLQ $32, BX; \
	ORQ  BX, AX; \
	MOVWQZX (R9), BX; \
	SHLQ $48, BX; \
	ORQ  BX, AX; \
	VMOVQ AX, X14; \
	MOVWQZX (R8)(DX*4), AX; \
	MOVWQZX (R9)(DX*2), BX; \
	SHLQ $16, BX; \
	ORQ  BX, AX; \
	MOVWQZX (R10), BX; \
	SHLQ $32, BX; \
	ORQ  BX, AX; \
	MOVWQZX (R10)(DX*1), BX; \
	SHLQ $48, BX; \
	ORQ  BX, AX; \
	VPINSRQ $1, AX, X14, X14; \
	VCVTPH2PS X14, Y14

// VNNI4T adds group g of a block (weights W: bytes 4g..4g+3 of each row)
// times each of four tokens' bytes 4g..4g+3 (token 0 at SI, tokens DX
// apart, token 3 at R12) to the tokens' int32 sums a, b, c, d.
#define VNNI4T(g, W, a, b, c, d) \
	VPDPBUSD.BCST 4*g(SI), W, a; \
	VPDPBUSD.BCST 4*g(SI)(DX*1), W, b; \
	VPDPBUSD.BCST 4*g(SI)(DX*2), W, c; \
	VPDPBUSD.BCST 4*g(R12), W, d

// VNNIW8 loads the eight 32-byte weight vectors of a repacked block of
// eight rows at R8 into Y16..Y23.
#define VNNIW8 \
	VMOVDQU32 0(R8), Y16; \
	VMOVDQU32 32(R8), Y17; \
	VMOVDQU32 64(R8), Y18; \
	VMOVDQU32 96(R8), Y19; \
	VMOVDQU32 128(R8), Y20; \
	VMOVDQU32 160(R8), Y21; \
	VMOVDQU32 192(R8), Y22; \
	VMOVDQU32 224(R8), Y23
