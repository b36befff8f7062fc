from asm import File
from kquant import shift

HDR = '''//go:build arm64 && !purego

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
'''

def stores(a, regs, lanes):
    """st1 lane i of each of regs (lanes per register), x16 advancing by x17."""
    for r in regs:
        for i in range(lanes):
            a('st1 {v%d.s}[%d], [x16], x17' % (r, i))

def kpack(f, name, nsub, bb, scales, values, kv=False):
    """scales(a): row at x5 -> int16 sc in v16 (v17: 8..15), c in v18 (v19),
    d in s20, dm in s21.  values(a): row at x5 -> chunk c in v(c)."""
    a = f.func()
    pb = 2048 + 64*nsub + 16*nsub + 64
    if kv:
        f.raw('// func %s(dst, w *byte, rb, nb int, kv *[16]int8)' % name)
        a.raw('TEXT ·%s(SB), NOSPLIT, $0-40' % name)
    else:
        f.raw('// func %s(dst, w *byte, rb, nb int)' % name)
        a.raw('TEXT ·%s(SB), NOSPLIT, $0-32' % name)
    a.go('MOVD dst+0(FP), R0; MOVD w+8(FP), R1; MOVD rb+16(FP), R2; MOVD nb+24(FP), R3')
    if kv:
        a.go('MOVD kv+32(FP), R4')
        a('ldr q28, [x4]')
        a.go('MOVD $iq4xsShiftsP<>(SB), R4')
        a('ldr q31, [x4]')
    a('mov x17, #32; movi v30.16b, #0x0f')
    a.label('block')
    a('mov x4, #0; mov x5, x1')
    a.label('row')
    scales(a)
    a('add x16, x0, #2048; add x16, x16, x4, lsl #2')
    n = nsub // 8
    # sc32
    for h in range(n):
        a('sxtl v22.4s, v%d.4h; sxtl2 v23.4s, v%d.8h' % (16 + h, 16 + h))
        stores(a, [22, 23], 4)
    # sc16: each scale twice
    for h in range(n):
        a('zip1 v22.8h, v%d.8h, v%d.8h; zip2 v23.8h, v%d.8h, v%d.8h' % (16 + h, 16 + h, 16 + h, 16 + h))
        stores(a, [22, 23], 4)
    # cf: pairs
    stores(a, [18 + h for h in range(n)], 4)
    a('st1 {v20.s}[0], [x16], x17; st1 {v21.s}[0], [x16]')
    values(a)
    a('add x16, x0, x4, lsl #2')
    stores(a, range(16), 4)
    a('add x4, x4, #1; add x5, x5, x2; cmp x4, #8')
    a.go('BNE row')
    a('add x0, x0, #%d; add x1, x1, #%d' % (pb, bb))
    a('subs x3, x3, #1')
    a.go('BNE block')
    a.go('RET')
    f.raw('')

def k4scales(a):
    a('ldur x13, [x5, #4]; ldr w14, [x5, #12]; lsr x15, x13, #32')
    a('lsr w6, w14, #4; and w6, w6, #0x0f0f0f0f; lsr w7, w15, #6; and w7, w7, #0x03030303; orr w6, w6, w7, lsl #4')
    a('and w15, w15, #0x3f3f3f3f')
    a('and w7, w14, #0x0f0f0f0f; lsr w8, w13, #6; and w8, w8, #0x03030303; orr w7, w7, w8, lsl #4')
    a('and w13, w13, #0x3f3f3f3f')
    a('orr x13, x13, x7, lsl #32; orr x15, x15, x6, lsl #32')
    a('fmov d16, x13; fmov d18, x15; uxtl v16.8h, v16.8b; uxtl v18.8h, v18.8b')
    a('ldr h20, [x5]; fcvt s20, h20; ldr h21, [x5, #2]; fcvt s21, h21')

def q4kvalues(a, qh):
    base = 48 if qh else 16
    if qh:
        a('ldp q24, q25, [x5, #16]; movi v29.16b, #0x10')
    for h in range(4):
        for half in range(2):
            A, B = 4*h + half, 4*h + 2 + half
            a('ldr q%d, [x5, #%d]' % (A, base + 32*h + 16*half))
            a('ushr v%d.16b, v%d.16b, #4; and v%d.16b, v%d.16b, v30.16b' % (B, A, A, A))
            if qh:
                Q = 24 + half
                shift(a, 26, Q, 4 - 2*h); shift(a, 27, Q, 3 - 2*h)
                a('and v26.16b, v26.16b, v29.16b; and v27.16b, v27.16b, v29.16b')
                a('orr v%d.16b, v%d.16b, v26.16b; orr v%d.16b, v%d.16b, v27.16b' % (A, A, B, B))

def q6kscales(a):
    a('ldr q22, [x5, #192]; sxtl v16.8h, v22.8b; sxtl2 v17.8h, v22.16b')
    a('shl v18.8h, v16.8h, #5; shl v19.8h, v17.8h, #5')
    a('ldr h20, [x5, #208]; fcvt s20, h20; movi d21, #0')

def q6kvalues(a):
    a('movi v29.16b, #0x30')
    for h in range(2):
        for lh in range(2):
            a('ldr q24, [x5, #%d]' % (128 + 32*h + 16*lh))
            for k2 in range(2):
                A, B = 8*h + 2*k2 + lh, 8*h + 2*(k2 + 2) + lh
                a('ldr q%d, [x5, #%d]' % (A, 64*h + 32*k2 + 16*lh))
                a('ushr v%d.16b, v%d.16b, #4; and v%d.16b, v%d.16b, v30.16b' % (B, A, A, A))
                shift(a, 26, 24, 4 - 2*k2); shift(a, 27, 24, 4 - 2*(k2 + 2))
                a('and v26.16b, v26.16b, v29.16b; and v27.16b, v27.16b, v29.16b')
                a('orr v%d.16b, v%d.16b, v26.16b; orr v%d.16b, v%d.16b, v27.16b' % (A, A, B, B))

def q2kscales(a):
    a('ldr q22, [x5]; and v23.16b, v22.16b, v30.16b; ushr v22.16b, v22.16b, #4')
    a('uxtl v16.8h, v23.8b; uxtl2 v17.8h, v23.16b; uxtl v18.8h, v22.8b; uxtl2 v19.8h, v22.16b')
    a('ldr h20, [x5, #80]; fcvt s20, h20; ldr h21, [x5, #82]; fcvt s21, h21')

def q23values(a, hm):
    a('movi v28.16b, #3')
    if hm:
        a('ldp q24, q25, [x5]; movi v29.16b, #4')
    base = 32 if hm else 16
    for c in range(2):
        for lh in range(2):
            a('ldr q26, [x5, #%d]' % (base + 32*c + 16*lh))
            for j in range(4):
                D = 8*c + 2*j + lh
                if j == 0:
                    a('and v%d.16b, v26.16b, v28.16b' % D)
                elif j == 3:
                    a('ushr v%d.16b, v26.16b, #6' % D)
                else:
                    a('ushr v%d.16b, v26.16b, #%d; and v%d.16b, v%d.16b, v28.16b' % (D, 2*j, D, D))
                if hm:
                    shift(a, 27, 24 + lh, 2 - (4*c + j))
                    a('and v27.16b, v27.16b, v29.16b; orr v%d.16b, v%d.16b, v27.16b' % (D, D))

def q3kscales(a):
    a('ldur x13, [x5, #96]; ldr w14, [x5, #104]; lsr x15, x13, #32')
    a('and w6, w13, #0x0f0f0f0f; and w7, w14, #0x03030303; orr w6, w6, w7, lsl #4')
    a('and w7, w15, #0x0f0f0f0f; lsr w8, w14, #2; and w8, w8, #0x03030303; orr w7, w7, w8, lsl #4')
    a('lsr w8, w13, #4; and w8, w8, #0x0f0f0f0f; lsr w9, w14, #4; and w9, w9, #0x03030303; orr w8, w8, w9, lsl #4')
    a('lsr w9, w15, #4; and w9, w9, #0x0f0f0f0f; lsr w10, w14, #6; and w10, w10, #0x03030303; orr w9, w9, w10, lsl #4')
    a('orr x6, x6, x7, lsl #32; orr x8, x8, x9, lsl #32')
    a('fmov d22, x6; mov v22.d[1], x8; movi v23.16b, #32; sub v22.16b, v22.16b, v23.16b')
    a('sxtl v16.8h, v22.8b; sxtl2 v17.8h, v22.16b; shl v18.8h, v16.8h, #2; shl v19.8h, v17.8h, #2')
    a('ldr h20, [x5, #108]; fcvt s20, h20; movi d21, #0')

def iq4xsscales(a):
    a('ldr s22, [x5, #4]; ushr v23.8b, v22.8b, #4; and v22.8b, v22.8b, v30.8b; zip1 v22.16b, v22.16b, v23.16b')
    a('ldrh w13, [x5, #2]; dup v23.8h, w13; ushl v23.8h, v23.8h, v31.8h; movi v24.8h, #3; and v23.16b, v23.16b, v24.16b')
    a('xtn v23.8b, v23.8h; shl v23.8b, v23.8b, #4; orr v22.8b, v22.8b, v23.8b; movi v23.8b, #32; sub v22.8b, v22.8b, v23.8b')
    a('sxtl v16.8h, v22.8b; shl v18.8h, v16.8h, #7')
    a('ldr h20, [x5]; fcvt s20, h20; movi d21, #0')

def iq4xsvalues(a):
    a('movi v29.16b, #0x80')
    for ib in range(8):
        A, B = 2*ib, 2*ib + 1
        a('ldr q%d, [x5, #%d]' % (A, 8 + 16*ib))
        a('ushr v%d.16b, v%d.16b, #4; and v%d.16b, v%d.16b, v30.16b' % (B, A, A, A))
        a('tbl v%d.16b, {v28.16b}, v%d.16b; tbl v%d.16b, {v28.16b}, v%d.16b' % (A, A, B, B))
        a('eor v%d.16b, v%d.16b, v29.16b; eor v%d.16b, v%d.16b, v29.16b' % (A, A, B, B))

def gen():
    f = File()
    f.raw(HDR)
    kpack(f, 'packQ4KNEON', 8, 144, k4scales, lambda a: q4kvalues(a, False))
    kpack(f, 'packQ5KNEON', 8, 176, k4scales, lambda a: q4kvalues(a, True))
    kpack(f, 'packQ6KNEON', 16, 210, q6kscales, q6kvalues)
    return f.render()

def gen1():
    f = File()
    f.raw(HDR)
    kpack(f, 'packQ2KNEON', 16, 84, q2kscales, lambda a: q23values(a, False))
    kpack(f, 'packQ3KNEON', 16, 110, q3kscales, lambda a: q23values(a, True))
    return f

def gen2():
    from lmatvec import data
    f = File()
    f.raw(HDR.replace('The packers of the K tile', 'The packer of the K tile for IQ4_XS'))
    sh = []
    for i in range(8):
        v = (-2*i) & 0xffff
        sh += [v & 0xff, v >> 8]
    data(f, 'iq4xsShiftsP<>', sh)
    kpack(f, 'packIQ4XSNEON', 8, 136, iq4xsscales, iq4xsvalues, kv=True)
    return f

def gen2_lines(g):
    # g's lines without its header (the first raw line)
    return g.lines[1:]

def files():
    f = gen1()
    f.lines += gen2_lines(gen2())
    return {'kpack_arm64.s': gen(), 'kpack2_arm64.s': f.render()}
