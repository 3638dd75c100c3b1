//go:build !purego

#include "textflag.h"

// GROUP counts the six bytes at off(SI): each loaded zero-extended, then
// t[j] (1024*j bytes from DI) incremented at the value of byte j.
#define GROUP(off) \
	MOVBLZX (off+0)(SI), AX \
	MOVBLZX (off+1)(SI), BX \
	MOVBLZX (off+2)(SI), DX \
	MOVBLZX (off+3)(SI), R8 \
	MOVBLZX (off+4)(SI), R9 \
	MOVBLZX (off+5)(SI), R10 \
	INCL    0(DI)(AX*4) \
	INCL    1024(DI)(BX*4) \
	INCL    2048(DI)(DX*4) \
	INCL    3072(DI)(R8*4) \
	INCL    4096(DI)(R9*4) \
	INCL    5120(DI)(R10*4)

// func count48(t *[6][256]uint32, px []byte)
//
// 48 bytes (eight groups of six) a step. One PREFETCHT0 a step, 2 KiB
// ahead, covers every 64-byte line; a prefetch past the end of px does
// not fault.
TEXT ·count48(SB), NOSPLIT, $0-32
	MOVQ t+0(FP), DI
	MOVQ px_base+8(FP), SI
	MOVQ px_len+16(FP), CX
	SUBQ $48, CX                // CX = bytes left - 48
	JCS  done                   // fewer than 48

loop:
	PREFETCHT0 2048(SI)
	GROUP(0)
	GROUP(6)
	GROUP(12)
	GROUP(18)
	GROUP(24)
	GROUP(30)
	GROUP(36)
	GROUP(42)
	ADDQ $48, SI
	SUBQ $48, CX
	JCC  loop                   // 48 or more left

done:
	RET
