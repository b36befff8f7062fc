package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"inferno/gguf"
	"inferno/numfmt"
)

// chunkElems is the number of values converted at a time: a multiple of
// the Q8_0 block size, small enough to keep buffers at a few megabytes.
const chunkElems = 1 << 20

// converter re-encodes tensor data chunk by chunk on several goroutines.
type converter struct {
	workers int
	vals    []float32
	out     []byte
	gather  []byte // rows of a gathered view, in output order
}

func newConverter(workers int) *converter {
	return &converter{workers: workers, vals: make([]float32, chunkElems), out: make([]byte, 4*chunkElems)}
}

// write writes j's tensor to w and returns its number of values: the
// converter's data, the view's segments one after the other, or its rows
// gathered a chunk at a time (repacked as they are for MXFP4 blocks).
// Pages of the checkpoint that have been read are given back to the
// kernel as it goes.
func (c *converter) write(ctx context.Context, w io.Writer, j *job, progress func()) (int64, error) {
	v := j.view
	switch {
	case v == nil:
		t := &Tensor{DType: F32, Data: j.data}
		return int64(len(j.data) / 4), c.run(ctx, w, t, j.out.typ, j.shift, func([]byte) {}, progress)
	case v.segs != nil:
		for _, s := range v.segs {
			release := func([]byte) {}
			if s.ref.file != nil {
				release = s.ref.file.release
			}
			if err := c.run(ctx, w, &Tensor{DType: v.dtype, Data: s.data}, j.out.typ, j.shift, release, progress); err != nil {
				return 0, err
			}
		}
		return v.elements(), nil
	}
	if err := c.gatherRows(ctx, w, v, j.out.typ, j.shift, progress); err != nil {
		return 0, err
	}
	v.release()
	return v.elements(), nil
}

// gatherRows writes the rows of a gathered view in output order,
// collecting whole rows into chunks of at most chunkElems values (one
// row a chunk if rows are longer) and converting each as run does; MXFP4
// rows are written as they are repacked.
func (c *converter) gatherRows(ctx context.Context, w io.Writer, v *view, dst gguf.TensorType, shift float32, progress func()) error {
	per := max(1, chunkElems/v.cols)
	total := v.experts * v.rows
	for r0 := 0; r0 < total; r0 += per {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(per, total-r0)
		buf := c.gather[:0]
		for k := r0; k < r0+n; k++ {
			if dst == gguf.TensorMXFP4 {
				buf = v.appendMXFP4Row(buf, k/v.rows, k%v.rows)
			} else {
				buf = v.appendRow(buf, k/v.rows, k%v.rows)
			}
		}
		c.gather = buf
		if dst == gguf.TensorMXFP4 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			progress()
			continue
		}
		if err := c.run(ctx, w, &Tensor{DType: v.dtype, Data: buf}, dst, shift, func([]byte) {}, progress); err != nil {
			return err
		}
	}
	return nil
}

// run writes src's data encoded as dst to w. The values are the same as
// llama.cpp's converter writes: F32 and F16 sources kept as they are when
// the type does not change and nothing is added, otherwise decoded to
// float32, shift added (rounded to F16 first for an F16 source, as torch
// adds in the tensor's type), and encoded with package numfmt (round to
// nearest even for F16 and BF16, ggml's reference rounding for Q8_0).
// After each chunk, done is called with the source bytes converted so
// far, and progress.
func (c *converter) run(ctx context.Context, w io.Writer, src *Tensor, dst gguf.TensorType, shift float32, done func([]byte), progress func()) error {
	st := sourceTypes[src.DType]
	esize := src.DType.Size()
	n := len(src.Data) / esize
	if st == dst && dst != gguf.TensorBF16 && shift == 0 {
		for off := 0; off < len(src.Data); off += chunkElems * esize {
			if err := ctx.Err(); err != nil {
				return err
			}
			part := src.Data[off:min(len(src.Data), off+chunkElems*esize)]
			if _, err := w.Write(part); err != nil {
				return err
			}
			done(part)
			progress()
		}
		return nil
	}
	for start := 0; start < n; start += chunkElems {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := min(chunkElems, n-start)
		size, ok := dst.RowBytes(uint64(m))
		if !ok {
			return fmt.Errorf("%d values do not fill whole %s blocks", m, dst)
		}
		data := src.Data[start*esize : (start+m)*esize]
		if err := c.chunk(data, st, dst, m, shift); err != nil {
			return err
		}
		if _, err := w.Write(c.out[:size]); err != nil {
			return err
		}
		done(data)
		progress()
	}
	return nil
}

// chunk converts m values of type st in data to type dst in c.out,
// adding shift, splitting the work in block-aligned parts.
func (c *converter) chunk(data []byte, st, dst gguf.TensorType, m int, shift float32) error {
	parts := c.workers
	per := (m + parts - 1) / parts
	per = (per + numfmt.QK8_0 - 1) / numfmt.QK8_0 * numfmt.QK8_0
	var wg sync.WaitGroup
	errs := make([]error, parts)
	for i := range parts {
		a, b := i*per, min(m, (i+1)*per)
		if a >= b {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss := st.BlockBytes()
			vals := c.vals[a:b]
			if err := numfmt.DequantizeRow(vals, data[a*ss:b*ss], st, b-a); err != nil {
				errs[i] = err
				return
			}
			if shift != 0 {
				for k, x := range vals {
					vals[k] = x + shift
					if st == gguf.TensorF16 {
						vals[k] = numfmt.F16ToF32(numfmt.F32ToF16(vals[k]))
					}
				}
			}
			lo, _ := dst.RowBytes(uint64(a))
			hi, _ := dst.RowBytes(uint64(b))
			if _, err := numfmt.QuantizeRow(c.out[lo:lo:hi], vals, dst); err != nil {
				errs[i] = err
			}
			if dst == gguf.TensorF16 {
				fixNaNs(c.out[lo:hi], vals)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fixNaNs rewrites the F16 encoding in out of each NaN in vals the way
// numpy's float32 to float16 cast (which llama.cpp's converter uses) does:
// the payload's top bits are kept as they are, with no quiet bit forced,
// and a payload that would vanish becomes 1.
func fixNaNs(out []byte, vals []float32) {
	for i, v := range vals {
		if v == v {
			continue
		}
		b := math.Float32bits(v)
		h := uint16(0x7c00 + (b&0x7fffff)>>13)
		if h == 0x7c00 {
			h++
		}
		binary.LittleEndian.PutUint16(out[2*i:], uint16(b>>16)&0x8000|h)
	}
}
