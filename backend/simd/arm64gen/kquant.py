from asm import File
from lmatvec import data

HDR = '''//go:build arm64 && !purego

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
'''

def prologue(a, name, extra='bs'):
    a.raw('TEXT ·%s(SB), NOSPLIT, $0-64' % name)
    a.go('MOVD y+0(FP), R0; MOVD w+8(FP), R1; MOVD rb+16(FP), R2; MOVD rows+24(FP), R3')
    a.go('MOVD qs+32(FP), R4; MOVD ds+40(FP), R5; MOVD %s+48(FP), R6; MOVD nb+56(FP), R7' % extra)
    a('movi v30.16b, #0x0f')

def rowstart(a):
    a.label('row')
    a('mov x8, x1; mov x9, x4; mov x10, x5; mov x11, x6; mov x12, x7')
    a('movi v31.2d, #0')
    a.label('block')

def epilogue(a, bb):
    a('add x8, x8, #%d' % bb)
    a('subs x12, x12, #1')
    a.go('BNE block')
    a('str s31, [x0], #4; add x1, x1, x2; subs x3, x3, #1')
    a.go('BNE row')
    a.go('RET')

def zero(a, regs):
    for r in regs:
        a('movi v%d.2d, #0' % r)

def reduce8(a, acc, d0, d1):
    """acc: 8 registers of sub-block int32 vectors -> d0 = sums 0..3, d1 = 4..7."""
    a('addp v{0}.4s, v{0}.4s, v{1}.4s; addp v{2}.4s, v{2}.4s, v{3}.4s; addp v{4}.4s, v{0}.4s, v{2}.4s'.format(acc[0], acc[1], acc[2], acc[3], d0))
    a('addp v{0}.4s, v{0}.4s, v{1}.4s; addp v{2}.4s, v{2}.4s, v{3}.4s; addp v{4}.4s, v{0}.4s, v{2}.4s'.format(acc[4], acc[5], acc[6], acc[7], d1))

def shift(a, dst, src, s):
    """dst = src shifted left by s (right by -s), bytes."""
    if s > 0:
        a('shl v%d.16b, v%d.16b, #%d' % (dst, src, s))
    elif s < 0:
        a('ushr v%d.16b, v%d.16b, #%d' % (dst, src, -s))
    else:
        a('mov v%d.16b, v%d.16b' % (dst, src))

def floatmin(a, A, B):
    """acc += float32(A)*(d*dx) - float32(B)*(dm*dx); d, dm half in h0, h1; A, B int32 in sA, sB."""
    a('scvtf s{0}, s{0}; scvtf s{1}, s{1}'.format(A, B))
    a('ldr s26, [x10], #4; fcvt s0, h0; fcvt s1, h1')
    a('fmul s0, s0, s26; fmul s{0}, s{0}, s0; fmul s1, s1, s26; fmul s{1}, s{1}, s1'.format(A, B))
    a('fsub s{0}, s{0}, s{1}; fadd s31, s31, s{0}'.format(A, B))

def floatnomin(a, wA):
    """acc += float32(A)*(d*dx); A int32 in wA (general register), d half in h0."""
    a('scvtf s2, w%d' % wA)
    a('ldr s26, [x10], #4; fcvt s0, h0')
    a('fmul s0, s0, s26; fmul s2, s2, s0; fadd s31, s31, s2')

def k4scales(a):
    """Q4_K/Q5_K's 12 scale bytes at x8+4 -> sc bytes in d20, mins in d21 (llama.cpp's utmp)."""
    a('ldur x13, [x8, #4]; ldr w14, [x8, #12]; lsr x15, x13, #32')
    a('lsr w16, w14, #4; and w16, w16, #0x0f0f0f0f; lsr w17, w15, #6; and w17, w17, #0x03030303; orr w16, w16, w17, lsl #4')
    a('and w15, w15, #0x3f3f3f3f')
    a('and w17, w14, #0x0f0f0f0f; lsr w19, w13, #6; and w19, w19, #0x03030303; orr w17, w17, w19, lsl #4')
    a('and w13, w13, #0x3f3f3f3f')
    a('orr x13, x13, x17, lsl #32; orr x15, x15, x16, lsl #32')
    a('fmov d20, x13; fmov d21, x15')

def k4tail(a):
    """A from the sub-block sums in v12 (0..3), v16 (4..7) and scales d20; B from mins d21 and bs; float."""
    reduce8(a, [12, 13, 14, 15, 16, 17, 18, 19], 12, 16)
    a('uxtl v20.8h, v20.8b; uxtl v22.4s, v20.4h; uxtl2 v23.4s, v20.8h')
    a('mul v12.4s, v12.4s, v22.4s; mla v12.4s, v16.4s, v23.4s; addv s12, v12.4s')
    a('ldr q24, [x11, #32]; add x11, x11, #48')
    a('uxtl v21.8h, v21.8b; smull v25.4s, v21.4h, v24.4h; smlal2 v25.4s, v21.8h, v24.8h; addv s25, v25.4s')
    floatmin(a, 12, 25)

def q4k(f):
    a = f.func()
    f.raw('// func q4KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)')
    prologue(a, 'q4KMatVecNEON')
    rowstart(a)
    a('ldr h0, [x8]; ldr h1, [x8, #2]')
    k4scales(a)
    a('add x14, x8, #16')
    zero(a, range(12, 20))
    for h in range(4):
        a('ld1 {v2.16b, v3.16b}, [x14], #32')
        a('ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64')
        a('and v8.16b, v2.16b, v30.16b; and v9.16b, v3.16b, v30.16b; ushr v10.16b, v2.16b, #4; ushr v11.16b, v3.16b, #4')
        a('sdot v{0}.4s, v8.16b, v4.16b; sdot v{0}.4s, v9.16b, v5.16b; sdot v{1}.4s, v10.16b, v6.16b; sdot v{1}.4s, v11.16b, v7.16b'.format(12+2*h, 13+2*h))
    k4tail(a)
    epilogue(a, 144)
    f.raw('')

def q5k(f):
    a = f.func()
    f.raw('// func q5KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)')
    prologue(a, 'q5KMatVecNEON')
    a('movi v29.16b, #0x10')
    rowstart(a)
    a('ldr h0, [x8]; ldr h1, [x8, #2]')
    k4scales(a)
    a('ldp q27, q28, [x8, #16]; add x14, x8, #48')
    zero(a, range(12, 20))
    for h in range(4):
        a('ld1 {v2.16b, v3.16b}, [x14], #32')
        a('ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64')
        a('and v8.16b, v2.16b, v30.16b; and v9.16b, v3.16b, v30.16b; ushr v10.16b, v2.16b, #4; ushr v11.16b, v3.16b, #4')
        # fifth bits: value 64h+l bit 2h of qh[l], value 64h+32+l bit 2h+1, to bit 4
        shift(a, 22, 27, 4-2*h); shift(a, 23, 28, 4-2*h)
        shift(a, 24, 27, 3-2*h); shift(a, 25, 28, 3-2*h)
        a('and v22.16b, v22.16b, v29.16b; and v23.16b, v23.16b, v29.16b; and v24.16b, v24.16b, v29.16b; and v25.16b, v25.16b, v29.16b')
        a('orr v8.16b, v8.16b, v22.16b; orr v9.16b, v9.16b, v23.16b; orr v10.16b, v10.16b, v24.16b; orr v11.16b, v11.16b, v25.16b')
        a('sdot v{0}.4s, v8.16b, v4.16b; sdot v{0}.4s, v9.16b, v5.16b; sdot v{1}.4s, v10.16b, v6.16b; sdot v{1}.4s, v11.16b, v7.16b'.format(12+2*h, 13+2*h))
    k4tail(a)
    epilogue(a, 176)
    f.raw('')

def sc16(a, sc_lo, sc_hi, D, tmp, signed):
    """A vector in D[0]: sum of the four D vectors times the 16 int16 scales (sc_lo: 0..7, sc_hi: 8..15)."""
    x = 's' if signed else 'u'
    a('%sxtl v%d.4s, v%d.4h; mul v%d.4s, v%d.4s, v%d.4s' % (x, tmp, sc_lo, D[0], D[0], tmp))
    a('%sxtl2 v%d.4s, v%d.8h; mla v%d.4s, v%d.4s, v%d.4s' % (x, tmp, sc_lo, D[0], D[1], tmp))
    a('%sxtl v%d.4s, v%d.4h; mla v%d.4s, v%d.4s, v%d.4s' % (x, tmp, sc_hi, D[0], D[2], tmp))
    a('%sxtl2 v%d.4s, v%d.8h; mla v%d.4s, v%d.4s, v%d.4s' % (x, tmp, sc_hi, D[0], D[3], tmp))
    a('addv s%d, v%d.4s' % (D[0], D[0]))

def bsum16(a, lo, hi, out, t0, t1):
    """out (s) = sum_j c_j * bs[j], j < 16, c int16 in lo (0..7) and hi (8..15); x11 advanced."""
    a('ld1 {v%d.8h, v%d.8h}, [x11]; add x11, x11, #48' % (t0, t1))
    a('smull v{0}.4s, v{1}.4h, v{2}.4h; smlal2 v{0}.4s, v{1}.8h, v{2}.8h; smlal v{0}.4s, v{3}.4h, v{4}.4h; smlal2 v{0}.4s, v{3}.8h, v{4}.8h'.format(out, lo, t0, hi, t1))
    a('addv s%d, v%d.4s' % (out, out))

def q6k(f):
    a = f.func()
    f.raw('// func q6KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)')
    prologue(a, 'q6KMatVecNEON')
    a('movi v29.16b, #0x30')
    rowstart(a)
    a('ldr q27, [x8, #192]; mov x14, x8; add x15, x8, #128')
    for h in range(2):
        a('ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14], #64')
        a('ld1 {v6.16b, v7.16b}, [x15], #32')
        zero(a, range(14, 22))
        # sub-block 8h+k: values ql&0xf (k<4) or ql>>4 of L[k%4], high bits of H[k%2] at 2*(k//2)
        for k in range(8):
            if k % 4 == 0:
                a('ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x9], #64')
            L, H = 2 + k % 4, 6 + k % 2
            if k < 4:
                a('and v12.16b, v%d.16b, v30.16b' % L)
            else:
                a('ushr v12.16b, v%d.16b, #4' % L)
            shift(a, 13, H, 4 - 2*(k//2))
            a('and v13.16b, v13.16b, v29.16b; orr v12.16b, v12.16b, v13.16b')
            a('sdot v%d.4s, v12.16b, v%d.16b' % (14 + k, 8 + k % 4))
        reduce8(a, list(range(14, 22)), 22 + 2*h, 23 + 2*h)
    # A = sum sc_j*(dot of q+32) - 32*sum sc_j*bs_j
    a('sxtl v12.8h, v27.8b; sxtl2 v13.8h, v27.16b')
    sc16(a, 12, 13, [22, 23, 24, 25], 1, True)
    bsum16(a, 12, 13, 4, 2, 3)
    a('fmov w13, s22; fmov w16, s4; sub w13, w13, w16, lsl #5')
    a('ldr h0, [x8, #208]')
    floatnomin(a, 13)
    epilogue(a, 210)
    f.raw('')

def q2k(f):
    a = f.func()
    f.raw('// func q2KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)')
    prologue(a, 'q2KMatVecNEON')
    a('movi v28.16b, #3')
    rowstart(a)
    a('ldr q27, [x8]; add x14, x8, #16')
    a('ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14]')
    for c in range(2):
        zero(a, range(14, 22))
        for j in range(4):
            a('ld1 {v8.16b, v9.16b}, [x9], #32')
            for i in range(2):
                Q = 2 + 2*c + i
                if j == 0:
                    a('and v12.16b, v%d.16b, v28.16b' % Q)
                elif j == 3:
                    a('ushr v12.16b, v%d.16b, #6' % Q)
                else:
                    a('ushr v12.16b, v%d.16b, #%d; and v12.16b, v12.16b, v28.16b' % (Q, 2*j))
                a('sdot v%d.4s, v12.16b, v%d.16b' % (14 + 2*j + i, 8 + i))
        reduce8(a, list(range(14, 22)), 22 + 2*c, 23 + 2*c)
    a('and v12.16b, v27.16b, v30.16b; ushr v13.16b, v27.16b, #4')
    a('uxtl v2.8h, v12.8b; uxtl2 v3.8h, v12.16b')
    sc16(a, 2, 3, [22, 23, 24, 25], 1, False)
    a('uxtl v2.8h, v13.8b; uxtl2 v3.8h, v13.16b')
    bsum16(a, 2, 3, 4, 6, 7)
    a('ldr h0, [x8, #80]; ldr h1, [x8, #82]')
    floatmin(a, 22, 4)
    epilogue(a, 84)
    f.raw('')

def q3k(f):
    a = f.func()
    f.raw('// func q3KMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, bs *int16, nb int)')
    prologue(a, 'q3KMatVecNEON')
    a('movi v28.16b, #3; movi v29.16b, #4')
    rowstart(a)
    # scales (llama.cpp's aux), minus 32
    a('ldur x13, [x8, #96]; ldr w14, [x8, #104]; lsr x15, x13, #32')
    a('and w16, w13, #0x0f0f0f0f; and w17, w14, #0x03030303; orr w16, w16, w17, lsl #4')
    a('and w17, w15, #0x0f0f0f0f; lsr w19, w14, #2; and w19, w19, #0x03030303; orr w17, w17, w19, lsl #4')
    a('lsr w19, w13, #4; and w19, w19, #0x0f0f0f0f; lsr w20, w14, #4; and w20, w20, #0x03030303; orr w19, w19, w20, lsl #4')
    a('lsr w20, w15, #4; and w20, w20, #0x0f0f0f0f; lsr w21, w14, #6; and w21, w21, #0x03030303; orr w20, w20, w21, lsl #4')
    a('orr x16, x16, x17, lsl #32; orr x19, x19, x20, lsl #32')
    a('fmov d27, x16; mov v27.d[1], x19; movi v1.16b, #32; sub v27.16b, v27.16b, v1.16b')
    a('ld1 {v6.16b, v7.16b}, [x8]; add x14, x8, #32')
    a('ld1 {v2.16b, v3.16b, v4.16b, v5.16b}, [x14]')
    for c in range(2):
        zero(a, range(14, 22))
        for j in range(4):
            a('ld1 {v8.16b, v9.16b}, [x9], #32')
            k = 4*c + j
            for i in range(2):
                Q, HM = 2 + 2*c + i, 6 + i
                if j == 0:
                    a('and v12.16b, v%d.16b, v28.16b' % Q)
                elif j == 3:
                    a('ushr v12.16b, v%d.16b, #6' % Q)
                else:
                    a('ushr v12.16b, v%d.16b, #%d; and v12.16b, v12.16b, v28.16b' % (Q, 2*j))
                shift(a, 13, HM, 2 - k)
                a('and v13.16b, v13.16b, v29.16b; orr v12.16b, v12.16b, v13.16b')
                a('sdot v%d.4s, v12.16b, v%d.16b' % (14 + 2*j + i, 8 + i))
        reduce8(a, list(range(14, 22)), 22 + 2*c, 23 + 2*c)
    # A = sum sc_j*(dot of q+4) - 4*sum sc_j*bs_j
    a('sxtl v12.8h, v27.8b; sxtl2 v13.8h, v27.16b')
    sc16(a, 12, 13, [22, 23, 24, 25], 1, True)
    bsum16(a, 12, 13, 4, 2, 3)
    a('fmov w13, s22; fmov w16, s4; sub w13, w13, w16, lsl #2')
    a('ldr h0, [x8, #108]')
    floatnomin(a, 13)
    epilogue(a, 110)
    f.raw('')

def iq4xs(f):
    a = f.func()
    f.raw('// func iq4XSMatVecNEON(y *float32, w *byte, rb, rows int, qs *int8, ds *float32, kv *[16]int8, nb int)')
    prologue(a, 'iq4XSMatVecNEON', 'kv')
    a('ldr q23, [x6]')
    a.go('MOVD $iq4xsShifts<>(SB), R13')
    a('ldr q29, [x13]; movi v28.8h, #3')
    rowstart(a)
    # scales: low nibbles of scales_l, two bits each of scales_h
    a('ldr s1, [x8, #4]; ushr v12.8b, v1.8b, #4; and v1.8b, v1.8b, v30.8b; zip1 v1.16b, v1.16b, v12.16b')
    a('ldrh w13, [x8, #2]; dup v12.8h, w13; ushl v12.8h, v12.8h, v29.8h; and v12.16b, v12.16b, v28.16b')
    a('xtn v12.8b, v12.8h; shl v12.8b, v12.8b, #4; orr v1.8b, v1.8b, v12.8b; movi v12.8b, #32; sub v1.8b, v1.8b, v12.8b')
    a('sxtl v1.8h, v1.8b; sxtl v20.4s, v1.4h; sxtl2 v21.4s, v1.8h')
    a('add x14, x8, #8')
    zero(a, range(12, 20))
    for ib in range(8):
        if ib % 2 == 0:
            a('ld1 {v2.16b, v3.16b}, [x14], #32')
            a('ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [x9], #64')
        W, X = 2 + ib % 2, 4 + 2*(ib % 2)
        a('and v8.16b, v%d.16b, v30.16b; ushr v9.16b, v%d.16b, #4' % (W, W))
        a('tbl v8.16b, {v23.16b}, v8.16b; tbl v9.16b, {v23.16b}, v9.16b')
        a('sdot v{0}.4s, v8.16b, v{1}.16b; sdot v{0}.4s, v9.16b, v{2}.16b'.format(12 + ib, X, X + 1))
    reduce8(a, list(range(12, 20)), 12, 16)
    a('mul v12.4s, v12.4s, v20.4s; mla v12.4s, v16.4s, v21.4s; addv s12, v12.4s; fmov w13, s12')
    a('ldr h0, [x8]')
    floatnomin(a, 13)
    epilogue(a, 136)
    f.raw('')

def quantq8k(f):
    a = f.func()
    f.raw('''// func quantizeQ8KNEON(qs *int8, ds *float32, bs *int16, x *float32, nb int)
//
// quantizeQ8KNEON quantizes nb blocks of 256 values of x as
// quantizeQ8KGo, with its bits: per block the largest magnitude amax, the
// scale d = amax/127 and its inverse id (0 if d is 0), the values x*id
// (float32) rounded to nearest even (FCVTNS), and their sums.''')
    a.raw('TEXT ·quantizeQ8KNEON(SB), NOSPLIT, $0-40')
    a.go('MOVD qs+0(FP), R0; MOVD ds+8(FP), R1; MOVD bs+16(FP), R2; MOVD x+24(FP), R3; MOVD nb+32(FP), R4')
    a('mov w13, #0x42fe0000; fmov s27, w13; fmov s28, #1.0; movi d29, #0')
    a.label('block')
    a('mov x5, x3')
    zero(a, range(16, 20))
    a('mov x6, #16')
    a.label('amax')
    a('ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x3], #64')
    a('fabs v0.4s, v0.4s; fabs v1.4s, v1.4s; fabs v2.4s, v2.4s; fabs v3.4s, v3.4s')
    a('fmax v16.4s, v16.4s, v0.4s; fmax v17.4s, v17.4s, v1.4s; fmax v18.4s, v18.4s, v2.4s; fmax v19.4s, v19.4s, v3.4s')
    a('subs x6, x6, #1')
    a.go('BNE amax')
    a('fmax v16.4s, v16.4s, v17.4s; fmax v18.4s, v18.4s, v19.4s; fmax v16.4s, v16.4s, v18.4s; fmaxv s16, v16.4s')
    a('fdiv s18, s16, s27; str s18, [x1], #4')
    a('fdiv s20, s28, s18; fcmp s18, #0.0; fcsel s20, s20, s29, ne')
    a('mov x6, #16')
    a.label('quant')
    a('ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x5], #64')
    a('fmul v0.4s, v0.4s, v20.s[0]; fmul v1.4s, v1.4s, v20.s[0]; fmul v2.4s, v2.4s, v20.s[0]; fmul v3.4s, v3.4s, v20.s[0]')
    a('fcvtns v0.4s, v0.4s; fcvtns v1.4s, v1.4s; fcvtns v2.4s, v2.4s; fcvtns v3.4s, v3.4s')
    a('xtn v0.4h, v0.4s; xtn2 v0.8h, v1.4s; xtn v2.4h, v2.4s; xtn2 v2.8h, v3.4s; xtn v0.8b, v0.8h; xtn2 v0.16b, v2.8h')
    a('st1 {v0.16b}, [x0], #16; saddlv h4, v0.16b; str h4, [x2], #2')
    a('subs x6, x6, #1')
    a.go('BNE quant')
    a('sub x6, x2, #32; ld1 {v5.8h, v6.8h}, [x6]; addp v5.8h, v5.8h, v6.8h; str q5, [x2], #16')
    a('subs x4, x4, #1')
    a.go('BNE block')
    a.go('RET')
    f.raw('')

def files():
    f = File()
    f.raw(HDR)
    q4k(f); q5k(f); q6k(f)
    g = File()
    g.raw(HDR)
    sh = []
    for i in range(8):
        v = (-2*i) & 0xffff
        sh += [v & 0xff, v >> 8]
    data(g, 'iq4xsShifts<>', sh)
    q2k(g); q3k(g); iq4xs(g); quantq8k(g)
    return {'kquant_arm64.s': f.render(), 'kquant2_arm64.s': g.render()}
