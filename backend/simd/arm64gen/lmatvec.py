from asm import File

HDR = '''//go:build arm64 && !purego

#include "textflag.h"

// The matrix-vector kernels of the legacy block formats (Q4_0, Q5_0,
// Q4_1, Q5_1) and the table formats (IQ4_NL, MXFP4) with SDOT: rows rows
// of rb bytes from w, each row times one token of Q8_0 activations (qs,
// ds; sx for the formats with a min), row r's result going to y[r], four
// rows at a time. Per block and row, the values are decoded to int8 in
// two vectors (values 0..15 and 16..31) and multiplied with the token's
// values by two SDOTs into an int32 vector; pairwise additions (ADDP) put
// the four rows' exact integers s in the lanes of one vector, and the
// rows' scales in another, for dot32's float32 operations lane by lane
// (no fused multiply-add): the bits of the Go reference. nb > 0, rows a
// positive multiple of 4.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.
'''

def data(f, name, vals):
    for i in range(0, len(vals), 8):
        v = 0
        for j, b in enumerate(vals[i:i+8]):
            v |= b << (8*j)
        f.raw('DATA %s+%d(SB)/8, $0x%016x' % (name, i, v))
    f.raw('GLOBL %s(SB), RODATA|NOPTR, $%d' % (name, len(vals)))
    f.raw('')

# fmt: (name, bytes per block, kind, offset of the 16 nibble bytes)
FORMATS = [
    ('q4_0MatVecNEON', 18, 'q4_0', 2),
    ('q5_0MatVecNEON', 22, 'q5_0', 6),
    ('q4_1MatVecNEON', 20, 'q4_1', 4),
    ('q5_1MatVecNEON', 24, 'q5_1', 8),
    ('iq4NLMatVecNEON', 18, 'iq4nl', 2),
    ('mxfp4MatVecNEON', 17, 'mxfp4', 1),
]

def gen():
    f = File()
    f.raw(HDR)
    data(f, 'l32qh<>', [0]*8 + [1]*8 + [2]*8 + [3]*8 + [1, 2, 4, 8, 16, 32, 64, 128]*2)
    for name, bb, kind, off in FORMATS:
        a = f.func()
        hasmin = kind in ('q4_1', 'q5_1')
        tab = kind in ('iq4nl', 'mxfp4')
        q5 = kind in ('q5_0', 'q5_1')
        extra = 'sx' if hasmin else ('kv' if tab else None)
        nargs = 8 if extra else 7
        f.raw('// func %s(y *float32, w *byte, rb, rows int, qs *int8, ds *float32%s, nb int)' % (
            name, {'sx': ', sx *float32', 'kv': ', kv *[16]int8', None: ''}[extra]))
        f.raw('TEXT ·%s(SB), NOSPLIT, $0-%d' % (name, 8*nargs))
        a.go('MOVD y+0(FP), R0; MOVD w+8(FP), R1; MOVD rb+16(FP), R2; MOVD rows+24(FP), R3')
        a.go('MOVD qs+32(FP), R4; MOVD ds+40(FP), R5')
        if extra:
            a.go('MOVD %s+48(FP), R6; MOVD nb+56(FP), R7' % extra)
        else:
            a.go('MOVD nb+48(FP), R7')
        a('movi v30.16b, #0x0f')
        if kind == 'q4_0':
            a('movi v29.16b, #8')
        if q5:
            a.go('MOVD $l32qh<>(SB), R13')
            a('ld1 {v24.16b, v25.16b, v26.16b}, [x13]')  # v24 bytes 0,1; v25 bytes 2,3; v26 bits
            a('movi v27.16b, #0xf0' if kind == 'q5_0' else 'movi v27.16b, #0x10')
        if tab:
            a('ldr q31, [x6]')
        if kind == 'mxfp4':
            a('mov w19, #0x200000')
        a.label('row')
        # four rows at x13..x16, walking through their blocks
        a('mov x13, x1; add x14, x13, x2; add x15, x14, x2; add x16, x15, x2')
        a('mov x9, x4; mov x10, x5; mov x12, x7')
        if hasmin:
            a('mov x11, x6')
        a('movi v21.2d, #0')
        a.label('block')
        a('ld1 {v4.16b, v5.16b}, [x9], #32; ldr s16, [x10], #4')
        if hasmin:
            a('ldr s17, [x11], #4')
        for r in range(4):
            R, lo, hi = 13 + r, 6 + 2*r, 7 + 2*r
            if kind == 'mxfp4':
                a('ldrb w20, [x%d], #1; sub w17, w20, #1; lsl w17, w17, #23; lsl w21, w19, w20' % R)
                a('cmp w20, #2; csel w17, w21, w17, lo; mov v18.s[%d], w17' % r)
            else:
                a('ld1 {v18.h}[%d], [x%d], #2' % (r, R))
            if hasmin:
                a('ld1 {v19.h}[%d], [x%d], #2' % (r, R))
            if q5:
                a('ldr s20, [x%d], #4' % R)
            a('ldr q%d, [x%d], #16' % (hi, R))
            a('and v{0}.16b, v{1}.16b, v30.16b; ushr v{1}.16b, v{1}.16b, #4'.format(lo, hi))
            if kind == 'q4_0':
                a('sub v{0}.16b, v{0}.16b, v29.16b; sub v{1}.16b, v{1}.16b, v29.16b'.format(lo, hi))
            if q5:
                # lane i of v14 (v15) gets bit i (16+i) of qh: 0xff where set
                a('tbl v14.16b, {v20.16b}, v24.16b; tbl v15.16b, {v20.16b}, v25.16b')
                a('cmtst v14.16b, v14.16b, v26.16b; cmtst v15.16b, v15.16b, v26.16b')
                if kind == 'q5_0':  # value nib-16 (0xf0|nib) unless the bit is set
                    a('bic v14.16b, v27.16b, v14.16b; bic v15.16b, v27.16b, v15.16b')
                else:  # value nib+16 where the bit is set
                    a('and v14.16b, v14.16b, v27.16b; and v15.16b, v15.16b, v27.16b')
                a('orr v{0}.16b, v{0}.16b, v14.16b; orr v{1}.16b, v{1}.16b, v15.16b'.format(lo, hi))
            if tab:
                a('tbl v{0}.16b, {{v31.16b}}, v{0}.16b; tbl v{1}.16b, {{v31.16b}}, v{1}.16b'.format(lo, hi))
            a('movi v%d.2d, #0' % r)
            a('sdot v{0}.4s, v{1}.16b, v4.16b; sdot v{0}.4s, v{2}.16b, v5.16b'.format(r, lo, hi))
        # the four rows' integers s in the lanes of v0; then dot32's float32 operations lane by lane
        a('addp v0.4s, v0.4s, v1.4s; addp v2.4s, v2.4s, v3.4s; addp v0.4s, v0.4s, v2.4s; scvtf v0.4s, v0.4s')
        if kind != 'mxfp4':
            a('fcvtl v18.4s, v18.4h')
        a('fmul v18.4s, v18.4s, v16.s[0]; fmul v0.4s, v0.4s, v18.4s')  # float32(s) * (d*dx)
        if hasmin:
            a('fcvtl v19.4s, v19.4h; fmul v19.4s, v19.4s, v17.s[0]; fadd v0.4s, v0.4s, v19.4s')  # + m*sx
        a('fadd v21.4s, v21.4s, v0.4s')
        a('subs x12, x12, #1')
        a.go('BNE block')
        a('st1 {v21.4s}, [x0], #16; add x1, x1, x2, lsl #2; subs x3, x3, #4')
        a.go('BNE row')
        a.go('RET')
        f.raw('')
    return f.render()

def files():
    return {'lmatvec_arm64.s': gen()}
