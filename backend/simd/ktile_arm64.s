//go:build arm64 && !purego

#include "textflag.h"

// The multi-token tiles with SDOT: eight packed rows (kPackBytes for the
// K formats, packBlockBytes for the Q8_0-like ones) times four tokens
// qstride values apart, token j's results going to y[j*ldy:][:8]. A
// weight vector holds one 4-byte group of four rows, so that SDOT by
// element multiplies it by one token's group, the int32 lanes being rows:
// no horizontal sums. The packed values, offset to be unsigned, are made
// signed again before SDOT (minus off, or 128, wrapping), so that every
// integer is dotK's (dot32's) exactly and the float32 operations follow
// the Go reference's order: the bits of kTileGo and of dot32. nb > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.

// func q8Tile8x4SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, nb int)
TEXT ·q8Tile8x4SDOT(SB), NOSPLIT, $0-56
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD nb+48(FP), R7
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0x4f04e41a // movi v26.16b, #0x80
	WORD $0x6f00e408 // movi v8.2d, #0
	WORD $0x6f00e409 // movi v9.2d, #0
	WORD $0x6f00e40a // movi v10.2d, #0
	WORD $0x6f00e40b // movi v11.2d, #0
	WORD $0x6f00e40c // movi v12.2d, #0
	WORD $0x6f00e40d // movi v13.2d, #0
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
block:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdfa110 // ld1 {v16.16b, v17.16b}, [x8], #32
	WORD $0x4cdfa132 // ld1 {v18.16b, v19.16b}, [x9], #32
	WORD $0x4cdfa154 // ld1 {v20.16b, v21.16b}, [x10], #32
	WORD $0x4cdfa176 // ld1 {v22.16b, v23.16b}, [x11], #32
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4f90e300 // sdot v0.4s, v24.16b, v16.4b[0]
	WORD $0x4f90e321 // sdot v1.4s, v25.16b, v16.4b[0]
	WORD $0x4f92e302 // sdot v2.4s, v24.16b, v18.4b[0]
	WORD $0x4f92e323 // sdot v3.4s, v25.16b, v18.4b[0]
	WORD $0x4f94e304 // sdot v4.4s, v24.16b, v20.4b[0]
	WORD $0x4f94e325 // sdot v5.4s, v25.16b, v20.4b[0]
	WORD $0x4f96e306 // sdot v6.4s, v24.16b, v22.4b[0]
	WORD $0x4f96e327 // sdot v7.4s, v25.16b, v22.4b[0]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4fb0e300 // sdot v0.4s, v24.16b, v16.4b[1]
	WORD $0x4fb0e321 // sdot v1.4s, v25.16b, v16.4b[1]
	WORD $0x4fb2e302 // sdot v2.4s, v24.16b, v18.4b[1]
	WORD $0x4fb2e323 // sdot v3.4s, v25.16b, v18.4b[1]
	WORD $0x4fb4e304 // sdot v4.4s, v24.16b, v20.4b[1]
	WORD $0x4fb4e325 // sdot v5.4s, v25.16b, v20.4b[1]
	WORD $0x4fb6e306 // sdot v6.4s, v24.16b, v22.4b[1]
	WORD $0x4fb6e327 // sdot v7.4s, v25.16b, v22.4b[1]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4f90eb00 // sdot v0.4s, v24.16b, v16.4b[2]
	WORD $0x4f90eb21 // sdot v1.4s, v25.16b, v16.4b[2]
	WORD $0x4f92eb02 // sdot v2.4s, v24.16b, v18.4b[2]
	WORD $0x4f92eb23 // sdot v3.4s, v25.16b, v18.4b[2]
	WORD $0x4f94eb04 // sdot v4.4s, v24.16b, v20.4b[2]
	WORD $0x4f94eb25 // sdot v5.4s, v25.16b, v20.4b[2]
	WORD $0x4f96eb06 // sdot v6.4s, v24.16b, v22.4b[2]
	WORD $0x4f96eb27 // sdot v7.4s, v25.16b, v22.4b[2]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4fb0eb00 // sdot v0.4s, v24.16b, v16.4b[3]
	WORD $0x4fb0eb21 // sdot v1.4s, v25.16b, v16.4b[3]
	WORD $0x4fb2eb02 // sdot v2.4s, v24.16b, v18.4b[3]
	WORD $0x4fb2eb23 // sdot v3.4s, v25.16b, v18.4b[3]
	WORD $0x4fb4eb04 // sdot v4.4s, v24.16b, v20.4b[3]
	WORD $0x4fb4eb25 // sdot v5.4s, v25.16b, v20.4b[3]
	WORD $0x4fb6eb06 // sdot v6.4s, v24.16b, v22.4b[3]
	WORD $0x4fb6eb27 // sdot v7.4s, v25.16b, v22.4b[3]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4f91e300 // sdot v0.4s, v24.16b, v17.4b[0]
	WORD $0x4f91e321 // sdot v1.4s, v25.16b, v17.4b[0]
	WORD $0x4f93e302 // sdot v2.4s, v24.16b, v19.4b[0]
	WORD $0x4f93e323 // sdot v3.4s, v25.16b, v19.4b[0]
	WORD $0x4f95e304 // sdot v4.4s, v24.16b, v21.4b[0]
	WORD $0x4f95e325 // sdot v5.4s, v25.16b, v21.4b[0]
	WORD $0x4f97e306 // sdot v6.4s, v24.16b, v23.4b[0]
	WORD $0x4f97e327 // sdot v7.4s, v25.16b, v23.4b[0]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4fb1e300 // sdot v0.4s, v24.16b, v17.4b[1]
	WORD $0x4fb1e321 // sdot v1.4s, v25.16b, v17.4b[1]
	WORD $0x4fb3e302 // sdot v2.4s, v24.16b, v19.4b[1]
	WORD $0x4fb3e323 // sdot v3.4s, v25.16b, v19.4b[1]
	WORD $0x4fb5e304 // sdot v4.4s, v24.16b, v21.4b[1]
	WORD $0x4fb5e325 // sdot v5.4s, v25.16b, v21.4b[1]
	WORD $0x4fb7e306 // sdot v6.4s, v24.16b, v23.4b[1]
	WORD $0x4fb7e327 // sdot v7.4s, v25.16b, v23.4b[1]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4f91eb00 // sdot v0.4s, v24.16b, v17.4b[2]
	WORD $0x4f91eb21 // sdot v1.4s, v25.16b, v17.4b[2]
	WORD $0x4f93eb02 // sdot v2.4s, v24.16b, v19.4b[2]
	WORD $0x4f93eb23 // sdot v3.4s, v25.16b, v19.4b[2]
	WORD $0x4f95eb04 // sdot v4.4s, v24.16b, v21.4b[2]
	WORD $0x4f95eb25 // sdot v5.4s, v25.16b, v21.4b[2]
	WORD $0x4f97eb06 // sdot v6.4s, v24.16b, v23.4b[2]
	WORD $0x4f97eb27 // sdot v7.4s, v25.16b, v23.4b[2]
	WORD $0x4cdfa058 // ld1 {v24.16b, v25.16b}, [x2], #32
	WORD $0x6e3a1f18 // eor v24.16b, v24.16b, v26.16b
	WORD $0x6e3a1f39 // eor v25.16b, v25.16b, v26.16b
	WORD $0x4fb1eb00 // sdot v0.4s, v24.16b, v17.4b[3]
	WORD $0x4fb1eb21 // sdot v1.4s, v25.16b, v17.4b[3]
	WORD $0x4fb3eb02 // sdot v2.4s, v24.16b, v19.4b[3]
	WORD $0x4fb3eb23 // sdot v3.4s, v25.16b, v19.4b[3]
	WORD $0x4fb5eb04 // sdot v4.4s, v24.16b, v21.4b[3]
	WORD $0x4fb5eb25 // sdot v5.4s, v25.16b, v21.4b[3]
	WORD $0x4fb7eb06 // sdot v6.4s, v24.16b, v23.4b[3]
	WORD $0x4fb7eb27 // sdot v7.4s, v25.16b, v23.4b[3]
	WORD $0x4cdfa85c // ld1 {v28.4s, v29.4s}, [x2], #32
	WORD $0xbc40459e // ldr s30, [x12], #4
	WORD $0x4f9e939b // fmul v27.4s, v28.4s, v30.s[0]
	WORD $0x4f9e93bf // fmul v31.4s, v29.4s, v30.s[0]
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x6e3bdc00 // fmul v0.4s, v0.4s, v27.4s
	WORD $0x6e3fdc21 // fmul v1.4s, v1.4s, v31.4s
	WORD $0x4e20d508 // fadd v8.4s, v8.4s, v0.4s
	WORD $0x4e21d529 // fadd v9.4s, v9.4s, v1.4s
	WORD $0xbc4045de // ldr s30, [x14], #4
	WORD $0x4f9e939b // fmul v27.4s, v28.4s, v30.s[0]
	WORD $0x4f9e93bf // fmul v31.4s, v29.4s, v30.s[0]
	WORD $0x4e21d842 // scvtf v2.4s, v2.4s
	WORD $0x4e21d863 // scvtf v3.4s, v3.4s
	WORD $0x6e3bdc42 // fmul v2.4s, v2.4s, v27.4s
	WORD $0x6e3fdc63 // fmul v3.4s, v3.4s, v31.4s
	WORD $0x4e22d54a // fadd v10.4s, v10.4s, v2.4s
	WORD $0x4e23d56b // fadd v11.4s, v11.4s, v3.4s
	WORD $0xbc4045fe // ldr s30, [x15], #4
	WORD $0x4f9e939b // fmul v27.4s, v28.4s, v30.s[0]
	WORD $0x4f9e93bf // fmul v31.4s, v29.4s, v30.s[0]
	WORD $0x4e21d884 // scvtf v4.4s, v4.4s
	WORD $0x4e21d8a5 // scvtf v5.4s, v5.4s
	WORD $0x6e3bdc84 // fmul v4.4s, v4.4s, v27.4s
	WORD $0x6e3fdca5 // fmul v5.4s, v5.4s, v31.4s
	WORD $0x4e24d58c // fadd v12.4s, v12.4s, v4.4s
	WORD $0x4e25d5ad // fadd v13.4s, v13.4s, v5.4s
	WORD $0xbc40461e // ldr s30, [x16], #4
	WORD $0x4f9e939b // fmul v27.4s, v28.4s, v30.s[0]
	WORD $0x4f9e93bf // fmul v31.4s, v29.4s, v30.s[0]
	WORD $0x4e21d8c6 // scvtf v6.4s, v6.4s
	WORD $0x4e21d8e7 // scvtf v7.4s, v7.4s
	WORD $0x6e3bdcc6 // fmul v6.4s, v6.4s, v27.4s
	WORD $0x6e3fdce7 // fmul v7.4s, v7.4s, v31.4s
	WORD $0x4e26d5ce // fadd v14.4s, v14.4s, v6.4s
	WORD $0x4e27d5ef // fadd v15.4s, v15.4s, v7.4s
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	WORD $0xad002408 // stp q8, q9, [x0]
	WORD $0x8b010000 // add x0, x0, x1
	WORD $0xad002c0a // stp q10, q11, [x0]
	WORD $0x8b010000 // add x0, x0, x1
	WORD $0xad00340c // stp q12, q13, [x0]
	WORD $0x8b010000 // add x0, x0, x1
	WORD $0xad003c0e // stp q14, q15, [x0]
	WORD $0x8b010000 // add x0, x0, x1
	RET

// func kTile32MinSDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile32MinSDOT(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800103 // mov x3, #8
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4ea89410 // mla v16.4s, v0.4s, v8.4s
	WORD $0x4ea99431 // mla v17.4s, v1.4s, v9.4s
	WORD $0x4ea89452 // mla v18.4s, v2.4s, v8.4s
	WORD $0x4ea99473 // mla v19.4s, v3.4s, v9.4s
	WORD $0x4ea89494 // mla v20.4s, v4.4s, v8.4s
	WORD $0x4ea994b5 // mla v21.4s, v5.4s, v9.4s
	WORD $0x4ea894d6 // mla v22.4s, v6.4s, v8.4s
	WORD $0x4ea994f7 // mla v23.4s, v7.4s, v9.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x910401ad // add x13, x13, #256
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x3dc00a28 // ldr q8, [x17, #32]
	WORD $0x3dc00a69 // ldr q9, [x19, #32]
	WORD $0x3dc00a8a // ldr q10, [x20, #32]
	WORD $0x3dc00b2b // ldr q11, [x25, #32]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f492342 // smlal v2.4s, v26.4h, v9.h[0]
	WORD $0x4f492343 // smlal2 v3.4s, v26.8h, v9.h[0]
	WORD $0x0f592362 // smlal v2.4s, v27.4h, v9.h[1]
	WORD $0x4f592363 // smlal2 v3.4s, v27.8h, v9.h[1]
	WORD $0x0f4a2344 // smlal v4.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2345 // smlal2 v5.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2364 // smlal v4.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2365 // smlal2 v5.4s, v27.8h, v10.h[1]
	WORD $0x0f4b2346 // smlal v6.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2347 // smlal2 v7.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2366 // smlal v6.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2367 // smlal2 v7.4s, v27.8h, v11.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f692342 // smlal v2.4s, v26.4h, v9.h[2]
	WORD $0x4f692343 // smlal2 v3.4s, v26.8h, v9.h[2]
	WORD $0x0f792362 // smlal v2.4s, v27.4h, v9.h[3]
	WORD $0x4f792363 // smlal2 v3.4s, v27.8h, v9.h[3]
	WORD $0x0f6a2344 // smlal v4.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2345 // smlal2 v5.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2364 // smlal v4.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2365 // smlal2 v5.4s, v27.8h, v10.h[3]
	WORD $0x0f6b2346 // smlal v6.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2347 // smlal2 v7.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2366 // smlal v6.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2367 // smlal2 v7.4s, v27.8h, v11.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f492b42 // smlal v2.4s, v26.4h, v9.h[4]
	WORD $0x4f492b43 // smlal2 v3.4s, v26.8h, v9.h[4]
	WORD $0x0f592b62 // smlal v2.4s, v27.4h, v9.h[5]
	WORD $0x4f592b63 // smlal2 v3.4s, v27.8h, v9.h[5]
	WORD $0x0f4a2b44 // smlal v4.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b45 // smlal2 v5.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b64 // smlal v4.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b65 // smlal2 v5.4s, v27.8h, v10.h[5]
	WORD $0x0f4b2b46 // smlal v6.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b47 // smlal2 v7.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b66 // smlal v6.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b67 // smlal2 v7.4s, v27.8h, v11.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f692b42 // smlal v2.4s, v26.4h, v9.h[6]
	WORD $0x4f692b43 // smlal2 v3.4s, v26.8h, v9.h[6]
	WORD $0x0f792b62 // smlal v2.4s, v27.4h, v9.h[7]
	WORD $0x4f792b63 // smlal2 v3.4s, v27.8h, v9.h[7]
	WORD $0x0f6a2b44 // smlal v4.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b45 // smlal2 v5.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b64 // smlal v4.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b65 // smlal2 v5.4s, v27.8h, v10.h[7]
	WORD $0x0f6b2b46 // smlal v6.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b47 // smlal2 v7.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b66 // smlal v6.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b67 // smlal2 v7.4s, v27.8h, v11.h[7]
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc00 // fmul v0.4s, v0.4s, v29.4s
	WORD $0x6e3edc21 // fmul v1.4s, v1.4s, v30.4s
	WORD $0x4ea0d610 // fsub v16.4s, v16.4s, v0.4s
	WORD $0x4ea1d631 // fsub v17.4s, v17.4s, v1.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0x4e21d842 // scvtf v2.4s, v2.4s
	WORD $0x4e21d863 // scvtf v3.4s, v3.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc42 // fmul v2.4s, v2.4s, v29.4s
	WORD $0x6e3edc63 // fmul v3.4s, v3.4s, v30.4s
	WORD $0x4ea2d652 // fsub v18.4s, v18.4s, v2.4s
	WORD $0x4ea3d673 // fsub v19.4s, v19.4s, v3.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0x4e21d884 // scvtf v4.4s, v4.4s
	WORD $0x4e21d8a5 // scvtf v5.4s, v5.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc84 // fmul v4.4s, v4.4s, v29.4s
	WORD $0x6e3edca5 // fmul v5.4s, v5.4s, v30.4s
	WORD $0x4ea4d694 // fsub v20.4s, v20.4s, v4.4s
	WORD $0x4ea5d6b5 // fsub v21.4s, v21.4s, v5.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0x4e21d8c6 // scvtf v6.4s, v6.4s
	WORD $0x4e21d8e7 // scvtf v7.4s, v7.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddcc6 // fmul v6.4s, v6.4s, v29.4s
	WORD $0x6e3edce7 // fmul v7.4s, v7.4s, v30.4s
	WORD $0x4ea6d6d6 // fsub v22.4s, v22.4s, v6.4s
	WORD $0x4ea7d6f7 // fsub v23.4s, v23.4s, v7.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x910b0042 // add x2, x2, #704
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile16MinSDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile16MinSDOT(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800203 // mov x3, #16
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4ea89410 // mla v16.4s, v0.4s, v8.4s
	WORD $0x4ea99431 // mla v17.4s, v1.4s, v9.4s
	WORD $0x4ea89452 // mla v18.4s, v2.4s, v8.4s
	WORD $0x4ea99473 // mla v19.4s, v3.4s, v9.4s
	WORD $0x4ea89494 // mla v20.4s, v4.4s, v8.4s
	WORD $0x4ea994b5 // mla v21.4s, v5.4s, v9.4s
	WORD $0x4ea894d6 // mla v22.4s, v6.4s, v8.4s
	WORD $0x4ea994f7 // mla v23.4s, v7.4s, v9.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x910801ad // add x13, x13, #512
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4c40a628 // ld1 {v8.8h, v9.8h}, [x17]
	WORD $0x4c40a66a // ld1 {v10.8h, v11.8h}, [x19]
	WORD $0x4c40a68c // ld1 {v12.8h, v13.8h}, [x20]
	WORD $0x4c40a72e // ld1 {v14.8h, v15.8h}, [x25]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f4a2342 // smlal v2.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2343 // smlal2 v3.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2362 // smlal v2.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2363 // smlal2 v3.4s, v27.8h, v10.h[1]
	WORD $0x0f4c2344 // smlal v4.4s, v26.4h, v12.h[0]
	WORD $0x4f4c2345 // smlal2 v5.4s, v26.8h, v12.h[0]
	WORD $0x0f5c2364 // smlal v4.4s, v27.4h, v12.h[1]
	WORD $0x4f5c2365 // smlal2 v5.4s, v27.8h, v12.h[1]
	WORD $0x0f4e2346 // smlal v6.4s, v26.4h, v14.h[0]
	WORD $0x4f4e2347 // smlal2 v7.4s, v26.8h, v14.h[0]
	WORD $0x0f5e2366 // smlal v6.4s, v27.4h, v14.h[1]
	WORD $0x4f5e2367 // smlal2 v7.4s, v27.8h, v14.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f6a2342 // smlal v2.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2343 // smlal2 v3.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2362 // smlal v2.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2363 // smlal2 v3.4s, v27.8h, v10.h[3]
	WORD $0x0f6c2344 // smlal v4.4s, v26.4h, v12.h[2]
	WORD $0x4f6c2345 // smlal2 v5.4s, v26.8h, v12.h[2]
	WORD $0x0f7c2364 // smlal v4.4s, v27.4h, v12.h[3]
	WORD $0x4f7c2365 // smlal2 v5.4s, v27.8h, v12.h[3]
	WORD $0x0f6e2346 // smlal v6.4s, v26.4h, v14.h[2]
	WORD $0x4f6e2347 // smlal2 v7.4s, v26.8h, v14.h[2]
	WORD $0x0f7e2366 // smlal v6.4s, v27.4h, v14.h[3]
	WORD $0x4f7e2367 // smlal2 v7.4s, v27.8h, v14.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f4a2b42 // smlal v2.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b43 // smlal2 v3.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b62 // smlal v2.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b63 // smlal2 v3.4s, v27.8h, v10.h[5]
	WORD $0x0f4c2b44 // smlal v4.4s, v26.4h, v12.h[4]
	WORD $0x4f4c2b45 // smlal2 v5.4s, v26.8h, v12.h[4]
	WORD $0x0f5c2b64 // smlal v4.4s, v27.4h, v12.h[5]
	WORD $0x4f5c2b65 // smlal2 v5.4s, v27.8h, v12.h[5]
	WORD $0x0f4e2b46 // smlal v6.4s, v26.4h, v14.h[4]
	WORD $0x4f4e2b47 // smlal2 v7.4s, v26.8h, v14.h[4]
	WORD $0x0f5e2b66 // smlal v6.4s, v27.4h, v14.h[5]
	WORD $0x4f5e2b67 // smlal2 v7.4s, v27.8h, v14.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f6a2b42 // smlal v2.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b43 // smlal2 v3.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b62 // smlal v2.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b63 // smlal2 v3.4s, v27.8h, v10.h[7]
	WORD $0x0f6c2b44 // smlal v4.4s, v26.4h, v12.h[6]
	WORD $0x4f6c2b45 // smlal2 v5.4s, v26.8h, v12.h[6]
	WORD $0x0f7c2b64 // smlal v4.4s, v27.4h, v12.h[7]
	WORD $0x4f7c2b65 // smlal2 v5.4s, v27.8h, v12.h[7]
	WORD $0x0f6e2b46 // smlal v6.4s, v26.4h, v14.h[6]
	WORD $0x4f6e2b47 // smlal2 v7.4s, v26.8h, v14.h[6]
	WORD $0x0f7e2b66 // smlal v6.4s, v27.4h, v14.h[7]
	WORD $0x4f7e2b67 // smlal2 v7.4s, v27.8h, v14.h[7]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492340 // smlal v0.4s, v26.4h, v9.h[0]
	WORD $0x4f492341 // smlal2 v1.4s, v26.8h, v9.h[0]
	WORD $0x0f592360 // smlal v0.4s, v27.4h, v9.h[1]
	WORD $0x4f592361 // smlal2 v1.4s, v27.8h, v9.h[1]
	WORD $0x0f4b2342 // smlal v2.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2343 // smlal2 v3.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2362 // smlal v2.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2363 // smlal2 v3.4s, v27.8h, v11.h[1]
	WORD $0x0f4d2344 // smlal v4.4s, v26.4h, v13.h[0]
	WORD $0x4f4d2345 // smlal2 v5.4s, v26.8h, v13.h[0]
	WORD $0x0f5d2364 // smlal v4.4s, v27.4h, v13.h[1]
	WORD $0x4f5d2365 // smlal2 v5.4s, v27.8h, v13.h[1]
	WORD $0x0f4f2346 // smlal v6.4s, v26.4h, v15.h[0]
	WORD $0x4f4f2347 // smlal2 v7.4s, v26.8h, v15.h[0]
	WORD $0x0f5f2366 // smlal v6.4s, v27.4h, v15.h[1]
	WORD $0x4f5f2367 // smlal2 v7.4s, v27.8h, v15.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692340 // smlal v0.4s, v26.4h, v9.h[2]
	WORD $0x4f692341 // smlal2 v1.4s, v26.8h, v9.h[2]
	WORD $0x0f792360 // smlal v0.4s, v27.4h, v9.h[3]
	WORD $0x4f792361 // smlal2 v1.4s, v27.8h, v9.h[3]
	WORD $0x0f6b2342 // smlal v2.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2343 // smlal2 v3.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2362 // smlal v2.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2363 // smlal2 v3.4s, v27.8h, v11.h[3]
	WORD $0x0f6d2344 // smlal v4.4s, v26.4h, v13.h[2]
	WORD $0x4f6d2345 // smlal2 v5.4s, v26.8h, v13.h[2]
	WORD $0x0f7d2364 // smlal v4.4s, v27.4h, v13.h[3]
	WORD $0x4f7d2365 // smlal2 v5.4s, v27.8h, v13.h[3]
	WORD $0x0f6f2346 // smlal v6.4s, v26.4h, v15.h[2]
	WORD $0x4f6f2347 // smlal2 v7.4s, v26.8h, v15.h[2]
	WORD $0x0f7f2366 // smlal v6.4s, v27.4h, v15.h[3]
	WORD $0x4f7f2367 // smlal2 v7.4s, v27.8h, v15.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492b40 // smlal v0.4s, v26.4h, v9.h[4]
	WORD $0x4f492b41 // smlal2 v1.4s, v26.8h, v9.h[4]
	WORD $0x0f592b60 // smlal v0.4s, v27.4h, v9.h[5]
	WORD $0x4f592b61 // smlal2 v1.4s, v27.8h, v9.h[5]
	WORD $0x0f4b2b42 // smlal v2.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b43 // smlal2 v3.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b62 // smlal v2.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b63 // smlal2 v3.4s, v27.8h, v11.h[5]
	WORD $0x0f4d2b44 // smlal v4.4s, v26.4h, v13.h[4]
	WORD $0x4f4d2b45 // smlal2 v5.4s, v26.8h, v13.h[4]
	WORD $0x0f5d2b64 // smlal v4.4s, v27.4h, v13.h[5]
	WORD $0x4f5d2b65 // smlal2 v5.4s, v27.8h, v13.h[5]
	WORD $0x0f4f2b46 // smlal v6.4s, v26.4h, v15.h[4]
	WORD $0x4f4f2b47 // smlal2 v7.4s, v26.8h, v15.h[4]
	WORD $0x0f5f2b66 // smlal v6.4s, v27.4h, v15.h[5]
	WORD $0x4f5f2b67 // smlal2 v7.4s, v27.8h, v15.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692b40 // smlal v0.4s, v26.4h, v9.h[6]
	WORD $0x4f692b41 // smlal2 v1.4s, v26.8h, v9.h[6]
	WORD $0x0f792b60 // smlal v0.4s, v27.4h, v9.h[7]
	WORD $0x4f792b61 // smlal2 v1.4s, v27.8h, v9.h[7]
	WORD $0x0f6b2b42 // smlal v2.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b43 // smlal2 v3.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b62 // smlal v2.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b63 // smlal2 v3.4s, v27.8h, v11.h[7]
	WORD $0x0f6d2b44 // smlal v4.4s, v26.4h, v13.h[6]
	WORD $0x4f6d2b45 // smlal2 v5.4s, v26.8h, v13.h[6]
	WORD $0x0f7d2b64 // smlal v4.4s, v27.4h, v13.h[7]
	WORD $0x4f7d2b65 // smlal2 v5.4s, v27.8h, v13.h[7]
	WORD $0x0f6f2b46 // smlal v6.4s, v26.4h, v15.h[6]
	WORD $0x4f6f2b47 // smlal2 v7.4s, v26.8h, v15.h[6]
	WORD $0x0f7f2b66 // smlal v6.4s, v27.4h, v15.h[7]
	WORD $0x4f7f2b67 // smlal2 v7.4s, v27.8h, v15.h[7]
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc00 // fmul v0.4s, v0.4s, v29.4s
	WORD $0x6e3edc21 // fmul v1.4s, v1.4s, v30.4s
	WORD $0x4ea0d610 // fsub v16.4s, v16.4s, v0.4s
	WORD $0x4ea1d631 // fsub v17.4s, v17.4s, v1.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0x4e21d842 // scvtf v2.4s, v2.4s
	WORD $0x4e21d863 // scvtf v3.4s, v3.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc42 // fmul v2.4s, v2.4s, v29.4s
	WORD $0x6e3edc63 // fmul v3.4s, v3.4s, v30.4s
	WORD $0x4ea2d652 // fsub v18.4s, v18.4s, v2.4s
	WORD $0x4ea3d673 // fsub v19.4s, v19.4s, v3.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0x4e21d884 // scvtf v4.4s, v4.4s
	WORD $0x4e21d8a5 // scvtf v5.4s, v5.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc84 // fmul v4.4s, v4.4s, v29.4s
	WORD $0x6e3edca5 // fmul v5.4s, v5.4s, v30.4s
	WORD $0x4ea4d694 // fsub v20.4s, v20.4s, v4.4s
	WORD $0x4ea5d6b5 // fsub v21.4s, v21.4s, v5.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0x4e21d8c6 // scvtf v6.4s, v6.4s
	WORD $0x4e21d8e7 // scvtf v7.4s, v7.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddcc6 // fmul v6.4s, v6.4s, v29.4s
	WORD $0x6e3edce7 // fmul v7.4s, v7.4s, v30.4s
	WORD $0x4ea6d6d6 // fsub v22.4s, v22.4s, v6.4s
	WORD $0x4ea7d6f7 // fsub v23.4s, v23.4s, v7.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x91150042 // add x2, x2, #1344
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile32SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile32SDOT(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800103 // mov x3, #8
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4ea89410 // mla v16.4s, v0.4s, v8.4s
	WORD $0x4ea99431 // mla v17.4s, v1.4s, v9.4s
	WORD $0x4ea89452 // mla v18.4s, v2.4s, v8.4s
	WORD $0x4ea99473 // mla v19.4s, v3.4s, v9.4s
	WORD $0x4ea89494 // mla v20.4s, v4.4s, v8.4s
	WORD $0x4ea994b5 // mla v21.4s, v5.4s, v9.4s
	WORD $0x4ea894d6 // mla v22.4s, v6.4s, v8.4s
	WORD $0x4ea994f7 // mla v23.4s, v7.4s, v9.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x910401ad // add x13, x13, #256
	WORD $0x910201ad // add x13, x13, #128
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x910b0042 // add x2, x2, #704
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile16SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile16SDOT(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800203 // mov x3, #16
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98e380 // sdot v0.4s, v28.16b, v24.4b[0]
	WORD $0x4f98e3a1 // sdot v1.4s, v29.16b, v24.4b[0]
	WORD $0x4f99e382 // sdot v2.4s, v28.16b, v25.4b[0]
	WORD $0x4f99e3a3 // sdot v3.4s, v29.16b, v25.4b[0]
	WORD $0x4f9ae384 // sdot v4.4s, v28.16b, v26.4b[0]
	WORD $0x4f9ae3a5 // sdot v5.4s, v29.16b, v26.4b[0]
	WORD $0x4f9be386 // sdot v6.4s, v28.16b, v27.4b[0]
	WORD $0x4f9be3a7 // sdot v7.4s, v29.16b, v27.4b[0]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8e3c0 // sdot v0.4s, v30.16b, v24.4b[1]
	WORD $0x4fb8e3e1 // sdot v1.4s, v31.16b, v24.4b[1]
	WORD $0x4fb9e3c2 // sdot v2.4s, v30.16b, v25.4b[1]
	WORD $0x4fb9e3e3 // sdot v3.4s, v31.16b, v25.4b[1]
	WORD $0x4fbae3c4 // sdot v4.4s, v30.16b, v26.4b[1]
	WORD $0x4fbae3e5 // sdot v5.4s, v31.16b, v26.4b[1]
	WORD $0x4fbbe3c6 // sdot v6.4s, v30.16b, v27.4b[1]
	WORD $0x4fbbe3e7 // sdot v7.4s, v31.16b, v27.4b[1]
	WORD $0x4cdfa05c // ld1 {v28.16b, v29.16b}, [x2], #32
	WORD $0x6e2a879c // sub v28.16b, v28.16b, v10.16b
	WORD $0x6e2a87bd // sub v29.16b, v29.16b, v10.16b
	WORD $0x4f98eb80 // sdot v0.4s, v28.16b, v24.4b[2]
	WORD $0x4f98eba1 // sdot v1.4s, v29.16b, v24.4b[2]
	WORD $0x4f99eb82 // sdot v2.4s, v28.16b, v25.4b[2]
	WORD $0x4f99eba3 // sdot v3.4s, v29.16b, v25.4b[2]
	WORD $0x4f9aeb84 // sdot v4.4s, v28.16b, v26.4b[2]
	WORD $0x4f9aeba5 // sdot v5.4s, v29.16b, v26.4b[2]
	WORD $0x4f9beb86 // sdot v6.4s, v28.16b, v27.4b[2]
	WORD $0x4f9beba7 // sdot v7.4s, v29.16b, v27.4b[2]
	WORD $0x4cdfa05e // ld1 {v30.16b, v31.16b}, [x2], #32
	WORD $0x6e2a87de // sub v30.16b, v30.16b, v10.16b
	WORD $0x6e2a87ff // sub v31.16b, v31.16b, v10.16b
	WORD $0x4fb8ebc0 // sdot v0.4s, v30.16b, v24.4b[3]
	WORD $0x4fb8ebe1 // sdot v1.4s, v31.16b, v24.4b[3]
	WORD $0x4fb9ebc2 // sdot v2.4s, v30.16b, v25.4b[3]
	WORD $0x4fb9ebe3 // sdot v3.4s, v31.16b, v25.4b[3]
	WORD $0x4fbaebc4 // sdot v4.4s, v30.16b, v26.4b[3]
	WORD $0x4fbaebe5 // sdot v5.4s, v31.16b, v26.4b[3]
	WORD $0x4fbbebc6 // sdot v6.4s, v30.16b, v27.4b[3]
	WORD $0x4fbbebe7 // sdot v7.4s, v31.16b, v27.4b[3]
	WORD $0x4ea89410 // mla v16.4s, v0.4s, v8.4s
	WORD $0x4ea99431 // mla v17.4s, v1.4s, v9.4s
	WORD $0x4ea89452 // mla v18.4s, v2.4s, v8.4s
	WORD $0x4ea99473 // mla v19.4s, v3.4s, v9.4s
	WORD $0x4ea89494 // mla v20.4s, v4.4s, v8.4s
	WORD $0x4ea994b5 // mla v21.4s, v5.4s, v9.4s
	WORD $0x4ea894d6 // mla v22.4s, v6.4s, v8.4s
	WORD $0x4ea994f7 // mla v23.4s, v7.4s, v9.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x910801ad // add x13, x13, #512
	WORD $0x910401ad // add x13, x13, #256
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x91150042 // add x2, x2, #1344
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile32MinI8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile32MinI8MM(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800103 // mov x3, #8
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4e88390b // zip1 v11.4s, v8.4s, v8.4s
	WORD $0x4e88790c // zip2 v12.4s, v8.4s, v8.4s
	WORD $0x4e89392d // zip1 v13.4s, v9.4s, v9.4s
	WORD $0x4e89792e // zip2 v14.4s, v9.4s, v9.4s
	WORD $0x4eab9410 // mla v16.4s, v0.4s, v11.4s
	WORD $0x4eab9431 // mla v17.4s, v1.4s, v11.4s
	WORD $0x4eac9452 // mla v18.4s, v2.4s, v12.4s
	WORD $0x4eac9473 // mla v19.4s, v3.4s, v12.4s
	WORD $0x4ead9494 // mla v20.4s, v4.4s, v13.4s
	WORD $0x4ead94b5 // mla v21.4s, v5.4s, v13.4s
	WORD $0x4eae94d6 // mla v22.4s, v6.4s, v14.4s
	WORD $0x4eae94f7 // mla v23.4s, v7.4s, v14.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x4e921a00 // uzp1 v0.4s, v16.4s, v18.4s
	WORD $0x4e961a81 // uzp1 v1.4s, v20.4s, v22.4s
	WORD $0x4e925a02 // uzp2 v2.4s, v16.4s, v18.4s
	WORD $0x4e965a83 // uzp2 v3.4s, v20.4s, v22.4s
	WORD $0x4e931a24 // uzp1 v4.4s, v17.4s, v19.4s
	WORD $0x4e971aa5 // uzp1 v5.4s, v21.4s, v23.4s
	WORD $0x4e935a26 // uzp2 v6.4s, v17.4s, v19.4s
	WORD $0x4e975aa7 // uzp2 v7.4s, v21.4s, v23.4s
	WORD $0x4ea01c10 // mov v16.16b, v0.16b
	WORD $0x4ea11c31 // mov v17.16b, v1.16b
	WORD $0x4ea21c52 // mov v18.16b, v2.16b
	WORD $0x4ea31c73 // mov v19.16b, v3.16b
	WORD $0x4ea41c94 // mov v20.16b, v4.16b
	WORD $0x4ea51cb5 // mov v21.16b, v5.16b
	WORD $0x4ea61cd6 // mov v22.16b, v6.16b
	WORD $0x4ea71cf7 // mov v23.16b, v7.16b
	WORD $0x910401ad // add x13, x13, #256
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x3dc00a28 // ldr q8, [x17, #32]
	WORD $0x3dc00a69 // ldr q9, [x19, #32]
	WORD $0x3dc00a8a // ldr q10, [x20, #32]
	WORD $0x3dc00b2b // ldr q11, [x25, #32]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f492342 // smlal v2.4s, v26.4h, v9.h[0]
	WORD $0x4f492343 // smlal2 v3.4s, v26.8h, v9.h[0]
	WORD $0x0f592362 // smlal v2.4s, v27.4h, v9.h[1]
	WORD $0x4f592363 // smlal2 v3.4s, v27.8h, v9.h[1]
	WORD $0x0f4a2344 // smlal v4.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2345 // smlal2 v5.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2364 // smlal v4.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2365 // smlal2 v5.4s, v27.8h, v10.h[1]
	WORD $0x0f4b2346 // smlal v6.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2347 // smlal2 v7.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2366 // smlal v6.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2367 // smlal2 v7.4s, v27.8h, v11.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f692342 // smlal v2.4s, v26.4h, v9.h[2]
	WORD $0x4f692343 // smlal2 v3.4s, v26.8h, v9.h[2]
	WORD $0x0f792362 // smlal v2.4s, v27.4h, v9.h[3]
	WORD $0x4f792363 // smlal2 v3.4s, v27.8h, v9.h[3]
	WORD $0x0f6a2344 // smlal v4.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2345 // smlal2 v5.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2364 // smlal v4.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2365 // smlal2 v5.4s, v27.8h, v10.h[3]
	WORD $0x0f6b2346 // smlal v6.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2347 // smlal2 v7.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2366 // smlal v6.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2367 // smlal2 v7.4s, v27.8h, v11.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f492b42 // smlal v2.4s, v26.4h, v9.h[4]
	WORD $0x4f492b43 // smlal2 v3.4s, v26.8h, v9.h[4]
	WORD $0x0f592b62 // smlal v2.4s, v27.4h, v9.h[5]
	WORD $0x4f592b63 // smlal2 v3.4s, v27.8h, v9.h[5]
	WORD $0x0f4a2b44 // smlal v4.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b45 // smlal2 v5.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b64 // smlal v4.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b65 // smlal2 v5.4s, v27.8h, v10.h[5]
	WORD $0x0f4b2b46 // smlal v6.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b47 // smlal2 v7.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b66 // smlal v6.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b67 // smlal2 v7.4s, v27.8h, v11.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f692b42 // smlal v2.4s, v26.4h, v9.h[6]
	WORD $0x4f692b43 // smlal2 v3.4s, v26.8h, v9.h[6]
	WORD $0x0f792b62 // smlal v2.4s, v27.4h, v9.h[7]
	WORD $0x4f792b63 // smlal2 v3.4s, v27.8h, v9.h[7]
	WORD $0x0f6a2b44 // smlal v4.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b45 // smlal2 v5.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b64 // smlal v4.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b65 // smlal2 v5.4s, v27.8h, v10.h[7]
	WORD $0x0f6b2b46 // smlal v6.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b47 // smlal2 v7.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b66 // smlal v6.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b67 // smlal2 v7.4s, v27.8h, v11.h[7]
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc00 // fmul v0.4s, v0.4s, v29.4s
	WORD $0x6e3edc21 // fmul v1.4s, v1.4s, v30.4s
	WORD $0x4ea0d610 // fsub v16.4s, v16.4s, v0.4s
	WORD $0x4ea1d631 // fsub v17.4s, v17.4s, v1.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0x4e21d842 // scvtf v2.4s, v2.4s
	WORD $0x4e21d863 // scvtf v3.4s, v3.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc42 // fmul v2.4s, v2.4s, v29.4s
	WORD $0x6e3edc63 // fmul v3.4s, v3.4s, v30.4s
	WORD $0x4ea2d652 // fsub v18.4s, v18.4s, v2.4s
	WORD $0x4ea3d673 // fsub v19.4s, v19.4s, v3.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0x4e21d884 // scvtf v4.4s, v4.4s
	WORD $0x4e21d8a5 // scvtf v5.4s, v5.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc84 // fmul v4.4s, v4.4s, v29.4s
	WORD $0x6e3edca5 // fmul v5.4s, v5.4s, v30.4s
	WORD $0x4ea4d694 // fsub v20.4s, v20.4s, v4.4s
	WORD $0x4ea5d6b5 // fsub v21.4s, v21.4s, v5.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0x4e21d8c6 // scvtf v6.4s, v6.4s
	WORD $0x4e21d8e7 // scvtf v7.4s, v7.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddcc6 // fmul v6.4s, v6.4s, v29.4s
	WORD $0x6e3edce7 // fmul v7.4s, v7.4s, v30.4s
	WORD $0x4ea6d6d6 // fsub v22.4s, v22.4s, v6.4s
	WORD $0x4ea7d6f7 // fsub v23.4s, v23.4s, v7.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x910b0042 // add x2, x2, #704
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile16MinI8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile16MinI8MM(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800203 // mov x3, #16
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4e88390b // zip1 v11.4s, v8.4s, v8.4s
	WORD $0x4e88790c // zip2 v12.4s, v8.4s, v8.4s
	WORD $0x4e89392d // zip1 v13.4s, v9.4s, v9.4s
	WORD $0x4e89792e // zip2 v14.4s, v9.4s, v9.4s
	WORD $0x4eab9410 // mla v16.4s, v0.4s, v11.4s
	WORD $0x4eab9431 // mla v17.4s, v1.4s, v11.4s
	WORD $0x4eac9452 // mla v18.4s, v2.4s, v12.4s
	WORD $0x4eac9473 // mla v19.4s, v3.4s, v12.4s
	WORD $0x4ead9494 // mla v20.4s, v4.4s, v13.4s
	WORD $0x4ead94b5 // mla v21.4s, v5.4s, v13.4s
	WORD $0x4eae94d6 // mla v22.4s, v6.4s, v14.4s
	WORD $0x4eae94f7 // mla v23.4s, v7.4s, v14.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x4e921a00 // uzp1 v0.4s, v16.4s, v18.4s
	WORD $0x4e961a81 // uzp1 v1.4s, v20.4s, v22.4s
	WORD $0x4e925a02 // uzp2 v2.4s, v16.4s, v18.4s
	WORD $0x4e965a83 // uzp2 v3.4s, v20.4s, v22.4s
	WORD $0x4e931a24 // uzp1 v4.4s, v17.4s, v19.4s
	WORD $0x4e971aa5 // uzp1 v5.4s, v21.4s, v23.4s
	WORD $0x4e935a26 // uzp2 v6.4s, v17.4s, v19.4s
	WORD $0x4e975aa7 // uzp2 v7.4s, v21.4s, v23.4s
	WORD $0x4ea01c10 // mov v16.16b, v0.16b
	WORD $0x4ea11c31 // mov v17.16b, v1.16b
	WORD $0x4ea21c52 // mov v18.16b, v2.16b
	WORD $0x4ea31c73 // mov v19.16b, v3.16b
	WORD $0x4ea41c94 // mov v20.16b, v4.16b
	WORD $0x4ea51cb5 // mov v21.16b, v5.16b
	WORD $0x4ea61cd6 // mov v22.16b, v6.16b
	WORD $0x4ea71cf7 // mov v23.16b, v7.16b
	WORD $0x910801ad // add x13, x13, #512
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4c40a628 // ld1 {v8.8h, v9.8h}, [x17]
	WORD $0x4c40a66a // ld1 {v10.8h, v11.8h}, [x19]
	WORD $0x4c40a68c // ld1 {v12.8h, v13.8h}, [x20]
	WORD $0x4c40a72e // ld1 {v14.8h, v15.8h}, [x25]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f4a2342 // smlal v2.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2343 // smlal2 v3.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2362 // smlal v2.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2363 // smlal2 v3.4s, v27.8h, v10.h[1]
	WORD $0x0f4c2344 // smlal v4.4s, v26.4h, v12.h[0]
	WORD $0x4f4c2345 // smlal2 v5.4s, v26.8h, v12.h[0]
	WORD $0x0f5c2364 // smlal v4.4s, v27.4h, v12.h[1]
	WORD $0x4f5c2365 // smlal2 v5.4s, v27.8h, v12.h[1]
	WORD $0x0f4e2346 // smlal v6.4s, v26.4h, v14.h[0]
	WORD $0x4f4e2347 // smlal2 v7.4s, v26.8h, v14.h[0]
	WORD $0x0f5e2366 // smlal v6.4s, v27.4h, v14.h[1]
	WORD $0x4f5e2367 // smlal2 v7.4s, v27.8h, v14.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f6a2342 // smlal v2.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2343 // smlal2 v3.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2362 // smlal v2.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2363 // smlal2 v3.4s, v27.8h, v10.h[3]
	WORD $0x0f6c2344 // smlal v4.4s, v26.4h, v12.h[2]
	WORD $0x4f6c2345 // smlal2 v5.4s, v26.8h, v12.h[2]
	WORD $0x0f7c2364 // smlal v4.4s, v27.4h, v12.h[3]
	WORD $0x4f7c2365 // smlal2 v5.4s, v27.8h, v12.h[3]
	WORD $0x0f6e2346 // smlal v6.4s, v26.4h, v14.h[2]
	WORD $0x4f6e2347 // smlal2 v7.4s, v26.8h, v14.h[2]
	WORD $0x0f7e2366 // smlal v6.4s, v27.4h, v14.h[3]
	WORD $0x4f7e2367 // smlal2 v7.4s, v27.8h, v14.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f4a2b42 // smlal v2.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b43 // smlal2 v3.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b62 // smlal v2.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b63 // smlal2 v3.4s, v27.8h, v10.h[5]
	WORD $0x0f4c2b44 // smlal v4.4s, v26.4h, v12.h[4]
	WORD $0x4f4c2b45 // smlal2 v5.4s, v26.8h, v12.h[4]
	WORD $0x0f5c2b64 // smlal v4.4s, v27.4h, v12.h[5]
	WORD $0x4f5c2b65 // smlal2 v5.4s, v27.8h, v12.h[5]
	WORD $0x0f4e2b46 // smlal v6.4s, v26.4h, v14.h[4]
	WORD $0x4f4e2b47 // smlal2 v7.4s, v26.8h, v14.h[4]
	WORD $0x0f5e2b66 // smlal v6.4s, v27.4h, v14.h[5]
	WORD $0x4f5e2b67 // smlal2 v7.4s, v27.8h, v14.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f6a2b42 // smlal v2.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b43 // smlal2 v3.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b62 // smlal v2.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b63 // smlal2 v3.4s, v27.8h, v10.h[7]
	WORD $0x0f6c2b44 // smlal v4.4s, v26.4h, v12.h[6]
	WORD $0x4f6c2b45 // smlal2 v5.4s, v26.8h, v12.h[6]
	WORD $0x0f7c2b64 // smlal v4.4s, v27.4h, v12.h[7]
	WORD $0x4f7c2b65 // smlal2 v5.4s, v27.8h, v12.h[7]
	WORD $0x0f6e2b46 // smlal v6.4s, v26.4h, v14.h[6]
	WORD $0x4f6e2b47 // smlal2 v7.4s, v26.8h, v14.h[6]
	WORD $0x0f7e2b66 // smlal v6.4s, v27.4h, v14.h[7]
	WORD $0x4f7e2b67 // smlal2 v7.4s, v27.8h, v14.h[7]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492340 // smlal v0.4s, v26.4h, v9.h[0]
	WORD $0x4f492341 // smlal2 v1.4s, v26.8h, v9.h[0]
	WORD $0x0f592360 // smlal v0.4s, v27.4h, v9.h[1]
	WORD $0x4f592361 // smlal2 v1.4s, v27.8h, v9.h[1]
	WORD $0x0f4b2342 // smlal v2.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2343 // smlal2 v3.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2362 // smlal v2.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2363 // smlal2 v3.4s, v27.8h, v11.h[1]
	WORD $0x0f4d2344 // smlal v4.4s, v26.4h, v13.h[0]
	WORD $0x4f4d2345 // smlal2 v5.4s, v26.8h, v13.h[0]
	WORD $0x0f5d2364 // smlal v4.4s, v27.4h, v13.h[1]
	WORD $0x4f5d2365 // smlal2 v5.4s, v27.8h, v13.h[1]
	WORD $0x0f4f2346 // smlal v6.4s, v26.4h, v15.h[0]
	WORD $0x4f4f2347 // smlal2 v7.4s, v26.8h, v15.h[0]
	WORD $0x0f5f2366 // smlal v6.4s, v27.4h, v15.h[1]
	WORD $0x4f5f2367 // smlal2 v7.4s, v27.8h, v15.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692340 // smlal v0.4s, v26.4h, v9.h[2]
	WORD $0x4f692341 // smlal2 v1.4s, v26.8h, v9.h[2]
	WORD $0x0f792360 // smlal v0.4s, v27.4h, v9.h[3]
	WORD $0x4f792361 // smlal2 v1.4s, v27.8h, v9.h[3]
	WORD $0x0f6b2342 // smlal v2.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2343 // smlal2 v3.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2362 // smlal v2.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2363 // smlal2 v3.4s, v27.8h, v11.h[3]
	WORD $0x0f6d2344 // smlal v4.4s, v26.4h, v13.h[2]
	WORD $0x4f6d2345 // smlal2 v5.4s, v26.8h, v13.h[2]
	WORD $0x0f7d2364 // smlal v4.4s, v27.4h, v13.h[3]
	WORD $0x4f7d2365 // smlal2 v5.4s, v27.8h, v13.h[3]
	WORD $0x0f6f2346 // smlal v6.4s, v26.4h, v15.h[2]
	WORD $0x4f6f2347 // smlal2 v7.4s, v26.8h, v15.h[2]
	WORD $0x0f7f2366 // smlal v6.4s, v27.4h, v15.h[3]
	WORD $0x4f7f2367 // smlal2 v7.4s, v27.8h, v15.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492b40 // smlal v0.4s, v26.4h, v9.h[4]
	WORD $0x4f492b41 // smlal2 v1.4s, v26.8h, v9.h[4]
	WORD $0x0f592b60 // smlal v0.4s, v27.4h, v9.h[5]
	WORD $0x4f592b61 // smlal2 v1.4s, v27.8h, v9.h[5]
	WORD $0x0f4b2b42 // smlal v2.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b43 // smlal2 v3.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b62 // smlal v2.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b63 // smlal2 v3.4s, v27.8h, v11.h[5]
	WORD $0x0f4d2b44 // smlal v4.4s, v26.4h, v13.h[4]
	WORD $0x4f4d2b45 // smlal2 v5.4s, v26.8h, v13.h[4]
	WORD $0x0f5d2b64 // smlal v4.4s, v27.4h, v13.h[5]
	WORD $0x4f5d2b65 // smlal2 v5.4s, v27.8h, v13.h[5]
	WORD $0x0f4f2b46 // smlal v6.4s, v26.4h, v15.h[4]
	WORD $0x4f4f2b47 // smlal2 v7.4s, v26.8h, v15.h[4]
	WORD $0x0f5f2b66 // smlal v6.4s, v27.4h, v15.h[5]
	WORD $0x4f5f2b67 // smlal2 v7.4s, v27.8h, v15.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692b40 // smlal v0.4s, v26.4h, v9.h[6]
	WORD $0x4f692b41 // smlal2 v1.4s, v26.8h, v9.h[6]
	WORD $0x0f792b60 // smlal v0.4s, v27.4h, v9.h[7]
	WORD $0x4f792b61 // smlal2 v1.4s, v27.8h, v9.h[7]
	WORD $0x0f6b2b42 // smlal v2.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b43 // smlal2 v3.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b62 // smlal v2.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b63 // smlal2 v3.4s, v27.8h, v11.h[7]
	WORD $0x0f6d2b44 // smlal v4.4s, v26.4h, v13.h[6]
	WORD $0x4f6d2b45 // smlal2 v5.4s, v26.8h, v13.h[6]
	WORD $0x0f7d2b64 // smlal v4.4s, v27.4h, v13.h[7]
	WORD $0x4f7d2b65 // smlal2 v5.4s, v27.8h, v13.h[7]
	WORD $0x0f6f2b46 // smlal v6.4s, v26.4h, v15.h[6]
	WORD $0x4f6f2b47 // smlal2 v7.4s, v26.8h, v15.h[6]
	WORD $0x0f7f2b66 // smlal v6.4s, v27.4h, v15.h[7]
	WORD $0x4f7f2b67 // smlal2 v7.4s, v27.8h, v15.h[7]
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0x4e21d800 // scvtf v0.4s, v0.4s
	WORD $0x4e21d821 // scvtf v1.4s, v1.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc00 // fmul v0.4s, v0.4s, v29.4s
	WORD $0x6e3edc21 // fmul v1.4s, v1.4s, v30.4s
	WORD $0x4ea0d610 // fsub v16.4s, v16.4s, v0.4s
	WORD $0x4ea1d631 // fsub v17.4s, v17.4s, v1.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0x4e21d842 // scvtf v2.4s, v2.4s
	WORD $0x4e21d863 // scvtf v3.4s, v3.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc42 // fmul v2.4s, v2.4s, v29.4s
	WORD $0x6e3edc63 // fmul v3.4s, v3.4s, v30.4s
	WORD $0x4ea2d652 // fsub v18.4s, v18.4s, v2.4s
	WORD $0x4ea3d673 // fsub v19.4s, v19.4s, v3.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0x4e21d884 // scvtf v4.4s, v4.4s
	WORD $0x4e21d8a5 // scvtf v5.4s, v5.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddc84 // fmul v4.4s, v4.4s, v29.4s
	WORD $0x6e3edca5 // fmul v5.4s, v5.4s, v30.4s
	WORD $0x4ea4d694 // fsub v20.4s, v20.4s, v4.4s
	WORD $0x4ea5d6b5 // fsub v21.4s, v21.4s, v5.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0x4e21d8c6 // scvtf v6.4s, v6.4s
	WORD $0x4e21d8e7 // scvtf v7.4s, v7.4s
	WORD $0x4f9c935d // fmul v29.4s, v26.4s, v28.s[0]
	WORD $0x4f9c937e // fmul v30.4s, v27.4s, v28.s[0]
	WORD $0x6e3ddcc6 // fmul v6.4s, v6.4s, v29.4s
	WORD $0x6e3edce7 // fmul v7.4s, v7.4s, v30.4s
	WORD $0x4ea6d6d6 // fsub v22.4s, v22.4s, v6.4s
	WORD $0x4ea7d6f7 // fsub v23.4s, v23.4s, v7.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x91150042 // add x2, x2, #1344
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile32I8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile32I8MM(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800103 // mov x3, #8
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4e88390b // zip1 v11.4s, v8.4s, v8.4s
	WORD $0x4e88790c // zip2 v12.4s, v8.4s, v8.4s
	WORD $0x4e89392d // zip1 v13.4s, v9.4s, v9.4s
	WORD $0x4e89792e // zip2 v14.4s, v9.4s, v9.4s
	WORD $0x4eab9410 // mla v16.4s, v0.4s, v11.4s
	WORD $0x4eab9431 // mla v17.4s, v1.4s, v11.4s
	WORD $0x4eac9452 // mla v18.4s, v2.4s, v12.4s
	WORD $0x4eac9473 // mla v19.4s, v3.4s, v12.4s
	WORD $0x4ead9494 // mla v20.4s, v4.4s, v13.4s
	WORD $0x4ead94b5 // mla v21.4s, v5.4s, v13.4s
	WORD $0x4eae94d6 // mla v22.4s, v6.4s, v14.4s
	WORD $0x4eae94f7 // mla v23.4s, v7.4s, v14.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x4e921a00 // uzp1 v0.4s, v16.4s, v18.4s
	WORD $0x4e961a81 // uzp1 v1.4s, v20.4s, v22.4s
	WORD $0x4e925a02 // uzp2 v2.4s, v16.4s, v18.4s
	WORD $0x4e965a83 // uzp2 v3.4s, v20.4s, v22.4s
	WORD $0x4e931a24 // uzp1 v4.4s, v17.4s, v19.4s
	WORD $0x4e971aa5 // uzp1 v5.4s, v21.4s, v23.4s
	WORD $0x4e935a26 // uzp2 v6.4s, v17.4s, v19.4s
	WORD $0x4e975aa7 // uzp2 v7.4s, v21.4s, v23.4s
	WORD $0x4ea01c10 // mov v16.16b, v0.16b
	WORD $0x4ea11c31 // mov v17.16b, v1.16b
	WORD $0x4ea21c52 // mov v18.16b, v2.16b
	WORD $0x4ea31c73 // mov v19.16b, v3.16b
	WORD $0x4ea41c94 // mov v20.16b, v4.16b
	WORD $0x4ea51cb5 // mov v21.16b, v5.16b
	WORD $0x4ea61cd6 // mov v22.16b, v6.16b
	WORD $0x4ea71cf7 // mov v23.16b, v7.16b
	WORD $0x910401ad // add x13, x13, #256
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x3dc00a28 // ldr q8, [x17, #32]
	WORD $0x3dc00a69 // ldr q9, [x19, #32]
	WORD $0x3dc00a8a // ldr q10, [x20, #32]
	WORD $0x3dc00b2b // ldr q11, [x25, #32]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f492342 // smlal v2.4s, v26.4h, v9.h[0]
	WORD $0x4f492343 // smlal2 v3.4s, v26.8h, v9.h[0]
	WORD $0x0f592362 // smlal v2.4s, v27.4h, v9.h[1]
	WORD $0x4f592363 // smlal2 v3.4s, v27.8h, v9.h[1]
	WORD $0x0f4a2344 // smlal v4.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2345 // smlal2 v5.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2364 // smlal v4.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2365 // smlal2 v5.4s, v27.8h, v10.h[1]
	WORD $0x0f4b2346 // smlal v6.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2347 // smlal2 v7.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2366 // smlal v6.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2367 // smlal2 v7.4s, v27.8h, v11.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f692342 // smlal v2.4s, v26.4h, v9.h[2]
	WORD $0x4f692343 // smlal2 v3.4s, v26.8h, v9.h[2]
	WORD $0x0f792362 // smlal v2.4s, v27.4h, v9.h[3]
	WORD $0x4f792363 // smlal2 v3.4s, v27.8h, v9.h[3]
	WORD $0x0f6a2344 // smlal v4.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2345 // smlal2 v5.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2364 // smlal v4.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2365 // smlal2 v5.4s, v27.8h, v10.h[3]
	WORD $0x0f6b2346 // smlal v6.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2347 // smlal2 v7.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2366 // smlal v6.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2367 // smlal2 v7.4s, v27.8h, v11.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f492b42 // smlal v2.4s, v26.4h, v9.h[4]
	WORD $0x4f492b43 // smlal2 v3.4s, v26.8h, v9.h[4]
	WORD $0x0f592b62 // smlal v2.4s, v27.4h, v9.h[5]
	WORD $0x4f592b63 // smlal2 v3.4s, v27.8h, v9.h[5]
	WORD $0x0f4a2b44 // smlal v4.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b45 // smlal2 v5.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b64 // smlal v4.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b65 // smlal2 v5.4s, v27.8h, v10.h[5]
	WORD $0x0f4b2b46 // smlal v6.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b47 // smlal2 v7.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b66 // smlal v6.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b67 // smlal2 v7.4s, v27.8h, v11.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f692b42 // smlal v2.4s, v26.4h, v9.h[6]
	WORD $0x4f692b43 // smlal2 v3.4s, v26.8h, v9.h[6]
	WORD $0x0f792b62 // smlal v2.4s, v27.4h, v9.h[7]
	WORD $0x4f792b63 // smlal2 v3.4s, v27.8h, v9.h[7]
	WORD $0x0f6a2b44 // smlal v4.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b45 // smlal2 v5.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b64 // smlal v4.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b65 // smlal2 v5.4s, v27.8h, v10.h[7]
	WORD $0x0f6b2b46 // smlal v6.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b47 // smlal2 v7.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b66 // smlal v6.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b67 // smlal2 v7.4s, v27.8h, v11.h[7]
	WORD $0x6ea08610 // sub v16.4s, v16.4s, v0.4s
	WORD $0x6ea18631 // sub v17.4s, v17.4s, v1.4s
	WORD $0x6ea28652 // sub v18.4s, v18.4s, v2.4s
	WORD $0x6ea38673 // sub v19.4s, v19.4s, v3.4s
	WORD $0x6ea48694 // sub v20.4s, v20.4s, v4.4s
	WORD $0x6ea586b5 // sub v21.4s, v21.4s, v5.4s
	WORD $0x6ea686d6 // sub v22.4s, v22.4s, v6.4s
	WORD $0x6ea786f7 // sub v23.4s, v23.4s, v7.4s
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x910b0042 // add x2, x2, #704
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

// func kTile16I8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)
TEXT ·kTile16I8MM(SB), NOSPLIT, $0-72
	MOVD y+0(FP), R0
	MOVD ldy+8(FP), R1
	MOVD pack+16(FP), R2
	MOVD qs+24(FP), R3
	MOVD qstride+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	MOVD off+64(FP), R13
	WORD $0xd37ef421 // lsl x1, x1, #2
	WORD $0xaa0003f5 // mov x21, x0
	WORD $0x8b0102b6 // add x22, x21, x1
	WORD $0x8b0102d7 // add x23, x22, x1
	WORD $0x8b0102f8 // add x24, x23, x1
	WORD $0xaa0303e8 // mov x8, x3
	WORD $0x8b040109 // add x9, x8, x4
	WORD $0x8b04012a // add x10, x9, x4
	WORD $0x8b04014b // add x11, x10, x4
	WORD $0x4e010daa // dup v10.16b, w13
	WORD $0xd37ef4e3 // lsl x3, x7, #2
	WORD $0xaa0503ec // mov x12, x5
	WORD $0x8b03018e // add x14, x12, x3
	WORD $0x8b0301cf // add x15, x14, x3
	WORD $0x8b0301f0 // add x16, x15, x3
	WORD $0xd2800603 // mov x3, #48
	WORD $0x9b077c63 // mul x3, x3, x7
	WORD $0xaa0603f1 // mov x17, x6
	WORD $0x8b030233 // add x19, x17, x3
	WORD $0x8b030274 // add x20, x19, x3
	WORD $0x8b030299 // add x25, x20, x3
	WORD $0x6f00e41f // movi v31.2d, #0
	WORD $0xad007ebf // stp q31, q31, [x21]
	WORD $0xad007edf // stp q31, q31, [x22]
	WORD $0xad007eff // stp q31, q31, [x23]
	WORD $0xad007f1f // stp q31, q31, [x24]
block:
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x6f00e416 // movi v22.2d, #0
	WORD $0x6f00e417 // movi v23.2d, #0
	WORD $0x9120004d // add x13, x2, #2048
	WORD $0xd2800203 // mov x3, #16
sub:
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4cdf7118 // ld1 {v24.16b}, [x8], #16
	WORD $0x4cdf7139 // ld1 {v25.16b}, [x9], #16
	WORD $0x4cdf715a // ld1 {v26.16b}, [x10], #16
	WORD $0x4cdf717b // ld1 {v27.16b}, [x11], #16
	WORD $0x4ed93b1c // zip1 v28.2d, v24.2d, v25.2d
	WORD $0x4ed97b19 // zip2 v25.2d, v24.2d, v25.2d
	WORD $0x4edb3b58 // zip1 v24.2d, v26.2d, v27.2d
	WORD $0x4edb7b5b // zip2 v27.2d, v26.2d, v27.2d
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e9cafa0 // usmmla v0.4s, v29.16b, v28.16b
	WORD $0x4e98afa1 // usmmla v1.4s, v29.16b, v24.16b
	WORD $0x4e9cad42 // usmmla v2.4s, v10.16b, v28.16b
	WORD $0x4e98ad43 // usmmla v3.4s, v10.16b, v24.16b
	WORD $0x4e9cad04 // usmmla v4.4s, v8.16b, v28.16b
	WORD $0x4e98ad05 // usmmla v5.4s, v8.16b, v24.16b
	WORD $0x4e9cad66 // usmmla v6.4s, v11.16b, v28.16b
	WORD $0x4e98ad67 // usmmla v7.4s, v11.16b, v24.16b
	WORD $0x4cdf2048 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64
	WORD $0x4e8a391d // zip1 v29.4s, v8.4s, v10.4s
	WORD $0x4e8a790a // zip2 v10.4s, v8.4s, v10.4s
	WORD $0x4e8b3928 // zip1 v8.4s, v9.4s, v11.4s
	WORD $0x4e8b792b // zip2 v11.4s, v9.4s, v11.4s
	WORD $0x4e99afa0 // usmmla v0.4s, v29.16b, v25.16b
	WORD $0x4e9bafa1 // usmmla v1.4s, v29.16b, v27.16b
	WORD $0x4e99ad42 // usmmla v2.4s, v10.16b, v25.16b
	WORD $0x4e9bad43 // usmmla v3.4s, v10.16b, v27.16b
	WORD $0x4e99ad04 // usmmla v4.4s, v8.16b, v25.16b
	WORD $0x4e9bad05 // usmmla v5.4s, v8.16b, v27.16b
	WORD $0x4e99ad66 // usmmla v6.4s, v11.16b, v25.16b
	WORD $0x4e9bad67 // usmmla v7.4s, v11.16b, v27.16b
	WORD $0x4cdfa9a8 // ld1 {v8.4s, v9.4s}, [x13], #32
	WORD $0x4e88390b // zip1 v11.4s, v8.4s, v8.4s
	WORD $0x4e88790c // zip2 v12.4s, v8.4s, v8.4s
	WORD $0x4e89392d // zip1 v13.4s, v9.4s, v9.4s
	WORD $0x4e89792e // zip2 v14.4s, v9.4s, v9.4s
	WORD $0x4eab9410 // mla v16.4s, v0.4s, v11.4s
	WORD $0x4eab9431 // mla v17.4s, v1.4s, v11.4s
	WORD $0x4eac9452 // mla v18.4s, v2.4s, v12.4s
	WORD $0x4eac9473 // mla v19.4s, v3.4s, v12.4s
	WORD $0x4ead9494 // mla v20.4s, v4.4s, v13.4s
	WORD $0x4ead94b5 // mla v21.4s, v5.4s, v13.4s
	WORD $0x4eae94d6 // mla v22.4s, v6.4s, v14.4s
	WORD $0x4eae94f7 // mla v23.4s, v7.4s, v14.4s
	WORD $0xf1000463 // subs x3, x3, #1
	BNE sub
	WORD $0x4e921a00 // uzp1 v0.4s, v16.4s, v18.4s
	WORD $0x4e961a81 // uzp1 v1.4s, v20.4s, v22.4s
	WORD $0x4e925a02 // uzp2 v2.4s, v16.4s, v18.4s
	WORD $0x4e965a83 // uzp2 v3.4s, v20.4s, v22.4s
	WORD $0x4e931a24 // uzp1 v4.4s, v17.4s, v19.4s
	WORD $0x4e971aa5 // uzp1 v5.4s, v21.4s, v23.4s
	WORD $0x4e935a26 // uzp2 v6.4s, v17.4s, v19.4s
	WORD $0x4e975aa7 // uzp2 v7.4s, v21.4s, v23.4s
	WORD $0x4ea01c10 // mov v16.16b, v0.16b
	WORD $0x4ea11c31 // mov v17.16b, v1.16b
	WORD $0x4ea21c52 // mov v18.16b, v2.16b
	WORD $0x4ea31c73 // mov v19.16b, v3.16b
	WORD $0x4ea41c94 // mov v20.16b, v4.16b
	WORD $0x4ea51cb5 // mov v21.16b, v5.16b
	WORD $0x4ea61cd6 // mov v22.16b, v6.16b
	WORD $0x4ea71cf7 // mov v23.16b, v7.16b
	WORD $0x910801ad // add x13, x13, #512
	WORD $0x6f00e400 // movi v0.2d, #0
	WORD $0x6f00e401 // movi v1.2d, #0
	WORD $0x6f00e402 // movi v2.2d, #0
	WORD $0x6f00e403 // movi v3.2d, #0
	WORD $0x6f00e404 // movi v4.2d, #0
	WORD $0x6f00e405 // movi v5.2d, #0
	WORD $0x6f00e406 // movi v6.2d, #0
	WORD $0x6f00e407 // movi v7.2d, #0
	WORD $0x4c40a628 // ld1 {v8.8h, v9.8h}, [x17]
	WORD $0x4c40a66a // ld1 {v10.8h, v11.8h}, [x19]
	WORD $0x4c40a68c // ld1 {v12.8h, v13.8h}, [x20]
	WORD $0x4c40a72e // ld1 {v14.8h, v15.8h}, [x25]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482340 // smlal v0.4s, v26.4h, v8.h[0]
	WORD $0x4f482341 // smlal2 v1.4s, v26.8h, v8.h[0]
	WORD $0x0f582360 // smlal v0.4s, v27.4h, v8.h[1]
	WORD $0x4f582361 // smlal2 v1.4s, v27.8h, v8.h[1]
	WORD $0x0f4a2342 // smlal v2.4s, v26.4h, v10.h[0]
	WORD $0x4f4a2343 // smlal2 v3.4s, v26.8h, v10.h[0]
	WORD $0x0f5a2362 // smlal v2.4s, v27.4h, v10.h[1]
	WORD $0x4f5a2363 // smlal2 v3.4s, v27.8h, v10.h[1]
	WORD $0x0f4c2344 // smlal v4.4s, v26.4h, v12.h[0]
	WORD $0x4f4c2345 // smlal2 v5.4s, v26.8h, v12.h[0]
	WORD $0x0f5c2364 // smlal v4.4s, v27.4h, v12.h[1]
	WORD $0x4f5c2365 // smlal2 v5.4s, v27.8h, v12.h[1]
	WORD $0x0f4e2346 // smlal v6.4s, v26.4h, v14.h[0]
	WORD $0x4f4e2347 // smlal2 v7.4s, v26.8h, v14.h[0]
	WORD $0x0f5e2366 // smlal v6.4s, v27.4h, v14.h[1]
	WORD $0x4f5e2367 // smlal2 v7.4s, v27.8h, v14.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682340 // smlal v0.4s, v26.4h, v8.h[2]
	WORD $0x4f682341 // smlal2 v1.4s, v26.8h, v8.h[2]
	WORD $0x0f782360 // smlal v0.4s, v27.4h, v8.h[3]
	WORD $0x4f782361 // smlal2 v1.4s, v27.8h, v8.h[3]
	WORD $0x0f6a2342 // smlal v2.4s, v26.4h, v10.h[2]
	WORD $0x4f6a2343 // smlal2 v3.4s, v26.8h, v10.h[2]
	WORD $0x0f7a2362 // smlal v2.4s, v27.4h, v10.h[3]
	WORD $0x4f7a2363 // smlal2 v3.4s, v27.8h, v10.h[3]
	WORD $0x0f6c2344 // smlal v4.4s, v26.4h, v12.h[2]
	WORD $0x4f6c2345 // smlal2 v5.4s, v26.8h, v12.h[2]
	WORD $0x0f7c2364 // smlal v4.4s, v27.4h, v12.h[3]
	WORD $0x4f7c2365 // smlal2 v5.4s, v27.8h, v12.h[3]
	WORD $0x0f6e2346 // smlal v6.4s, v26.4h, v14.h[2]
	WORD $0x4f6e2347 // smlal2 v7.4s, v26.8h, v14.h[2]
	WORD $0x0f7e2366 // smlal v6.4s, v27.4h, v14.h[3]
	WORD $0x4f7e2367 // smlal2 v7.4s, v27.8h, v14.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f482b40 // smlal v0.4s, v26.4h, v8.h[4]
	WORD $0x4f482b41 // smlal2 v1.4s, v26.8h, v8.h[4]
	WORD $0x0f582b60 // smlal v0.4s, v27.4h, v8.h[5]
	WORD $0x4f582b61 // smlal2 v1.4s, v27.8h, v8.h[5]
	WORD $0x0f4a2b42 // smlal v2.4s, v26.4h, v10.h[4]
	WORD $0x4f4a2b43 // smlal2 v3.4s, v26.8h, v10.h[4]
	WORD $0x0f5a2b62 // smlal v2.4s, v27.4h, v10.h[5]
	WORD $0x4f5a2b63 // smlal2 v3.4s, v27.8h, v10.h[5]
	WORD $0x0f4c2b44 // smlal v4.4s, v26.4h, v12.h[4]
	WORD $0x4f4c2b45 // smlal2 v5.4s, v26.8h, v12.h[4]
	WORD $0x0f5c2b64 // smlal v4.4s, v27.4h, v12.h[5]
	WORD $0x4f5c2b65 // smlal2 v5.4s, v27.8h, v12.h[5]
	WORD $0x0f4e2b46 // smlal v6.4s, v26.4h, v14.h[4]
	WORD $0x4f4e2b47 // smlal2 v7.4s, v26.8h, v14.h[4]
	WORD $0x0f5e2b66 // smlal v6.4s, v27.4h, v14.h[5]
	WORD $0x4f5e2b67 // smlal2 v7.4s, v27.8h, v14.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f682b40 // smlal v0.4s, v26.4h, v8.h[6]
	WORD $0x4f682b41 // smlal2 v1.4s, v26.8h, v8.h[6]
	WORD $0x0f782b60 // smlal v0.4s, v27.4h, v8.h[7]
	WORD $0x4f782b61 // smlal2 v1.4s, v27.8h, v8.h[7]
	WORD $0x0f6a2b42 // smlal v2.4s, v26.4h, v10.h[6]
	WORD $0x4f6a2b43 // smlal2 v3.4s, v26.8h, v10.h[6]
	WORD $0x0f7a2b62 // smlal v2.4s, v27.4h, v10.h[7]
	WORD $0x4f7a2b63 // smlal2 v3.4s, v27.8h, v10.h[7]
	WORD $0x0f6c2b44 // smlal v4.4s, v26.4h, v12.h[6]
	WORD $0x4f6c2b45 // smlal2 v5.4s, v26.8h, v12.h[6]
	WORD $0x0f7c2b64 // smlal v4.4s, v27.4h, v12.h[7]
	WORD $0x4f7c2b65 // smlal2 v5.4s, v27.8h, v12.h[7]
	WORD $0x0f6e2b46 // smlal v6.4s, v26.4h, v14.h[6]
	WORD $0x4f6e2b47 // smlal2 v7.4s, v26.8h, v14.h[6]
	WORD $0x0f7e2b66 // smlal v6.4s, v27.4h, v14.h[7]
	WORD $0x4f7e2b67 // smlal2 v7.4s, v27.8h, v14.h[7]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492340 // smlal v0.4s, v26.4h, v9.h[0]
	WORD $0x4f492341 // smlal2 v1.4s, v26.8h, v9.h[0]
	WORD $0x0f592360 // smlal v0.4s, v27.4h, v9.h[1]
	WORD $0x4f592361 // smlal2 v1.4s, v27.8h, v9.h[1]
	WORD $0x0f4b2342 // smlal v2.4s, v26.4h, v11.h[0]
	WORD $0x4f4b2343 // smlal2 v3.4s, v26.8h, v11.h[0]
	WORD $0x0f5b2362 // smlal v2.4s, v27.4h, v11.h[1]
	WORD $0x4f5b2363 // smlal2 v3.4s, v27.8h, v11.h[1]
	WORD $0x0f4d2344 // smlal v4.4s, v26.4h, v13.h[0]
	WORD $0x4f4d2345 // smlal2 v5.4s, v26.8h, v13.h[0]
	WORD $0x0f5d2364 // smlal v4.4s, v27.4h, v13.h[1]
	WORD $0x4f5d2365 // smlal2 v5.4s, v27.8h, v13.h[1]
	WORD $0x0f4f2346 // smlal v6.4s, v26.4h, v15.h[0]
	WORD $0x4f4f2347 // smlal2 v7.4s, v26.8h, v15.h[0]
	WORD $0x0f5f2366 // smlal v6.4s, v27.4h, v15.h[1]
	WORD $0x4f5f2367 // smlal2 v7.4s, v27.8h, v15.h[1]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692340 // smlal v0.4s, v26.4h, v9.h[2]
	WORD $0x4f692341 // smlal2 v1.4s, v26.8h, v9.h[2]
	WORD $0x0f792360 // smlal v0.4s, v27.4h, v9.h[3]
	WORD $0x4f792361 // smlal2 v1.4s, v27.8h, v9.h[3]
	WORD $0x0f6b2342 // smlal v2.4s, v26.4h, v11.h[2]
	WORD $0x4f6b2343 // smlal2 v3.4s, v26.8h, v11.h[2]
	WORD $0x0f7b2362 // smlal v2.4s, v27.4h, v11.h[3]
	WORD $0x4f7b2363 // smlal2 v3.4s, v27.8h, v11.h[3]
	WORD $0x0f6d2344 // smlal v4.4s, v26.4h, v13.h[2]
	WORD $0x4f6d2345 // smlal2 v5.4s, v26.8h, v13.h[2]
	WORD $0x0f7d2364 // smlal v4.4s, v27.4h, v13.h[3]
	WORD $0x4f7d2365 // smlal2 v5.4s, v27.8h, v13.h[3]
	WORD $0x0f6f2346 // smlal v6.4s, v26.4h, v15.h[2]
	WORD $0x4f6f2347 // smlal2 v7.4s, v26.8h, v15.h[2]
	WORD $0x0f7f2366 // smlal v6.4s, v27.4h, v15.h[3]
	WORD $0x4f7f2367 // smlal2 v7.4s, v27.8h, v15.h[3]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f492b40 // smlal v0.4s, v26.4h, v9.h[4]
	WORD $0x4f492b41 // smlal2 v1.4s, v26.8h, v9.h[4]
	WORD $0x0f592b60 // smlal v0.4s, v27.4h, v9.h[5]
	WORD $0x4f592b61 // smlal2 v1.4s, v27.8h, v9.h[5]
	WORD $0x0f4b2b42 // smlal v2.4s, v26.4h, v11.h[4]
	WORD $0x4f4b2b43 // smlal2 v3.4s, v26.8h, v11.h[4]
	WORD $0x0f5b2b62 // smlal v2.4s, v27.4h, v11.h[5]
	WORD $0x4f5b2b63 // smlal2 v3.4s, v27.8h, v11.h[5]
	WORD $0x0f4d2b44 // smlal v4.4s, v26.4h, v13.h[4]
	WORD $0x4f4d2b45 // smlal2 v5.4s, v26.8h, v13.h[4]
	WORD $0x0f5d2b64 // smlal v4.4s, v27.4h, v13.h[5]
	WORD $0x4f5d2b65 // smlal2 v5.4s, v27.8h, v13.h[5]
	WORD $0x0f4f2b46 // smlal v6.4s, v26.4h, v15.h[4]
	WORD $0x4f4f2b47 // smlal2 v7.4s, v26.8h, v15.h[4]
	WORD $0x0f5f2b66 // smlal v6.4s, v27.4h, v15.h[5]
	WORD $0x4f5f2b67 // smlal2 v7.4s, v27.8h, v15.h[5]
	WORD $0x4cdfa5b8 // ld1 {v24.8h, v25.8h}, [x13], #32
	WORD $0x4e591b1a // uzp1 v26.8h, v24.8h, v25.8h
	WORD $0x4e595b1b // uzp2 v27.8h, v24.8h, v25.8h
	WORD $0x0f692b40 // smlal v0.4s, v26.4h, v9.h[6]
	WORD $0x4f692b41 // smlal2 v1.4s, v26.8h, v9.h[6]
	WORD $0x0f792b60 // smlal v0.4s, v27.4h, v9.h[7]
	WORD $0x4f792b61 // smlal2 v1.4s, v27.8h, v9.h[7]
	WORD $0x0f6b2b42 // smlal v2.4s, v26.4h, v11.h[6]
	WORD $0x4f6b2b43 // smlal2 v3.4s, v26.8h, v11.h[6]
	WORD $0x0f7b2b62 // smlal v2.4s, v27.4h, v11.h[7]
	WORD $0x4f7b2b63 // smlal2 v3.4s, v27.8h, v11.h[7]
	WORD $0x0f6d2b44 // smlal v4.4s, v26.4h, v13.h[6]
	WORD $0x4f6d2b45 // smlal2 v5.4s, v26.8h, v13.h[6]
	WORD $0x0f7d2b64 // smlal v4.4s, v27.4h, v13.h[7]
	WORD $0x4f7d2b65 // smlal2 v5.4s, v27.8h, v13.h[7]
	WORD $0x0f6f2b46 // smlal v6.4s, v26.4h, v15.h[6]
	WORD $0x4f6f2b47 // smlal2 v7.4s, v26.8h, v15.h[6]
	WORD $0x0f7f2b66 // smlal v6.4s, v27.4h, v15.h[7]
	WORD $0x4f7f2b67 // smlal2 v7.4s, v27.8h, v15.h[7]
	WORD $0x6ea08610 // sub v16.4s, v16.4s, v0.4s
	WORD $0x6ea18631 // sub v17.4s, v17.4s, v1.4s
	WORD $0x6ea28652 // sub v18.4s, v18.4s, v2.4s
	WORD $0x6ea38673 // sub v19.4s, v19.4s, v3.4s
	WORD $0x6ea48694 // sub v20.4s, v20.4s, v4.4s
	WORD $0x6ea586b5 // sub v21.4s, v21.4s, v5.4s
	WORD $0x6ea686d6 // sub v22.4s, v22.4s, v6.4s
	WORD $0x6ea786f7 // sub v23.4s, v23.4s, v7.4s
	WORD $0x4c4029b8 // ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]
	WORD $0xbc40459c // ldr s28, [x12], #4
	WORD $0x9100c231 // add x17, x17, #48
	WORD $0x4e21da10 // scvtf v16.4s, v16.4s
	WORD $0x4e21da31 // scvtf v17.4s, v17.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde10 // fmul v16.4s, v16.4s, v29.4s
	WORD $0x6e3ede31 // fmul v17.4s, v17.4s, v30.4s
	WORD $0xad407abd // ldp q29, q30, [x21]
	WORD $0x4e30d7bd // fadd v29.4s, v29.4s, v16.4s
	WORD $0x4e31d7de // fadd v30.4s, v30.4s, v17.4s
	WORD $0xad007abd // stp q29, q30, [x21]
	WORD $0xbc4045dc // ldr s28, [x14], #4
	WORD $0x9100c273 // add x19, x19, #48
	WORD $0x4e21da52 // scvtf v18.4s, v18.4s
	WORD $0x4e21da73 // scvtf v19.4s, v19.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde52 // fmul v18.4s, v18.4s, v29.4s
	WORD $0x6e3ede73 // fmul v19.4s, v19.4s, v30.4s
	WORD $0xad407add // ldp q29, q30, [x22]
	WORD $0x4e32d7bd // fadd v29.4s, v29.4s, v18.4s
	WORD $0x4e33d7de // fadd v30.4s, v30.4s, v19.4s
	WORD $0xad007add // stp q29, q30, [x22]
	WORD $0xbc4045fc // ldr s28, [x15], #4
	WORD $0x9100c294 // add x20, x20, #48
	WORD $0x4e21da94 // scvtf v20.4s, v20.4s
	WORD $0x4e21dab5 // scvtf v21.4s, v21.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dde94 // fmul v20.4s, v20.4s, v29.4s
	WORD $0x6e3edeb5 // fmul v21.4s, v21.4s, v30.4s
	WORD $0xad407afd // ldp q29, q30, [x23]
	WORD $0x4e34d7bd // fadd v29.4s, v29.4s, v20.4s
	WORD $0x4e35d7de // fadd v30.4s, v30.4s, v21.4s
	WORD $0xad007afd // stp q29, q30, [x23]
	WORD $0xbc40461c // ldr s28, [x16], #4
	WORD $0x9100c339 // add x25, x25, #48
	WORD $0x4e21dad6 // scvtf v22.4s, v22.4s
	WORD $0x4e21daf7 // scvtf v23.4s, v23.4s
	WORD $0x4f9c931d // fmul v29.4s, v24.4s, v28.s[0]
	WORD $0x4f9c933e // fmul v30.4s, v25.4s, v28.s[0]
	WORD $0x6e3dded6 // fmul v22.4s, v22.4s, v29.4s
	WORD $0x6e3edef7 // fmul v23.4s, v23.4s, v30.4s
	WORD $0xad407b1d // ldp q29, q30, [x24]
	WORD $0x4e36d7bd // fadd v29.4s, v29.4s, v22.4s
	WORD $0x4e37d7de // fadd v30.4s, v30.4s, v23.4s
	WORD $0xad007b1d // stp q29, q30, [x24]
	WORD $0x91150042 // add x2, x2, #1344
	WORD $0xf10004e7 // subs x7, x7, #1
	BNE block
	RET

