//go:build arm64 && !purego

#include "textflag.h"

// The packers of the K tile (kPackBytes, packKGo's layout): eight rows of
// rb bytes, nb super-blocks each, from w into dst. Per super-block and
// row: the scales and mins decoded as by the matrix-vector kernels,
// stored lane by lane into the row's column of sc32, sc16 and cf (c_j:
// the min, or off*sc_j), then d and dm; the 256 values decoded to
// 16 vectors, offset to be unsigned (plus off), and stored by 4-byte
// groups into the row's column of the 64 group vectors. nb > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.

// func packQ4KNEON(dst, w *byte, rb, nb int)
TEXT ·packQ4KNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	WORD $0xd2800411 // mov x17, #32
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
block:
	WORD $0xd2800004 // mov x4, #0
	WORD $0xaa0103e5 // mov x5, x1
row:
	WORD $0xf84040ad // ldur x13, [x5, #4]
	WORD $0xb9400cae // ldr w14, [x5, #12]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x53047dc6 // lsr w6, w14, #4
	WORD $0x1200ccc6 // and w6, w6, #0x0f0f0f0f
	WORD $0x53067de7 // lsr w7, w15, #6
	WORD $0x1200c4e7 // and w7, w7, #0x03030303
	WORD $0x2a0710c6 // orr w6, w6, w7, lsl #4
	WORD $0x1200d5ef // and w15, w15, #0x3f3f3f3f
	WORD $0x1200cdc7 // and w7, w14, #0x0f0f0f0f
	WORD $0x53067da8 // lsr w8, w13, #6
	WORD $0x1200c508 // and w8, w8, #0x03030303
	WORD $0x2a0810e7 // orr w7, w7, w8, lsl #4
	WORD $0x1200d5ad // and w13, w13, #0x3f3f3f3f
	WORD $0xaa0781ad // orr x13, x13, x7, lsl #32
	WORD $0xaa0681ef // orr x15, x15, x6, lsl #32
	WORD $0x9e6701b0 // fmov d16, x13
	WORD $0x9e6701f2 // fmov d18, x15
	WORD $0x2f08a610 // uxtl v16.8h, v16.8b
	WORD $0x2f08a652 // uxtl v18.8h, v18.8b
	WORD $0x7d4000b4 // ldr h20, [x5]
	WORD $0x1ee24294 // fcvt s20, h20
	WORD $0x7d4004b5 // ldr h21, [x5, #2]
	WORD $0x1ee242b5 // fcvt s21, h21
	WORD $0x91200010 // add x16, x0, #2048
	WORD $0x8b040a10 // add x16, x16, x4, lsl #2
	WORD $0x0f10a616 // sxtl v22.4s, v16.4h
	WORD $0x4f10a617 // sxtl2 v23.4s, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x4e503a16 // zip1 v22.8h, v16.8h, v16.8h
	WORD $0x4e507a17 // zip2 v23.8h, v16.8h, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x0d918212 // st1 {v18.s}[0], [x16], x17
	WORD $0x0d919212 // st1 {v18.s}[1], [x16], x17
	WORD $0x4d918212 // st1 {v18.s}[2], [x16], x17
	WORD $0x4d919212 // st1 {v18.s}[3], [x16], x17
	WORD $0x0d918214 // st1 {v20.s}[0], [x16], x17
	WORD $0x0d008215 // st1 {v21.s}[0], [x16]
	WORD $0x3dc004a0 // ldr q0, [x5, #16]
	WORD $0x6f0c0402 // ushr v2.16b, v0.16b, #4
	WORD $0x4e3e1c00 // and v0.16b, v0.16b, v30.16b
	WORD $0x3dc008a1 // ldr q1, [x5, #32]
	WORD $0x6f0c0423 // ushr v3.16b, v1.16b, #4
	WORD $0x4e3e1c21 // and v1.16b, v1.16b, v30.16b
	WORD $0x3dc00ca4 // ldr q4, [x5, #48]
	WORD $0x6f0c0486 // ushr v6.16b, v4.16b, #4
	WORD $0x4e3e1c84 // and v4.16b, v4.16b, v30.16b
	WORD $0x3dc010a5 // ldr q5, [x5, #64]
	WORD $0x6f0c04a7 // ushr v7.16b, v5.16b, #4
	WORD $0x4e3e1ca5 // and v5.16b, v5.16b, v30.16b
	WORD $0x3dc014a8 // ldr q8, [x5, #80]
	WORD $0x6f0c050a // ushr v10.16b, v8.16b, #4
	WORD $0x4e3e1d08 // and v8.16b, v8.16b, v30.16b
	WORD $0x3dc018a9 // ldr q9, [x5, #96]
	WORD $0x6f0c052b // ushr v11.16b, v9.16b, #4
	WORD $0x4e3e1d29 // and v9.16b, v9.16b, v30.16b
	WORD $0x3dc01cac // ldr q12, [x5, #112]
	WORD $0x6f0c058e // ushr v14.16b, v12.16b, #4
	WORD $0x4e3e1d8c // and v12.16b, v12.16b, v30.16b
	WORD $0x3dc020ad // ldr q13, [x5, #128]
	WORD $0x6f0c05af // ushr v15.16b, v13.16b, #4
	WORD $0x4e3e1dad // and v13.16b, v13.16b, v30.16b
	WORD $0x8b040810 // add x16, x0, x4, lsl #2
	WORD $0x0d918200 // st1 {v0.s}[0], [x16], x17
	WORD $0x0d919200 // st1 {v0.s}[1], [x16], x17
	WORD $0x4d918200 // st1 {v0.s}[2], [x16], x17
	WORD $0x4d919200 // st1 {v0.s}[3], [x16], x17
	WORD $0x0d918201 // st1 {v1.s}[0], [x16], x17
	WORD $0x0d919201 // st1 {v1.s}[1], [x16], x17
	WORD $0x4d918201 // st1 {v1.s}[2], [x16], x17
	WORD $0x4d919201 // st1 {v1.s}[3], [x16], x17
	WORD $0x0d918202 // st1 {v2.s}[0], [x16], x17
	WORD $0x0d919202 // st1 {v2.s}[1], [x16], x17
	WORD $0x4d918202 // st1 {v2.s}[2], [x16], x17
	WORD $0x4d919202 // st1 {v2.s}[3], [x16], x17
	WORD $0x0d918203 // st1 {v3.s}[0], [x16], x17
	WORD $0x0d919203 // st1 {v3.s}[1], [x16], x17
	WORD $0x4d918203 // st1 {v3.s}[2], [x16], x17
	WORD $0x4d919203 // st1 {v3.s}[3], [x16], x17
	WORD $0x0d918204 // st1 {v4.s}[0], [x16], x17
	WORD $0x0d919204 // st1 {v4.s}[1], [x16], x17
	WORD $0x4d918204 // st1 {v4.s}[2], [x16], x17
	WORD $0x4d919204 // st1 {v4.s}[3], [x16], x17
	WORD $0x0d918205 // st1 {v5.s}[0], [x16], x17
	WORD $0x0d919205 // st1 {v5.s}[1], [x16], x17
	WORD $0x4d918205 // st1 {v5.s}[2], [x16], x17
	WORD $0x4d919205 // st1 {v5.s}[3], [x16], x17
	WORD $0x0d918206 // st1 {v6.s}[0], [x16], x17
	WORD $0x0d919206 // st1 {v6.s}[1], [x16], x17
	WORD $0x4d918206 // st1 {v6.s}[2], [x16], x17
	WORD $0x4d919206 // st1 {v6.s}[3], [x16], x17
	WORD $0x0d918207 // st1 {v7.s}[0], [x16], x17
	WORD $0x0d919207 // st1 {v7.s}[1], [x16], x17
	WORD $0x4d918207 // st1 {v7.s}[2], [x16], x17
	WORD $0x4d919207 // st1 {v7.s}[3], [x16], x17
	WORD $0x0d918208 // st1 {v8.s}[0], [x16], x17
	WORD $0x0d919208 // st1 {v8.s}[1], [x16], x17
	WORD $0x4d918208 // st1 {v8.s}[2], [x16], x17
	WORD $0x4d919208 // st1 {v8.s}[3], [x16], x17
	WORD $0x0d918209 // st1 {v9.s}[0], [x16], x17
	WORD $0x0d919209 // st1 {v9.s}[1], [x16], x17
	WORD $0x4d918209 // st1 {v9.s}[2], [x16], x17
	WORD $0x4d919209 // st1 {v9.s}[3], [x16], x17
	WORD $0x0d91820a // st1 {v10.s}[0], [x16], x17
	WORD $0x0d91920a // st1 {v10.s}[1], [x16], x17
	WORD $0x4d91820a // st1 {v10.s}[2], [x16], x17
	WORD $0x4d91920a // st1 {v10.s}[3], [x16], x17
	WORD $0x0d91820b // st1 {v11.s}[0], [x16], x17
	WORD $0x0d91920b // st1 {v11.s}[1], [x16], x17
	WORD $0x4d91820b // st1 {v11.s}[2], [x16], x17
	WORD $0x4d91920b // st1 {v11.s}[3], [x16], x17
	WORD $0x0d91820c // st1 {v12.s}[0], [x16], x17
	WORD $0x0d91920c // st1 {v12.s}[1], [x16], x17
	WORD $0x4d91820c // st1 {v12.s}[2], [x16], x17
	WORD $0x4d91920c // st1 {v12.s}[3], [x16], x17
	WORD $0x0d91820d // st1 {v13.s}[0], [x16], x17
	WORD $0x0d91920d // st1 {v13.s}[1], [x16], x17
	WORD $0x4d91820d // st1 {v13.s}[2], [x16], x17
	WORD $0x4d91920d // st1 {v13.s}[3], [x16], x17
	WORD $0x0d91820e // st1 {v14.s}[0], [x16], x17
	WORD $0x0d91920e // st1 {v14.s}[1], [x16], x17
	WORD $0x4d91820e // st1 {v14.s}[2], [x16], x17
	WORD $0x4d91920e // st1 {v14.s}[3], [x16], x17
	WORD $0x0d91820f // st1 {v15.s}[0], [x16], x17
	WORD $0x0d91920f // st1 {v15.s}[1], [x16], x17
	WORD $0x4d91820f // st1 {v15.s}[2], [x16], x17
	WORD $0x4d91920f // st1 {v15.s}[3], [x16], x17
	WORD $0x91000484 // add x4, x4, #1
	WORD $0x8b0200a5 // add x5, x5, x2
	WORD $0xf100209f // cmp x4, #8
	BNE row
	WORD $0x912b0000 // add x0, x0, #2752
	WORD $0x91024021 // add x1, x1, #144
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packQ5KNEON(dst, w *byte, rb, nb int)
TEXT ·packQ5KNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	WORD $0xd2800411 // mov x17, #32
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
block:
	WORD $0xd2800004 // mov x4, #0
	WORD $0xaa0103e5 // mov x5, x1
row:
	WORD $0xf84040ad // ldur x13, [x5, #4]
	WORD $0xb9400cae // ldr w14, [x5, #12]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x53047dc6 // lsr w6, w14, #4
	WORD $0x1200ccc6 // and w6, w6, #0x0f0f0f0f
	WORD $0x53067de7 // lsr w7, w15, #6
	WORD $0x1200c4e7 // and w7, w7, #0x03030303
	WORD $0x2a0710c6 // orr w6, w6, w7, lsl #4
	WORD $0x1200d5ef // and w15, w15, #0x3f3f3f3f
	WORD $0x1200cdc7 // and w7, w14, #0x0f0f0f0f
	WORD $0x53067da8 // lsr w8, w13, #6
	WORD $0x1200c508 // and w8, w8, #0x03030303
	WORD $0x2a0810e7 // orr w7, w7, w8, lsl #4
	WORD $0x1200d5ad // and w13, w13, #0x3f3f3f3f
	WORD $0xaa0781ad // orr x13, x13, x7, lsl #32
	WORD $0xaa0681ef // orr x15, x15, x6, lsl #32
	WORD $0x9e6701b0 // fmov d16, x13
	WORD $0x9e6701f2 // fmov d18, x15
	WORD $0x2f08a610 // uxtl v16.8h, v16.8b
	WORD $0x2f08a652 // uxtl v18.8h, v18.8b
	WORD $0x7d4000b4 // ldr h20, [x5]
	WORD $0x1ee24294 // fcvt s20, h20
	WORD $0x7d4004b5 // ldr h21, [x5, #2]
	WORD $0x1ee242b5 // fcvt s21, h21
	WORD $0x91200010 // add x16, x0, #2048
	WORD $0x8b040a10 // add x16, x16, x4, lsl #2
	WORD $0x0f10a616 // sxtl v22.4s, v16.4h
	WORD $0x4f10a617 // sxtl2 v23.4s, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x4e503a16 // zip1 v22.8h, v16.8h, v16.8h
	WORD $0x4e507a17 // zip2 v23.8h, v16.8h, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x0d918212 // st1 {v18.s}[0], [x16], x17
	WORD $0x0d919212 // st1 {v18.s}[1], [x16], x17
	WORD $0x4d918212 // st1 {v18.s}[2], [x16], x17
	WORD $0x4d919212 // st1 {v18.s}[3], [x16], x17
	WORD $0x0d918214 // st1 {v20.s}[0], [x16], x17
	WORD $0x0d008215 // st1 {v21.s}[0], [x16]
	WORD $0xad40e4b8 // ldp q24, q25, [x5, #16]
	WORD $0x4f00e61d // movi v29.16b, #0x10
	WORD $0x3dc00ca0 // ldr q0, [x5, #48]
	WORD $0x6f0c0402 // ushr v2.16b, v0.16b, #4
	WORD $0x4e3e1c00 // and v0.16b, v0.16b, v30.16b
	WORD $0x4f0c571a // shl v26.16b, v24.16b, #4
	WORD $0x4f0b571b // shl v27.16b, v24.16b, #3
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c00 // orr v0.16b, v0.16b, v26.16b
	WORD $0x4ebb1c42 // orr v2.16b, v2.16b, v27.16b
	WORD $0x3dc010a1 // ldr q1, [x5, #64]
	WORD $0x6f0c0423 // ushr v3.16b, v1.16b, #4
	WORD $0x4e3e1c21 // and v1.16b, v1.16b, v30.16b
	WORD $0x4f0c573a // shl v26.16b, v25.16b, #4
	WORD $0x4f0b573b // shl v27.16b, v25.16b, #3
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c21 // orr v1.16b, v1.16b, v26.16b
	WORD $0x4ebb1c63 // orr v3.16b, v3.16b, v27.16b
	WORD $0x3dc014a4 // ldr q4, [x5, #80]
	WORD $0x6f0c0486 // ushr v6.16b, v4.16b, #4
	WORD $0x4e3e1c84 // and v4.16b, v4.16b, v30.16b
	WORD $0x4f0a571a // shl v26.16b, v24.16b, #2
	WORD $0x4f09571b // shl v27.16b, v24.16b, #1
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c84 // orr v4.16b, v4.16b, v26.16b
	WORD $0x4ebb1cc6 // orr v6.16b, v6.16b, v27.16b
	WORD $0x3dc018a5 // ldr q5, [x5, #96]
	WORD $0x6f0c04a7 // ushr v7.16b, v5.16b, #4
	WORD $0x4e3e1ca5 // and v5.16b, v5.16b, v30.16b
	WORD $0x4f0a573a // shl v26.16b, v25.16b, #2
	WORD $0x4f09573b // shl v27.16b, v25.16b, #1
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1ca5 // orr v5.16b, v5.16b, v26.16b
	WORD $0x4ebb1ce7 // orr v7.16b, v7.16b, v27.16b
	WORD $0x3dc01ca8 // ldr q8, [x5, #112]
	WORD $0x6f0c050a // ushr v10.16b, v8.16b, #4
	WORD $0x4e3e1d08 // and v8.16b, v8.16b, v30.16b
	WORD $0x4eb81f1a // mov v26.16b, v24.16b
	WORD $0x6f0f071b // ushr v27.16b, v24.16b, #1
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d08 // orr v8.16b, v8.16b, v26.16b
	WORD $0x4ebb1d4a // orr v10.16b, v10.16b, v27.16b
	WORD $0x3dc020a9 // ldr q9, [x5, #128]
	WORD $0x6f0c052b // ushr v11.16b, v9.16b, #4
	WORD $0x4e3e1d29 // and v9.16b, v9.16b, v30.16b
	WORD $0x4eb91f3a // mov v26.16b, v25.16b
	WORD $0x6f0f073b // ushr v27.16b, v25.16b, #1
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d29 // orr v9.16b, v9.16b, v26.16b
	WORD $0x4ebb1d6b // orr v11.16b, v11.16b, v27.16b
	WORD $0x3dc024ac // ldr q12, [x5, #144]
	WORD $0x6f0c058e // ushr v14.16b, v12.16b, #4
	WORD $0x4e3e1d8c // and v12.16b, v12.16b, v30.16b
	WORD $0x6f0e071a // ushr v26.16b, v24.16b, #2
	WORD $0x6f0d071b // ushr v27.16b, v24.16b, #3
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d8c // orr v12.16b, v12.16b, v26.16b
	WORD $0x4ebb1dce // orr v14.16b, v14.16b, v27.16b
	WORD $0x3dc028ad // ldr q13, [x5, #160]
	WORD $0x6f0c05af // ushr v15.16b, v13.16b, #4
	WORD $0x4e3e1dad // and v13.16b, v13.16b, v30.16b
	WORD $0x6f0e073a // ushr v26.16b, v25.16b, #2
	WORD $0x6f0d073b // ushr v27.16b, v25.16b, #3
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1dad // orr v13.16b, v13.16b, v26.16b
	WORD $0x4ebb1def // orr v15.16b, v15.16b, v27.16b
	WORD $0x8b040810 // add x16, x0, x4, lsl #2
	WORD $0x0d918200 // st1 {v0.s}[0], [x16], x17
	WORD $0x0d919200 // st1 {v0.s}[1], [x16], x17
	WORD $0x4d918200 // st1 {v0.s}[2], [x16], x17
	WORD $0x4d919200 // st1 {v0.s}[3], [x16], x17
	WORD $0x0d918201 // st1 {v1.s}[0], [x16], x17
	WORD $0x0d919201 // st1 {v1.s}[1], [x16], x17
	WORD $0x4d918201 // st1 {v1.s}[2], [x16], x17
	WORD $0x4d919201 // st1 {v1.s}[3], [x16], x17
	WORD $0x0d918202 // st1 {v2.s}[0], [x16], x17
	WORD $0x0d919202 // st1 {v2.s}[1], [x16], x17
	WORD $0x4d918202 // st1 {v2.s}[2], [x16], x17
	WORD $0x4d919202 // st1 {v2.s}[3], [x16], x17
	WORD $0x0d918203 // st1 {v3.s}[0], [x16], x17
	WORD $0x0d919203 // st1 {v3.s}[1], [x16], x17
	WORD $0x4d918203 // st1 {v3.s}[2], [x16], x17
	WORD $0x4d919203 // st1 {v3.s}[3], [x16], x17
	WORD $0x0d918204 // st1 {v4.s}[0], [x16], x17
	WORD $0x0d919204 // st1 {v4.s}[1], [x16], x17
	WORD $0x4d918204 // st1 {v4.s}[2], [x16], x17
	WORD $0x4d919204 // st1 {v4.s}[3], [x16], x17
	WORD $0x0d918205 // st1 {v5.s}[0], [x16], x17
	WORD $0x0d919205 // st1 {v5.s}[1], [x16], x17
	WORD $0x4d918205 // st1 {v5.s}[2], [x16], x17
	WORD $0x4d919205 // st1 {v5.s}[3], [x16], x17
	WORD $0x0d918206 // st1 {v6.s}[0], [x16], x17
	WORD $0x0d919206 // st1 {v6.s}[1], [x16], x17
	WORD $0x4d918206 // st1 {v6.s}[2], [x16], x17
	WORD $0x4d919206 // st1 {v6.s}[3], [x16], x17
	WORD $0x0d918207 // st1 {v7.s}[0], [x16], x17
	WORD $0x0d919207 // st1 {v7.s}[1], [x16], x17
	WORD $0x4d918207 // st1 {v7.s}[2], [x16], x17
	WORD $0x4d919207 // st1 {v7.s}[3], [x16], x17
	WORD $0x0d918208 // st1 {v8.s}[0], [x16], x17
	WORD $0x0d919208 // st1 {v8.s}[1], [x16], x17
	WORD $0x4d918208 // st1 {v8.s}[2], [x16], x17
	WORD $0x4d919208 // st1 {v8.s}[3], [x16], x17
	WORD $0x0d918209 // st1 {v9.s}[0], [x16], x17
	WORD $0x0d919209 // st1 {v9.s}[1], [x16], x17
	WORD $0x4d918209 // st1 {v9.s}[2], [x16], x17
	WORD $0x4d919209 // st1 {v9.s}[3], [x16], x17
	WORD $0x0d91820a // st1 {v10.s}[0], [x16], x17
	WORD $0x0d91920a // st1 {v10.s}[1], [x16], x17
	WORD $0x4d91820a // st1 {v10.s}[2], [x16], x17
	WORD $0x4d91920a // st1 {v10.s}[3], [x16], x17
	WORD $0x0d91820b // st1 {v11.s}[0], [x16], x17
	WORD $0x0d91920b // st1 {v11.s}[1], [x16], x17
	WORD $0x4d91820b // st1 {v11.s}[2], [x16], x17
	WORD $0x4d91920b // st1 {v11.s}[3], [x16], x17
	WORD $0x0d91820c // st1 {v12.s}[0], [x16], x17
	WORD $0x0d91920c // st1 {v12.s}[1], [x16], x17
	WORD $0x4d91820c // st1 {v12.s}[2], [x16], x17
	WORD $0x4d91920c // st1 {v12.s}[3], [x16], x17
	WORD $0x0d91820d // st1 {v13.s}[0], [x16], x17
	WORD $0x0d91920d // st1 {v13.s}[1], [x16], x17
	WORD $0x4d91820d // st1 {v13.s}[2], [x16], x17
	WORD $0x4d91920d // st1 {v13.s}[3], [x16], x17
	WORD $0x0d91820e // st1 {v14.s}[0], [x16], x17
	WORD $0x0d91920e // st1 {v14.s}[1], [x16], x17
	WORD $0x4d91820e // st1 {v14.s}[2], [x16], x17
	WORD $0x4d91920e // st1 {v14.s}[3], [x16], x17
	WORD $0x0d91820f // st1 {v15.s}[0], [x16], x17
	WORD $0x0d91920f // st1 {v15.s}[1], [x16], x17
	WORD $0x4d91820f // st1 {v15.s}[2], [x16], x17
	WORD $0x4d91920f // st1 {v15.s}[3], [x16], x17
	WORD $0x91000484 // add x4, x4, #1
	WORD $0x8b0200a5 // add x5, x5, x2
	WORD $0xf100209f // cmp x4, #8
	BNE row
	WORD $0x912b0000 // add x0, x0, #2752
	WORD $0x9102c021 // add x1, x1, #176
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packQ6KNEON(dst, w *byte, rb, nb int)
TEXT ·packQ6KNEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	WORD $0xd2800411 // mov x17, #32
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
block:
	WORD $0xd2800004 // mov x4, #0
	WORD $0xaa0103e5 // mov x5, x1
row:
	WORD $0x3dc030b6 // ldr q22, [x5, #192]
	WORD $0x0f08a6d0 // sxtl v16.8h, v22.8b
	WORD $0x4f08a6d1 // sxtl2 v17.8h, v22.16b
	WORD $0x4f155612 // shl v18.8h, v16.8h, #5
	WORD $0x4f155633 // shl v19.8h, v17.8h, #5
	WORD $0x7d41a0b4 // ldr h20, [x5, #208]
	WORD $0x1ee24294 // fcvt s20, h20
	WORD $0x2f00e415 // movi d21, #0
	WORD $0x91200010 // add x16, x0, #2048
	WORD $0x8b040a10 // add x16, x16, x4, lsl #2
	WORD $0x0f10a616 // sxtl v22.4s, v16.4h
	WORD $0x4f10a617 // sxtl2 v23.4s, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x0f10a636 // sxtl v22.4s, v17.4h
	WORD $0x4f10a637 // sxtl2 v23.4s, v17.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x4e503a16 // zip1 v22.8h, v16.8h, v16.8h
	WORD $0x4e507a17 // zip2 v23.8h, v16.8h, v16.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x4e513a36 // zip1 v22.8h, v17.8h, v17.8h
	WORD $0x4e517a37 // zip2 v23.8h, v17.8h, v17.8h
	WORD $0x0d918216 // st1 {v22.s}[0], [x16], x17
	WORD $0x0d919216 // st1 {v22.s}[1], [x16], x17
	WORD $0x4d918216 // st1 {v22.s}[2], [x16], x17
	WORD $0x4d919216 // st1 {v22.s}[3], [x16], x17
	WORD $0x0d918217 // st1 {v23.s}[0], [x16], x17
	WORD $0x0d919217 // st1 {v23.s}[1], [x16], x17
	WORD $0x4d918217 // st1 {v23.s}[2], [x16], x17
	WORD $0x4d919217 // st1 {v23.s}[3], [x16], x17
	WORD $0x0d918212 // st1 {v18.s}[0], [x16], x17
	WORD $0x0d919212 // st1 {v18.s}[1], [x16], x17
	WORD $0x4d918212 // st1 {v18.s}[2], [x16], x17
	WORD $0x4d919212 // st1 {v18.s}[3], [x16], x17
	WORD $0x0d918213 // st1 {v19.s}[0], [x16], x17
	WORD $0x0d919213 // st1 {v19.s}[1], [x16], x17
	WORD $0x4d918213 // st1 {v19.s}[2], [x16], x17
	WORD $0x4d919213 // st1 {v19.s}[3], [x16], x17
	WORD $0x0d918214 // st1 {v20.s}[0], [x16], x17
	WORD $0x0d008215 // st1 {v21.s}[0], [x16]
	WORD $0x4f01e61d // movi v29.16b, #0x30
	WORD $0x3dc020b8 // ldr q24, [x5, #128]
	WORD $0x3dc000a0 // ldr q0, [x5, #0]
	WORD $0x6f0c0404 // ushr v4.16b, v0.16b, #4
	WORD $0x4e3e1c00 // and v0.16b, v0.16b, v30.16b
	WORD $0x4f0c571a // shl v26.16b, v24.16b, #4
	WORD $0x4eb81f1b // mov v27.16b, v24.16b
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c00 // orr v0.16b, v0.16b, v26.16b
	WORD $0x4ebb1c84 // orr v4.16b, v4.16b, v27.16b
	WORD $0x3dc008a2 // ldr q2, [x5, #32]
	WORD $0x6f0c0446 // ushr v6.16b, v2.16b, #4
	WORD $0x4e3e1c42 // and v2.16b, v2.16b, v30.16b
	WORD $0x4f0a571a // shl v26.16b, v24.16b, #2
	WORD $0x6f0e071b // ushr v27.16b, v24.16b, #2
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c42 // orr v2.16b, v2.16b, v26.16b
	WORD $0x4ebb1cc6 // orr v6.16b, v6.16b, v27.16b
	WORD $0x3dc024b8 // ldr q24, [x5, #144]
	WORD $0x3dc004a1 // ldr q1, [x5, #16]
	WORD $0x6f0c0425 // ushr v5.16b, v1.16b, #4
	WORD $0x4e3e1c21 // and v1.16b, v1.16b, v30.16b
	WORD $0x4f0c571a // shl v26.16b, v24.16b, #4
	WORD $0x4eb81f1b // mov v27.16b, v24.16b
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c21 // orr v1.16b, v1.16b, v26.16b
	WORD $0x4ebb1ca5 // orr v5.16b, v5.16b, v27.16b
	WORD $0x3dc00ca3 // ldr q3, [x5, #48]
	WORD $0x6f0c0467 // ushr v7.16b, v3.16b, #4
	WORD $0x4e3e1c63 // and v3.16b, v3.16b, v30.16b
	WORD $0x4f0a571a // shl v26.16b, v24.16b, #2
	WORD $0x6f0e071b // ushr v27.16b, v24.16b, #2
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1c63 // orr v3.16b, v3.16b, v26.16b
	WORD $0x4ebb1ce7 // orr v7.16b, v7.16b, v27.16b
	WORD $0x3dc028b8 // ldr q24, [x5, #160]
	WORD $0x3dc010a8 // ldr q8, [x5, #64]
	WORD $0x6f0c050c // ushr v12.16b, v8.16b, #4
	WORD $0x4e3e1d08 // and v8.16b, v8.16b, v30.16b
	WORD $0x4f0c571a // shl v26.16b, v24.16b, #4
	WORD $0x4eb81f1b // mov v27.16b, v24.16b
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d08 // orr v8.16b, v8.16b, v26.16b
	WORD $0x4ebb1d8c // orr v12.16b, v12.16b, v27.16b
	WORD $0x3dc018aa // ldr q10, [x5, #96]
	WORD $0x6f0c054e // ushr v14.16b, v10.16b, #4
	WORD $0x4e3e1d4a // and v10.16b, v10.16b, v30.16b
	WORD $0x4f0a571a // shl v26.16b, v24.16b, #2
	WORD $0x6f0e071b // ushr v27.16b, v24.16b, #2
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d4a // orr v10.16b, v10.16b, v26.16b
	WORD $0x4ebb1dce // orr v14.16b, v14.16b, v27.16b
	WORD $0x3dc02cb8 // ldr q24, [x5, #176]
	WORD $0x3dc014a9 // ldr q9, [x5, #80]
	WORD $0x6f0c052d // ushr v13.16b, v9.16b, #4
	WORD $0x4e3e1d29 // and v9.16b, v9.16b, v30.16b
	WORD $0x4f0c571a // shl v26.16b, v24.16b, #4
	WORD $0x4eb81f1b // mov v27.16b, v24.16b
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d29 // orr v9.16b, v9.16b, v26.16b
	WORD $0x4ebb1dad // orr v13.16b, v13.16b, v27.16b
	WORD $0x3dc01cab // ldr q11, [x5, #112]
	WORD $0x6f0c056f // ushr v15.16b, v11.16b, #4
	WORD $0x4e3e1d6b // and v11.16b, v11.16b, v30.16b
	WORD $0x4f0a571a // shl v26.16b, v24.16b, #2
	WORD $0x6f0e071b // ushr v27.16b, v24.16b, #2
	WORD $0x4e3d1f5a // and v26.16b, v26.16b, v29.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4eba1d6b // orr v11.16b, v11.16b, v26.16b
	WORD $0x4ebb1def // orr v15.16b, v15.16b, v27.16b
	WORD $0x8b040810 // add x16, x0, x4, lsl #2
	WORD $0x0d918200 // st1 {v0.s}[0], [x16], x17
	WORD $0x0d919200 // st1 {v0.s}[1], [x16], x17
	WORD $0x4d918200 // st1 {v0.s}[2], [x16], x17
	WORD $0x4d919200 // st1 {v0.s}[3], [x16], x17
	WORD $0x0d918201 // st1 {v1.s}[0], [x16], x17
	WORD $0x0d919201 // st1 {v1.s}[1], [x16], x17
	WORD $0x4d918201 // st1 {v1.s}[2], [x16], x17
	WORD $0x4d919201 // st1 {v1.s}[3], [x16], x17
	WORD $0x0d918202 // st1 {v2.s}[0], [x16], x17
	WORD $0x0d919202 // st1 {v2.s}[1], [x16], x17
	WORD $0x4d918202 // st1 {v2.s}[2], [x16], x17
	WORD $0x4d919202 // st1 {v2.s}[3], [x16], x17
	WORD $0x0d918203 // st1 {v3.s}[0], [x16], x17
	WORD $0x0d919203 // st1 {v3.s}[1], [x16], x17
	WORD $0x4d918203 // st1 {v3.s}[2], [x16], x17
	WORD $0x4d919203 // st1 {v3.s}[3], [x16], x17
	WORD $0x0d918204 // st1 {v4.s}[0], [x16], x17
	WORD $0x0d919204 // st1 {v4.s}[1], [x16], x17
	WORD $0x4d918204 // st1 {v4.s}[2], [x16], x17
	WORD $0x4d919204 // st1 {v4.s}[3], [x16], x17
	WORD $0x0d918205 // st1 {v5.s}[0], [x16], x17
	WORD $0x0d919205 // st1 {v5.s}[1], [x16], x17
	WORD $0x4d918205 // st1 {v5.s}[2], [x16], x17
	WORD $0x4d919205 // st1 {v5.s}[3], [x16], x17
	WORD $0x0d918206 // st1 {v6.s}[0], [x16], x17
	WORD $0x0d919206 // st1 {v6.s}[1], [x16], x17
	WORD $0x4d918206 // st1 {v6.s}[2], [x16], x17
	WORD $0x4d919206 // st1 {v6.s}[3], [x16], x17
	WORD $0x0d918207 // st1 {v7.s}[0], [x16], x17
	WORD $0x0d919207 // st1 {v7.s}[1], [x16], x17
	WORD $0x4d918207 // st1 {v7.s}[2], [x16], x17
	WORD $0x4d919207 // st1 {v7.s}[3], [x16], x17
	WORD $0x0d918208 // st1 {v8.s}[0], [x16], x17
	WORD $0x0d919208 // st1 {v8.s}[1], [x16], x17
	WORD $0x4d918208 // st1 {v8.s}[2], [x16], x17
	WORD $0x4d919208 // st1 {v8.s}[3], [x16], x17
	WORD $0x0d918209 // st1 {v9.s}[0], [x16], x17
	WORD $0x0d919209 // st1 {v9.s}[1], [x16], x17
	WORD $0x4d918209 // st1 {v9.s}[2], [x16], x17
	WORD $0x4d919209 // st1 {v9.s}[3], [x16], x17
	WORD $0x0d91820a // st1 {v10.s}[0], [x16], x17
	WORD $0x0d91920a // st1 {v10.s}[1], [x16], x17
	WORD $0x4d91820a // st1 {v10.s}[2], [x16], x17
	WORD $0x4d91920a // st1 {v10.s}[3], [x16], x17
	WORD $0x0d91820b // st1 {v11.s}[0], [x16], x17
	WORD $0x0d91920b // st1 {v11.s}[1], [x16], x17
	WORD $0x4d91820b // st1 {v11.s}[2], [x16], x17
	WORD $0x4d91920b // st1 {v11.s}[3], [x16], x17
	WORD $0x0d91820c // st1 {v12.s}[0], [x16], x17
	WORD $0x0d91920c // st1 {v12.s}[1], [x16], x17
	WORD $0x4d91820c // st1 {v12.s}[2], [x16], x17
	WORD $0x4d91920c // st1 {v12.s}[3], [x16], x17
	WORD $0x0d91820d // st1 {v13.s}[0], [x16], x17
	WORD $0x0d91920d // st1 {v13.s}[1], [x16], x17
	WORD $0x4d91820d // st1 {v13.s}[2], [x16], x17
	WORD $0x4d91920d // st1 {v13.s}[3], [x16], x17
	WORD $0x0d91820e // st1 {v14.s}[0], [x16], x17
	WORD $0x0d91920e // st1 {v14.s}[1], [x16], x17
	WORD $0x4d91820e // st1 {v14.s}[2], [x16], x17
	WORD $0x4d91920e // st1 {v14.s}[3], [x16], x17
	WORD $0x0d91820f // st1 {v15.s}[0], [x16], x17
	WORD $0x0d91920f // st1 {v15.s}[1], [x16], x17
	WORD $0x4d91820f // st1 {v15.s}[2], [x16], x17
	WORD $0x4d91920f // st1 {v15.s}[3], [x16], x17
	WORD $0x91000484 // add x4, x4, #1
	WORD $0x8b0200a5 // add x5, x5, x2
	WORD $0xf100209f // cmp x4, #8
	BNE row
	WORD $0x91350000 // add x0, x0, #3392
	WORD $0x91034821 // add x1, x1, #210
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

