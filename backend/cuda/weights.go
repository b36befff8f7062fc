package cuda

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// gpuWeight is a matrix on the GPU in the layout the kernels read. Q8_0:
// q holds the int8 values, row-major, rows padded with zeros to mpad (a
// multiple of 64, so prefill tiles never read past the end); drow the f16
// scales row-major (rows x cols/32, for the decode matvec); dcol the same
// scales block-major (cols/32 x mpad, for the prefill matmul). Other block
// types: the planes lo, hi, m0 and m1 (quant_pack.go); for Q8_0, lo and m0
// are q and drow. Matrices stacked row-wise whose types differ (Q, K and V
// of a Q4_K_M file: V may be Q6_K) are runs of one type each, chained by
// next, run i's rows starting at row0 of the whole.
type gpuWeight struct {
	q, drow, dcol  uint64
	rows, cols     int
	mpad           int
	typ            gguf.TensorType
	lo, hi, m0, m1 uint64
	row0           int
	next           *gpuWeight
	wexp           int // float types: mmw's f16 tiles hold W/2^wexp (half.go)
}

// rowFunc returns the Q8_0-encoded row r of a packed matrix, or nil for a
// row of zeros (padding).
type rowFunc func(r int) []byte

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// forRows calls each(w, r) for every row r < rows, the rows split in runs
// over up to 16 goroutines (w < workers names the run's goroutine, for
// per-goroutine scratch), and returns the runs' errors joined: a run stops
// at its first error. It is how a matrix is laid out for upload on the
// host, in parallel.
func forRows(rows int, each func(w, r int) error) error {
	workers := rowWorkers()
	per := (rows + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min(rows, (w+1)*per)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := lo; r < hi; r++ {
				if err := each(w, r); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rowWorkers is the number of goroutines forRows uses.
func rowWorkers() int { return min(runtime.GOMAXPROCS(0), 16) }

// pack lays rows x cols of Q8_0 rows out as gpuWeight wants, on the host.
func pack(rows, cols int, row rowFunc) (q, drow, dcol []byte, mpad int) {
	nb := cols / numfmt.QK8_0
	mpad = roundUp(rows, 64)
	q = make([]byte, mpad*cols)
	drow = make([]byte, rows*nb*2)
	dcol = make([]byte, nb*mpad*2)
	_ = forRows(rows, func(_, r int) error {
		src := row(r)
		if src == nil {
			return nil
		}
		for b := range nb {
			blk := src[b*numfmt.BlockQ8_0Bytes : (b+1)*numfmt.BlockQ8_0Bytes]
			drow[(r*nb+b)*2] = blk[0]
			drow[(r*nb+b)*2+1] = blk[1]
			dcol[(b*mpad+r)*2] = blk[0]
			dcol[(b*mpad+r)*2+1] = blk[1]
			copy(q[r*cols+b*numfmt.QK8_0:], blk[2:])
		}
		return nil
	})
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

// uploadPacked packs and uploads one matrix of type t (Q8_0 here, the
// other types in planes: uploadQuant).
func (r *Model) uploadPacked(what string, t gguf.TensorType, rows, cols int, row rowFunc, srcBytes int64) (gpuWeight, error) {
	if f := formatOf(t); f != nil && f.float {
		return r.uploadFloat(what, t, rows, cols, row, srcBytes)
	}
	if t != gguf.TensorQ8_0 {
		return r.uploadQuant(what, t, rows, cols, row, srcBytes)
	}
	q, drow, dcol, mpad := pack(rows, cols, row)
	w := gpuWeight{rows: rows, cols: cols, mpad: mpad, typ: t}
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
	w.lo, w.m0 = w.q, w.drow
	r.prog.add(srcBytes)
	return w, nil
}

// uploadWeight uploads one model matrix as is.
func (r *Model) uploadWeight(w *backend.Weight) (gpuWeight, error) {
	if err := checkWeight(w); err != nil {
		return gpuWeight{}, err
	}
	return r.uploadPacked(w.Name, w.Type, w.Rows, w.Cols, func(i int) []byte { return w.Row(i) }, int64(len(w.Data)))
}

// uploadConcat uploads matrices of equal width stacked row-wise (Q, K and V
// as one matrix): one run for each stretch of matrices of one type.
func (r *Model) uploadConcat(what string, ws ...*backend.Weight) (gpuWeight, error) {
	for _, w := range ws {
		if err := checkWeight(w); err != nil {
			return gpuWeight{}, err
		}
		if w.Cols != ws[0].Cols {
			return gpuWeight{}, fmt.Errorf("cuda: %s: widths %d and %d differ", what, w.Cols, ws[0].Cols)
		}
	}
	var head gpuWeight
	tail := &head
	row0 := 0
	for i := 0; i < len(ws); {
		j, rows, n := i, 0, int64(0)
		for ; j < len(ws) && ws[j].Type == ws[i].Type; j++ {
			rows += ws[j].Rows
			n += int64(len(ws[j].Data))
		}
		run := ws[i:j]
		w, err := r.uploadPacked(what, ws[i].Type, rows, ws[i].Cols, func(k int) []byte {
			for _, w := range run {
				if k < w.Rows {
					return w.Row(k)
				}
				k -= w.Rows
			}
			return nil
		}, n)
		if err != nil {
			return gpuWeight{}, err
		}
		w.row0 = row0
		if i == 0 {
			head = w
		} else {
			tail.next = &w
			tail = tail.next
		}
		row0 += rows
		i = j
	}
	return head, nil
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
func (r *Model) uploadGateUp(what string, gate, up *backend.Weight) (gpuWeight, error) {
	for _, w := range []*backend.Weight{gate, up} {
		if err := checkWeight(w); err != nil {
			return gpuWeight{}, err
		}
	}
	if gate.Rows != up.Rows || gate.Cols != up.Cols {
		return gpuWeight{}, fmt.Errorf("cuda: %s: gate %dx%d and up %dx%d differ", what, gate.Rows, gate.Cols, up.Rows, up.Cols)
	}
	if gate.Type != up.Type {
		return gpuWeight{}, fmt.Errorf("cuda: %s: gate is %s and up %s; the CUDA backend needs one type for both", what, gate.Type, up.Type)
	}
	return r.uploadPacked(what, gate.Type, gateUpRows(gate.Rows), gate.Cols, func(i int) []byte {
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
func (r *Model) uploadF32(what string, v []float32) (uint64, error) {
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
