//go:build !purego

#include "textflag.h"

// func count48(t *[6][256]uint32, px []byte)
//
// 48 bytes (eight groups of six) a step: each byte loaded zero-extended,
// then the six counters of its group incremented in memory, t[j] at
// 1024*j bytes from t. One PREFETCHT0 a step, 2 KiB ahead, covers every
// 64-byte line; a prefetch past the end of px does not fault.
TEXT ·count48(SB), NOSPLIT, $0-32
	MOVQ t+0(FP), DI
	MOVQ px_base+8(FP), SI
	MOVQ px_len+16(FP), CX
	SHRQ $4, CX                 // len/48 = (len/16)/3
	MOVQ CX, AX
	MOVQ $0xaaaaaaaaaaaaaaab, DX
	MULQ DX                     // DX = floor(len/16 * (2^65+1)/3 / 2^64)
	SHRQ $1, DX
	MOVQ DX, CX
	TESTQ CX, CX
	JEQ  done

loop:
	PREFETCHT0 2048(SI)
	MOVBLZX 0(SI), AX
	MOVBLZX 1(SI), BX
	MOVBLZX 2(SI), DX
	MOVBLZX 3(SI), R8
	MOVBLZX 4(SI), R9
	MOVBLZX 5(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 6(SI), AX
	MOVBLZX 7(SI), BX
	MOVBLZX 8(SI), DX
	MOVBLZX 9(SI), R8
	MOVBLZX 10(SI), R9
	MOVBLZX 11(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 12(SI), AX
	MOVBLZX 13(SI), BX
	MOVBLZX 14(SI), DX
	MOVBLZX 15(SI), R8
	MOVBLZX 16(SI), R9
	MOVBLZX 17(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 18(SI), AX
	MOVBLZX 19(SI), BX
	MOVBLZX 20(SI), DX
	MOVBLZX 21(SI), R8
	MOVBLZX 22(SI), R9
	MOVBLZX 23(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 24(SI), AX
	MOVBLZX 25(SI), BX
	MOVBLZX 26(SI), DX
	MOVBLZX 27(SI), R8
	MOVBLZX 28(SI), R9
	MOVBLZX 29(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 30(SI), AX
	MOVBLZX 31(SI), BX
	MOVBLZX 32(SI), DX
	MOVBLZX 33(SI), R8
	MOVBLZX 34(SI), R9
	MOVBLZX 35(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 36(SI), AX
	MOVBLZX 37(SI), BX
	MOVBLZX 38(SI), DX
	MOVBLZX 39(SI), R8
	MOVBLZX 40(SI), R9
	MOVBLZX 41(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	MOVBLZX 42(SI), AX
	MOVBLZX 43(SI), BX
	MOVBLZX 44(SI), DX
	MOVBLZX 45(SI), R8
	MOVBLZX 46(SI), R9
	MOVBLZX 47(SI), R10
	INCL    0(DI)(AX*4)
	INCL    1024(DI)(BX*4)
	INCL    2048(DI)(DX*4)
	INCL    3072(DI)(R8*4)
	INCL    4096(DI)(R9*4)
	INCL    5120(DI)(R10*4)
	ADDQ $48, SI
	DECQ CX
	JNE  loop

done:
	RET
