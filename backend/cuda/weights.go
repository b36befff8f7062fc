package cuda

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"inferno/backend"
	"inferno/gguf"
	"inferno/quant"
)

// gpuWeight is a Q8_0 matrix on the GPU in the layout the kernels read:
// q holds the int8 values, row-major, rows padded with zeros to mpad (a
// multiple of 64, so prefill tiles never read past the end); drow the f16
// scales row-major (rows x cols/32, for the decode matvec); dcol the same
// scales block-major (cols/32 x mpad, for the prefill matmul).
type gpuWeight struct {
	q, drow, dcol uint64
	rows, cols    int
	mpad          int
}

// rowFunc returns the Q8_0-encoded row r of a packed matrix, or nil for a
// row of zeros (padding).
type rowFunc func(r int) []byte

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// checkQ8 checks that w can be uploaded.
func checkQ8(w *backend.Weight) error {
	if w == nil {
		return fmt.Errorf("cuda: missing weight")
	}
	if w.Type != gguf.TensorQ8_0 {
		return fmt.Errorf("cuda: tensor %s is %s; the CUDA backend computes with Q8_0 weights only (convert the model to Q8_0, or use a CPU backend)", w.Name, w.Type)
	}
	if w.Cols%quant.QK8_0 != 0 {
		return fmt.Errorf("cuda: tensor %s has %d columns, not a multiple of %d", w.Name, w.Cols, quant.QK8_0)
	}
	return nil
}

// pack lays rows x cols of Q8_0 rows out as gpuWeight wants, on the host.
func pack(rows, cols int, row rowFunc) (q, drow, dcol []byte, mpad int) {
	nb := cols / quant.QK8_0
	mpad = roundUp(rows, 64)
	q = make([]byte, mpad*cols)
	drow = make([]byte, rows*nb*2)
	dcol = make([]byte, nb*mpad*2)
	workers := min(runtime.GOMAXPROCS(0), 16)
	var wg sync.WaitGroup
	per := (rows + workers - 1) / workers
	for w := range workers {
		lo, hi := w*per, min(rows, (w+1)*per)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := lo; r < hi; r++ {
				src := row(r)
				if src == nil {
					continue
				}
				for b := range nb {
					blk := src[b*quant.BlockQ8_0Bytes : (b+1)*quant.BlockQ8_0Bytes]
					drow[(r*nb+b)*2] = blk[0]
					drow[(r*nb+b)*2+1] = blk[1]
					dcol[(b*mpad+r)*2] = blk[0]
					dcol[(b*mpad+r)*2+1] = blk[1]
					copy(q[r*cols+b*quant.QK8_0:], blk[2:])
				}
			}
		}()
	}
	wg.Wait()
	return q, drow, dcol, mpad
}

// progress draws an upload progress bar on w (redrawn in place with \r).
type progress struct {
	w          io.Writer
	total, got int64
	start      time.Time
	last       time.Time
}

func (p *progress) add(n int64) {
	if p == nil || p.w == nil {
		return
	}
	p.got += n
	now := time.Now()
	if p.got < p.total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	frac := float64(p.got) / float64(max(p.total, 1))
	bar := make([]byte, width)
	for i := range bar {
		if float64(i) < frac*width {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	fmt.Fprintf(p.w, "\rcuda: uploading weights [%s] %3.0f%% %d/%d MB", bar, 100*frac, p.got>>20, p.total>>20)
	if p.got >= p.total {
		fmt.Fprintf(p.w, " in %.1fs\n", now.Sub(p.start).Seconds())
	}
}

// uploadPacked packs and uploads one matrix.
func (r *Runner) uploadPacked(what string, rows, cols int, row rowFunc, srcBytes int64) (gpuWeight, error) {
	q, drow, dcol, mpad := pack(rows, cols, row)
	w := gpuWeight{rows: rows, cols: cols, mpad: mpad}
	var err error
	for _, a := range []struct {
		dst  *uint64
		data []byte
		name string
	}{{&w.q, q, what}, {&w.drow, drow, what + " scales"}, {&w.dcol, dcol, what + " scales (block-major)"}} {
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

// uploadWeight uploads one model matrix as is.
func (r *Runner) uploadWeight(w *backend.Weight) (gpuWeight, error) {
	if err := checkQ8(w); err != nil {
		return gpuWeight{}, err
	}
	return r.uploadPacked(w.Name, w.Rows, w.Cols, func(i int) []byte { return w.Row(i) }, int64(len(w.Data)))
}

// uploadConcat uploads matrices of equal width stacked row-wise (Q, K and V
// as one matrix).
func (r *Runner) uploadConcat(what string, ws ...*backend.Weight) (gpuWeight, error) {
	rows, n := 0, int64(0)
	for _, w := range ws {
		if err := checkQ8(w); err != nil {
			return gpuWeight{}, err
		}
		if w.Cols != ws[0].Cols {
			return gpuWeight{}, fmt.Errorf("cuda: %s: widths %d and %d differ", what, w.Cols, ws[0].Cols)
		}
		rows += w.Rows
		n += int64(len(w.Data))
	}
	return r.uploadPacked(what, rows, ws[0].Cols, func(i int) []byte {
		for _, w := range ws {
			if i < w.Rows {
				return w.Row(i)
			}
			i -= w.Rows
		}
		return nil
	}, n)
}

// gateUpRows is the number of rows of the interleaved gate/up matrix for an
// FFN width: groups of 16 rows, 8 gate rows then the same 8 up rows.
func gateUpRows(ffn int) int { return 2 * roundUp(ffn, 8) }

// gateUpRow maps row i of the interleaved matrix to (up?, source row).
func gateUpRow(i int) (up bool, src int) {
	g, j := i/16, i%16
	if j < 8 {
		return false, g*8 + j
	}
	return true, g*8 + j - 8
}

// uploadGateUp uploads the gate and up matrices interleaved for the SwiGLU
// epilogues.
func (r *Runner) uploadGateUp(what string, gate, up *backend.Weight) (gpuWeight, error) {
	for _, w := range []*backend.Weight{gate, up} {
		if err := checkQ8(w); err != nil {
			return gpuWeight{}, err
		}
	}
	if gate.Rows != up.Rows || gate.Cols != up.Cols {
		return gpuWeight{}, fmt.Errorf("cuda: %s: gate %dx%d and up %dx%d differ", what, gate.Rows, gate.Cols, up.Rows, up.Cols)
	}
	return r.uploadPacked(what, gateUpRows(gate.Rows), gate.Cols, func(i int) []byte {
		isUp, s := gateUpRow(i)
		if s >= gate.Rows {
			return nil
		}
		if isUp {
			return up.Row(s)
		}
		return gate.Row(s)
	}, int64(len(gate.Data)+len(up.Data)))
}

// uploadF32 uploads a float32 vector.
func (r *Runner) uploadF32(what string, v []float32) (uint64, error) {
	p, err := r.dev.alloc(uint64(4*len(v)), what)
	if err != nil {
		return 0, err
	}
	if err := r.dev.upload(p, f32Bytes(v)); err != nil {
		return 0, err
	}
	r.prog.add(int64(4 * len(v)))
	return p, nil
}
