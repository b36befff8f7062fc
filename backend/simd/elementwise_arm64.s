//go:build arm64 && !purego

#include "textflag.h"
#include "simd_arm64.h"

// Element-wise kernels, four lanes a vector, eight values a step; n is a
// positive multiple of 8. Each operation of the Go version is one
// instruction here, in the same order and without fused multiply-adds, so
// the results have its bits (the sums of sumSqNEON and expSubNEON
// excepted, which are added in another order).

// CONST sets every lane of register v to the 32 bits given; it uses R17.
#define CONST(bits, v) \
	MOVW $(bits), R17; \
	DUPW4S(v, 17)

// EXPCONSTS loads the constants of EXP (elementwise.go's expf) to
// V17..V30: expLo, expHi, log2e, 0.5, expC1, expC2, expP0..expP5, 1 (as
// float32) and 127 (int32).
#define EXPCONSTS \
	CONST(0xc2ae0000, 17); \
	CONST(0x42b00000, 18); \
	CONST(0x3fb8aa3b, 19); \
	CONST(0x3f000000, 20); \
	CONST(0x3f318000, 21); \
	CONST(0xb95e8083, 22); \
	CONST(0x39506967, 23); \
	CONST(0x3ab743ce, 24); \
	CONST(0x3c088908, 25); \
	CONST(0x3d2aa9c1, 26); \
	CONST(0x3e2aaaaa, 27); \
	CONST(0x3f000000, 28); \
	CONST(0x3f800000, 29); \
	CONST(127, 30)

// EXP sets x to expf(x), with the constants of EXPCONSTS; m, a, b and c
// are temporaries. As expf: 0 where !(x >= expLo) (NaN included), x
// clamped to expHi, n = floor(x*log2e + 0.5), r = x - n*C1 - n*C2, the
// polynomial in r, times 2^n.
#define EXP(x, m, a, b, c) \
	FCMGE4S(m, x, 17); \
	FMIN4S(x, x, 18); \
	FMUL4S(a, x, 19); \
	FADD4S(a, a, 20); \
	FRINTM4S(a, a); \
	FMUL4S(b, a, 21); \
	FSUB4S(x, x, b); \
	FMUL4S(b, a, 22); \
	FSUB4S(x, x, b); \
	FMUL4S(c, x, x); \
	FMUL4S(b, 23, x); \
	FADD4S(b, b, 24); \
	FMUL4S(b, b, x); \
	FADD4S(b, b, 25); \
	FMUL4S(b, b, x); \
	FADD4S(b, b, 26); \
	FMUL4S(b, b, x); \
	FADD4S(b, b, 27); \
	FMUL4S(b, b, x); \
	FADD4S(b, b, 28); \
	FMUL4S(b, b, c); \
	FADD4S(b, b, x); \
	FADD4S(b, b, 29); \
	FCVTZS4S(a, a); \
	ADD4S(a, a, 30); \
	SHL23(a, a); \
	FMUL4S(x, b, a); \
	AND16B(x, x, m)

// SILU sets e to g / (1 + expf(-g)), g untouched; m, a, b, c temporaries.
#define SILU(g, e, m, a, b, c) \
	FNEG4S(e, g); \
	EXP(e, m, a, b, c); \
	FADD4S(e, e, 29); \
	FDIV4S(e, g, e)

// func swigluNEON(out, gate, up *float32, n int)
//
// out = siluMul(gate, up) element-wise.
TEXT ·swigluAsm(SB), NOSPLIT, $0-32
	MOVD out+0(FP), R0
	MOVD gate+8(FP), R1
	MOVD up+16(FP), R2
	MOVD n+24(FP), R3
	EXPCONSTS

swiglu8:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	VLD1.P 32(R2), [V2.D2, V3.D2]
	SILU(0, 4, 6, 8, 10, 12)
	SILU(1, 5, 7, 9, 11, 13)
	FMUL4S(4, 4, 2)
	FMUL4S(5, 5, 3)
	VST1.P [V4.D2, V5.D2], 32(R0)
	SUBS   $8, R3
	BNE    swiglu8
	RET

// func gegluNEON(out, gate, up *float32, n int)
//
// out = geluMul(gate, up) element-wise: t = (g*g*geluK1 + geluK0) * g,
// g / (1 + expf(-t)) * u.
TEXT ·gegluAsm(SB), NOSPLIT, $0-32
	MOVD out+0(FP), R0
	MOVD gate+8(FP), R1
	MOVD up+16(FP), R2
	MOVD n+24(FP), R3
	EXPCONSTS
	CONST(0x3fcc422a, 15) // geluK0
	CONST(0x3d922279, 16) // geluK1

geglu8:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	VLD1.P 32(R2), [V2.D2, V3.D2]
	FMUL4S(4, 0, 0)
	FMUL4S(5, 1, 1)
	FMUL4S(4, 4, 16)
	FMUL4S(5, 5, 16)
	FADD4S(4, 4, 15)
	FADD4S(5, 5, 15)
	FMUL4S(4, 4, 0)
	FMUL4S(5, 5, 1)
	FNEG4S(4, 4)
	FNEG4S(5, 5)
	EXP(4, 6, 8, 10, 12)
	EXP(5, 7, 9, 11, 13)
	FADD4S(4, 4, 29)
	FADD4S(5, 5, 29)
	FDIV4S(4, 0, 4)
	FDIV4S(5, 1, 5)
	FMUL4S(4, 4, 2)
	FMUL4S(5, 5, 3)
	VST1.P [V4.D2, V5.D2], 32(R0)
	SUBS   $8, R3
	BNE    geglu8
	RET

// func swigluOAINEON(out, gate, up *float32, n int)
//
// out = swigluOAIMul(gate, up) element-wise: g = min(g, 7), u = clamp(u,
// -7, 7) with FMINNM and FMAXNM (the limit for a NaN, as Go), then
// g / (1 + expf(g * -1.702)) * (u + 1).
TEXT ·swigluOAIAsm(SB), NOSPLIT, $0-32
	MOVD out+0(FP), R0
	MOVD gate+8(FP), R1
	MOVD up+16(FP), R2
	MOVD n+24(FP), R3
	EXPCONSTS
	CONST(0x40e00000, 14) // 7
	CONST(0xc0e00000, 15) // -7
	CONST(0xbfd9db23, 16) // -1.702

oai8:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	VLD1.P 32(R2), [V2.D2, V3.D2]
	FMINNM4S(0, 0, 14)
	FMINNM4S(1, 1, 14)
	FMINNM4S(2, 2, 14)
	FMINNM4S(3, 3, 14)
	FMAXNM4S(2, 2, 15)
	FMAXNM4S(3, 3, 15)
	FMUL4S(4, 0, 16)
	FMUL4S(5, 1, 16)
	EXP(4, 6, 8, 10, 12)
	EXP(5, 7, 9, 11, 13)
	FADD4S(4, 4, 29)
	FADD4S(5, 5, 29)
	FDIV4S(4, 0, 4)
	FDIV4S(5, 1, 5)
	FADD4S(2, 2, 29)
	FADD4S(3, 3, 29)
	FMUL4S(4, 4, 2)
	FMUL4S(5, 5, 3)
	VST1.P [V4.D2, V5.D2], 32(R0)
	SUBS   $8, R3
	BNE    oai8
	RET

// func expSubNEON(p, s *float32, m float32, n int) float32
//
// p[i] = expf(s[i] - m); returns the sum of p, in two vectors of four
// lanes added at the end.
TEXT ·expSubAsm(SB), NOSPLIT, $0-36
	MOVD  p+0(FP), R0
	MOVD  s+8(FP), R1
	FMOVS m+16(FP), F16
	MOVD  n+24(FP), R3
	EXPCONSTS
	VDUP  V16.S[0], V16.S4
	ZERO(14)
	ZERO(15)

expsub8:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	FSUB4S(0, 0, 16)
	FSUB4S(1, 1, 16)
	EXP(0, 6, 8, 10, 12)
	EXP(1, 7, 9, 11, 13)
	FADD4S(14, 14, 0)
	FADD4S(15, 15, 1)
	VST1.P [V0.D2, V1.D2], 32(R0)
	SUBS   $8, R3
	BNE    expsub8
	FADD4S(14, 14, 15)
	FADDP4S(14, 14, 14)
	FADDP4S(14, 14, 14)
	FMOVS  F14, ret+32(FP)
	RET

// func sumSqNEON(x *float32, n int) float64
//
// Returns the sum of x[i]^2, in float64: four vectors of two lanes (each
// square exact), added at the end.
TEXT ·sumSqNEON(SB), NOSPLIT, $0-24
	MOVD x+0(FP), R0
	MOVD n+8(FP), R1
	ZERO(16)
	ZERO(17)
	ZERO(18)
	ZERO(19)

sumsq8:
	VLD1.P 32(R0), [V0.D2, V1.D2]
	FCVTL2D(2, 0)
	FCVTL22D(3, 0)
	FCVTL2D(4, 1)
	FCVTL22D(5, 1)
	FMLA2D(16, 2, 2)
	FMLA2D(17, 3, 3)
	FMLA2D(18, 4, 4)
	FMLA2D(19, 5, 5)
	SUBS $8, R1
	BNE  sumsq8
	FADD2D(16, 16, 17)
	FADD2D(18, 18, 19)
	FADD2D(16, 16, 18)
	FADDPD(16, 16)
	FMOVD F16, ret+16(FP)
	RET

// func scaleMulNEON(y, x, gain *float32, s float32, n int)
//
// y = float32(x*s) * gain.
TEXT ·scaleMulAsm(SB), NOSPLIT, $0-40
	MOVD  y+0(FP), R0
	MOVD  x+8(FP), R1
	MOVD  gain+16(FP), R2
	FMOVS s+24(FP), F16
	MOVD  n+32(FP), R3
	VDUP  V16.S[0], V16.S4

scalemul8:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	VLD1.P 32(R2), [V2.D2, V3.D2]
	FMUL4S(0, 0, 16)
	FMUL4S(1, 1, 16)
	FMUL4S(0, 0, 2)
	FMUL4S(1, 1, 3)
	VST1.P [V0.D2, V1.D2], 32(R0)
	SUBS   $8, R3
	BNE    scalemul8
	RET

// func addNEON(x, y *float32, n int)
//
// x += y.
TEXT ·addAsm(SB), NOSPLIT, $0-24
	MOVD x+0(FP), R0
	MOVD y+8(FP), R1
	MOVD n+16(FP), R3

add8:
	VLD1   (R0), [V0.D2, V1.D2]
	VLD1.P 32(R1), [V2.D2, V3.D2]
	FADD4S(0, 0, 2)
	FADD4S(1, 1, 3)
	VST1.P [V0.D2, V1.D2], 32(R0)
	SUBS   $8, R3
	BNE    add8
	RET

// func ropeAsm(x, cos, sin *float32, nHeads, half int)
//
// Rotates nHeads heads of 2*half values at x as ropeGo: (a, b) = (x[i],
// x[i+half]) becomes (a*c - b*s, a*s + b*c), each product rounded; half
// is a positive multiple of 4.
TEXT ·ropeAsm(SB), NOSPLIT, $0-40
	MOVD x+0(FP), R0
	MOVD nHeads+24(FP), R3
	MOVD half+32(FP), R4
	LSL  $2, R4, R5 // half in bytes

ropehead:
	MOVD cos+8(FP), R1
	MOVD sin+16(FP), R2
	ADD  R5, R0, R6 // the second halves
	MOVD R4, R7

rope4:
	VLD1   (R0), [V0.D2]
	VLD1   (R6), [V1.D2]
	VLD1.P 16(R1), [V2.D2]
	VLD1.P 16(R2), [V3.D2]
	FMUL4S(4, 0, 2)
	FMUL4S(5, 1, 3)
	FMUL4S(6, 0, 3)
	FMUL4S(7, 1, 2)
	FSUB4S(4, 4, 5)
	FADD4S(6, 6, 7)
	VST1.P [V4.D2], 16(R0)
	VST1.P [V6.D2], 16(R6)
	SUBS   $4, R7
	BNE    rope4
	MOVD   R6, R0
	SUBS   $1, R3
	BNE    ropehead
	RET
