// NEON instructions that Go's arm64 assembler has no mnemonic for,
// encoded with WORD. Operands are register numbers (0..31, the V
// registers; for the general register of DUPW4S the X register number):
// d the destination, n and m the sources, in the order of the Arm
// assembly instruction named in each comment. Vector arithmetic is on
// four float32 or int32 lanes (.4S) unless the name says otherwise. The
// encodings were checked with llvm-mc -triple=aarch64.
//
// The kernels load and store whole registers (VLD1, VST1) with the .D2
// arrangement whatever their lanes hold: on a little-endian CPU the bytes
// are those of .S4 or .B16, and an emulator (qemu, which the tests run
// under) moves two elements a register instead of four or sixteen.

#define NEON3(op, d, n, m) WORD $((op) | (m)<<16 | (n)<<5 | (d))
#define NEON2(op, d, n) WORD $((op) | (n)<<5 | (d))
// By element, the lane idx (0..3) of a .S vector register m.
#define NEONEL(op, d, n, m, idx) WORD $((op) | ((idx)&1)<<21 | (m)<<16 | ((idx)>>1)<<11 | (n)<<5 | (d))

#define FADD4S(d, n, m) NEON3(0x4e20d400, d, n, m)   // fadd vd.4s, vn.4s, vm.4s
#define FSUB4S(d, n, m) NEON3(0x4ea0d400, d, n, m)   // fsub vd.4s, vn.4s, vm.4s
#define FMUL4S(d, n, m) NEON3(0x6e20dc00, d, n, m)   // fmul vd.4s, vn.4s, vm.4s
#define FDIV4S(d, n, m) NEON3(0x6e20fc00, d, n, m)   // fdiv vd.4s, vn.4s, vm.4s
#define FMLA4S(d, n, m) NEON3(0x4e20cc00, d, n, m)   // fmla vd.4s, vn.4s, vm.4s (vd += vn*vm, fused)
#define FADDP4S(d, n, m) NEON3(0x6e20d400, d, n, m)  // faddp vd.4s, vn.4s, vm.4s
#define FMAX4S(d, n, m) NEON3(0x4e20f400, d, n, m)   // fmax vd.4s, vn.4s, vm.4s
#define FMIN4S(d, n, m) NEON3(0x4ea0f400, d, n, m)   // fmin vd.4s, vn.4s, vm.4s
#define FMINNM4S(d, n, m) NEON3(0x4ea0c400, d, n, m) // fminnm vd.4s, vn.4s, vm.4s
#define FMAXNM4S(d, n, m) NEON3(0x4e20c400, d, n, m) // fmaxnm vd.4s, vn.4s, vm.4s
#define FCMGE4S(d, n, m) NEON3(0x6e20e400, d, n, m)  // fcmge vd.4s, vn.4s, vm.4s
#define FMLA2D(d, n, m) NEON3(0x4e60cc00, d, n, m)   // fmla vd.2d, vn.2d, vm.2d
#define FADD2D(d, n, m) NEON3(0x4e60d400, d, n, m)   // fadd vd.2d, vn.2d, vm.2d
#define ADD4S(d, n, m) NEON3(0x4ea08400, d, n, m)    // add vd.4s, vn.4s, vm.4s
#define ADD2D(d, n, m) NEON3(0x4ee08400, d, n, m)    // add vd.2d, vn.2d, vm.2d
#define ADDP4S(d, n, m) NEON3(0x4ea0bc00, d, n, m)   // addp vd.4s, vn.4s, vm.4s
#define AND16B(d, n, m) NEON3(0x4e201c00, d, n, m)  // and vd.16b, vn.16b, vm.16b
#define SDOT(d, n, m) NEON3(0x4e809400, d, n, m)     // sdot vd.4s, vn.16b, vm.16b
#define SMMLA(d, n, m) NEON3(0x4e80a400, d, n, m)    // smmla vd.4s, vn.16b, vm.16b
#define ZIP12D(d, n, m) NEON3(0x4ec03800, d, n, m)   // zip1 vd.2d, vn.2d, vm.2d
#define ZIP22D(d, n, m) NEON3(0x4ec07800, d, n, m)   // zip2 vd.2d, vn.2d, vm.2d
#define ZIP14S(d, n, m) NEON3(0x4e803800, d, n, m)   // zip1 vd.4s, vn.4s, vm.4s
#define ZIP24S(d, n, m) NEON3(0x4e807800, d, n, m)   // zip2 vd.4s, vn.4s, vm.4s
#define UZP14S(d, n, m) NEON3(0x4e801800, d, n, m)   // uzp1 vd.4s, vn.4s, vm.4s
#define UZP24S(d, n, m) NEON3(0x4e805800, d, n, m)   // uzp2 vd.4s, vn.4s, vm.4s
#define SMULL8H(d, n, m) NEON3(0x0e20c000, d, n, m)  // smull vd.8h, vn.8b, vm.8b
#define SMULL28H(d, n, m) NEON3(0x4e20c000, d, n, m) // smull2 vd.8h, vn.16b, vm.16b
#define SMLAL28H(d, n, m) NEON3(0x4e208000, d, n, m) // smlal2 vd.8h, vn.16b, vm.16b

#define FMLAEL4S(d, n, m, idx) NEONEL(0x4f801000, d, n, m, idx) // fmla vd.4s, vn.4s, vm.s[idx]
#define FMULEL4S(d, n, m, idx) NEONEL(0x4f809000, d, n, m, idx) // fmul vd.4s, vn.4s, vm.s[idx]

#define FMAXV(d, n) NEON2(0x6e30f800, d, n)    // fmaxv sd, vn.4s
#define FABS4S(d, n) NEON2(0x4ea0f800, d, n)   // fabs vd.4s, vn.4s
#define FNEG4S(d, n) NEON2(0x6ea0f800, d, n)   // fneg vd.4s, vn.4s
#define FRINTM4S(d, n) NEON2(0x4e219800, d, n) // frintm vd.4s, vn.4s (toward -inf)
#define FCVTZS4S(d, n) NEON2(0x4ea1b800, d, n) // fcvtzs vd.4s, vn.4s
#define FCVTNS4S(d, n) NEON2(0x4e21a800, d, n) // fcvtns vd.4s, vn.4s (to nearest even)
#define SCVTF4S(d, n) NEON2(0x4e21d800, d, n)  // scvtf vd.4s, vn.4s
#define FCVTL4S(d, n) NEON2(0x0e217800, d, n)  // fcvtl vd.4s, vn.4h
#define FCVTL24S(d, n) NEON2(0x4e217800, d, n) // fcvtl2 vd.4s, vn.8h
#define FCVTN4H(d, n) NEON2(0x0e216800, d, n)  // fcvtn vd.4h, vn.4s
#define FCVTN28H(d, n) NEON2(0x4e216800, d, n) // fcvtn2 vd.8h, vn.4s
#define FCVTL2D(d, n) NEON2(0x0e617800, d, n)  // fcvtl vd.2d, vn.2s
#define FCVTL22D(d, n) NEON2(0x4e617800, d, n) // fcvtl2 vd.2d, vn.4s
#define FADDPD(d, n) NEON2(0x7e70d800, d, n)   // faddp dd, vn.2d
#define SADDLP4S(d, n) NEON2(0x4e602800, d, n) // saddlp vd.4s, vn.8h
#define SADALP4S(d, n) NEON2(0x4e606800, d, n) // sadalp vd.4s, vn.8h
#define ADDV4S(d, n) NEON2(0x4eb1b800, d, n)   // addv sd, vn.4s
#define XTN4H(d, n) NEON2(0x0e612800, d, n)    // xtn vd.4h, vn.4s
#define XTN28H(d, n) NEON2(0x4e612800, d, n)   // xtn2 vd.8h, vn.4s
#define XTN8B(d, n) NEON2(0x0e212800, d, n)    // xtn vd.8b, vn.8h
#define XTN216B(d, n) NEON2(0x4e212800, d, n)  // xtn2 vd.16b, vn.8h
#define DUPW4S(d, n) NEON2(0x4e040c00, d, n)   // dup vd.4s, wn (n a general register)
#define ZERO(d) WORD $(0x6f00e400 | (d)) // movi vd.2d, #0
#define SHL23(d, n) NEON2(0x4f375400, d, n)    // shl vd.4s, vn.4s, #23
#define SHLL16(d, n) NEON2(0x2e613800, d, n)   // shll vd.4s, vn.4h, #16
#define SHLL216(d, n) NEON2(0x6e613800, d, n)  // shll2 vd.4s, vn.8h, #16

// LOADF32 loads 8 float32 from register r, moving it on, to the vector
// registers named vlo and vhi, numbered lo and hi; LOADF16 loads 8 half
// precision values and widens them (FCVTL, FCVTL2: exact).
#define LOADF32(r, vlo, vhi, lo, hi) VLD1.P 32(r), [vlo.D2, vhi.D2]

#define LOADF16(r, vlo, vhi, lo, hi) \
	VLD1.P 16(r), [vlo.D2]; \
	FCVTL24S(hi, lo); \
	FCVTL4S(lo, lo)
