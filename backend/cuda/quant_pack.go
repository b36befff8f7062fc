package cuda

// Upload layout of the block types other than Q8_0 (see kernels/formats.cuh):
// a row of K values is K/32 units of 32 values; each unit's quants go to
// the lo plane (the low bits of every value) and the hi plane (the bits
// above), each plane row-major with a fixed size a unit, and each block's
// scale bytes, unchanged, to the planes m0 and m1. The bits are permuted,
// never decoded to values: a matrix takes as many bytes as in the file
// (Q3_K: 2 of padding a block), plus rows of zeros up to a multiple of 64.

import (
	"encoding/binary"
	"fmt"

	"inferno/arch"
	"inferno/gguf"
)

// q8hFor reports whether a model's Q8_0 matrices run on the generic block
// kernels, against 8-bit activations like every other type: mvq_q8_0 for
// decode and mmh_q8_0 (f16 tensor cores) for prompts (and the batch
// runner's products from mmMin tokens on), rather than on Q8_0's own
// mvf_q8 (float activations, exactly the CPU's inputs) and mm_q8 (int8
// tiles against int16 activations: two int8 products each). Measured on
// the H200 in one run (2026-12-02): 8B shape tg128 352.4 against 288.4
// tok/s, pp512 11,948 against 7,969; 0.6B tg128 1,561 against 1,288, pp512
// 50,089 against 51,367. The 0.6B's decode would gain too, but the small
// models keep the exact kernels: their logits match the CPU's and the
// batch runner's (int16 activations) within 1e-3, which the correctness
// ladder holds them to. So the generic kernels from a hidden size of 2048
// on (tuning.q8h; this package's tests set it both ways).
func q8hFor(c *arch.Config) bool { return c.Hidden >= 2048 }

func unpackQ4_0(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:2])
	nib(q, b[2:18])
}

func unpackQ4_1(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:4])
	nib(q, b[4:20])
}

// nib unpacks 16 bytes of nibbles: byte j holds value j (low) and j+16.
func nib(q []uint8, qs []byte) {
	for j := range 16 {
		q[j], q[j+16] = qs[j]&15, qs[j]>>4
	}
}

func unpackQ5_0(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:2])
	fifth(q, binary.LittleEndian.Uint32(b[2:]), b[6:22])
}

func unpackQ5_1(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:4])
	fifth(q, binary.LittleEndian.Uint32(b[4:]), b[8:24])
}

// fifth unpacks Q5_0/Q5_1 quants: nibbles as nib, bit j of qh the fifth bit of value j.
func fifth(q []uint8, qh uint32, qs []byte) {
	nib(q, qs)
	for j := range 32 {
		q[j] |= uint8((qh>>j)&1) << 4
	}
}

func unpackQ8_0(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:2])
	copy(q, b[2:34])
}

func unpackIQ4_NL(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:2])
	nib(q, b[2:18])
}

// unpackMXFP4: the E8M0 exponent e, then the indices as IQ4_NL's.
func unpackMXFP4(b []byte, q []uint8, m0, m1 []byte) {
	m0[0] = b[0]
	nib(q, b[1:17])
}

func unpackIQ4_XS(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:8]) // d, scales_h, scales_l[4]
	for ib := range 8 {
		nib(q[32*ib:], b[8+16*ib:])
	}
}

// unpackQ2_K: scales[16], qs[64], d, dmin. Value 128n + 32j + l is bits 2j
// of qs[32n + l].
func unpackQ2_K(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:16])
	copy(m1, b[80:84])
	qs := b[16:80]
	for n := range 2 {
		for j := range 4 {
			for l := range 32 {
				q[128*n+32*j+l] = (qs[32*n+l] >> (2 * j)) & 3
			}
		}
	}
}

// unpackQ3_K: hmask[32], qs[64], scales[12], d. Value 128n + 32j + l: low
// bits as Q2_K's, high bit bit 4n+j of hmask[l]. m0: scales, d, two zeros.
func unpackQ3_K(b []byte, q []uint8, m0, m1 []byte) {
	hm, qs := b[:32], b[32:96]
	copy(m0, b[96:110])
	m0[14], m0[15] = 0, 0
	for n := range 2 {
		for j := range 4 {
			for l := range 32 {
				q[128*n+32*j+l] = (qs[32*n+l]>>(2*j))&3 | ((hm[l]>>(4*n+j))&1)<<2
			}
		}
	}
}

// unpackQ4_K: d, dmin, scales[12], qs[128]. Value 64c + l is the low nibble
// of qs[32c + l], value 64c + 32 + l its high nibble.
func unpackQ4_K(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:16])
	qs := b[16:144]
	for c := range 4 {
		for l := range 32 {
			q[64*c+l], q[64*c+32+l] = qs[32*c+l]&15, qs[32*c+l]>>4
		}
	}
}

// unpackQ5_K: d, dmin, scales[12], qh[32], qs[128]: Q4_K's nibbles, the
// fifth bit of value 64c + l bit 2c of qh[l], of 64c + 32 + l bit 2c+1.
func unpackQ5_K(b []byte, q []uint8, m0, m1 []byte) {
	copy(m0, b[:16])
	qh, qs := b[16:48], b[48:176]
	for c := range 4 {
		for l := range 32 {
			q[64*c+l] = qs[32*c+l]&15 | ((qh[l]>>(2*c))&1)<<4
			q[64*c+32+l] = qs[32*c+l]>>4 | ((qh[l]>>(2*c+1))&1)<<4
		}
	}
}

// unpackQ6_K: ql[128], qh[64], scales[16], d. In half n: value 128n + l
// (l < 32) is ql[64n+l] low | qh[32n+l] bits 0-1; +32: ql[64n+32+l] low |
// bits 2-3; +64: ql[64n+l] high | bits 4-5; +96: ql[64n+32+l] high | bits 6-7.
func unpackQ6_K(b []byte, q []uint8, m0, m1 []byte) {
	ql, qh := b[:128], b[128:192]
	copy(m0, b[192:208])
	copy(m1, b[208:210])
	for n := range 2 {
		for l := range 32 {
			h := qh[32*n+l]
			q[128*n+l] = ql[64*n+l]&15 | (h&3)<<4
			q[128*n+32+l] = ql[64*n+32+l]&15 | ((h>>2)&3)<<4
			q[128*n+64+l] = ql[64*n+l]>>4 | ((h>>4)&3)<<4
			q[128*n+96+l] = ql[64*n+32+l]>>4 | ((h>>6)&3)<<4
		}
	}
}

// packUnit writes the quants of one unit (32 values) into its lo and hi
// plane bytes (bits lo and hi a value; see kernels/formats.cuh).
func packUnit(q []uint8, lo, hi []byte, loBits, hiBits int) {
	switch loBits {
	case 4:
		for j := range 16 {
			lo[j] = q[j]&15 | (q[j+16]&15)<<4
		}
	case 2:
		twoBit(lo, q, 0)
	case 8:
		copy(lo, q[:32])
	}
	switch hiBits {
	case 1:
		for i := range 4 {
			var v byte
			for t := range 8 {
				v |= ((q[4*t+i] >> loBits) & 1) << t
			}
			hi[i] = v
		}
	case 2:
		twoBit(hi, q, loBits)
	}
}

// twoBit packs bits shift, shift+1 of 32 values: byte 4c+i holds value
// 16c + 4s + i at bits 2s.
func twoBit(dst []byte, q []uint8, shift int) {
	for c := range 2 {
		for i := range 4 {
			var v byte
			for s := range 4 {
				v |= ((q[16*c+4*s+i] >> shift) & 3) << (2 * s)
			}
			dst[4*c+i] = v
		}
	}
}

// qplanes is a matrix in planes, on the host.
type qplanes struct {
	lo, hi, m0, m1 []byte
	mpad           int
}

// packQuant lays rows x cols of f's blocks out as planes (rows padded with
// zeros to a multiple of 64); row returns a row's bytes, or nil for zeros.
// A row shorter than cols values of f is an error.
func packQuant(f *qformat, rows, cols int, row rowFunc) (qplanes, error) {
	nb := cols / f.qk
	p := qplanes{mpad: roundUp(rows, 64)}
	p.lo = make([]byte, p.mpad*cols*f.lo/8)
	p.hi = make([]byte, p.mpad*cols*f.hi/8)
	p.m0 = make([]byte, p.mpad*nb*f.m0)
	p.m1 = make([]byte, p.mpad*nb*f.m1)
	scratch := make([][]uint8, rowWorkers())
	err := forRows(rows, func(w, r int) error {
		src := row(r)
		if src == nil {
			return nil
		}
		if len(src) < nb*f.bytes {
			return fmt.Errorf("cuda: row %d of a %s matrix has %d bytes, want %d", r, f.t, len(src), nb*f.bytes)
		}
		if scratch[w] == nil {
			scratch[w] = make([]uint8, f.qk)
		}
		q := scratch[w]
		for b := range nb {
			blk := r*nb + b
			f.unpack(src[b*f.bytes:(b+1)*f.bytes], q, p.m0[blk*f.m0:(blk+1)*f.m0], p.m1[blk*f.m1:(blk+1)*f.m1])
			for u := range f.qk / 32 {
				v0 := r*cols + b*f.qk + 32*u // first value of the unit
				packUnit(q[32*u:32*u+32], p.lo[v0*f.lo/8:(v0+32)*f.lo/8], p.hi[v0*f.hi/8:(v0+32)*f.hi/8], f.lo, f.hi)
			}
		}
		return nil
	})
	return p, err
}

// uploadQuant packs and uploads one run of rows of type t.
func (r *Model) uploadQuant(what string, t gguf.TensorType, rows, cols int, row rowFunc, srcBytes int64) (gpuWeight, error) {
	f := formatOf(t)
	p, err := packQuant(f, rows, cols, row)
	if err != nil {
		return gpuWeight{}, fmt.Errorf("uploading %s: %w", what, err)
	}
	w := gpuWeight{typ: t, rows: rows, cols: cols, mpad: p.mpad}
	for _, a := range []struct {
		dst  *uint64
		data []byte
		name string
	}{{&w.lo, p.lo, what}, {&w.hi, p.hi, what + " high bits"}, {&w.m0, p.m0, what + " scales"}, {&w.m1, p.m1, what + " scales"}} {
		if len(a.data) == 0 {
			continue
		}
		var err error
		if *a.dst, err = r.dev.alloc(uint64(len(a.data)), a.name); err != nil {
			return w, err
		}
		if err = r.dev.upload(*a.dst, a.data); err != nil {
			return w, err
		}
	}
	r.prog.add(srcBytes)
	return w, nil
}
