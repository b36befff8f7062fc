package cuda

// F32, F16 and BF16 matrices (kernels/mmv.cuh, mmh.cuh): uploaded as in the file,
// row-major, rows padded with zeros to a multiple of 64, and multiplied by
// mvh_<type> (decode: f32 activations), mvhn_<type> (up to tune.hvn tokens:
// one weight pass for each 8, f16 activations from qact_h) and
// mmw_<type>_b32 / _b128 (f16 tensor cores, as the block formats' mmh).

import (
	"fmt"
	"math"

	"inferno/gguf"
)

// mvhnMax is the most tokens a product of a float matrix takes mvhn for
// by default (tuning.hvn); more take the tensor-core tiles (mmw).
const mvhnMax = 16

// mvhnSplitRows: matrices of fewer rows take mvhn4 (4 warps a row pair,
// each a quarter of the row) rather than mvhn, for 4 times the blocks.
const mvhnSplitRows = 16384

// mvhnSplit returns the name of f's mvhn4 kernel.
func mvhnSplit(f *qformat) string { return "mvhn4_" + f.name }

// f16Max is the largest finite f16.
const f16Max = 65504

// floatExp returns the least s >= 0 with max|v| / 2^s <= f16Max over the
// finite values v of a row of type t (the scale mmw's f16 tiles take).
func floatExp(t gguf.TensorType, row []byte) int {
	var most uint32 // bits of the largest finite |v| as a float32
	switch t {
	case gguf.TensorF16:
		return 0 // f16 values are in f16's range
	case gguf.TensorBF16:
		for i := 0; i+1 < len(row); i += 2 {
			b := (uint32(row[i]) | uint32(row[i+1])<<8) << 16 & 0x7fffffff
			if b < 0x7f800000 && b > most {
				most = b
			}
		}
	default:
		for i := 0; i+3 < len(row); i += 4 {
			b := (uint32(row[i]) | uint32(row[i+1])<<8 | uint32(row[i+2])<<16 | uint32(row[i+3])<<24) & 0x7fffffff
			if b < 0x7f800000 && b > most {
				most = b
			}
		}
	}
	s, m := 0, float64(math.Float32frombits(most))
	for m > f16Max {
		m /= 2
		s++
	}
	return s
}

// packFloat lays rows x cols of f's values out as mvh and mmw read them:
// the rows as in the file, then zeros up to mpad rows; exp is the largest
// floatExp of a row.
func packFloat(f *qformat, rows, cols int, row rowFunc) (data []byte, mpad, exp int, err error) {
	mpad = roundUp(rows, 64)
	rb := cols * f.bytes
	data = make([]byte, mpad*rb)
	exps := make([]int, rowWorkers())
	err = forRows(rows, func(w, r int) error {
		src := row(r)
		if src == nil {
			return nil
		}
		if len(src) < rb {
			return fmt.Errorf("cuda: row %d of a %s matrix has %d bytes, want %d", r, f.t, len(src), rb)
		}
		copy(data[r*rb:(r+1)*rb], src[:rb])
		exps[w] = max(exps[w], floatExp(f.t, src[:rb]))
		return nil
	})
	for _, e := range exps {
		exp = max(exp, e)
	}
	return data, mpad, exp, err
}

// uploadFloat uploads one run of rows of a float type t.
func (r *Model) uploadFloat(what string, t gguf.TensorType, rows, cols int, row rowFunc, srcBytes int64) (gpuWeight, error) {
	data, mpad, exp, err := packFloat(formatOf(t), rows, cols, row)
	if err != nil {
		return gpuWeight{}, fmt.Errorf("uploading %s: %w", what, err)
	}
	w := gpuWeight{typ: t, rows: rows, cols: cols, mpad: mpad, wexp: exp}
	if w.lo, err = r.dev.alloc(uint64(len(data)), what); err != nil {
		return w, err
	}
	if err = r.dev.upload(w.lo, data); err != nil {
		return w, err
	}
	r.prog.add(srcBytes)
	return w, nil
}

// floatSetup prepares f's kernels for widths up to maxK: shared memory
// limits and the persistent grids of mvh and mvhn (r.grids).
func (r *Model) floatSetup(f *qformat, maxK int) error {
	g := r.dev
	for _, k := range []struct {
		name string
		smem int
	}{{f.hSkinny, mmhSmem(false)}, {f.hPrefill, mmhSmem(true)}, {f.mvq, 4 * maxK}} {
		fn, err := g.fn(k.name)
		if err != nil {
			return err
		}
		if err := g.allowSmem(fn, k.name, k.smem); err != nil {
			return err
		}
	}
	for _, k := range []struct {
		name string
		smem int
	}{{f.mvq, 4 * maxK}, {f.mvn4, 0}, {mvhnSplit(f), 0}} {
		if err := r.residentGrid(k.name, k.smem); err != nil {
			return err
		}
	}
	return nil
}

// mvFloat enqueues mvh over the run s (r.mv's arguments).
func (r *Model) mvFloat(l *launcher, kind string, s *gpuWeight, x, gain, y uint64, nout int, pval, pidx uint64) {
	f := formatOf(s.typ)
	l.launch(f.mvq, [3]uint32{uint32(r.mvqGrid(f, s.rows))}, 256, uint32(4*s.cols),
		s.lo, i32(s.rows), i32(s.cols), x, gain, f32(r.cfg.Eps), y, i32(nout), pval, pidx, i32(epOf(kind)))
}

// productFloat enqueues the run s's share of r.product: qact_h's f16
// activations (unless have says they are there), then mvhn up to tune.hvn
// tokens, mmw from there on. It returns what the activations are now ("h").
func (r *Model) productFloat(l *launcher, kind string, s *gpuWeight, x, gain, y uint64, ldy, nout, n int, b actBufs, have string) string {
	f := formatOf(s.typ)
	K := s.cols
	if have != "h" {
		r.qactH(l, x, gain, K, n, b.xh, b.hs)
	}
	if n <= r.tune.hvn {
		groups := (n + 7) / 8
		name, rows := f.mvn4, s.rows
		if s.rows < mvhnSplitRows {
			// 4 warps a row pair: tiles of 4 rows, not 16
			name, rows = mvhnSplit(f), 4*s.rows
		}
		gx := persistentGrid(rows, max(1, r.grids[name]/groups))
		l.launch(name, [3]uint32{uint32(gx), uint32(groups)}, 256, 0,
			s.lo, i32(s.rows), i32(K), b.xh, b.hs, i32(n), y, i32(ldy), i32(nout), i32(epOf(kind)))
		return "h"
	}
	name, bm, bn, big := f.hSkinny, 64, 32, false
	if n >= r.tune.h128 {
		name, bm, bn, big = f.hPrefill, 128, 128, true
	}
	l.launch(name, [3]uint32{uint32((s.mpad + bm - 1) / bm), uint32((n + bn - 1) / bn)}, 256, uint32(mmhSmem(big)),
		s.lo, i32(s.rows), i32(s.mpad), i32(K), b.xh, b.hs, i32(n), y, i32(ldy), i32(nout), i32(epOf(kind)),
		f32(float32(math.Ldexp(1, s.wexp))))
	return "h"
}
