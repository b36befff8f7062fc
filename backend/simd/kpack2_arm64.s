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

// func packQ2KNEON(dst, w *byte, rb, nb int)
TEXT ·packQ2KNEON(SB), NOSPLIT, $0-32
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
	WORD $0x3dc000b6 // ldr q22, [x5]
	WORD $0x4e3e1ed7 // and v23.16b, v22.16b, v30.16b
	WORD $0x6f0c06d6 // ushr v22.16b, v22.16b, #4
	WORD $0x2f08a6f0 // uxtl v16.8h, v23.8b
	WORD $0x6f08a6f1 // uxtl2 v17.8h, v23.16b
	WORD $0x2f08a6d2 // uxtl v18.8h, v22.8b
	WORD $0x6f08a6d3 // uxtl2 v19.8h, v22.16b
	WORD $0x7d40a0b4 // ldr h20, [x5, #80]
	WORD $0x1ee24294 // fcvt s20, h20
	WORD $0x7d40a4b5 // ldr h21, [x5, #82]
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
	WORD $0x4f00e47c // movi v28.16b, #3
	WORD $0x3dc004ba // ldr q26, [x5, #16]
	WORD $0x4e3c1f40 // and v0.16b, v26.16b, v28.16b
	WORD $0x6f0e0742 // ushr v2.16b, v26.16b, #2
	WORD $0x4e3c1c42 // and v2.16b, v2.16b, v28.16b
	WORD $0x6f0c0744 // ushr v4.16b, v26.16b, #4
	WORD $0x4e3c1c84 // and v4.16b, v4.16b, v28.16b
	WORD $0x6f0a0746 // ushr v6.16b, v26.16b, #6
	WORD $0x3dc008ba // ldr q26, [x5, #32]
	WORD $0x4e3c1f41 // and v1.16b, v26.16b, v28.16b
	WORD $0x6f0e0743 // ushr v3.16b, v26.16b, #2
	WORD $0x4e3c1c63 // and v3.16b, v3.16b, v28.16b
	WORD $0x6f0c0745 // ushr v5.16b, v26.16b, #4
	WORD $0x4e3c1ca5 // and v5.16b, v5.16b, v28.16b
	WORD $0x6f0a0747 // ushr v7.16b, v26.16b, #6
	WORD $0x3dc00cba // ldr q26, [x5, #48]
	WORD $0x4e3c1f48 // and v8.16b, v26.16b, v28.16b
	WORD $0x6f0e074a // ushr v10.16b, v26.16b, #2
	WORD $0x4e3c1d4a // and v10.16b, v10.16b, v28.16b
	WORD $0x6f0c074c // ushr v12.16b, v26.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0a074e // ushr v14.16b, v26.16b, #6
	WORD $0x3dc010ba // ldr q26, [x5, #64]
	WORD $0x4e3c1f49 // and v9.16b, v26.16b, v28.16b
	WORD $0x6f0e074b // ushr v11.16b, v26.16b, #2
	WORD $0x4e3c1d6b // and v11.16b, v11.16b, v28.16b
	WORD $0x6f0c074d // ushr v13.16b, v26.16b, #4
	WORD $0x4e3c1dad // and v13.16b, v13.16b, v28.16b
	WORD $0x6f0a074f // ushr v15.16b, v26.16b, #6
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
	WORD $0x91015021 // add x1, x1, #84
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packQ3KNEON(dst, w *byte, rb, nb int)
TEXT ·packQ3KNEON(SB), NOSPLIT, $0-32
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
	WORD $0xf84600ad // ldur x13, [x5, #96]
	WORD $0xb94068ae // ldr w14, [x5, #104]
	WORD $0xd360fdaf // lsr x15, x13, #32
	WORD $0x1200cda6 // and w6, w13, #0x0f0f0f0f
	WORD $0x1200c5c7 // and w7, w14, #0x03030303
	WORD $0x2a0710c6 // orr w6, w6, w7, lsl #4
	WORD $0x1200cde7 // and w7, w15, #0x0f0f0f0f
	WORD $0x53027dc8 // lsr w8, w14, #2
	WORD $0x1200c508 // and w8, w8, #0x03030303
	WORD $0x2a0810e7 // orr w7, w7, w8, lsl #4
	WORD $0x53047da8 // lsr w8, w13, #4
	WORD $0x1200cd08 // and w8, w8, #0x0f0f0f0f
	WORD $0x53047dc9 // lsr w9, w14, #4
	WORD $0x1200c529 // and w9, w9, #0x03030303
	WORD $0x2a091108 // orr w8, w8, w9, lsl #4
	WORD $0x53047de9 // lsr w9, w15, #4
	WORD $0x1200cd29 // and w9, w9, #0x0f0f0f0f
	WORD $0x53067dca // lsr w10, w14, #6
	WORD $0x1200c54a // and w10, w10, #0x03030303
	WORD $0x2a0a1129 // orr w9, w9, w10, lsl #4
	WORD $0xaa0780c6 // orr x6, x6, x7, lsl #32
	WORD $0xaa098108 // orr x8, x8, x9, lsl #32
	WORD $0x9e6700d6 // fmov d22, x6
	WORD $0x4e181d16 // mov v22.d[1], x8
	WORD $0x4f01e417 // movi v23.16b, #32
	WORD $0x6e3786d6 // sub v22.16b, v22.16b, v23.16b
	WORD $0x0f08a6d0 // sxtl v16.8h, v22.8b
	WORD $0x4f08a6d1 // sxtl2 v17.8h, v22.16b
	WORD $0x4f125612 // shl v18.8h, v16.8h, #2
	WORD $0x4f125633 // shl v19.8h, v17.8h, #2
	WORD $0x7d40d8b4 // ldr h20, [x5, #108]
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
	WORD $0x4f00e47c // movi v28.16b, #3
	WORD $0xad4064b8 // ldp q24, q25, [x5]
	WORD $0x4f00e49d // movi v29.16b, #4
	WORD $0x3dc008ba // ldr q26, [x5, #32]
	WORD $0x4e3c1f40 // and v0.16b, v26.16b, v28.16b
	WORD $0x4f0a571b // shl v27.16b, v24.16b, #2
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1c00 // orr v0.16b, v0.16b, v27.16b
	WORD $0x6f0e0742 // ushr v2.16b, v26.16b, #2
	WORD $0x4e3c1c42 // and v2.16b, v2.16b, v28.16b
	WORD $0x4f09571b // shl v27.16b, v24.16b, #1
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1c42 // orr v2.16b, v2.16b, v27.16b
	WORD $0x6f0c0744 // ushr v4.16b, v26.16b, #4
	WORD $0x4e3c1c84 // and v4.16b, v4.16b, v28.16b
	WORD $0x4eb81f1b // mov v27.16b, v24.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1c84 // orr v4.16b, v4.16b, v27.16b
	WORD $0x6f0a0746 // ushr v6.16b, v26.16b, #6
	WORD $0x6f0f071b // ushr v27.16b, v24.16b, #1
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1cc6 // orr v6.16b, v6.16b, v27.16b
	WORD $0x3dc00cba // ldr q26, [x5, #48]
	WORD $0x4e3c1f41 // and v1.16b, v26.16b, v28.16b
	WORD $0x4f0a573b // shl v27.16b, v25.16b, #2
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1c21 // orr v1.16b, v1.16b, v27.16b
	WORD $0x6f0e0743 // ushr v3.16b, v26.16b, #2
	WORD $0x4e3c1c63 // and v3.16b, v3.16b, v28.16b
	WORD $0x4f09573b // shl v27.16b, v25.16b, #1
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1c63 // orr v3.16b, v3.16b, v27.16b
	WORD $0x6f0c0745 // ushr v5.16b, v26.16b, #4
	WORD $0x4e3c1ca5 // and v5.16b, v5.16b, v28.16b
	WORD $0x4eb91f3b // mov v27.16b, v25.16b
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1ca5 // orr v5.16b, v5.16b, v27.16b
	WORD $0x6f0a0747 // ushr v7.16b, v26.16b, #6
	WORD $0x6f0f073b // ushr v27.16b, v25.16b, #1
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1ce7 // orr v7.16b, v7.16b, v27.16b
	WORD $0x3dc010ba // ldr q26, [x5, #64]
	WORD $0x4e3c1f48 // and v8.16b, v26.16b, v28.16b
	WORD $0x6f0e071b // ushr v27.16b, v24.16b, #2
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1d08 // orr v8.16b, v8.16b, v27.16b
	WORD $0x6f0e074a // ushr v10.16b, v26.16b, #2
	WORD $0x4e3c1d4a // and v10.16b, v10.16b, v28.16b
	WORD $0x6f0d071b // ushr v27.16b, v24.16b, #3
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1d4a // orr v10.16b, v10.16b, v27.16b
	WORD $0x6f0c074c // ushr v12.16b, v26.16b, #4
	WORD $0x4e3c1d8c // and v12.16b, v12.16b, v28.16b
	WORD $0x6f0c071b // ushr v27.16b, v24.16b, #4
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1d8c // orr v12.16b, v12.16b, v27.16b
	WORD $0x6f0a074e // ushr v14.16b, v26.16b, #6
	WORD $0x6f0b071b // ushr v27.16b, v24.16b, #5
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1dce // orr v14.16b, v14.16b, v27.16b
	WORD $0x3dc014ba // ldr q26, [x5, #80]
	WORD $0x4e3c1f49 // and v9.16b, v26.16b, v28.16b
	WORD $0x6f0e073b // ushr v27.16b, v25.16b, #2
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1d29 // orr v9.16b, v9.16b, v27.16b
	WORD $0x6f0e074b // ushr v11.16b, v26.16b, #2
	WORD $0x4e3c1d6b // and v11.16b, v11.16b, v28.16b
	WORD $0x6f0d073b // ushr v27.16b, v25.16b, #3
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1d6b // orr v11.16b, v11.16b, v27.16b
	WORD $0x6f0c074d // ushr v13.16b, v26.16b, #4
	WORD $0x4e3c1dad // and v13.16b, v13.16b, v28.16b
	WORD $0x6f0c073b // ushr v27.16b, v25.16b, #4
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
	WORD $0x4ebb1dad // orr v13.16b, v13.16b, v27.16b
	WORD $0x6f0a074f // ushr v15.16b, v26.16b, #6
	WORD $0x6f0b073b // ushr v27.16b, v25.16b, #5
	WORD $0x4e3d1f7b // and v27.16b, v27.16b, v29.16b
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
	WORD $0x9101b821 // add x1, x1, #110
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

DATA iq4xsShiftsP<>+0(SB)/8, $0xfffafffcfffe0000
DATA iq4xsShiftsP<>+8(SB)/8, $0xfff2fff4fff6fff8
GLOBL iq4xsShiftsP<>(SB), RODATA|NOPTR, $16

// func packIQ4XSNEON(dst, w *byte, rb, nb int, kv *[16]int8)
TEXT ·packIQ4XSNEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD kv+32(FP), R4
	WORD $0x3dc0009c // ldr q28, [x4]
	MOVD $iq4xsShiftsP<>(SB), R4
	WORD $0x3dc0009f // ldr q31, [x4]
	WORD $0xd2800411 // mov x17, #32
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
block:
	WORD $0xd2800004 // mov x4, #0
	WORD $0xaa0103e5 // mov x5, x1
row:
	WORD $0xbd4004b6 // ldr s22, [x5, #4]
	WORD $0x2f0c06d7 // ushr v23.8b, v22.8b, #4
	WORD $0x0e3e1ed6 // and v22.8b, v22.8b, v30.8b
	WORD $0x4e173ad6 // zip1 v22.16b, v22.16b, v23.16b
	WORD $0x794004ad // ldrh w13, [x5, #2]
	WORD $0x4e020db7 // dup v23.8h, w13
	WORD $0x6e7f46f7 // ushl v23.8h, v23.8h, v31.8h
	WORD $0x4f008478 // movi v24.8h, #3
	WORD $0x4e381ef7 // and v23.16b, v23.16b, v24.16b
	WORD $0x0e212af7 // xtn v23.8b, v23.8h
	WORD $0x0f0c56f7 // shl v23.8b, v23.8b, #4
	WORD $0x0eb71ed6 // orr v22.8b, v22.8b, v23.8b
	WORD $0x0f01e417 // movi v23.8b, #32
	WORD $0x2e3786d6 // sub v22.8b, v22.8b, v23.8b
	WORD $0x0f08a6d0 // sxtl v16.8h, v22.8b
	WORD $0x4f175612 // shl v18.8h, v16.8h, #7
	WORD $0x7d4000b4 // ldr h20, [x5]
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
	WORD $0x4f04e41d // movi v29.16b, #0x80
	WORD $0x3cc080a0 // ldr q0, [x5, #8]
	WORD $0x6f0c0401 // ushr v1.16b, v0.16b, #4
	WORD $0x4e3e1c00 // and v0.16b, v0.16b, v30.16b
	WORD $0x4e000380 // tbl v0.16b, {v28.16b}, v0.16b
	WORD $0x4e010381 // tbl v1.16b, {v28.16b}, v1.16b
	WORD $0x6e3d1c00 // eor v0.16b, v0.16b, v29.16b
	WORD $0x6e3d1c21 // eor v1.16b, v1.16b, v29.16b
	WORD $0x3cc180a2 // ldr q2, [x5, #24]
	WORD $0x6f0c0443 // ushr v3.16b, v2.16b, #4
	WORD $0x4e3e1c42 // and v2.16b, v2.16b, v30.16b
	WORD $0x4e020382 // tbl v2.16b, {v28.16b}, v2.16b
	WORD $0x4e030383 // tbl v3.16b, {v28.16b}, v3.16b
	WORD $0x6e3d1c42 // eor v2.16b, v2.16b, v29.16b
	WORD $0x6e3d1c63 // eor v3.16b, v3.16b, v29.16b
	WORD $0x3cc280a4 // ldr q4, [x5, #40]
	WORD $0x6f0c0485 // ushr v5.16b, v4.16b, #4
	WORD $0x4e3e1c84 // and v4.16b, v4.16b, v30.16b
	WORD $0x4e040384 // tbl v4.16b, {v28.16b}, v4.16b
	WORD $0x4e050385 // tbl v5.16b, {v28.16b}, v5.16b
	WORD $0x6e3d1c84 // eor v4.16b, v4.16b, v29.16b
	WORD $0x6e3d1ca5 // eor v5.16b, v5.16b, v29.16b
	WORD $0x3cc380a6 // ldr q6, [x5, #56]
	WORD $0x6f0c04c7 // ushr v7.16b, v6.16b, #4
	WORD $0x4e3e1cc6 // and v6.16b, v6.16b, v30.16b
	WORD $0x4e060386 // tbl v6.16b, {v28.16b}, v6.16b
	WORD $0x4e070387 // tbl v7.16b, {v28.16b}, v7.16b
	WORD $0x6e3d1cc6 // eor v6.16b, v6.16b, v29.16b
	WORD $0x6e3d1ce7 // eor v7.16b, v7.16b, v29.16b
	WORD $0x3cc480a8 // ldr q8, [x5, #72]
	WORD $0x6f0c0509 // ushr v9.16b, v8.16b, #4
	WORD $0x4e3e1d08 // and v8.16b, v8.16b, v30.16b
	WORD $0x4e080388 // tbl v8.16b, {v28.16b}, v8.16b
	WORD $0x4e090389 // tbl v9.16b, {v28.16b}, v9.16b
	WORD $0x6e3d1d08 // eor v8.16b, v8.16b, v29.16b
	WORD $0x6e3d1d29 // eor v9.16b, v9.16b, v29.16b
	WORD $0x3cc580aa // ldr q10, [x5, #88]
	WORD $0x6f0c054b // ushr v11.16b, v10.16b, #4
	WORD $0x4e3e1d4a // and v10.16b, v10.16b, v30.16b
	WORD $0x4e0a038a // tbl v10.16b, {v28.16b}, v10.16b
	WORD $0x4e0b038b // tbl v11.16b, {v28.16b}, v11.16b
	WORD $0x6e3d1d4a // eor v10.16b, v10.16b, v29.16b
	WORD $0x6e3d1d6b // eor v11.16b, v11.16b, v29.16b
	WORD $0x3cc680ac // ldr q12, [x5, #104]
	WORD $0x6f0c058d // ushr v13.16b, v12.16b, #4
	WORD $0x4e3e1d8c // and v12.16b, v12.16b, v30.16b
	WORD $0x4e0c038c // tbl v12.16b, {v28.16b}, v12.16b
	WORD $0x4e0d038d // tbl v13.16b, {v28.16b}, v13.16b
	WORD $0x6e3d1d8c // eor v12.16b, v12.16b, v29.16b
	WORD $0x6e3d1dad // eor v13.16b, v13.16b, v29.16b
	WORD $0x3cc780ae // ldr q14, [x5, #120]
	WORD $0x6f0c05cf // ushr v15.16b, v14.16b, #4
	WORD $0x4e3e1dce // and v14.16b, v14.16b, v30.16b
	WORD $0x4e0e038e // tbl v14.16b, {v28.16b}, v14.16b
	WORD $0x4e0f038f // tbl v15.16b, {v28.16b}, v15.16b
	WORD $0x6e3d1dce // eor v14.16b, v14.16b, v29.16b
	WORD $0x6e3d1def // eor v15.16b, v15.16b, v29.16b
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
	WORD $0x91022021 // add x1, x1, #136
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

