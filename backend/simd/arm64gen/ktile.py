from asm import File

HDR = '''//go:build arm64 && !purego

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
'''

MMLA = '''//go:build arm64 && !purego

#include "textflag.h"

// The K tiles with USMMLA (I8MM): eight packed rows (kPackBytes) times
// four tokens qstride values apart, token j's results going to
// y[j*ldy:][:8]. Two 4-byte groups of two rows, zipped (ZIP1/ZIP2), make
// a 2x8 matrix, and the same 8 values of two tokens another: USMMLA
// multiplies the unsigned packed values by the signed activations into
// the 2x2 block of int32 sums of rows 2p, 2p+1 by tokens 2q, 2q+1. The
// sums times the sub-block scales (MLA) make Au, transposed (UZP1/UZP2) to
// the SDOT tiles' layout at the end; C (the offsets' and mins' part) and
// the float32 operations are theirs: the bits of kTileGo. nb > 0.
//
// The NEON instructions Go's assembler does not know are WORDs, the
// instruction in the comment beside each.
'''

def kprologue(f, a, name, nsub):
    f.raw('// func %s(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)' % name)
    a.raw('TEXT ·%s(SB), NOSPLIT, $0-72' % name)
    a.go('MOVD y+0(FP), R0; MOVD ldy+8(FP), R1; MOVD pack+16(FP), R2; MOVD qs+24(FP), R3; MOVD qstride+32(FP), R4')
    a.go('MOVD ds+40(FP), R5; MOVD bs+48(FP), R6; MOVD nb+56(FP), R7; MOVD off+64(FP), R13')
    # token pointers: y x21..x24, qs x8..x11, ds x12,x14,x15,x16, bs x17,x19,x20,x25
    a('lsl x1, x1, #2; mov x21, x0; add x22, x21, x1; add x23, x22, x1; add x24, x23, x1')
    a('mov x8, x3; add x9, x8, x4; add x10, x9, x4; add x11, x10, x4')
    a('dup v10.16b, w13')
    a('lsl x3, x7, #2; mov x12, x5; add x14, x12, x3; add x15, x14, x3; add x16, x15, x3')
    a('mov x3, #48; mul x3, x3, x7; mov x17, x6; add x19, x17, x3; add x20, x19, x3; add x25, x20, x3')
    a('movi v31.2d, #0')
    for t in range(4):
        a('stp q31, q31, [x%d]' % (21 + t))
    a.label('block')
    zero(a, range(16, 24))
    a('add x13, x2, #2048; mov x3, #%d' % nsub)
    a.label('sub')
    zero(a, range(0, 8))

def ktile(f, name, nsub, mn):
    """The SDOT tile: Au(t, h) in v16+2t+h, sub-block sums in v2t+h."""
    a = f.func()
    pb = 2048 + 64*nsub + 16*nsub + 64
    kprologue(f, a, name, nsub)
    a('ld1 {v8.4s, v9.4s}, [x13], #32')
    G = 256 // nsub // 4
    for g0 in range(0, G, 4):
        for t in range(4):
            a('ld1 {v%d.16b}, [x%d], #16' % (24 + t, 8 + t))
        for g in range(4):
            w = 28 + 2*(g % 2)
            a('ld1 {v%d.16b, v%d.16b}, [x2], #32' % (w, w+1))
            if not mn:
                a('sub v%d.16b, v%d.16b, v10.16b; sub v%d.16b, v%d.16b, v10.16b' % (w, w, w+1, w+1))
            for t in range(4):
                a('sdot v%d.4s, v%d.16b, v%d.4b[%d]; sdot v%d.4s, v%d.16b, v%d.4b[%d]' % (2*t, w, 24+t, g, 2*t+1, w+1, 24+t, g))
    for t in range(4):
        a('mla v%d.4s, v%d.4s, v8.4s; mla v%d.4s, v%d.4s, v9.4s' % (16+2*t, 2*t, 17+2*t, 2*t+1))
    a('subs x3, x3, #1')
    a.go('BNE sub')
    kepilogue(a, nsub, mn, pb, False)
    f.raw('')

def kmmla(f, name, nsub, mn):
    """The USMMLA tile: sums and Au in 2x2 blocks, rows 2p, 2p+1 by tokens
    2q, 2q+1: acc(p, q) in v(2p+q), Au(p, q) in v(16+2p+q); transposed to
    kTile's row layout before the epilogue."""
    a = f.func()
    pb = 2048 + 64*nsub + 16*nsub + 64
    kprologue(f, a, name, nsub)
    G = 256 // nsub // 4
    for g0 in range(0, G, 4):
        # tokens: T(q, m) = token 2q's and 2q+1's values 8m..8m+7 of the four groups
        a('ld1 {v24.16b}, [x8], #16; ld1 {v25.16b}, [x9], #16; ld1 {v26.16b}, [x10], #16; ld1 {v27.16b}, [x11], #16')
        a('zip1 v28.2d, v24.2d, v25.2d; zip2 v25.2d, v24.2d, v25.2d; zip1 v24.2d, v26.2d, v27.2d; zip2 v27.2d, v26.2d, v27.2d')
        T = {(0, 0): 28, (0, 1): 25, (1, 0): 24, (1, 1): 27}
        for m in range(2):
            # rows 2p, 2p+1, two groups each: P0 v29, P1 v10, P2 v8, P3 v11
            a('ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [x2], #64')
            a('zip1 v29.4s, v8.4s, v10.4s; zip2 v10.4s, v8.4s, v10.4s; zip1 v8.4s, v9.4s, v11.4s; zip2 v11.4s, v9.4s, v11.4s')
            P = [29, 10, 8, 11]
            for p in range(4):
                for q in range(2):
                    a('usmmla v%d.4s, v%d.16b, v%d.16b' % (2*p + q, P[p], T[(q, m)]))
    # Au += sums times the scales, [sc_2p, sc_2p, sc_2p+1, sc_2p+1]
    a('ld1 {v8.4s, v9.4s}, [x13], #32')
    a('zip1 v11.4s, v8.4s, v8.4s; zip2 v12.4s, v8.4s, v8.4s; zip1 v13.4s, v9.4s, v9.4s; zip2 v14.4s, v9.4s, v9.4s')
    S = [11, 12, 13, 14]
    for p in range(4):
        for q in range(2):
            a('mla v%d.4s, v%d.4s, v%d.4s' % (16 + 2*p + q, 2*p + q, S[p]))
    a('subs x3, x3, #1')
    a.go('BNE sub')
    # transpose: token 2q+e, rows 4h..4h+3 = uzp(1+e)(Au(2h, q), Au(2h+1, q))
    for q in range(2):
        for e in range(2):
            for h in range(2):
                a('uzp%d v%d.4s, v%d.4s, v%d.4s' % (1 + e, 2*(2*q + e) + h, 16 + 2*(2*h) + q, 16 + 2*(2*h+1) + q))
    for i in range(8):
        a('mov v%d.16b, v%d.16b' % (16 + i, i))
    kepilogue(a, nsub, mn, pb, True)
    f.raw('')

def kepilogue(a, nsub, mn, pb, usc):
    """From Au (row layout, v16..v23) and the pack at x13 (sc16): C, floats, y; next block.
    usc: the values were unsigned (no offset taken off): C for every format."""
    # x13 is at sc16 now; cf follows
    a('add x13, x13, #%d' % (32*nsub))
    if mn or usc:
        zero(a, range(0, 8))
        if nsub == 8:
            for t in range(4):
                a('ldr q%d, [x%d, #32]' % (8 + t, [17, 19, 20, 25][t]))
        else:
            for t in range(4):
                a('ld1 {v%d.8h, v%d.8h}, [x%d]' % (8 + 2*t, 9 + 2*t, [17, 19, 20, 25][t]))
        for k in range(nsub // 2):
            a('ld1 {v24.8h, v25.8h}, [x13], #32; uzp1 v26.8h, v24.8h, v25.8h; uzp2 v27.8h, v24.8h, v25.8h')
            for t in range(4):
                for c, j in ((26, 2*k), (27, 2*k+1)):
                    if nsub == 8:
                        X, i = 8 + t, j
                    else:
                        X, i = 8 + 2*t + j // 8, j % 8
                    a('smlal v%d.4s, v%d.4h, v%d.h[%d]; smlal2 v%d.4s, v%d.8h, v%d.h[%d]' % (2*t, c, X, i, 2*t+1, c, X, i))
    else:
        a('add x13, x13, #%d' % (16*nsub))
    if usc and not mn:
        for t in range(4):
            a('sub v%d.4s, v%d.4s, v%d.4s; sub v%d.4s, v%d.4s, v%d.4s' % (16+2*t, 16+2*t, 2*t, 17+2*t, 17+2*t, 2*t+1))
    # d, dm; then per token the float32 operations of kTileGo
    a('ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x13]')
    for t in range(4):
        D, Y, B = [12, 14, 15, 16][t], 21 + t, [17, 19, 20, 25][t]
        a('ldr s28, [x%d], #4; add x%d, x%d, #48' % (D, B, B))
        a('scvtf v%d.4s, v%d.4s; scvtf v%d.4s, v%d.4s' % (16+2*t, 16+2*t, 17+2*t, 17+2*t))
        a('fmul v29.4s, v24.4s, v28.s[0]; fmul v30.4s, v25.4s, v28.s[0]')
        a('fmul v%d.4s, v%d.4s, v29.4s; fmul v%d.4s, v%d.4s, v30.4s' % (16+2*t, 16+2*t, 17+2*t, 17+2*t))
        if mn:
            a('scvtf v%d.4s, v%d.4s; scvtf v%d.4s, v%d.4s' % (2*t, 2*t, 2*t+1, 2*t+1))
            a('fmul v29.4s, v26.4s, v28.s[0]; fmul v30.4s, v27.4s, v28.s[0]')
            a('fmul v%d.4s, v%d.4s, v29.4s; fmul v%d.4s, v%d.4s, v30.4s' % (2*t, 2*t, 2*t+1, 2*t+1))
            a('fsub v%d.4s, v%d.4s, v%d.4s; fsub v%d.4s, v%d.4s, v%d.4s' % (16+2*t, 16+2*t, 2*t, 17+2*t, 17+2*t, 2*t+1))
        a('ldp q29, q30, [x%d]' % Y)
        a('fadd v29.4s, v29.4s, v%d.4s; fadd v30.4s, v30.4s, v%d.4s' % (16+2*t, 17+2*t))
        a('stp q29, q30, [x%d]' % Y)
    a('add x2, x2, #%d' % (pb - 2048))
    a('subs x7, x7, #1')
    a.go('BNE block')
    a.go('RET')


def zero(a, regs):
    for r in regs:
        a('movi v%d.2d, #0' % r)

def q8tile(f, name):
    a = f.func()
    f.raw('// func %s(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, nb int)' % name)
    a.raw('TEXT ·%s(SB), NOSPLIT, $0-56' % name)
    a.go('MOVD y+0(FP), R0; MOVD ldy+8(FP), R1; MOVD pack+16(FP), R2; MOVD qs+24(FP), R3; MOVD qstride+32(FP), R4')
    a.go('MOVD ds+40(FP), R5; MOVD nb+48(FP), R7')
    a('lsl x1, x1, #2')
    a('mov x8, x3; add x9, x8, x4; add x10, x9, x4; add x11, x10, x4')
    a('lsl x3, x7, #2; mov x12, x5; add x14, x12, x3; add x15, x14, x3; add x16, x15, x3')
    a('movi v26.16b, #0x80')
    zero(a, range(8, 16))
    a.label('block')
    zero(a, range(0, 8))
    for t in range(4):
        a('ld1 {v%d.16b, v%d.16b}, [x%d], #32' % (16 + 2*t, 17 + 2*t, 8 + t))
    for g in range(8):
        a('ld1 {v24.16b, v25.16b}, [x2], #32; eor v24.16b, v24.16b, v26.16b; eor v25.16b, v25.16b, v26.16b')
        for t in range(4):
            X = 16 + 2*t + g // 4
            a('sdot v%d.4s, v24.16b, v%d.4b[%d]; sdot v%d.4s, v25.16b, v%d.4b[%d]' % (2*t, X, g % 4, 2*t+1, X, g % 4))
    a('ld1 {v28.4s, v29.4s}, [x2], #32')
    for t in range(4):
        a('ldr s30, [x%d], #4' % [12, 14, 15, 16][t])
        a('fmul v27.4s, v28.4s, v30.s[0]; fmul v31.4s, v29.4s, v30.s[0]')
        a('scvtf v%d.4s, v%d.4s; scvtf v%d.4s, v%d.4s' % (2*t, 2*t, 2*t+1, 2*t+1))
        a('fmul v%d.4s, v%d.4s, v27.4s; fmul v%d.4s, v%d.4s, v31.4s' % (2*t, 2*t, 2*t+1, 2*t+1))
        a('fadd v%d.4s, v%d.4s, v%d.4s; fadd v%d.4s, v%d.4s, v%d.4s' % (8+2*t, 8+2*t, 2*t, 9+2*t, 9+2*t, 2*t+1))
    a('subs x7, x7, #1')
    a.go('BNE block')
    for t in range(4):
        a('stp q%d, q%d, [x0]; add x0, x0, x1' % (8+2*t, 9+2*t))
    a.go('RET')
    f.raw('')

def files():
    out = {}
    for fname, hdr, funcs in [
        ('ktile_arm64.s', HDR, [(q8tile, 'q8Tile8x4SDOT'), (ktile, 'kTile32SDOT', 8, False), (ktile, 'kTile16SDOT', 16, False)]),
        ('ktilemin_arm64.s', HDR, [(ktile, 'kTile32MinSDOT', 8, True), (ktile, 'kTile16MinSDOT', 16, True)]),
        ('kmmla_arm64.s', MMLA, [(kmmla, 'kTile32I8MM', 8, False), (kmmla, 'kTile16I8MM', 16, False)]),
        ('kmmlamin_arm64.s', MMLA, [(kmmla, 'kTile32MinI8MM', 8, True), (kmmla, 'kTile16MinI8MM', 16, True)]),
    ]:
        f = File()
        f.raw(hdr)
        for fn, *args in funcs:
            fn(f, *args)
        out[fname] = f.render()
    return out
