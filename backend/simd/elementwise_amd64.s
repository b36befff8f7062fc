//go:build amd64 && !purego

#include "textflag.h"
#include "simd_amd64.h"

// Element-wise kernels: RMSNorm's sum of squares and scaling, Add, SwiGLU,
// the exponentials of the attention softmax, and RoPE's rotation. Counts
// are positive multiples of 8; Go handles the rest.

// Constants of expf (elementwise.go), eight copies each.
SPLAT32(expLo<>, $0xc2ae0000c2ae0000)
SPLAT32(expHi<>, $0x42b0000042b00000)
SPLAT32(expLog2e<>, $0x3fb8aa3b3fb8aa3b)
SPLAT32(expHalf<>, $0x3f0000003f000000)
SPLAT32(expC1<>, $0x3f3180003f318000)
SPLAT32(expC2<>, $0xb95e8083b95e8083)
SPLAT32(expP0<>, $0x3950696739506967)
SPLAT32(expP1<>, $0x3ab743ce3ab743ce)
SPLAT32(expP2<>, $0x3c0889083c088908)
SPLAT32(expP3<>, $0x3d2aa9c13d2aa9c1)
SPLAT32(expP4<>, $0x3e2aaaaa3e2aaaaa)
SPLAT32(expP5<>, $0x3f0000003f000000)
SPLAT32(expOne<>, $0x3f8000003f800000)
SPLAT32(expBias<>, $0x0000007f0000007f)
SPLAT32(expSign<>, $0x8000000080000000)

// Constants of geluMul and swigluOAIMul (elementwise.go).
SPLAT32(geluK0<>, $0x3fcc422a3fcc422a)
SPLAT32(geluK1<>, $0x3d9222793d922279)
SPLAT32(oaiNegAlpha<>, $0xbfd9db23bfd9db23)
SPLAT32(oaiLimit<>, $0x40e0000040e00000)
SPLAT32(oaiNegLimit<>, $0xc0e00000c0e00000)

// EXPF sets Y0 = expf(Y0), with the operations of expf in elementwise.go
// in the same order; it uses Y1..Y4.
#define EXPF \
	VCMPPS $13, expLo<>(SB), Y0, Y2; \
	VMAXPS expLo<>(SB), Y0, Y0; \
	VMINPS expHi<>(SB), Y0, Y0; \
	VMULPS expLog2e<>(SB), Y0, Y1; \
	VADDPS expHalf<>(SB), Y1, Y1; \
	VROUNDPS $1, Y1, Y1; \
	VMULPS expC1<>(SB), Y1, Y3; \
	VSUBPS Y3, Y0, Y0; \
	VMULPS expC2<>(SB), Y1, Y3; \
	VSUBPS Y3, Y0, Y0; \
	VMULPS Y0, Y0, Y3; \
	VMOVUPS expP0<>(SB), Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS expP1<>(SB), Y4, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS expP2<>(SB), Y4, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS expP3<>(SB), Y4, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS expP4<>(SB), Y4, Y4; \
	VMULPS Y0, Y4, Y4; \
	VADDPS expP5<>(SB), Y4, Y4; \
	VMULPS Y3, Y4, Y4; \
	VADDPS Y0, Y4, Y4; \
	VADDPS expOne<>(SB), Y4, Y4; \
	VCVTTPS2DQ Y1, Y1; \
	VPADDD expBias<>(SB), Y1, Y1; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y1, Y4, Y0; \
	VANDPS Y2, Y0, Y0

// func sumSqAVX2(x *float32, n int) float32
TEXT ·sumSqAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ CX, AX
	ANDQ $-32, AX
	XORQ BX, BX
	CLEAR4(VXORPS, Y0, Y1, Y2, Y3)
	TESTQ AX, AX
	JZ   sq8

sq32:
	VMOVUPS (SI)(BX*4), Y4
	VMOVUPS 32(SI)(BX*4), Y5
	VMOVUPS 64(SI)(BX*4), Y6
	VMOVUPS 96(SI)(BX*4), Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ $32, BX
	CMPQ BX, AX
	JB   sq32

sq8:
	CMPQ BX, CX
	JAE  sqdone
	VMOVUPS (SI)(BX*4), Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ $8, BX
	JMP  sq8

sqdone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func scaleMulAVX2(y, x, gain *float32, s float32, n int)
//
// y = x * s * g.
TEXT ·scaleMulAsm(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), R8
	VBROADCASTSS s+24(FP), Y15
	MOVQ n+32(FP), CX
	XORQ BX, BX

smloop:
	VMULPS (SI)(BX*4), Y15, Y0
	VMULPS (R8)(BX*4), Y0, Y0
	VMOVUPS Y0, (DI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   smloop
	VZEROUPPER
	RET

// func addAVX2(x, y *float32, n int)
//
// x += y.
TEXT ·addAsm(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ BX, BX

addloop:
	VMOVUPS (DI)(BX*4), Y0
	VADDPS  (SI)(BX*4), Y0, Y0
	VMOVUPS Y0, (DI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   addloop
	VZEROUPPER
	RET

// func swigluAVX2(out, gate, up *float32, n int)
//
// out = gate / (1 + expf(-gate)) * up.
TEXT ·swigluAsm(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	XORQ BX, BX

sgloop:
	VMOVUPS (SI)(BX*4), Y5
	VXORPS  expSign<>(SB), Y5, Y0
	EXPF
	VADDPS  expOne<>(SB), Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMULPS  (R8)(BX*4), Y0, Y0
	VMOVUPS Y0, (DI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   sgloop
	VZEROUPPER
	RET

// func gegluAVX2(out, gate, up *float32, n int)
//
// out = gate / (1 + expf(-(gate * (k0 + k1*gate*gate)))) * up, as geluMul.
TEXT ·gegluAsm(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	XORQ BX, BX

ggloop:
	VMOVUPS (SI)(BX*4), Y5
	VMULPS  Y5, Y5, Y0
	VMULPS  geluK1<>(SB), Y0, Y0
	VADDPS  geluK0<>(SB), Y0, Y0
	VMULPS  Y5, Y0, Y0
	VXORPS  expSign<>(SB), Y0, Y0
	EXPF
	VADDPS  expOne<>(SB), Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMULPS  (R8)(BX*4), Y0, Y0
	VMOVUPS Y0, (DI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   ggloop
	VZEROUPPER
	RET

// func swigluOAIAVX2(out, gate, up *float32, n int)
//
// g = min(gate, 7), u = clamp(up, -7, 7), out = g / (1 + expf(g * -1.702))
// * (u + 1), as swigluOAIMul.
TEXT ·swigluOAIAsm(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), R8
	MOVQ n+24(FP), CX
	XORQ BX, BX

soloop:
	VMOVUPS (SI)(BX*4), Y5
	VMINPS  oaiLimit<>(SB), Y5, Y5
	VMOVUPS (R8)(BX*4), Y6
	VMINPS  oaiLimit<>(SB), Y6, Y6
	VMAXPS  oaiNegLimit<>(SB), Y6, Y6
	VADDPS  expOne<>(SB), Y6, Y6
	VMULPS  oaiNegAlpha<>(SB), Y5, Y0
	EXPF
	VADDPS  expOne<>(SB), Y0, Y0
	VDIVPS  Y0, Y5, Y0
	VMULPS  Y6, Y0, Y0
	VMOVUPS Y0, (DI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, CX
	JB   soloop
	VZEROUPPER
	RET

// func expSubAVX2(p, s *float32, m float32, n int) float32
//
// p = expf(s - m); returns the sum of p.
TEXT ·expSubAsm(SB), NOSPLIT, $0-36
	MOVQ p+0(FP), DI
	MOVQ s+8(FP), SI
	VBROADCASTSS m+16(FP), Y6
	MOVQ n+24(FP), CX
	XORQ BX, BX
	VXORPS Y7, Y7, Y7

esloop:
	VMOVUPS (SI)(BX*4), Y0
	VSUBPS  Y6, Y0, Y0
	EXPF
	VMOVUPS Y0, (DI)(BX*4)
	VADDPS  Y0, Y7, Y7
	ADDQ $8, BX
	CMPQ BX, CX
	JB   esloop
	VEXTRACTF128 $1, Y7, X1
	VADDPS X1, X7, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// func ropeAsm(x, cos, sin *float32, nHeads, half int)
//
// For each head of 2*half values: (a, b) = (a*c - b*s, a*s + b*c) for the
// pairs (i, i+half), each product rounded.
TEXT ·ropeAsm(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), DI
	MOVQ cos+8(FP), R8
	MOVQ sin+16(FP), R9
	MOVQ nHeads+24(FP), R10
	MOVQ half+32(FP), R11
	LEAQ (DI)(R11*4), SI

rphead:
	XORQ BX, BX

rppair:
	VMOVUPS (DI)(BX*4), Y0
	VMOVUPS (SI)(BX*4), Y1
	VMOVUPS (R8)(BX*4), Y2
	VMOVUPS (R9)(BX*4), Y3
	VMULPS Y2, Y0, Y4
	VMULPS Y3, Y1, Y5
	VSUBPS Y5, Y4, Y4
	VMULPS Y3, Y0, Y5
	VMULPS Y2, Y1, Y6
	VADDPS Y6, Y5, Y5
	VMOVUPS Y4, (DI)(BX*4)
	VMOVUPS Y5, (SI)(BX*4)
	ADDQ $8, BX
	CMPQ BX, R11
	JB   rppair
	LEAQ (DI)(R11*8), DI
	LEAQ (SI)(R11*8), SI
	DECQ R10
	JNZ  rphead
	VZEROUPPER
	RET

// func memSumAsm(p *byte, n int) uint64
//
// Returns the sum of the 64-bit words of n bytes, n a multiple of 256.
TEXT ·memSumAsm(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	CLEAR4(VPXOR, Y0, Y1, Y2, Y3)

msloop:
	VPADDQ (SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	VPADDQ 128(SI), Y0, Y0
	VPADDQ 160(SI), Y1, Y1
	VPADDQ 192(SI), Y2, Y2
	VPADDQ 224(SI), Y3, Y3
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ  msloop
	VPADDQ Y1, Y0, Y0
	VPADDQ Y3, Y2, Y2
	VPADDQ Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	MOVQ AX, ret+16(FP)
	VZEROUPPER
	RET
