//go:build amd64 && !purego

#include "textflag.h"

// The candidate scales of the K-quant scale searches, eight per YMM
// register, one lane per candidate: every lane runs the scalar search's
// float32 operations in the scalar order (sums in order of i), so the
// results are the bits of the plain Go (and ggml's C) code. Only the
// products and sums of one candidate meet; no FMA.

// func fitSumsAVX2(xm, x, u, w *float32, n int, iscale *float32, ngroups int, lo, hi int32, sums, lbuf *float32)
TEXT ·fitSumsAVX2(SB), NOSPLIT, $0-80
	MOVQ xm+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ u+16(FP), R12
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ iscale+40(FP), R8
	MOVQ ngroups+48(FP), R9
	MOVQ sums+64(FP), R10
	MOVQ lbuf+72(FP), R11
	MOVL lo+56(FP), AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	MOVL hi+60(FP), AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0x4B400000, AX // 12582912.0f: nearest_int's magic
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x007fffff, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x00400000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

sgroup:
	VMOVUPS (R8), Y10
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	XORQ BX, BX

sloop:
	VBROADCASTSS (SI)(BX*4), Y0
	VMULPS Y0, Y10, Y0
	VADDPS Y13, Y0, Y0
	VPAND Y14, Y0, Y0
	VPSUBD Y15, Y0, Y0
	VPMAXSD Y11, Y0, Y0
	VPMINSD Y12, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VMOVUPS Y0, (R11)
	ADDQ $32, R11
	VBROADCASTSS (R12)(BX*4), Y4
	VMULPS Y0, Y4, Y4 // u*l
	VADDPS Y4, Y7, Y7
	VBROADCASTSS (DX)(BX*4), Y1
	VMULPS Y0, Y1, Y1 // a = w*l
	VMULPS Y0, Y1, Y2 // a*l
	VADDPS Y2, Y8, Y8
	VBROADCASTSS (DI)(BX*4), Y3
	VMULPS Y3, Y1, Y3 // a*x
	VADDPS Y3, Y9, Y9
	INCQ BX
	CMPQ BX, CX
	JLT sloop

	VMOVUPS Y7, (R10)
	VMOVUPS Y8, 96(R10)
	VMOVUPS Y9, 192(R10)
	ADDQ $32, R10
	ADDQ $32, R8
	DECQ R9
	JNZ sgroup
	VZEROUPPER
	RET

// func fitErrAVX2(x, w *float32, n int, scale, mn *float32, ngroups int, mad bool, lbuf, errs *float32)
TEXT ·fitErrAVX2(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), DI
	MOVQ w+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ scale+24(FP), R8
	MOVQ mn+32(FP), R12
	MOVQ ngroups+40(FP), R9
	MOVBLZX mad+48(FP), AX
	MOVQ lbuf+56(FP), R11
	MOVQ errs+64(FP), R10
	MOVL $0x7fffffff, BX
	VMOVD BX, X15
	VPBROADCASTD X15, Y15

egroup:
	VMOVUPS (R8), Y10
	VMOVUPS (R12), Y11
	VXORPS Y7, Y7, Y7
	XORQ BX, BX
	TESTQ AX, AX
	JNZ emad

esq:
	VMULPS (R11), Y10, Y0 // scale*l
	ADDQ $32, R11
	VADDPS Y11, Y0, Y0 // + mn
	VBROADCASTSS (DI)(BX*4), Y1
	VSUBPS Y1, Y0, Y0 // - x
	VMULPS Y0, Y0, Y0
	VBROADCASTSS (DX)(BX*4), Y2
	VMULPS Y0, Y2, Y0
	VADDPS Y0, Y7, Y7
	INCQ BX
	CMPQ BX, CX
	JLT esq
	JMP enext

emad:
	VMULPS (R11), Y10, Y0
	ADDQ $32, R11
	VADDPS Y11, Y0, Y0
	VBROADCASTSS (DI)(BX*4), Y1
	VSUBPS Y1, Y0, Y0
	VANDPS Y15, Y0, Y0
	VBROADCASTSS (DX)(BX*4), Y2
	VMULPS Y0, Y2, Y0
	VADDPS Y0, Y7, Y7
	INCQ BX
	CMPQ BX, CX
	JLT emad

enext:
	VMOVUPS Y7, (R10)
	ADDQ $32, R10
	ADDQ $32, R8
	ADDQ $32, R12
	DECQ R9
	JNZ egroup
	VZEROUPPER
	RET

// func fitQKX2AVX2(xm, x, w *float32, n int, num *float32, den, sumW, sumX float32, nmax int32, mad bool, ov *float32, lbuf, out *float32)
//
// One group of eight candidates of make_qkx2_quants: iscale = num[k]/den,
// the levels (to lbuf, as fitSumsAVX2), the sums, each candidate's scale
// and min from them as ggml computes them (out[8+k], out[16+k]), and the
// weighted error with that scale and min (out[k]; NaN where D <= 0).
// Lanes whose ov[16+k] is all ones take scale ov[k] and min ov[8+k]
// instead, and are always valid (the first pass).
TEXT ·fitQKX2AVX2(SB), NOSPLIT, $0-88
	MOVQ xm+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ num+32(FP), R8
	MOVQ ov+64(FP), R9
	MOVQ lbuf+72(FP), R11
	MOVQ out+80(FP), R10
	MOVL nmax+52(FP), AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	VPXOR Y11, Y11, Y11
	MOVL $0x4B400000, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x007fffff, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x00400000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VBROADCASTSS den+40(FP), Y0
	VMOVUPS (R8), Y10
	VDIVPS Y0, Y10, Y10 // iscale = num/den
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	MOVQ R11, R12
	XORQ BX, BX

qloop:
	VBROADCASTSS (SI)(BX*4), Y0
	VMULPS Y0, Y10, Y0
	VADDPS Y13, Y0, Y0
	VPAND Y14, Y0, Y0
	VPSUBD Y15, Y0, Y0
	VPMAXSD Y11, Y0, Y0
	VPMINSD Y12, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VMOVUPS Y0, (R12)
	ADDQ $32, R12
	VBROADCASTSS (DX)(BX*4), Y1
	VMULPS Y0, Y1, Y1 // a = w*l
	VADDPS Y1, Y7, Y7 // sumL
	VMULPS Y0, Y1, Y2 // a*l
	VADDPS Y2, Y8, Y8 // sumL2
	VBROADCASTSS (DI)(BX*4), Y3
	VMULPS Y3, Y1, Y3 // a*x
	VADDPS Y3, Y9, Y9 // sumXL
	INCQ BX
	CMPQ BX, CX
	JLT qloop

	// Y7 sumL, Y8 sumL2, Y9 sumXL.
	VBROADCASTSS sumW+44(FP), Y4
	VBROADCASTSS sumX+48(FP), Y5
	VMULPS Y8, Y4, Y0 // sumW*sumL2
	VMULPS Y7, Y7, Y1 // sumL*sumL
	VSUBPS Y1, Y0, Y6 // D
	VMULPS Y9, Y4, Y0 // sumW*sumXL
	VMULPS Y7, Y5, Y1 // sumX*sumL
	VSUBPS Y1, Y0, Y0
	VDIVPS Y6, Y0, Y10 // scale
	VMULPS Y5, Y8, Y0 // sumL2*sumX
	VMULPS Y9, Y7, Y1 // sumL*sumXL
	VSUBPS Y1, Y0, Y0
	VDIVPS Y6, Y0, Y11 // min
	VXORPS Y3, Y3, Y3
	VCMPPS $0x1e, Y3, Y11, Y2 // min > 0 (GT_OQ)
	VDIVPS Y8, Y9, Y0 // sumXL/sumL2
	VBLENDVPS Y2, Y0, Y10, Y10
	VBLENDVPS Y2, Y3, Y11, Y11
	VCMPPS $0x1e, Y3, Y6, Y6 // valid: D > 0
	VMOVUPS 64(R9), Y2 // override mask
	VORPS Y2, Y6, Y6
	VMOVUPS (R9), Y0
	VBLENDVPS Y2, Y0, Y10, Y10
	VMOVUPS 32(R9), Y0
	VBLENDVPS Y2, Y0, Y11, Y11
	VMOVUPS Y10, 32(R10)
	VMOVUPS Y11, 64(R10)

	VXORPS Y7, Y7, Y7
	XORQ BX, BX
	MOVBLZX mad+56(FP), AX
	TESTQ AX, AX
	JNZ qmad

qsq:
	VMULPS (R11), Y10, Y0 // scale*l
	ADDQ $32, R11
	VADDPS Y11, Y0, Y0 // + min
	VBROADCASTSS (DI)(BX*4), Y1
	VSUBPS Y1, Y0, Y0 // - x
	VMULPS Y0, Y0, Y0
	VBROADCASTSS (DX)(BX*4), Y2
	VMULPS Y0, Y2, Y0
	VADDPS Y0, Y7, Y7
	INCQ BX
	CMPQ BX, CX
	JLT qsq
	JMP qdone

qmad:
	MOVL $0x7fffffff, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

qmadloop:
	VMULPS (R11), Y10, Y0
	ADDQ $32, R11
	VADDPS Y11, Y0, Y0
	VBROADCASTSS (DI)(BX*4), Y1
	VSUBPS Y1, Y0, Y0
	VANDPS Y15, Y0, Y0
	VBROADCASTSS (DX)(BX*4), Y2
	VMULPS Y0, Y2, Y0
	VADDPS Y0, Y7, Y7
	INCQ BX
	CMPQ BX, CX
	JLT qmadloop

qdone:
	VPCMPEQD Y0, Y0, Y0
	VANDNPS Y0, Y6, Y6 // not valid: all ones (NaN)
	VORPS Y6, Y7, Y7
	VMOVUPS Y7, (R10)
	VZEROUPPER
	RET
