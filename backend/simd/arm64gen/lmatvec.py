from asm import File

HDR = '''//go:build arm64 && !purego

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
        if kind in ('q5_0', 'q5_1'):
            a.go('MOVD $l32qh<>(SB), R13')
            a('ld1 {v26.16b, v27.16b, v28.16b}, [x13]')  # v26 bytes 0,1; v27 bytes 2,3; v28 bits
            a('movi v25.16b, #0xf0' if kind == 'q5_0' else 'movi v25.16b, #0x10')
        if tab:
            a('ldr q23, [x6]')
        a.label('row')
        a('mov x8, x1; mov x9, x4; mov x10, x5; mov x12, x7')
        if hasmin:
            a('mov x11, x6')
        a('movi v31.2d, #0')
        a.label('block')
        # scale(s)
        if kind == 'mxfp4':
            a('ldrb w13, [x8]; sub w14, w13, #1; lsl w14, w14, #23; mov w15, #0x200000; lsl w15, w15, w13')
            a('cmp w13, #2; csel w14, w15, w14, lo; fmov s1, w14')
        else:
            a('ldr h1, [x8]')
        if hasmin:
            a('ldr h18, [x8, #2]')
        a('ldur q2, [x8, #%d]' % off)
        if kind in ('q5_0', 'q5_1'):
            a('ldur s8, [x8, #%d]' % (off - 4))
        a('add x8, x8, #%d' % bb)
        a('ld1 {v4.16b, v5.16b}, [x9], #32')
        a('ldr s16, [x10], #4')
        if hasmin:
            a('ldr s17, [x11], #4')
        a('and v6.16b, v2.16b, v30.16b; ushr v7.16b, v2.16b, #4')
        if kind == 'q4_0':
            a('sub v6.16b, v6.16b, v29.16b; sub v7.16b, v7.16b, v29.16b')
        if kind in ('q5_0', 'q5_1'):
            # lane i of v9 (v10) gets bit i (16+i) of qh: 0xff where set
            a('tbl v9.16b, {v8.16b}, v26.16b; tbl v10.16b, {v8.16b}, v27.16b')
            a('cmtst v9.16b, v9.16b, v28.16b; cmtst v10.16b, v10.16b, v28.16b')
            if kind == 'q5_0':  # value nib-16 (0xf0|nib) unless the bit is set
                a('bic v9.16b, v25.16b, v9.16b; bic v10.16b, v25.16b, v10.16b')
            else:  # value nib+16 where the bit is set
                a('and v9.16b, v9.16b, v25.16b; and v10.16b, v10.16b, v25.16b')
            a('orr v6.16b, v6.16b, v9.16b; orr v7.16b, v7.16b, v10.16b')
        if tab:
            a('tbl v6.16b, {v23.16b}, v6.16b; tbl v7.16b, {v23.16b}, v7.16b')
        a('movi v3.2d, #0')
        a('sdot v3.4s, v6.16b, v4.16b; sdot v3.4s, v7.16b, v5.16b')
        a('addv s3, v3.4s; scvtf s3, s3')
        if kind != 'mxfp4':
            a('fcvt s1, h1')
        a('fmul s1, s1, s16; fmul s3, s3, s1')  # float32(s) * (d*dx)
        if hasmin:
            a('fcvt s18, h18; fmul s18, s18, s17; fadd s3, s3, s18')  # + m*sx
        a('fadd s31, s31, s3')
        a('subs x12, x12, #1')
        a.go('BNE block')
        a('str s31, [x0], #4; add x1, x1, x2; subs x3, x3, #1')
        a.go('BNE row')
        a.go('RET')
        f.raw('')
    return f.render()

def files():
    return {'lmatvec_arm64.s': gen()}
