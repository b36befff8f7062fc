//go:build arm64 && !purego

#include "textflag.h"

// The matrix-vector kernels of the legacy block formats (Q4_0, Q5_0,
// Q4_1, Q5_1) and the table formats (IQ4_NL, MXFP4) with SDOT: rows rows
// of rb bytes from w, each row times one token of Q8_0 activations (qs,
// ds; sx for the formats with a min), row r's result going to y[r]. Per
// block, the values are decoded to int8 in two vectors (values 0..15 and
// 16..31), multiplied with the token's values by two SDOTs into an int32
// vector whose sum is the block's exact integer s, and then combined in
// float32 as dot32 does, operation by operation (no fused multiply-add):
// the bits of the Go reference. nb > 0, rows > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.

DATA l32qh<>+0(SB)/8, $0x0000000000000000
DATA l32qh<>+8(SB)/8, $0x0101010101010101
DATA l32qh<>+16(SB)/8, $0x0202020202020202
DATA l32qh<>+24(SB)/8, $0x0303030303030303
DATA l32qh<>+32(SB)/8, $0x8040201008040201
DATA l32qh<>+40(SB)/8, $0x8040201008040201
GLOBL l32qh<>(SB), RODATA|NOPTR, $48

// func q4_0MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, nb int)
TEXT ·q4_0MatVecNEON(SB), NOSPLIT, $0-56
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD nb+48(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f00e51d // movi v29.16b, #8
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400101 // ldr h1, [x8]
	WORD $0x3cc02102 // ldur q2, [x8, #2]
	WORD $0x91004908 // add x8, x8, #18
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x6e3d84c6 // sub v6.16b, v6.16b, v29.16b
	WORD $0x6e3d84e7 // sub v7.16b, v7.16b, v29.16b
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q5_0MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, nb int)
TEXT ·q5_0MatVecNEON(SB), NOSPLIT, $0-56
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD nb+48(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	MOVD $l32qh<>(SB), R13
	WORD $0x4c4061ba // ld1 {v26.16b, v27.16b, v28.16b}, [x13]
	WORD $0x4f07e619 // movi v25.16b, #0xf0
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400101 // ldr h1, [x8]
	WORD $0x3cc06102 // ldur q2, [x8, #6]
	WORD $0xbc402108 // ldur s8, [x8, #2]
	WORD $0x91005908 // add x8, x8, #22
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x4e1a0109 // tbl v9.16b, {v8.16b}, v26.16b
	WORD $0x4e1b010a // tbl v10.16b, {v8.16b}, v27.16b
	WORD $0x4e3c8d29 // cmtst v9.16b, v9.16b, v28.16b
	WORD $0x4e3c8d4a // cmtst v10.16b, v10.16b, v28.16b
	WORD $0x4e691f29 // bic v9.16b, v25.16b, v9.16b
	WORD $0x4e6a1f2a // bic v10.16b, v25.16b, v10.16b
	WORD $0x4ea91cc6 // orr v6.16b, v6.16b, v9.16b
	WORD $0x4eaa1ce7 // orr v7.16b, v7.16b, v10.16b
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q4_1MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, sx *float32, nb int)
TEXT ·q4_1MatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD sx+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0xaa0603eb // mov x11, x6
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400101 // ldr h1, [x8]
	WORD $0x7d400512 // ldr h18, [x8, #2]
	WORD $0x3cc04102 // ldur q2, [x8, #4]
	WORD $0x91005108 // add x8, x8, #20
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0xbc404571 // ldr s17, [x11], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1ee24252 // fcvt s18, h18
	WORD $0x1e310a52 // fmul s18, s18, s17
	WORD $0x1e322863 // fadd s3, s3, s18
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q5_1MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, sx *float32, nb int)
TEXT ·q5_1MatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD sx+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	MOVD $l32qh<>(SB), R13
	WORD $0x4c4061ba // ld1 {v26.16b, v27.16b, v28.16b}, [x13]
	WORD $0x4f00e619 // movi v25.16b, #0x10
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0xaa0603eb // mov x11, x6
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400101 // ldr h1, [x8]
	WORD $0x7d400512 // ldr h18, [x8, #2]
	WORD $0x3cc08102 // ldur q2, [x8, #8]
	WORD $0xbc404108 // ldur s8, [x8, #4]
	WORD $0x91006108 // add x8, x8, #24
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0xbc404571 // ldr s17, [x11], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x4e1a0109 // tbl v9.16b, {v8.16b}, v26.16b
	WORD $0x4e1b010a // tbl v10.16b, {v8.16b}, v27.16b
	WORD $0x4e3c8d29 // cmtst v9.16b, v9.16b, v28.16b
	WORD $0x4e3c8d4a // cmtst v10.16b, v10.16b, v28.16b
	WORD $0x4e391d29 // and v9.16b, v9.16b, v25.16b
	WORD $0x4e391d4a // and v10.16b, v10.16b, v25.16b
	WORD $0x4ea91cc6 // orr v6.16b, v6.16b, v9.16b
	WORD $0x4eaa1ce7 // orr v7.16b, v7.16b, v10.16b
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1ee24252 // fcvt s18, h18
	WORD $0x1e310a52 // fmul s18, s18, s17
	WORD $0x1e322863 // fadd s3, s3, s18
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func iq4NLMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)
TEXT ·iq4NLMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD kv+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x3dc000d7 // ldr q23, [x6]
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400101 // ldr h1, [x8]
	WORD $0x3cc02102 // ldur q2, [x8, #2]
	WORD $0x91004908 // add x8, x8, #18
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x4e0602e6 // tbl v6.16b, {v23.16b}, v6.16b
	WORD $0x4e0702e7 // tbl v7.16b, {v23.16b}, v7.16b
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func mxfp4MatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)
TEXT ·mxfp4MatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD kv+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x3dc000d7 // ldr q23, [x6]
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x3940010d // ldrb w13, [x8]
	WORD $0x510005ae // sub w14, w13, #1
	WORD $0x530921ce // lsl w14, w14, #23
	WORD $0x52a0040f // mov w15, #0x200000
	WORD $0x1acd21ef // lsl w15, w15, w13
	WORD $0x710009bf // cmp w13, #2
	WORD $0x1a8e31ee // csel w14, w15, w14, lo
	WORD $0x1e2701c1 // fmov s1, w14
	WORD $0x3cc01102 // ldur q2, [x8, #1]
	WORD $0x91004508 // add x8, x8, #17
	WORD $0x4cdfa124 // ld1 {v4.16b, v5.16b}, [x9], #32
	WORD $0xbc404550 // ldr s16, [x10], #4
	WORD $0x4e3e1c46 // and v6.16b, v2.16b, v30.16b
	WORD $0x6f0c0447 // ushr v7.16b, v2.16b, #4
	WORD $0x4e0602e6 // tbl v6.16b, {v23.16b}, v6.16b
	WORD $0x4e0702e7 // tbl v7.16b, {v23.16b}, v7.16b
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x4e8494c3 // sdot v3.4s, v6.16b, v4.16b
	WORD $0x4e8594e3 // sdot v3.4s, v7.16b, v5.16b
	WORD $0x4eb1b863 // addv s3, v3.4s
	WORD $0x5e21d863 // scvtf s3, s3
	WORD $0x1e300821 // fmul s1, s1, s16
	WORD $0x1e210863 // fmul s3, s3, s1
	WORD $0x1e232bff // fadd s31, s31, s3
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

