//go:build amd64 && !purego

#include "textflag.h"

// func prefetchRowsAVX2(k, v unsafe.Pointer, stride, rows, width int)
//
// Prefetches into L1 (PREFETCHT0) the 64-byte lines of bytes 0..width-1
// of rows rows of k and of v, stride bytes apart; rows and width are
// positive.
TEXT ·prefetchRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), SI
	MOVQ v+8(FP), DI
	MOVQ stride+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ width+32(FP), R8

pfrows:
	XORQ BX, BX

pflines:
	PREFETCHT0 (SI)(BX*1)
	PREFETCHT0 (DI)(BX*1)
	ADDQ $64, BX
	CMPQ BX, R8
	JB   pflines
	ADDQ DX, SI
	ADDQ DX, DI
	DECQ CX
	JNZ  pfrows
	RET
