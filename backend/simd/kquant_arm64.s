//go:build arm64 && !purego

#include "textflag.h"

// The K-quants' and IQ4_XS's matrix-vector kernels with SDOT, and the Q8_K
// quantizer. A kernel computes rows rows of rb bytes from w, each row
// times one token of Q8_K activations (qs, ds, bs), row r's result going
// to y[r]: per super-block the values of each sub-block are decoded to
// int8 vectors (for Q3_K and Q6_K offset to be non-negative, the offset
// taken back with the sub-block sums bs), multiplied with the token's
// values by SDOT into one int32 vector per sub-block, the vectors reduced
// to the sub-blocks' sums, and these multiplied by the scales: the exact
// integers A (and B, with the mins) of dotK, combined in float32 as dotK
// does, operation by operation (no fused multiply-add). nb > 0, rows > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.

DATA iq4xsShifts<>+0(SB)/8, $0xfffafffcfffe0000
DATA iq4xsShifts<>+8(SB)/8, $0xfff2fff4fff6fff8
GLOBL iq4xsShifts<>(SB), RODATA|NOPTR, $16

// func q4KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)
TEXT ·q4KMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400100 // ldr h0, [x8]
	WORD $0x7d400501 // ldr h1, [x8, #2]
	WORD $0xf840410d // ldur x13, [x8, #4]
	WORD $0xb9400d0e // ldr w14, [x8, #12]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x53047dd0 // lsr w16, w14, #4
	WORD $0x1200ce10 // and w16, w16, #0x0f0f0f0f
	WORD $0x53067df1 // lsr w17, w15, #6
	WORD $0x1200c631 // and w17, w17, #0x03030303
	WORD $0x2a111210 // orr w16, w16, w17, lsl #4
	WORD $0x1200d5ef // and w15, w15, #0x3f3f3f3f
	WORD $0x1200cdd1 // and w17, w14, #0x0f0f0f0f
	WORD $0x53067db3 // lsr w19, w13, #6
	WORD $0x1200c673 // and w19, w19, #0x03030303
	WORD $0x2a131231 // orr w17, w17, w19, lsl #4
	WORD $0x1200d5ad // and w13, w13, #0x3f3f3f3f
	WORD $0xaa1181ad // orr x13, x13, x17, lsl #32
	WORD $0xaa1081ef // orr x15, x15, x16, lsl #32
	WORD $0x9e6701b4 // fmov d20, x13
	WORD $0x9e6701f5 // fmov d21, x15
	WORD $0x9100410e // add x14, x8, #16
	WORD $0x6f00e40c // movi v12.2d, #0
	WORD $0x6f00e40d // movi v13.2d, #0
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4e84950c // sdot v12.4s, v8.16b, v4.16b
	WORD $0x4e85952c // sdot v12.4s, v9.16b, v5.16b
	WORD $0x4e86954d // sdot v13.4s, v10.16b, v6.16b
	WORD $0x4e87956d // sdot v13.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4e84950e // sdot v14.4s, v8.16b, v4.16b
	WORD $0x4e85952e // sdot v14.4s, v9.16b, v5.16b
	WORD $0x4e86954f // sdot v15.4s, v10.16b, v6.16b
	WORD $0x4e87956f // sdot v15.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4e849510 // sdot v16.4s, v8.16b, v4.16b
	WORD $0x4e859530 // sdot v16.4s, v9.16b, v5.16b
	WORD $0x4e869551 // sdot v17.4s, v10.16b, v6.16b
	WORD $0x4e879571 // sdot v17.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4e849512 // sdot v18.4s, v8.16b, v4.16b
	WORD $0x4e859532 // sdot v18.4s, v9.16b, v5.16b
	WORD $0x4e869553 // sdot v19.4s, v10.16b, v6.16b
	WORD $0x4e879573 // sdot v19.4s, v11.16b, v7.16b
	WORD $0x4eadbd8c // addp v12.4s, v12.4s, v13.4s
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eaebd8c // addp v12.4s, v12.4s, v14.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb2be10 // addp v16.4s, v16.4s, v18.4s
	WORD $0x2f08a694 // uxtl v20.8h, v20.8b
	WORD $0x2f10a696 // uxtl v22.4s, v20.4h
	WORD $0x6f10a697 // uxtl2 v23.4s, v20.8h
	WORD $0x4eb69d8c // mul v12.4s, v12.4s, v22.4s
	WORD $0x4eb7960c // mla v12.4s, v16.4s, v23.4s
	WORD $0x4eb1b98c // addv s12, v12.4s
	WORD $0x3dc00978 // ldr q24, [x11, #32]
	WORD $0x9100c16b // add x11, x11, #48
	WORD $0x2f08a6b5 // uxtl v21.8h, v21.8b
	WORD $0x0e78c2b9 // smull v25.4s, v21.4h, v24.4h
	WORD $0x4e7882b9 // smlal2 v25.4s, v21.8h, v24.8h
	WORD $0x4eb1bb39 // addv s25, v25.4s
	WORD $0x5e21d98c // scvtf s12, s12
	WORD $0x5e21db39 // scvtf s25, s25
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e20098c // fmul s12, s12, s0
	WORD $0x1e3a0821 // fmul s1, s1, s26
	WORD $0x1e210b39 // fmul s25, s25, s1
	WORD $0x1e39398c // fsub s12, s12, s25
	WORD $0x1e2c2bff // fadd s31, s31, s12
	WORD $0x91024108 // add x8, x8, #144
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q6KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)
TEXT ·q6KMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f01e61d // movi v29.16b, #0x30
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x3dc0311b // ldr q27, [x8, #192]
	WORD $0xaa0803ee // mov x14, x8
	WORD $0x9102010f // add x15, x8, #128
	WORD $0x4cdf21c2 // ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14], #64
	WORD $0x4cdfa1e6 // ld1 {v6.16b, v7.16b}, [x15], #32
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdf2128 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x9], #64
	WORD $0x4e3e1c4c // and v12.16b, v2.16b, v30.16b
	WORD $0x4f0c54cd // shl v13.16b, v6.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3e1c6c // and v12.16b, v3.16b, v30.16b
	WORD $0x4f0c54ed // shl v13.16b, v7.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4e3e1c8c // and v12.16b, v4.16b, v30.16b
	WORD $0x4f0a54cd // shl v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8a9590 // sdot v16.4s, v12.16b, v10.16b
	WORD $0x4e3e1cac // and v12.16b, v5.16b, v30.16b
	WORD $0x4f0a54ed // shl v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8b9591 // sdot v17.4s, v12.16b, v11.16b
	WORD $0x4cdf2128 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x9], #64
	WORD $0x6f0c044c // ushr v12.16b, v2.16b, #4
	WORD $0x4ea61ccd // mov v13.16b, v6.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c046c // ushr v12.16b, v3.16b, #4
	WORD $0x4ea71ced // mov v13.16b, v7.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x6f0c048c // ushr v12.16b, v4.16b, #4
	WORD $0x6f0e04cd // ushr v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8a9594 // sdot v20.4s, v12.16b, v10.16b
	WORD $0x6f0c04ac // ushr v12.16b, v5.16b, #4
	WORD $0x6f0e04ed // ushr v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8b9595 // sdot v21.4s, v12.16b, v11.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd6 // addp v22.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be57 // addp v23.4s, v18.4s, v20.4s
	WORD $0x4cdf21c2 // ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14], #64
	WORD $0x4cdfa1e6 // ld1 {v6.16b, v7.16b}, [x15], #32
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdf2128 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x9], #64
	WORD $0x4e3e1c4c // and v12.16b, v2.16b, v30.16b
	WORD $0x4f0c54cd // shl v13.16b, v6.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3e1c6c // and v12.16b, v3.16b, v30.16b
	WORD $0x4f0c54ed // shl v13.16b, v7.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4e3e1c8c // and v12.16b, v4.16b, v30.16b
	WORD $0x4f0a54cd // shl v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8a9590 // sdot v16.4s, v12.16b, v10.16b
	WORD $0x4e3e1cac // and v12.16b, v5.16b, v30.16b
	WORD $0x4f0a54ed // shl v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8b9591 // sdot v17.4s, v12.16b, v11.16b
	WORD $0x4cdf2128 // ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x9], #64
	WORD $0x6f0c044c // ushr v12.16b, v2.16b, #4
	WORD $0x4ea61ccd // mov v13.16b, v6.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c046c // ushr v12.16b, v3.16b, #4
	WORD $0x4ea71ced // mov v13.16b, v7.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x6f0c048c // ushr v12.16b, v4.16b, #4
	WORD $0x6f0e04cd // ushr v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8a9594 // sdot v20.4s, v12.16b, v10.16b
	WORD $0x6f0c04ac // ushr v12.16b, v5.16b, #4
	WORD $0x6f0e04ed // ushr v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e8b9595 // sdot v21.4s, v12.16b, v11.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd8 // addp v24.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be59 // addp v25.4s, v18.4s, v20.4s
	WORD $0x0f08a76c // sxtl v12.8h, v27.8b
	WORD $0x4f08a76d // sxtl2 v13.8h, v27.16b
	WORD $0x0f10a581 // sxtl v1.4s, v12.4h
	WORD $0x4ea19ed6 // mul v22.4s, v22.4s, v1.4s
	WORD $0x4f10a581 // sxtl2 v1.4s, v12.8h
	WORD $0x4ea196f6 // mla v22.4s, v23.4s, v1.4s
	WORD $0x0f10a5a1 // sxtl v1.4s, v13.4h
	WORD $0x4ea19716 // mla v22.4s, v24.4s, v1.4s
	WORD $0x4f10a5a1 // sxtl2 v1.4s, v13.8h
	WORD $0x4ea19736 // mla v22.4s, v25.4s, v1.4s
	WORD $0x4eb1bad6 // addv s22, v22.4s
	WORD $0x4c40a562 // ld1 {v2.8h, v3.8h}, [x11]
	WORD $0x9100c16b // add x11, x11, #48
	WORD $0x0e62c184 // smull v4.4s, v12.4h, v2.4h
	WORD $0x4e628184 // smlal2 v4.4s, v12.8h, v2.8h
	WORD $0x0e6381a4 // smlal v4.4s, v13.4h, v3.4h
	WORD $0x4e6381a4 // smlal2 v4.4s, v13.8h, v3.8h
	WORD $0x4eb1b884 // addv s4, v4.4s
	WORD $0x1e2602cd // fmov w13, s22
	WORD $0x1e260090 // fmov w16, s4
	WORD $0x4b1015ad // sub w13, w13, w16, lsl #5
	WORD $0x7d41a100 // ldr h0, [x8, #208]
	WORD $0x1e2201a2 // scvtf s2, w13
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e200842 // fmul s2, s2, s0
	WORD $0x1e222bff // fadd s31, s31, s2
	WORD $0x91034908 // add x8, x8, #210
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q5KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)
TEXT ·q5KMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f00e61d // movi v29.16b, #0x10
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x7d400100 // ldr h0, [x8]
	WORD $0x7d400501 // ldr h1, [x8, #2]
	WORD $0xf840410d // ldur x13, [x8, #4]
	WORD $0xb9400d0e // ldr w14, [x8, #12]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x53047dd0 // lsr w16, w14, #4
	WORD $0x1200ce10 // and w16, w16, #0x0f0f0f0f
	WORD $0x53067df1 // lsr w17, w15, #6
	WORD $0x1200c631 // and w17, w17, #0x03030303
	WORD $0x2a111210 // orr w16, w16, w17, lsl #4
	WORD $0x1200d5ef // and w15, w15, #0x3f3f3f3f
	WORD $0x1200cdd1 // and w17, w14, #0x0f0f0f0f
	WORD $0x53067db3 // lsr w19, w13, #6
	WORD $0x1200c673 // and w19, w19, #0x03030303
	WORD $0x2a131231 // orr w17, w17, w19, lsl #4
	WORD $0x1200d5ad // and w13, w13, #0x3f3f3f3f
	WORD $0xaa1181ad // orr x13, x13, x17, lsl #32
	WORD $0xaa1081ef // orr x15, x15, x16, lsl #32
	WORD $0x9e6701b4 // fmov d20, x13
	WORD $0x9e6701f5 // fmov d21, x15
	WORD $0xad40f11b // ldp q27, q28, [x8, #16]
	WORD $0x9100c10e // add x14, x8, #48
	WORD $0x6f00e40c // movi v12.2d, #0
	WORD $0x6f00e40d // movi v13.2d, #0
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4f0c5776 // shl v22.16b, v27.16b, #4
	WORD $0x4f0c5797 // shl v23.16b, v28.16b, #4
	WORD $0x4f0b5778 // shl v24.16b, v27.16b, #3
	WORD $0x4f0b5799 // shl v25.16b, v28.16b, #3
	WORD $0x4e3d1ed6 // and v22.16b, v22.16b, v29.16b
	WORD $0x4e3d1ef7 // and v23.16b, v23.16b, v29.16b
	WORD $0x4e3d1f18 // and v24.16b, v24.16b, v29.16b
	WORD $0x4e3d1f39 // and v25.16b, v25.16b, v29.16b
	WORD $0x4eb61d08 // orr v8.16b, v8.16b, v22.16b
	WORD $0x4eb71d29 // orr v9.16b, v9.16b, v23.16b
	WORD $0x4eb81d4a // orr v10.16b, v10.16b, v24.16b
	WORD $0x4eb91d6b // orr v11.16b, v11.16b, v25.16b
	WORD $0x4e84950c // sdot v12.4s, v8.16b, v4.16b
	WORD $0x4e85952c // sdot v12.4s, v9.16b, v5.16b
	WORD $0x4e86954d // sdot v13.4s, v10.16b, v6.16b
	WORD $0x4e87956d // sdot v13.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4f0a5776 // shl v22.16b, v27.16b, #2
	WORD $0x4f0a5797 // shl v23.16b, v28.16b, #2
	WORD $0x4f095778 // shl v24.16b, v27.16b, #1
	WORD $0x4f095799 // shl v25.16b, v28.16b, #1
	WORD $0x4e3d1ed6 // and v22.16b, v22.16b, v29.16b
	WORD $0x4e3d1ef7 // and v23.16b, v23.16b, v29.16b
	WORD $0x4e3d1f18 // and v24.16b, v24.16b, v29.16b
	WORD $0x4e3d1f39 // and v25.16b, v25.16b, v29.16b
	WORD $0x4eb61d08 // orr v8.16b, v8.16b, v22.16b
	WORD $0x4eb71d29 // orr v9.16b, v9.16b, v23.16b
	WORD $0x4eb81d4a // orr v10.16b, v10.16b, v24.16b
	WORD $0x4eb91d6b // orr v11.16b, v11.16b, v25.16b
	WORD $0x4e84950e // sdot v14.4s, v8.16b, v4.16b
	WORD $0x4e85952e // sdot v14.4s, v9.16b, v5.16b
	WORD $0x4e86954f // sdot v15.4s, v10.16b, v6.16b
	WORD $0x4e87956f // sdot v15.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x4ebb1f76 // mov v22.16b, v27.16b
	WORD $0x4ebc1f97 // mov v23.16b, v28.16b
	WORD $0x6f0f0778 // ushr v24.16b, v27.16b, #1
	WORD $0x6f0f0799 // ushr v25.16b, v28.16b, #1
	WORD $0x4e3d1ed6 // and v22.16b, v22.16b, v29.16b
	WORD $0x4e3d1ef7 // and v23.16b, v23.16b, v29.16b
	WORD $0x4e3d1f18 // and v24.16b, v24.16b, v29.16b
	WORD $0x4e3d1f39 // and v25.16b, v25.16b, v29.16b
	WORD $0x4eb61d08 // orr v8.16b, v8.16b, v22.16b
	WORD $0x4eb71d29 // orr v9.16b, v9.16b, v23.16b
	WORD $0x4eb81d4a // orr v10.16b, v10.16b, v24.16b
	WORD $0x4eb91d6b // orr v11.16b, v11.16b, v25.16b
	WORD $0x4e849510 // sdot v16.4s, v8.16b, v4.16b
	WORD $0x4e859530 // sdot v16.4s, v9.16b, v5.16b
	WORD $0x4e869551 // sdot v17.4s, v10.16b, v6.16b
	WORD $0x4e879571 // sdot v17.4s, v11.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x4e3e1c69 // and v9.16b, v3.16b, v30.16b
	WORD $0x6f0c044a // ushr v10.16b, v2.16b, #4
	WORD $0x6f0c046b // ushr v11.16b, v3.16b, #4
	WORD $0x6f0e0776 // ushr v22.16b, v27.16b, #2
	WORD $0x6f0e0797 // ushr v23.16b, v28.16b, #2
	WORD $0x6f0d0778 // ushr v24.16b, v27.16b, #3
	WORD $0x6f0d0799 // ushr v25.16b, v28.16b, #3
	WORD $0x4e3d1ed6 // and v22.16b, v22.16b, v29.16b
	WORD $0x4e3d1ef7 // and v23.16b, v23.16b, v29.16b
	WORD $0x4e3d1f18 // and v24.16b, v24.16b, v29.16b
	WORD $0x4e3d1f39 // and v25.16b, v25.16b, v29.16b
	WORD $0x4eb61d08 // orr v8.16b, v8.16b, v22.16b
	WORD $0x4eb71d29 // orr v9.16b, v9.16b, v23.16b
	WORD $0x4eb81d4a // orr v10.16b, v10.16b, v24.16b
	WORD $0x4eb91d6b // orr v11.16b, v11.16b, v25.16b
	WORD $0x4e849512 // sdot v18.4s, v8.16b, v4.16b
	WORD $0x4e859532 // sdot v18.4s, v9.16b, v5.16b
	WORD $0x4e869553 // sdot v19.4s, v10.16b, v6.16b
	WORD $0x4e879573 // sdot v19.4s, v11.16b, v7.16b
	WORD $0x4eadbd8c // addp v12.4s, v12.4s, v13.4s
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eaebd8c // addp v12.4s, v12.4s, v14.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb2be10 // addp v16.4s, v16.4s, v18.4s
	WORD $0x2f08a694 // uxtl v20.8h, v20.8b
	WORD $0x2f10a696 // uxtl v22.4s, v20.4h
	WORD $0x6f10a697 // uxtl2 v23.4s, v20.8h
	WORD $0x4eb69d8c // mul v12.4s, v12.4s, v22.4s
	WORD $0x4eb7960c // mla v12.4s, v16.4s, v23.4s
	WORD $0x4eb1b98c // addv s12, v12.4s
	WORD $0x3dc00978 // ldr q24, [x11, #32]
	WORD $0x9100c16b // add x11, x11, #48
	WORD $0x2f08a6b5 // uxtl v21.8h, v21.8b
	WORD $0x0e78c2b9 // smull v25.4s, v21.4h, v24.4h
	WORD $0x4e7882b9 // smlal2 v25.4s, v21.8h, v24.8h
	WORD $0x4eb1bb39 // addv s25, v25.4s
	WORD $0x5e21d98c // scvtf s12, s12
	WORD $0x5e21db39 // scvtf s25, s25
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e20098c // fmul s12, s12, s0
	WORD $0x1e3a0821 // fmul s1, s1, s26
	WORD $0x1e210b39 // fmul s25, s25, s1
	WORD $0x1e39398c // fsub s12, s12, s25
	WORD $0x1e2c2bff // fadd s31, s31, s12
	WORD $0x9102c108 // add x8, x8, #176
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q2KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)
TEXT ·q2KMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f00e47c // movi v28.16b, #3
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0x3dc0011b // ldr q27, [x8]
	WORD $0x9100410e // add x14, x8, #16
	WORD $0x4c4021c2 // ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14]
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x4e3c1c4c // and v12.16b, v2.16b, v28.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3c1c6c // and v12.16b, v3.16b, v28.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0e044c // ushr v12.16b, v2.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e889590 // sdot v16.4s, v12.16b, v8.16b
	WORD $0x6f0e046c // ushr v12.16b, v3.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e899591 // sdot v17.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0c044c // ushr v12.16b, v2.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c046c // ushr v12.16b, v3.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0a044c // ushr v12.16b, v2.16b, #6
	WORD $0x4e889594 // sdot v20.4s, v12.16b, v8.16b
	WORD $0x6f0a046c // ushr v12.16b, v3.16b, #6
	WORD $0x4e899595 // sdot v21.4s, v12.16b, v9.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd6 // addp v22.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be57 // addp v23.4s, v18.4s, v20.4s
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x4e3c1c8c // and v12.16b, v4.16b, v28.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3c1cac // and v12.16b, v5.16b, v28.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0e048c // ushr v12.16b, v4.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e889590 // sdot v16.4s, v12.16b, v8.16b
	WORD $0x6f0e04ac // ushr v12.16b, v5.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e899591 // sdot v17.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0c048c // ushr v12.16b, v4.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c04ac // ushr v12.16b, v5.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0a048c // ushr v12.16b, v4.16b, #6
	WORD $0x4e889594 // sdot v20.4s, v12.16b, v8.16b
	WORD $0x6f0a04ac // ushr v12.16b, v5.16b, #6
	WORD $0x4e899595 // sdot v21.4s, v12.16b, v9.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd8 // addp v24.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be59 // addp v25.4s, v18.4s, v20.4s
	WORD $0x4e3e1f6c // and v12.16b, v27.16b, v30.16b
	WORD $0x6f0c076d // ushr v13.16b, v27.16b, #4
	WORD $0x2f08a582 // uxtl v2.8h, v12.8b
	WORD $0x6f08a583 // uxtl2 v3.8h, v12.16b
	WORD $0x2f10a441 // uxtl v1.4s, v2.4h
	WORD $0x4ea19ed6 // mul v22.4s, v22.4s, v1.4s
	WORD $0x6f10a441 // uxtl2 v1.4s, v2.8h
	WORD $0x4ea196f6 // mla v22.4s, v23.4s, v1.4s
	WORD $0x2f10a461 // uxtl v1.4s, v3.4h
	WORD $0x4ea19716 // mla v22.4s, v24.4s, v1.4s
	WORD $0x6f10a461 // uxtl2 v1.4s, v3.8h
	WORD $0x4ea19736 // mla v22.4s, v25.4s, v1.4s
	WORD $0x4eb1bad6 // addv s22, v22.4s
	WORD $0x2f08a5a2 // uxtl v2.8h, v13.8b
	WORD $0x6f08a5a3 // uxtl2 v3.8h, v13.16b
	WORD $0x4c40a566 // ld1 {v6.8h, v7.8h}, [x11]
	WORD $0x9100c16b // add x11, x11, #48
	WORD $0x0e66c044 // smull v4.4s, v2.4h, v6.4h
	WORD $0x4e668044 // smlal2 v4.4s, v2.8h, v6.8h
	WORD $0x0e678064 // smlal v4.4s, v3.4h, v7.4h
	WORD $0x4e678064 // smlal2 v4.4s, v3.8h, v7.8h
	WORD $0x4eb1b884 // addv s4, v4.4s
	WORD $0x7d40a100 // ldr h0, [x8, #80]
	WORD $0x7d40a501 // ldr h1, [x8, #82]
	WORD $0x5e21dad6 // scvtf s22, s22
	WORD $0x5e21d884 // scvtf s4, s4
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1ee24021 // fcvt s1, h1
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e200ad6 // fmul s22, s22, s0
	WORD $0x1e3a0821 // fmul s1, s1, s26
	WORD $0x1e210884 // fmul s4, s4, s1
	WORD $0x1e243ad6 // fsub s22, s22, s4
	WORD $0x1e362bff // fadd s31, s31, s22
	WORD $0x91015108 // add x8, x8, #84
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func q3KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)
TEXT ·q3KMatVecNEON(SB), NOSPLIT, $0-64
	MOVD y+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD rows+24(FP), R3
	MOVD qs+32(FP), R4
	MOVD ds+40(FP), R5
	MOVD bs+48(FP), R6
	MOVD nb+56(FP), R7
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f00e47c // movi v28.16b, #3
	WORD $0x4f00e49d // movi v29.16b, #4
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0xf846010d // ldur x13, [x8, #96]
	WORD $0xb940690e // ldr w14, [x8, #104]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x1200cdb0 // and w16, w13, #0x0f0f0f0f
	WORD $0x1200c5d1 // and w17, w14, #0x03030303
	WORD $0x2a111210 // orr w16, w16, w17, lsl #4
	WORD $0x1200cdf1 // and w17, w15, #0x0f0f0f0f
	WORD $0x53027dd3 // lsr w19, w14, #2
	WORD $0x1200c673 // and w19, w19, #0x03030303
	WORD $0x2a131231 // orr w17, w17, w19, lsl #4
	WORD $0x53047db3 // lsr w19, w13, #4
	WORD $0x1200ce73 // and w19, w19, #0x0f0f0f0f
	WORD $0x53047dd4 // lsr w20, w14, #4
	WORD $0x1200c694 // and w20, w20, #0x03030303
	WORD $0x2a141273 // orr w19, w19, w20, lsl #4
	WORD $0x53047df4 // lsr w20, w15, #4
	WORD $0x1200ce94 // and w20, w20, #0x0f0f0f0f
	WORD $0x53067dd5 // lsr w21, w14, #6
	WORD $0x1200c6b5 // and w21, w21, #0x03030303
	WORD $0x2a151294 // orr w20, w20, w21, lsl #4
	WORD $0xaa118210 // orr x16, x16, x17, lsl #32
	WORD $0xaa148273 // orr x19, x19, x20, lsl #32
	WORD $0x9e67021b // fmov d27, x16
	WORD $0x4e181e7b // mov v27.d[1], x19
	WORD $0x4f01e401 // movi v1.16b, #32
	WORD $0x6e21877b // sub v27.16b, v27.16b, v1.16b
	WORD $0x4c40a106 // ld1 {v6.16b, v7.16b}, [x8]
	WORD $0x9100810e // add x14, x8, #32
	WORD $0x4c4021c2 // ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14]
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x4e3c1c4c // and v12.16b, v2.16b, v28.16b
	WORD $0x4f0a54cd // shl v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3c1c6c // and v12.16b, v3.16b, v28.16b
	WORD $0x4f0a54ed // shl v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0e044c // ushr v12.16b, v2.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4f0954cd // shl v13.16b, v6.16b, #1
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889590 // sdot v16.4s, v12.16b, v8.16b
	WORD $0x6f0e046c // ushr v12.16b, v3.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4f0954ed // shl v13.16b, v7.16b, #1
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899591 // sdot v17.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0c044c // ushr v12.16b, v2.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4ea61ccd // mov v13.16b, v6.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c046c // ushr v12.16b, v3.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x4ea71ced // mov v13.16b, v7.16b
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0a044c // ushr v12.16b, v2.16b, #6
	WORD $0x6f0f04cd // ushr v13.16b, v6.16b, #1
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889594 // sdot v20.4s, v12.16b, v8.16b
	WORD $0x6f0a046c // ushr v12.16b, v3.16b, #6
	WORD $0x6f0f04ed // ushr v13.16b, v7.16b, #1
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899595 // sdot v21.4s, v12.16b, v9.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd6 // addp v22.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be57 // addp v23.4s, v18.4s, v20.4s
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x6f00e414 // movi v20.2d, #0
	WORD $0x6f00e415 // movi v21.2d, #0
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x4e3c1c8c // and v12.16b, v4.16b, v28.16b
	WORD $0x6f0e04cd // ushr v13.16b, v6.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e88958e // sdot v14.4s, v12.16b, v8.16b
	WORD $0x4e3c1cac // and v12.16b, v5.16b, v28.16b
	WORD $0x6f0e04ed // ushr v13.16b, v7.16b, #2
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e89958f // sdot v15.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0e048c // ushr v12.16b, v4.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0d04cd // ushr v13.16b, v6.16b, #3
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889590 // sdot v16.4s, v12.16b, v8.16b
	WORD $0x6f0e04ac // ushr v12.16b, v5.16b, #2
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0d04ed // ushr v13.16b, v7.16b, #3
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899591 // sdot v17.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0c048c // ushr v12.16b, v4.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0c04cd // ushr v13.16b, v6.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889592 // sdot v18.4s, v12.16b, v8.16b
	WORD $0x6f0c04ac // ushr v12.16b, v5.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0c04ed // ushr v13.16b, v7.16b, #4
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899593 // sdot v19.4s, v12.16b, v9.16b
	WORD $0x4cdfa128 // ld1 {v8.16b, v9.16b}, [x9], #32
	WORD $0x6f0a048c // ushr v12.16b, v4.16b, #6
	WORD $0x6f0b04cd // ushr v13.16b, v6.16b, #5
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e889594 // sdot v20.4s, v12.16b, v8.16b
	WORD $0x6f0a04ac // ushr v12.16b, v5.16b, #6
	WORD $0x6f0b04ed // ushr v13.16b, v7.16b, #5
	WORD $0x4e3d1dad // and v13.16b, v13.16b, v29.16b
	WORD $0x4ead1d8c // orr v12.16b, v12.16b, v13.16b
	WORD $0x4e899595 // sdot v21.4s, v12.16b, v9.16b
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb0bdd8 // addp v24.4s, v14.4s, v16.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb5be94 // addp v20.4s, v20.4s, v21.4s
	WORD $0x4eb4be59 // addp v25.4s, v18.4s, v20.4s
	WORD $0x0f08a76c // sxtl v12.8h, v27.8b
	WORD $0x4f08a76d // sxtl2 v13.8h, v27.16b
	WORD $0x0f10a581 // sxtl v1.4s, v12.4h
	WORD $0x4ea19ed6 // mul v22.4s, v22.4s, v1.4s
	WORD $0x4f10a581 // sxtl2 v1.4s, v12.8h
	WORD $0x4ea196f6 // mla v22.4s, v23.4s, v1.4s
	WORD $0x0f10a5a1 // sxtl v1.4s, v13.4h
	WORD $0x4ea19716 // mla v22.4s, v24.4s, v1.4s
	WORD $0x4f10a5a1 // sxtl2 v1.4s, v13.8h
	WORD $0x4ea19736 // mla v22.4s, v25.4s, v1.4s
	WORD $0x4eb1bad6 // addv s22, v22.4s
	WORD $0x4c40a562 // ld1 {v2.8h, v3.8h}, [x11]
	WORD $0x9100c16b // add x11, x11, #48
	WORD $0x0e62c184 // smull v4.4s, v12.4h, v2.4h
	WORD $0x4e628184 // smlal2 v4.4s, v12.8h, v2.8h
	WORD $0x0e6381a4 // smlal v4.4s, v13.4h, v3.4h
	WORD $0x4e6381a4 // smlal2 v4.4s, v13.8h, v3.8h
	WORD $0x4eb1b884 // addv s4, v4.4s
	WORD $0x1e2602cd // fmov w13, s22
	WORD $0x1e260090 // fmov w16, s4
	WORD $0x4b1009ad // sub w13, w13, w16, lsl #2
	WORD $0x7d40d900 // ldr h0, [x8, #108]
	WORD $0x1e2201a2 // scvtf s2, w13
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e200842 // fmul s2, s2, s0
	WORD $0x1e222bff // fadd s31, s31, s2
	WORD $0x9101b908 // add x8, x8, #110
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func iq4XSMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)
TEXT ·iq4XSMatVecNEON(SB), NOSPLIT, $0-64
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
	MOVD $iq4xsShifts<>(SB), R13
	WORD $0x3dc001bd // ldr q29, [x13]
	WORD $0x4f00847c // movi v28.8h, #3
row:
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0xaa0403e9 // mov x9, x4
	WORD $0xaa0503ea // mov x10, x5
	WORD $0xaa0603eb // mov x11, x6
	WORD $0xaa0703ec // mov x12, x7
	WORD $0x6f00e41f // movi v31.2d, #0
block:
	WORD $0xbd400501 // ldr s1, [x8, #4]
	WORD $0x2f0c042c // ushr v12.8b, v1.8b, #4
	WORD $0x0e3e1c21 // and v1.8b, v1.8b, v30.8b
	WORD $0x4e0c3821 // zip1 v1.16b, v1.16b, v12.16b
	WORD $0x7940050d // ldrh w13, [x8, #2]
	WORD $0x4e020dac // dup v12.8h, w13
	WORD $0x6e7d458c // ushl v12.8h, v12.8h, v29.8h
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x0e21298c // xtn v12.8b, v12.8h
	WORD $0x0f0c558c // shl v12.8b, v12.8b, #4
	WORD $0x0eac1c21 // orr v1.8b, v1.8b, v12.8b
	WORD $0x0f01e40c // movi v12.8b, #32
	WORD $0x2e2c8421 // sub v1.8b, v1.8b, v12.8b
	WORD $0x0f08a421 // sxtl v1.8h, v1.8b
	WORD $0x0f10a434 // sxtl v20.4s, v1.4h
	WORD $0x4f10a435 // sxtl2 v21.4s, v1.8h
	WORD $0x9100210e // add x14, x8, #8
	WORD $0x6f00e40c // movi v12.2d, #0
	WORD $0x6f00e40d // movi v13.2d, #0
	WORD $0x6f00e40e // movi v14.2d, #0
	WORD $0x6f00e40f // movi v15.2d, #0
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x6f0c0449 // ushr v9.16b, v2.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e84950c // sdot v12.4s, v8.16b, v4.16b
	WORD $0x4e85952c // sdot v12.4s, v9.16b, v5.16b
	WORD $0x4e3e1c68 // and v8.16b, v3.16b, v30.16b
	WORD $0x6f0c0469 // ushr v9.16b, v3.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e86950d // sdot v13.4s, v8.16b, v6.16b
	WORD $0x4e87952d // sdot v13.4s, v9.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x6f0c0449 // ushr v9.16b, v2.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e84950e // sdot v14.4s, v8.16b, v4.16b
	WORD $0x4e85952e // sdot v14.4s, v9.16b, v5.16b
	WORD $0x4e3e1c68 // and v8.16b, v3.16b, v30.16b
	WORD $0x6f0c0469 // ushr v9.16b, v3.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e86950f // sdot v15.4s, v8.16b, v6.16b
	WORD $0x4e87952f // sdot v15.4s, v9.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x6f0c0449 // ushr v9.16b, v2.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e849510 // sdot v16.4s, v8.16b, v4.16b
	WORD $0x4e859530 // sdot v16.4s, v9.16b, v5.16b
	WORD $0x4e3e1c68 // and v8.16b, v3.16b, v30.16b
	WORD $0x6f0c0469 // ushr v9.16b, v3.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e869511 // sdot v17.4s, v8.16b, v6.16b
	WORD $0x4e879531 // sdot v17.4s, v9.16b, v7.16b
	WORD $0x4cdfa1c2 // ld1 {v2.16b, v3.16b}, [x14], #32
	WORD $0x4cdf2124 // ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64
	WORD $0x4e3e1c48 // and v8.16b, v2.16b, v30.16b
	WORD $0x6f0c0449 // ushr v9.16b, v2.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e849512 // sdot v18.4s, v8.16b, v4.16b
	WORD $0x4e859532 // sdot v18.4s, v9.16b, v5.16b
	WORD $0x4e3e1c68 // and v8.16b, v3.16b, v30.16b
	WORD $0x6f0c0469 // ushr v9.16b, v3.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x4e869513 // sdot v19.4s, v8.16b, v6.16b
	WORD $0x4e879533 // sdot v19.4s, v9.16b, v7.16b
	WORD $0x4eadbd8c // addp v12.4s, v12.4s, v13.4s
	WORD $0x4eafbdce // addp v14.4s, v14.4s, v15.4s
	WORD $0x4eaebd8c // addp v12.4s, v12.4s, v14.4s
	WORD $0x4eb1be10 // addp v16.4s, v16.4s, v17.4s
	WORD $0x4eb3be52 // addp v18.4s, v18.4s, v19.4s
	WORD $0x4eb2be10 // addp v16.4s, v16.4s, v18.4s
	WORD $0x4eb49d8c // mul v12.4s, v12.4s, v20.4s
	WORD $0x4eb5960c // mla v12.4s, v16.4s, v21.4s
	WORD $0x4eb1b98c // addv s12, v12.4s
	WORD $0x1e26018d // fmov w13, s12
	WORD $0x7d400100 // ldr h0, [x8]
	WORD $0x1e2201a2 // scvtf s2, w13
	WORD $0xbc40455a // ldr s26, [x10], #4
	WORD $0x1ee24000 // fcvt s0, h0
	WORD $0x1e3a0800 // fmul s0, s0, s26
	WORD $0x1e200842 // fmul s2, s2, s0
	WORD $0x1e222bff // fadd s31, s31, s2
	WORD $0x91022108 // add x8, x8, #136
	WORD $0xf100058c // subs x12, x12, #1
	BNE block
	WORD $0xbc00441f // str s31, [x0], #4
	WORD $0x8b020021 // add x1, x1, x2
	WORD $0xf1000463 // subs x3, x3, #1
	BNE row
	RET

// func quantizeQ8KNEON(qs *int8, ds *float32, bs *int16, x *float32, nb int)
//
// quantizeQ8KNEON quantizes nb blocks of 256 values of x as
// quantizeQ8KGo, with its bits: per block the largest magnitude amax, the
// scale d = amax/127 and its inverse id (0 if d is 0), the values x*id
// (float32) rounded to nearest even (FCVTNS), and their sums.
TEXT ·quantizeQ8KNEON(SB), NOSPLIT, $0-40
	MOVD qs+0(FP), R0
	MOVD ds+8(FP), R1
	MOVD bs+16(FP), R2
	MOVD x+24(FP), R3
	MOVD nb+32(FP), R4
	WORD $0x52a85fcd // mov w13, #0x42fe0000
	WORD $0x1e2701bb // fmov s27, w13
	WORD $0x1e2e101c // fmov s28, #1.0
	WORD $0x2f00e41d // movi d29, #0
block:
	WORD $0xaa0303e5 // mov x5, x3
	WORD $0x6f00e410 // movi v16.2d, #0
	WORD $0x6f00e411 // movi v17.2d, #0
	WORD $0x6f00e412 // movi v18.2d, #0
	WORD $0x6f00e413 // movi v19.2d, #0
	WORD $0xd2800206 // mov x6, #16
amax:
	WORD $0x4cdf2860 // ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x3], #64
	WORD $0x4ea0f800 // fabs v0.4s, v0.4s
	WORD $0x4ea0f821 // fabs v1.4s, v1.4s
	WORD $0x4ea0f842 // fabs v2.4s, v2.4s
	WORD $0x4ea0f863 // fabs v3.4s, v3.4s
	WORD $0x4e20f610 // fmax v16.4s, v16.4s, v0.4s
	WORD $0x4e21f631 // fmax v17.4s, v17.4s, v1.4s
	WORD $0x4e22f652 // fmax v18.4s, v18.4s, v2.4s
	WORD $0x4e23f673 // fmax v19.4s, v19.4s, v3.4s
	WORD $0xf10004c6 // subs x6, x6, #1
	BNE amax
	WORD $0x4e31f610 // fmax v16.4s, v16.4s, v17.4s
	WORD $0x4e33f652 // fmax v18.4s, v18.4s, v19.4s
	WORD $0x4e32f610 // fmax v16.4s, v16.4s, v18.4s
	WORD $0x6e30fa10 // fmaxv s16, v16.4s
	WORD $0x1e3b1a12 // fdiv s18, s16, s27
	WORD $0xbc004432 // str s18, [x1], #4
	WORD $0x1e321b94 // fdiv s20, s28, s18
	WORD $0x1e202248 // fcmp s18, #0.0
	WORD $0x1e3d1e94 // fcsel s20, s20, s29, ne
	WORD $0xd2800206 // mov x6, #16
quant:
	WORD $0x4cdf28a0 // ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x5], #64
	WORD $0x4f949000 // fmul v0.4s, v0.4s, v20.s[0]
	WORD $0x4f949021 // fmul v1.4s, v1.4s, v20.s[0]
	WORD $0x4f949042 // fmul v2.4s, v2.4s, v20.s[0]
	WORD $0x4f949063 // fmul v3.4s, v3.4s, v20.s[0]
	WORD $0x4e21a800 // fcvtns v0.4s, v0.4s
	WORD $0x4e21a821 // fcvtns v1.4s, v1.4s
	WORD $0x4e21a842 // fcvtns v2.4s, v2.4s
	WORD $0x4e21a863 // fcvtns v3.4s, v3.4s
	WORD $0x0e612800 // xtn v0.4h, v0.4s
	WORD $0x4e612820 // xtn2 v0.8h, v1.4s
	WORD $0x0e612842 // xtn v2.4h, v2.4s
	WORD $0x4e612862 // xtn2 v2.8h, v3.4s
	WORD $0x0e212800 // xtn v0.8b, v0.8h
	WORD $0x4e212840 // xtn2 v0.16b, v2.8h
	WORD $0x4c9f7000 // st1 {v0.16b}, [x0], #16
	WORD $0x4e303804 // saddlv h4, v0.16b
	WORD $0x7c002444 // str h4, [x2], #2
	WORD $0xf10004c6 // subs x6, x6, #1
	BNE quant
	WORD $0xd1008046 // sub x6, x2, #32
	WORD $0x4c40a4c5 // ld1 {v5.8h, v6.8h}, [x6]
	WORD $0x4e66bca5 // addp v5.8h, v5.8h, v6.8h
	WORD $0x3c810445 // str q5, [x2], #16
	WORD $0xf1000484 // subs x4, x4, #1
	BNE block
	RET

