//go:build arm64 && !purego

#include "textflag.h"

// The packers of the Q8_0-like tile (packQ8Go's layout) for Q4_0, Q5_0,
// IQ4_NL and MXFP4: eight rows of rb bytes, nb blocks each, from w into
// dst. Per block each row's 32 values are decoded to int8 as by the
// matrix-vector kernels, offset by 128 (EOR), and the eight rows'
// vectors transposed by 4-byte groups (TRN1/TRN2) so that vector k holds
// every row's values 4k..4k+3; then the rows' scales as float32. nb > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.

// The bit masks of Q5_0's fifth bits: see l32qh in lmatvec_arm64.s.
DATA l32qhp<>+0(SB)/8, $0x0000000000000000
DATA l32qhp<>+8(SB)/8, $0x0101010101010101
DATA l32qhp<>+16(SB)/8, $0x0202020202020202
DATA l32qhp<>+24(SB)/8, $0x0303030303030303
DATA l32qhp<>+32(SB)/8, $0x8040201008040201
DATA l32qhp<>+40(SB)/8, $0x8040201008040201
GLOBL l32qhp<>(SB), RODATA|NOPTR, $48

// func packQ4_0NEON(dst, w *byte, rb, nb int)
TEXT ·packQ4_0NEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0x8b020109 // add x9, x8, x2
	WORD $0x8b02012a // add x10, x9, x2
	WORD $0x8b02014b // add x11, x10, x2
	WORD $0x8b02016c // add x12, x11, x2
	WORD $0x8b02018d // add x13, x12, x2
	WORD $0x8b0201ae // add x14, x13, x2
	WORD $0x8b0201cf // add x15, x14, x2
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f04e41d // movi v29.16b, #0x80
	WORD $0x4f00e51c // movi v28.16b, #8
block:
	WORD $0x7d400110 // ldr h16, [x8]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010010 // str s16, [x0, #256]
	WORD $0x3cc02101 // ldur q1, [x8, #2]
	WORD $0x91004908 // add x8, x8, #18
	WORD $0x4e3e1c20 // and v0.16b, v1.16b, v30.16b
	WORD $0x6f0c0421 // ushr v1.16b, v1.16b, #4
	WORD $0x6e3c8400 // sub v0.16b, v0.16b, v28.16b
	WORD $0x6e3c8421 // sub v1.16b, v1.16b, v28.16b
	WORD $0x6e3d1c00 // eor v0.16b, v0.16b, v29.16b
	WORD $0x6e3d1c21 // eor v1.16b, v1.16b, v29.16b
	WORD $0x7d400130 // ldr h16, [x9]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010410 // str s16, [x0, #260]
	WORD $0x3cc02123 // ldur q3, [x9, #2]
	WORD $0x91004929 // add x9, x9, #18
	WORD $0x4e3e1c62 // and v2.16b, v3.16b, v30.16b
	WORD $0x6f0c0463 // ushr v3.16b, v3.16b, #4
	WORD $0x6e3c8442 // sub v2.16b, v2.16b, v28.16b
	WORD $0x6e3c8463 // sub v3.16b, v3.16b, v28.16b
	WORD $0x6e3d1c42 // eor v2.16b, v2.16b, v29.16b
	WORD $0x6e3d1c63 // eor v3.16b, v3.16b, v29.16b
	WORD $0x7d400150 // ldr h16, [x10]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010810 // str s16, [x0, #264]
	WORD $0x3cc02145 // ldur q5, [x10, #2]
	WORD $0x9100494a // add x10, x10, #18
	WORD $0x4e3e1ca4 // and v4.16b, v5.16b, v30.16b
	WORD $0x6f0c04a5 // ushr v5.16b, v5.16b, #4
	WORD $0x6e3c8484 // sub v4.16b, v4.16b, v28.16b
	WORD $0x6e3c84a5 // sub v5.16b, v5.16b, v28.16b
	WORD $0x6e3d1c84 // eor v4.16b, v4.16b, v29.16b
	WORD $0x6e3d1ca5 // eor v5.16b, v5.16b, v29.16b
	WORD $0x7d400170 // ldr h16, [x11]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010c10 // str s16, [x0, #268]
	WORD $0x3cc02167 // ldur q7, [x11, #2]
	WORD $0x9100496b // add x11, x11, #18
	WORD $0x4e3e1ce6 // and v6.16b, v7.16b, v30.16b
	WORD $0x6f0c04e7 // ushr v7.16b, v7.16b, #4
	WORD $0x6e3c84c6 // sub v6.16b, v6.16b, v28.16b
	WORD $0x6e3c84e7 // sub v7.16b, v7.16b, v28.16b
	WORD $0x6e3d1cc6 // eor v6.16b, v6.16b, v29.16b
	WORD $0x6e3d1ce7 // eor v7.16b, v7.16b, v29.16b
	WORD $0x7d400190 // ldr h16, [x12]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011010 // str s16, [x0, #272]
	WORD $0x3cc02189 // ldur q9, [x12, #2]
	WORD $0x9100498c // add x12, x12, #18
	WORD $0x4e3e1d28 // and v8.16b, v9.16b, v30.16b
	WORD $0x6f0c0529 // ushr v9.16b, v9.16b, #4
	WORD $0x6e3c8508 // sub v8.16b, v8.16b, v28.16b
	WORD $0x6e3c8529 // sub v9.16b, v9.16b, v28.16b
	WORD $0x6e3d1d08 // eor v8.16b, v8.16b, v29.16b
	WORD $0x6e3d1d29 // eor v9.16b, v9.16b, v29.16b
	WORD $0x7d4001b0 // ldr h16, [x13]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011410 // str s16, [x0, #276]
	WORD $0x3cc021ab // ldur q11, [x13, #2]
	WORD $0x910049ad // add x13, x13, #18
	WORD $0x4e3e1d6a // and v10.16b, v11.16b, v30.16b
	WORD $0x6f0c056b // ushr v11.16b, v11.16b, #4
	WORD $0x6e3c854a // sub v10.16b, v10.16b, v28.16b
	WORD $0x6e3c856b // sub v11.16b, v11.16b, v28.16b
	WORD $0x6e3d1d4a // eor v10.16b, v10.16b, v29.16b
	WORD $0x6e3d1d6b // eor v11.16b, v11.16b, v29.16b
	WORD $0x7d4001d0 // ldr h16, [x14]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011810 // str s16, [x0, #280]
	WORD $0x3cc021cd // ldur q13, [x14, #2]
	WORD $0x910049ce // add x14, x14, #18
	WORD $0x4e3e1dac // and v12.16b, v13.16b, v30.16b
	WORD $0x6f0c05ad // ushr v13.16b, v13.16b, #4
	WORD $0x6e3c858c // sub v12.16b, v12.16b, v28.16b
	WORD $0x6e3c85ad // sub v13.16b, v13.16b, v28.16b
	WORD $0x6e3d1d8c // eor v12.16b, v12.16b, v29.16b
	WORD $0x6e3d1dad // eor v13.16b, v13.16b, v29.16b
	WORD $0x7d4001f0 // ldr h16, [x15]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011c10 // str s16, [x0, #284]
	WORD $0x3cc021ef // ldur q15, [x15, #2]
	WORD $0x910049ef // add x15, x15, #18
	WORD $0x4e3e1dee // and v14.16b, v15.16b, v30.16b
	WORD $0x6f0c05ef // ushr v15.16b, v15.16b, #4
	WORD $0x6e3c85ce // sub v14.16b, v14.16b, v28.16b
	WORD $0x6e3c85ef // sub v15.16b, v15.16b, v28.16b
	WORD $0x6e3d1dce // eor v14.16b, v14.16b, v29.16b
	WORD $0x6e3d1def // eor v15.16b, v15.16b, v29.16b
	WORD $0x4e822810 // trn1 v16.4s, v0.4s, v2.4s
	WORD $0x4e826811 // trn2 v17.4s, v0.4s, v2.4s
	WORD $0x4e862892 // trn1 v18.4s, v4.4s, v6.4s
	WORD $0x4e866893 // trn2 v19.4s, v4.4s, v6.4s
	WORD $0x4ed22a00 // trn1 v0.2d, v16.2d, v18.2d
	WORD $0x4ed26a04 // trn2 v4.2d, v16.2d, v18.2d
	WORD $0x4ed32a22 // trn1 v2.2d, v17.2d, v19.2d
	WORD $0x4ed36a26 // trn2 v6.2d, v17.2d, v19.2d
	WORD $0x4e8a2910 // trn1 v16.4s, v8.4s, v10.4s
	WORD $0x4e8a6911 // trn2 v17.4s, v8.4s, v10.4s
	WORD $0x4e8e2992 // trn1 v18.4s, v12.4s, v14.4s
	WORD $0x4e8e6993 // trn2 v19.4s, v12.4s, v14.4s
	WORD $0x4ed22a08 // trn1 v8.2d, v16.2d, v18.2d
	WORD $0x4ed26a0c // trn2 v12.2d, v16.2d, v18.2d
	WORD $0x4ed32a2a // trn1 v10.2d, v17.2d, v19.2d
	WORD $0x4ed36a2e // trn2 v14.2d, v17.2d, v19.2d
	WORD $0x4e832830 // trn1 v16.4s, v1.4s, v3.4s
	WORD $0x4e836831 // trn2 v17.4s, v1.4s, v3.4s
	WORD $0x4e8728b2 // trn1 v18.4s, v5.4s, v7.4s
	WORD $0x4e8768b3 // trn2 v19.4s, v5.4s, v7.4s
	WORD $0x4ed22a01 // trn1 v1.2d, v16.2d, v18.2d
	WORD $0x4ed26a05 // trn2 v5.2d, v16.2d, v18.2d
	WORD $0x4ed32a23 // trn1 v3.2d, v17.2d, v19.2d
	WORD $0x4ed36a27 // trn2 v7.2d, v17.2d, v19.2d
	WORD $0x4e8b2930 // trn1 v16.4s, v9.4s, v11.4s
	WORD $0x4e8b6931 // trn2 v17.4s, v9.4s, v11.4s
	WORD $0x4e8f29b2 // trn1 v18.4s, v13.4s, v15.4s
	WORD $0x4e8f69b3 // trn2 v19.4s, v13.4s, v15.4s
	WORD $0x4ed22a09 // trn1 v9.2d, v16.2d, v18.2d
	WORD $0x4ed26a0d // trn2 v13.2d, v16.2d, v18.2d
	WORD $0x4ed32a2b // trn1 v11.2d, v17.2d, v19.2d
	WORD $0x4ed36a2f // trn2 v15.2d, v17.2d, v19.2d
	WORD $0xad002000 // stp q0, q8, [x0, #0]
	WORD $0xad012802 // stp q2, q10, [x0, #32]
	WORD $0xad023004 // stp q4, q12, [x0, #64]
	WORD $0xad033806 // stp q6, q14, [x0, #96]
	WORD $0xad042401 // stp q1, q9, [x0, #128]
	WORD $0xad052c03 // stp q3, q11, [x0, #160]
	WORD $0xad063405 // stp q5, q13, [x0, #192]
	WORD $0xad073c07 // stp q7, q15, [x0, #224]
	WORD $0x91048000 // add x0, x0, #288
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packQ5_0NEON(dst, w *byte, rb, nb int)
TEXT ·packQ5_0NEON(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0x8b020109 // add x9, x8, x2
	WORD $0x8b02012a // add x10, x9, x2
	WORD $0x8b02014b // add x11, x10, x2
	WORD $0x8b02016c // add x12, x11, x2
	WORD $0x8b02018d // add x13, x12, x2
	WORD $0x8b0201ae // add x14, x13, x2
	WORD $0x8b0201cf // add x15, x14, x2
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f04e41d // movi v29.16b, #0x80
	MOVD $l32qhp<>(SB), R4
	WORD $0x4c406098 // ld1 {v24.16b, v25.16b, v26.16b}, [x4]
	WORD $0x4f07e61b // movi v27.16b, #0xf0
block:
	WORD $0x7d400110 // ldr h16, [x8]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010010 // str s16, [x0, #256]
	WORD $0x3cc06101 // ldur q1, [x8, #6]
	WORD $0xbc402111 // ldur s17, [x8, #2]
	WORD $0x91005908 // add x8, x8, #22
	WORD $0x4e3e1c20 // and v0.16b, v1.16b, v30.16b
	WORD $0x6f0c0421 // ushr v1.16b, v1.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21c00 // orr v0.16b, v0.16b, v18.16b
	WORD $0x4eb31c21 // orr v1.16b, v1.16b, v19.16b
	WORD $0x6e3d1c00 // eor v0.16b, v0.16b, v29.16b
	WORD $0x6e3d1c21 // eor v1.16b, v1.16b, v29.16b
	WORD $0x7d400130 // ldr h16, [x9]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010410 // str s16, [x0, #260]
	WORD $0x3cc06123 // ldur q3, [x9, #6]
	WORD $0xbc402131 // ldur s17, [x9, #2]
	WORD $0x91005929 // add x9, x9, #22
	WORD $0x4e3e1c62 // and v2.16b, v3.16b, v30.16b
	WORD $0x6f0c0463 // ushr v3.16b, v3.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21c42 // orr v2.16b, v2.16b, v18.16b
	WORD $0x4eb31c63 // orr v3.16b, v3.16b, v19.16b
	WORD $0x6e3d1c42 // eor v2.16b, v2.16b, v29.16b
	WORD $0x6e3d1c63 // eor v3.16b, v3.16b, v29.16b
	WORD $0x7d400150 // ldr h16, [x10]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010810 // str s16, [x0, #264]
	WORD $0x3cc06145 // ldur q5, [x10, #6]
	WORD $0xbc402151 // ldur s17, [x10, #2]
	WORD $0x9100594a // add x10, x10, #22
	WORD $0x4e3e1ca4 // and v4.16b, v5.16b, v30.16b
	WORD $0x6f0c04a5 // ushr v5.16b, v5.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21c84 // orr v4.16b, v4.16b, v18.16b
	WORD $0x4eb31ca5 // orr v5.16b, v5.16b, v19.16b
	WORD $0x6e3d1c84 // eor v4.16b, v4.16b, v29.16b
	WORD $0x6e3d1ca5 // eor v5.16b, v5.16b, v29.16b
	WORD $0x7d400170 // ldr h16, [x11]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010c10 // str s16, [x0, #268]
	WORD $0x3cc06167 // ldur q7, [x11, #6]
	WORD $0xbc402171 // ldur s17, [x11, #2]
	WORD $0x9100596b // add x11, x11, #22
	WORD $0x4e3e1ce6 // and v6.16b, v7.16b, v30.16b
	WORD $0x6f0c04e7 // ushr v7.16b, v7.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21cc6 // orr v6.16b, v6.16b, v18.16b
	WORD $0x4eb31ce7 // orr v7.16b, v7.16b, v19.16b
	WORD $0x6e3d1cc6 // eor v6.16b, v6.16b, v29.16b
	WORD $0x6e3d1ce7 // eor v7.16b, v7.16b, v29.16b
	WORD $0x7d400190 // ldr h16, [x12]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011010 // str s16, [x0, #272]
	WORD $0x3cc06189 // ldur q9, [x12, #6]
	WORD $0xbc402191 // ldur s17, [x12, #2]
	WORD $0x9100598c // add x12, x12, #22
	WORD $0x4e3e1d28 // and v8.16b, v9.16b, v30.16b
	WORD $0x6f0c0529 // ushr v9.16b, v9.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21d08 // orr v8.16b, v8.16b, v18.16b
	WORD $0x4eb31d29 // orr v9.16b, v9.16b, v19.16b
	WORD $0x6e3d1d08 // eor v8.16b, v8.16b, v29.16b
	WORD $0x6e3d1d29 // eor v9.16b, v9.16b, v29.16b
	WORD $0x7d4001b0 // ldr h16, [x13]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011410 // str s16, [x0, #276]
	WORD $0x3cc061ab // ldur q11, [x13, #6]
	WORD $0xbc4021b1 // ldur s17, [x13, #2]
	WORD $0x910059ad // add x13, x13, #22
	WORD $0x4e3e1d6a // and v10.16b, v11.16b, v30.16b
	WORD $0x6f0c056b // ushr v11.16b, v11.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21d4a // orr v10.16b, v10.16b, v18.16b
	WORD $0x4eb31d6b // orr v11.16b, v11.16b, v19.16b
	WORD $0x6e3d1d4a // eor v10.16b, v10.16b, v29.16b
	WORD $0x6e3d1d6b // eor v11.16b, v11.16b, v29.16b
	WORD $0x7d4001d0 // ldr h16, [x14]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011810 // str s16, [x0, #280]
	WORD $0x3cc061cd // ldur q13, [x14, #6]
	WORD $0xbc4021d1 // ldur s17, [x14, #2]
	WORD $0x910059ce // add x14, x14, #22
	WORD $0x4e3e1dac // and v12.16b, v13.16b, v30.16b
	WORD $0x6f0c05ad // ushr v13.16b, v13.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21d8c // orr v12.16b, v12.16b, v18.16b
	WORD $0x4eb31dad // orr v13.16b, v13.16b, v19.16b
	WORD $0x6e3d1d8c // eor v12.16b, v12.16b, v29.16b
	WORD $0x6e3d1dad // eor v13.16b, v13.16b, v29.16b
	WORD $0x7d4001f0 // ldr h16, [x15]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011c10 // str s16, [x0, #284]
	WORD $0x3cc061ef // ldur q15, [x15, #6]
	WORD $0xbc4021f1 // ldur s17, [x15, #2]
	WORD $0x910059ef // add x15, x15, #22
	WORD $0x4e3e1dee // and v14.16b, v15.16b, v30.16b
	WORD $0x6f0c05ef // ushr v15.16b, v15.16b, #4
	WORD $0x4e180232 // tbl v18.16b, {v17.16b}, v24.16b
	WORD $0x4e190233 // tbl v19.16b, {v17.16b}, v25.16b
	WORD $0x4e3a8e52 // cmtst v18.16b, v18.16b, v26.16b
	WORD $0x4e3a8e73 // cmtst v19.16b, v19.16b, v26.16b
	WORD $0x4e721f72 // bic v18.16b, v27.16b, v18.16b
	WORD $0x4e731f73 // bic v19.16b, v27.16b, v19.16b
	WORD $0x4eb21dce // orr v14.16b, v14.16b, v18.16b
	WORD $0x4eb31def // orr v15.16b, v15.16b, v19.16b
	WORD $0x6e3d1dce // eor v14.16b, v14.16b, v29.16b
	WORD $0x6e3d1def // eor v15.16b, v15.16b, v29.16b
	WORD $0x4e822810 // trn1 v16.4s, v0.4s, v2.4s
	WORD $0x4e826811 // trn2 v17.4s, v0.4s, v2.4s
	WORD $0x4e862892 // trn1 v18.4s, v4.4s, v6.4s
	WORD $0x4e866893 // trn2 v19.4s, v4.4s, v6.4s
	WORD $0x4ed22a00 // trn1 v0.2d, v16.2d, v18.2d
	WORD $0x4ed26a04 // trn2 v4.2d, v16.2d, v18.2d
	WORD $0x4ed32a22 // trn1 v2.2d, v17.2d, v19.2d
	WORD $0x4ed36a26 // trn2 v6.2d, v17.2d, v19.2d
	WORD $0x4e8a2910 // trn1 v16.4s, v8.4s, v10.4s
	WORD $0x4e8a6911 // trn2 v17.4s, v8.4s, v10.4s
	WORD $0x4e8e2992 // trn1 v18.4s, v12.4s, v14.4s
	WORD $0x4e8e6993 // trn2 v19.4s, v12.4s, v14.4s
	WORD $0x4ed22a08 // trn1 v8.2d, v16.2d, v18.2d
	WORD $0x4ed26a0c // trn2 v12.2d, v16.2d, v18.2d
	WORD $0x4ed32a2a // trn1 v10.2d, v17.2d, v19.2d
	WORD $0x4ed36a2e // trn2 v14.2d, v17.2d, v19.2d
	WORD $0x4e832830 // trn1 v16.4s, v1.4s, v3.4s
	WORD $0x4e836831 // trn2 v17.4s, v1.4s, v3.4s
	WORD $0x4e8728b2 // trn1 v18.4s, v5.4s, v7.4s
	WORD $0x4e8768b3 // trn2 v19.4s, v5.4s, v7.4s
	WORD $0x4ed22a01 // trn1 v1.2d, v16.2d, v18.2d
	WORD $0x4ed26a05 // trn2 v5.2d, v16.2d, v18.2d
	WORD $0x4ed32a23 // trn1 v3.2d, v17.2d, v19.2d
	WORD $0x4ed36a27 // trn2 v7.2d, v17.2d, v19.2d
	WORD $0x4e8b2930 // trn1 v16.4s, v9.4s, v11.4s
	WORD $0x4e8b6931 // trn2 v17.4s, v9.4s, v11.4s
	WORD $0x4e8f29b2 // trn1 v18.4s, v13.4s, v15.4s
	WORD $0x4e8f69b3 // trn2 v19.4s, v13.4s, v15.4s
	WORD $0x4ed22a09 // trn1 v9.2d, v16.2d, v18.2d
	WORD $0x4ed26a0d // trn2 v13.2d, v16.2d, v18.2d
	WORD $0x4ed32a2b // trn1 v11.2d, v17.2d, v19.2d
	WORD $0x4ed36a2f // trn2 v15.2d, v17.2d, v19.2d
	WORD $0xad002000 // stp q0, q8, [x0, #0]
	WORD $0xad012802 // stp q2, q10, [x0, #32]
	WORD $0xad023004 // stp q4, q12, [x0, #64]
	WORD $0xad033806 // stp q6, q14, [x0, #96]
	WORD $0xad042401 // stp q1, q9, [x0, #128]
	WORD $0xad052c03 // stp q3, q11, [x0, #160]
	WORD $0xad063405 // stp q5, q13, [x0, #192]
	WORD $0xad073c07 // stp q7, q15, [x0, #224]
	WORD $0x91048000 // add x0, x0, #288
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packIQ4NLNEON(dst, w *byte, rb, nb int, kv *[16]int8)
TEXT ·packIQ4NLNEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD kv+32(FP), R4
	WORD $0x3dc00097 // ldr q23, [x4]
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0x8b020109 // add x9, x8, x2
	WORD $0x8b02012a // add x10, x9, x2
	WORD $0x8b02014b // add x11, x10, x2
	WORD $0x8b02016c // add x12, x11, x2
	WORD $0x8b02018d // add x13, x12, x2
	WORD $0x8b0201ae // add x14, x13, x2
	WORD $0x8b0201cf // add x15, x14, x2
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f04e41d // movi v29.16b, #0x80
block:
	WORD $0x7d400110 // ldr h16, [x8]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010010 // str s16, [x0, #256]
	WORD $0x3cc02101 // ldur q1, [x8, #2]
	WORD $0x91004908 // add x8, x8, #18
	WORD $0x4e3e1c20 // and v0.16b, v1.16b, v30.16b
	WORD $0x6f0c0421 // ushr v1.16b, v1.16b, #4
	WORD $0x4e0002e0 // tbl v0.16b, {v23.16b}, v0.16b
	WORD $0x4e0102e1 // tbl v1.16b, {v23.16b}, v1.16b
	WORD $0x6e3d1c00 // eor v0.16b, v0.16b, v29.16b
	WORD $0x6e3d1c21 // eor v1.16b, v1.16b, v29.16b
	WORD $0x7d400130 // ldr h16, [x9]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010410 // str s16, [x0, #260]
	WORD $0x3cc02123 // ldur q3, [x9, #2]
	WORD $0x91004929 // add x9, x9, #18
	WORD $0x4e3e1c62 // and v2.16b, v3.16b, v30.16b
	WORD $0x6f0c0463 // ushr v3.16b, v3.16b, #4
	WORD $0x4e0202e2 // tbl v2.16b, {v23.16b}, v2.16b
	WORD $0x4e0302e3 // tbl v3.16b, {v23.16b}, v3.16b
	WORD $0x6e3d1c42 // eor v2.16b, v2.16b, v29.16b
	WORD $0x6e3d1c63 // eor v3.16b, v3.16b, v29.16b
	WORD $0x7d400150 // ldr h16, [x10]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010810 // str s16, [x0, #264]
	WORD $0x3cc02145 // ldur q5, [x10, #2]
	WORD $0x9100494a // add x10, x10, #18
	WORD $0x4e3e1ca4 // and v4.16b, v5.16b, v30.16b
	WORD $0x6f0c04a5 // ushr v5.16b, v5.16b, #4
	WORD $0x4e0402e4 // tbl v4.16b, {v23.16b}, v4.16b
	WORD $0x4e0502e5 // tbl v5.16b, {v23.16b}, v5.16b
	WORD $0x6e3d1c84 // eor v4.16b, v4.16b, v29.16b
	WORD $0x6e3d1ca5 // eor v5.16b, v5.16b, v29.16b
	WORD $0x7d400170 // ldr h16, [x11]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd010c10 // str s16, [x0, #268]
	WORD $0x3cc02167 // ldur q7, [x11, #2]
	WORD $0x9100496b // add x11, x11, #18
	WORD $0x4e3e1ce6 // and v6.16b, v7.16b, v30.16b
	WORD $0x6f0c04e7 // ushr v7.16b, v7.16b, #4
	WORD $0x4e0602e6 // tbl v6.16b, {v23.16b}, v6.16b
	WORD $0x4e0702e7 // tbl v7.16b, {v23.16b}, v7.16b
	WORD $0x6e3d1cc6 // eor v6.16b, v6.16b, v29.16b
	WORD $0x6e3d1ce7 // eor v7.16b, v7.16b, v29.16b
	WORD $0x7d400190 // ldr h16, [x12]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011010 // str s16, [x0, #272]
	WORD $0x3cc02189 // ldur q9, [x12, #2]
	WORD $0x9100498c // add x12, x12, #18
	WORD $0x4e3e1d28 // and v8.16b, v9.16b, v30.16b
	WORD $0x6f0c0529 // ushr v9.16b, v9.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x6e3d1d08 // eor v8.16b, v8.16b, v29.16b
	WORD $0x6e3d1d29 // eor v9.16b, v9.16b, v29.16b
	WORD $0x7d4001b0 // ldr h16, [x13]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011410 // str s16, [x0, #276]
	WORD $0x3cc021ab // ldur q11, [x13, #2]
	WORD $0x910049ad // add x13, x13, #18
	WORD $0x4e3e1d6a // and v10.16b, v11.16b, v30.16b
	WORD $0x6f0c056b // ushr v11.16b, v11.16b, #4
	WORD $0x4e0a02ea // tbl v10.16b, {v23.16b}, v10.16b
	WORD $0x4e0b02eb // tbl v11.16b, {v23.16b}, v11.16b
	WORD $0x6e3d1d4a // eor v10.16b, v10.16b, v29.16b
	WORD $0x6e3d1d6b // eor v11.16b, v11.16b, v29.16b
	WORD $0x7d4001d0 // ldr h16, [x14]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011810 // str s16, [x0, #280]
	WORD $0x3cc021cd // ldur q13, [x14, #2]
	WORD $0x910049ce // add x14, x14, #18
	WORD $0x4e3e1dac // and v12.16b, v13.16b, v30.16b
	WORD $0x6f0c05ad // ushr v13.16b, v13.16b, #4
	WORD $0x4e0c02ec // tbl v12.16b, {v23.16b}, v12.16b
	WORD $0x4e0d02ed // tbl v13.16b, {v23.16b}, v13.16b
	WORD $0x6e3d1d8c // eor v12.16b, v12.16b, v29.16b
	WORD $0x6e3d1dad // eor v13.16b, v13.16b, v29.16b
	WORD $0x7d4001f0 // ldr h16, [x15]
	WORD $0x1ee24210 // fcvt s16, h16
	WORD $0xbd011c10 // str s16, [x0, #284]
	WORD $0x3cc021ef // ldur q15, [x15, #2]
	WORD $0x910049ef // add x15, x15, #18
	WORD $0x4e3e1dee // and v14.16b, v15.16b, v30.16b
	WORD $0x6f0c05ef // ushr v15.16b, v15.16b, #4
	WORD $0x4e0e02ee // tbl v14.16b, {v23.16b}, v14.16b
	WORD $0x4e0f02ef // tbl v15.16b, {v23.16b}, v15.16b
	WORD $0x6e3d1dce // eor v14.16b, v14.16b, v29.16b
	WORD $0x6e3d1def // eor v15.16b, v15.16b, v29.16b
	WORD $0x4e822810 // trn1 v16.4s, v0.4s, v2.4s
	WORD $0x4e826811 // trn2 v17.4s, v0.4s, v2.4s
	WORD $0x4e862892 // trn1 v18.4s, v4.4s, v6.4s
	WORD $0x4e866893 // trn2 v19.4s, v4.4s, v6.4s
	WORD $0x4ed22a00 // trn1 v0.2d, v16.2d, v18.2d
	WORD $0x4ed26a04 // trn2 v4.2d, v16.2d, v18.2d
	WORD $0x4ed32a22 // trn1 v2.2d, v17.2d, v19.2d
	WORD $0x4ed36a26 // trn2 v6.2d, v17.2d, v19.2d
	WORD $0x4e8a2910 // trn1 v16.4s, v8.4s, v10.4s
	WORD $0x4e8a6911 // trn2 v17.4s, v8.4s, v10.4s
	WORD $0x4e8e2992 // trn1 v18.4s, v12.4s, v14.4s
	WORD $0x4e8e6993 // trn2 v19.4s, v12.4s, v14.4s
	WORD $0x4ed22a08 // trn1 v8.2d, v16.2d, v18.2d
	WORD $0x4ed26a0c // trn2 v12.2d, v16.2d, v18.2d
	WORD $0x4ed32a2a // trn1 v10.2d, v17.2d, v19.2d
	WORD $0x4ed36a2e // trn2 v14.2d, v17.2d, v19.2d
	WORD $0x4e832830 // trn1 v16.4s, v1.4s, v3.4s
	WORD $0x4e836831 // trn2 v17.4s, v1.4s, v3.4s
	WORD $0x4e8728b2 // trn1 v18.4s, v5.4s, v7.4s
	WORD $0x4e8768b3 // trn2 v19.4s, v5.4s, v7.4s
	WORD $0x4ed22a01 // trn1 v1.2d, v16.2d, v18.2d
	WORD $0x4ed26a05 // trn2 v5.2d, v16.2d, v18.2d
	WORD $0x4ed32a23 // trn1 v3.2d, v17.2d, v19.2d
	WORD $0x4ed36a27 // trn2 v7.2d, v17.2d, v19.2d
	WORD $0x4e8b2930 // trn1 v16.4s, v9.4s, v11.4s
	WORD $0x4e8b6931 // trn2 v17.4s, v9.4s, v11.4s
	WORD $0x4e8f29b2 // trn1 v18.4s, v13.4s, v15.4s
	WORD $0x4e8f69b3 // trn2 v19.4s, v13.4s, v15.4s
	WORD $0x4ed22a09 // trn1 v9.2d, v16.2d, v18.2d
	WORD $0x4ed26a0d // trn2 v13.2d, v16.2d, v18.2d
	WORD $0x4ed32a2b // trn1 v11.2d, v17.2d, v19.2d
	WORD $0x4ed36a2f // trn2 v15.2d, v17.2d, v19.2d
	WORD $0xad002000 // stp q0, q8, [x0, #0]
	WORD $0xad012802 // stp q2, q10, [x0, #32]
	WORD $0xad023004 // stp q4, q12, [x0, #64]
	WORD $0xad033806 // stp q6, q14, [x0, #96]
	WORD $0xad042401 // stp q1, q9, [x0, #128]
	WORD $0xad052c03 // stp q3, q11, [x0, #160]
	WORD $0xad063405 // stp q5, q13, [x0, #192]
	WORD $0xad073c07 // stp q7, q15, [x0, #224]
	WORD $0x91048000 // add x0, x0, #288
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

// func packMXFP4NEON(dst, w *byte, rb, nb int, kv *[16]int8)
TEXT ·packMXFP4NEON(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD rb+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD kv+32(FP), R4
	WORD $0x3dc00097 // ldr q23, [x4]
	WORD $0xaa0103e8 // mov x8, x1
	WORD $0x8b020109 // add x9, x8, x2
	WORD $0x8b02012a // add x10, x9, x2
	WORD $0x8b02014b // add x11, x10, x2
	WORD $0x8b02016c // add x12, x11, x2
	WORD $0x8b02018d // add x13, x12, x2
	WORD $0x8b0201ae // add x14, x13, x2
	WORD $0x8b0201cf // add x15, x14, x2
	WORD $0x4f00e5fe // movi v30.16b, #0x0f
	WORD $0x4f04e41d // movi v29.16b, #0x80
block:
	WORD $0x39400110 // ldrb w16, [x8]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9010011 // str w17, [x0, #256]
	WORD $0x3cc01101 // ldur q1, [x8, #1]
	WORD $0x91004508 // add x8, x8, #17
	WORD $0x4e3e1c20 // and v0.16b, v1.16b, v30.16b
	WORD $0x6f0c0421 // ushr v1.16b, v1.16b, #4
	WORD $0x4e0002e0 // tbl v0.16b, {v23.16b}, v0.16b
	WORD $0x4e0102e1 // tbl v1.16b, {v23.16b}, v1.16b
	WORD $0x6e3d1c00 // eor v0.16b, v0.16b, v29.16b
	WORD $0x6e3d1c21 // eor v1.16b, v1.16b, v29.16b
	WORD $0x39400130 // ldrb w16, [x9]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9010411 // str w17, [x0, #260]
	WORD $0x3cc01123 // ldur q3, [x9, #1]
	WORD $0x91004529 // add x9, x9, #17
	WORD $0x4e3e1c62 // and v2.16b, v3.16b, v30.16b
	WORD $0x6f0c0463 // ushr v3.16b, v3.16b, #4
	WORD $0x4e0202e2 // tbl v2.16b, {v23.16b}, v2.16b
	WORD $0x4e0302e3 // tbl v3.16b, {v23.16b}, v3.16b
	WORD $0x6e3d1c42 // eor v2.16b, v2.16b, v29.16b
	WORD $0x6e3d1c63 // eor v3.16b, v3.16b, v29.16b
	WORD $0x39400150 // ldrb w16, [x10]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9010811 // str w17, [x0, #264]
	WORD $0x3cc01145 // ldur q5, [x10, #1]
	WORD $0x9100454a // add x10, x10, #17
	WORD $0x4e3e1ca4 // and v4.16b, v5.16b, v30.16b
	WORD $0x6f0c04a5 // ushr v5.16b, v5.16b, #4
	WORD $0x4e0402e4 // tbl v4.16b, {v23.16b}, v4.16b
	WORD $0x4e0502e5 // tbl v5.16b, {v23.16b}, v5.16b
	WORD $0x6e3d1c84 // eor v4.16b, v4.16b, v29.16b
	WORD $0x6e3d1ca5 // eor v5.16b, v5.16b, v29.16b
	WORD $0x39400170 // ldrb w16, [x11]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9010c11 // str w17, [x0, #268]
	WORD $0x3cc01167 // ldur q7, [x11, #1]
	WORD $0x9100456b // add x11, x11, #17
	WORD $0x4e3e1ce6 // and v6.16b, v7.16b, v30.16b
	WORD $0x6f0c04e7 // ushr v7.16b, v7.16b, #4
	WORD $0x4e0602e6 // tbl v6.16b, {v23.16b}, v6.16b
	WORD $0x4e0702e7 // tbl v7.16b, {v23.16b}, v7.16b
	WORD $0x6e3d1cc6 // eor v6.16b, v6.16b, v29.16b
	WORD $0x6e3d1ce7 // eor v7.16b, v7.16b, v29.16b
	WORD $0x39400190 // ldrb w16, [x12]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9011011 // str w17, [x0, #272]
	WORD $0x3cc01189 // ldur q9, [x12, #1]
	WORD $0x9100458c // add x12, x12, #17
	WORD $0x4e3e1d28 // and v8.16b, v9.16b, v30.16b
	WORD $0x6f0c0529 // ushr v9.16b, v9.16b, #4
	WORD $0x4e0802e8 // tbl v8.16b, {v23.16b}, v8.16b
	WORD $0x4e0902e9 // tbl v9.16b, {v23.16b}, v9.16b
	WORD $0x6e3d1d08 // eor v8.16b, v8.16b, v29.16b
	WORD $0x6e3d1d29 // eor v9.16b, v9.16b, v29.16b
	WORD $0x394001b0 // ldrb w16, [x13]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9011411 // str w17, [x0, #276]
	WORD $0x3cc011ab // ldur q11, [x13, #1]
	WORD $0x910045ad // add x13, x13, #17
	WORD $0x4e3e1d6a // and v10.16b, v11.16b, v30.16b
	WORD $0x6f0c056b // ushr v11.16b, v11.16b, #4
	WORD $0x4e0a02ea // tbl v10.16b, {v23.16b}, v10.16b
	WORD $0x4e0b02eb // tbl v11.16b, {v23.16b}, v11.16b
	WORD $0x6e3d1d4a // eor v10.16b, v10.16b, v29.16b
	WORD $0x6e3d1d6b // eor v11.16b, v11.16b, v29.16b
	WORD $0x394001d0 // ldrb w16, [x14]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9011811 // str w17, [x0, #280]
	WORD $0x3cc011cd // ldur q13, [x14, #1]
	WORD $0x910045ce // add x14, x14, #17
	WORD $0x4e3e1dac // and v12.16b, v13.16b, v30.16b
	WORD $0x6f0c05ad // ushr v13.16b, v13.16b, #4
	WORD $0x4e0c02ec // tbl v12.16b, {v23.16b}, v12.16b
	WORD $0x4e0d02ed // tbl v13.16b, {v23.16b}, v13.16b
	WORD $0x6e3d1d8c // eor v12.16b, v12.16b, v29.16b
	WORD $0x6e3d1dad // eor v13.16b, v13.16b, v29.16b
	WORD $0x394001f0 // ldrb w16, [x15]
	WORD $0x51000611 // sub w17, w16, #1
	WORD $0x53092231 // lsl w17, w17, #23
	WORD $0x52a00413 // mov w19, #0x200000
	WORD $0x1ad02273 // lsl w19, w19, w16
	WORD $0x71000a1f // cmp w16, #2
	WORD $0x1a913271 // csel w17, w19, w17, lo
	WORD $0xb9011c11 // str w17, [x0, #284]
	WORD $0x3cc011ef // ldur q15, [x15, #1]
	WORD $0x910045ef // add x15, x15, #17
	WORD $0x4e3e1dee // and v14.16b, v15.16b, v30.16b
	WORD $0x6f0c05ef // ushr v15.16b, v15.16b, #4
	WORD $0x4e0e02ee // tbl v14.16b, {v23.16b}, v14.16b
	WORD $0x4e0f02ef // tbl v15.16b, {v23.16b}, v15.16b
	WORD $0x6e3d1dce // eor v14.16b, v14.16b, v29.16b
	WORD $0x6e3d1def // eor v15.16b, v15.16b, v29.16b
	WORD $0x4e822810 // trn1 v16.4s, v0.4s, v2.4s
	WORD $0x4e826811 // trn2 v17.4s, v0.4s, v2.4s
	WORD $0x4e862892 // trn1 v18.4s, v4.4s, v6.4s
	WORD $0x4e866893 // trn2 v19.4s, v4.4s, v6.4s
	WORD $0x4ed22a00 // trn1 v0.2d, v16.2d, v18.2d
	WORD $0x4ed26a04 // trn2 v4.2d, v16.2d, v18.2d
	WORD $0x4ed32a22 // trn1 v2.2d, v17.2d, v19.2d
	WORD $0x4ed36a26 // trn2 v6.2d, v17.2d, v19.2d
	WORD $0x4e8a2910 // trn1 v16.4s, v8.4s, v10.4s
	WORD $0x4e8a6911 // trn2 v17.4s, v8.4s, v10.4s
	WORD $0x4e8e2992 // trn1 v18.4s, v12.4s, v14.4s
	WORD $0x4e8e6993 // trn2 v19.4s, v12.4s, v14.4s
	WORD $0x4ed22a08 // trn1 v8.2d, v16.2d, v18.2d
	WORD $0x4ed26a0c // trn2 v12.2d, v16.2d, v18.2d
	WORD $0x4ed32a2a // trn1 v10.2d, v17.2d, v19.2d
	WORD $0x4ed36a2e // trn2 v14.2d, v17.2d, v19.2d
	WORD $0x4e832830 // trn1 v16.4s, v1.4s, v3.4s
	WORD $0x4e836831 // trn2 v17.4s, v1.4s, v3.4s
	WORD $0x4e8728b2 // trn1 v18.4s, v5.4s, v7.4s
	WORD $0x4e8768b3 // trn2 v19.4s, v5.4s, v7.4s
	WORD $0x4ed22a01 // trn1 v1.2d, v16.2d, v18.2d
	WORD $0x4ed26a05 // trn2 v5.2d, v16.2d, v18.2d
	WORD $0x4ed32a23 // trn1 v3.2d, v17.2d, v19.2d
	WORD $0x4ed36a27 // trn2 v7.2d, v17.2d, v19.2d
	WORD $0x4e8b2930 // trn1 v16.4s, v9.4s, v11.4s
	WORD $0x4e8b6931 // trn2 v17.4s, v9.4s, v11.4s
	WORD $0x4e8f29b2 // trn1 v18.4s, v13.4s, v15.4s
	WORD $0x4e8f69b3 // trn2 v19.4s, v13.4s, v15.4s
	WORD $0x4ed22a09 // trn1 v9.2d, v16.2d, v18.2d
	WORD $0x4ed26a0d // trn2 v13.2d, v16.2d, v18.2d
	WORD $0x4ed32a2b // trn1 v11.2d, v17.2d, v19.2d
	WORD $0x4ed36a2f // trn2 v15.2d, v17.2d, v19.2d
	WORD $0xad002000 // stp q0, q8, [x0, #0]
	WORD $0xad012802 // stp q2, q10, [x0, #32]
	WORD $0xad023004 // stp q4, q12, [x0, #64]
	WORD $0xad033806 // stp q6, q14, [x0, #96]
	WORD $0xad042401 // stp q1, q9, [x0, #128]
	WORD $0xad052c03 // stp q3, q11, [x0, #160]
	WORD $0xad063405 // stp q5, q13, [x0, #192]
	WORD $0xad073c07 // stp q7, q15, [x0, #224]
	WORD $0x91048000 // add x0, x0, #288
	WORD $0xf1000463 // subs x3, x3, #1
	BNE block
	RET

