from asm import File

HDR = '''//go:build arm64 && !purego

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
'''

FORMATS = [
    ('packQ4_0NEON', 18, 'q4_0', 2),
    ('packQ5_0NEON', 22, 'q5_0', 6),
    ('packIQ4NLNEON', 18, 'iq4nl', 2),
    ('packMXFP4NEON', 17, 'mxfp4', 1),
]

def transpose4(a, r, t):
    """4x4 transpose of 32-bit elements of registers r[0..3] in place, temps t[0..3]."""
    a('trn1 v%d.4s, v%d.4s, v%d.4s; trn2 v%d.4s, v%d.4s, v%d.4s' % (t[0], r[0], r[1], t[1], r[0], r[1]))
    a('trn1 v%d.4s, v%d.4s, v%d.4s; trn2 v%d.4s, v%d.4s, v%d.4s' % (t[2], r[2], r[3], t[3], r[2], r[3]))
    a('trn1 v%d.2d, v%d.2d, v%d.2d; trn2 v%d.2d, v%d.2d, v%d.2d' % (r[0], t[0], t[2], r[2], t[0], t[2]))
    a('trn1 v%d.2d, v%d.2d, v%d.2d; trn2 v%d.2d, v%d.2d, v%d.2d' % (r[1], t[1], t[3], r[3], t[1], t[3]))

def gen():
    f = File()
    f.raw(HDR)
    f.raw('// The bit masks of Q5_0\'s fifth bits: see l32qh in lmatvec_arm64.s.')
    from lmatvec import data
    data(f, 'l32qhp<>', [0]*8 + [1]*8 + [2]*8 + [3]*8 + [1, 2, 4, 8, 16, 32, 64, 128]*2)
    for name, bb, kind, off in FORMATS:
        a = f.func()
        tab = kind in ('iq4nl', 'mxfp4')
        if tab:
            f.raw('// func %s(dst, w *byte, rb, nb int, kv *[16]int8)' % name)
            a.raw('TEXT ·%s(SB), NOSPLIT, $0-40' % name)
        else:
            f.raw('// func %s(dst, w *byte, rb, nb int)' % name)
            a.raw('TEXT ·%s(SB), NOSPLIT, $0-32' % name)
        a.go('MOVD dst+0(FP), R0; MOVD w+8(FP), R1; MOVD rb+16(FP), R2; MOVD nb+24(FP), R3')
        if tab:
            a.go('MOVD kv+32(FP), R4')
            a('ldr q23, [x4]')
        a('mov x8, x1; add x9, x8, x2; add x10, x9, x2; add x11, x10, x2; add x12, x11, x2; add x13, x12, x2; add x14, x13, x2; add x15, x14, x2')
        a('movi v30.16b, #0x0f; movi v29.16b, #0x80')
        if kind == 'q4_0':
            a('movi v28.16b, #8')
        if kind == 'q5_0':
            a.go('MOVD $l32qhp<>(SB), R4')
            a('ld1 {v24.16b, v25.16b, v26.16b}, [x4]; movi v27.16b, #0xf0')
        a.label('block')
        for r in range(8):
            R, lo, hi = 8 + r, 2*r, 2*r + 1
            if kind == 'mxfp4':
                a('ldrb w16, [x%d]; sub w17, w16, #1; lsl w17, w17, #23; mov w19, #0x200000; lsl w19, w19, w16' % R)
                a('cmp w16, #2; csel w17, w19, w17, lo; str w17, [x0, #%d]' % (256 + 4*r))
            else:
                a('ldr h16, [x%d]; fcvt s16, h16; str s16, [x0, #%d]' % (R, 256 + 4*r))
            a('ldur q%d, [x%d, #%d]' % (hi, R, off))
            if kind == 'q5_0':
                a('ldur s17, [x%d, #2]' % R)
            a('add x%d, x%d, #%d' % (R, R, bb))
            a('and v{0}.16b, v{1}.16b, v30.16b; ushr v{1}.16b, v{1}.16b, #4'.format(lo, hi))
            if kind == 'q4_0':
                a('sub v{0}.16b, v{0}.16b, v28.16b; sub v{1}.16b, v{1}.16b, v28.16b'.format(lo, hi))
            if kind == 'q5_0':
                a('tbl v18.16b, {v17.16b}, v24.16b; tbl v19.16b, {v17.16b}, v25.16b')
                a('cmtst v18.16b, v18.16b, v26.16b; cmtst v19.16b, v19.16b, v26.16b')
                a('bic v18.16b, v27.16b, v18.16b; bic v19.16b, v27.16b, v19.16b')
                a('orr v{0}.16b, v{0}.16b, v18.16b; orr v{1}.16b, v{1}.16b, v19.16b'.format(lo, hi))
            if tab:
                a('tbl v{0}.16b, {{v23.16b}}, v{0}.16b; tbl v{1}.16b, {{v23.16b}}, v{1}.16b'.format(lo, hi))
            a('eor v{0}.16b, v{0}.16b, v29.16b; eor v{1}.16b, v{1}.16b, v29.16b'.format(lo, hi))
        # groups 0..3 (lo) and 4..7 (hi), rows 0..3 and 4..7
        for h in range(2):
            for rr in range(2):
                transpose4(a, [2*(4*rr + i) + h for i in range(4)], [16, 17, 18, 19])
        for k in range(8):
            h, i = k // 4, k % 4
            a('stp q%d, q%d, [x0, #%d]' % (2*i + h, 2*(4 + i) + h, 32*k))
        a('add x0, x0, #288')
        a('subs x3, x3, #1')
        a.go('BNE block')
        a.go('RET')
        f.raw('')
    return f.render()

def files():
    return {'lpack_arm64.s': gen()}
