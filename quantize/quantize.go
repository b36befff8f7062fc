package quantize

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"inferno/family"
	"inferno/gguf"
	"inferno/numfmt"
	"inferno/outfile"
)

// Options choose what Quantize writes.
type Options struct {
	// Mixture is the output type as llama-quantize names it (Q4_K_M,
	// q5_0, ...; see ParseMixture).
	Mixture string
	// Pure gives every weight matrix the mixture's default type, with no
	// per-tensor rules and no fallback (llama-quantize --pure).
	Pure bool
	// Threads is the number of goroutines that quantize; GOMAXPROCS when
	// 0. The output does not depend on it.
	Threads int
	// Progress, when set, is called as the output is written with the
	// bytes written so far and the size the file will have.
	Progress func(done, total int64)
}

// Result describes a file Quantize wrote.
type Result struct {
	Path      string
	Mixture   Mixture
	Tensors   int
	Quantized int   // tensors whose type changed
	Fallbacks int   // tensors given a fallback type (rows not a multiple of the block)
	Weights   int64 // elements of all tensors
	// InData and OutData are the bytes of tensor data in the input and
	// the output; InFile and OutFile the sizes of the files.
	InData, OutData int64
	InFile, OutFile int64
	Types           map[gguf.TensorType]int // tensors per output type
	Duration        time.Duration
}

// BitsPerWeight returns the output's tensor data bits per weight, as
// llama-quantize reports it.
func (r *Result) BitsPerWeight() float64 { return bpw(r.OutData, r.Weights) }

// InBitsPerWeight returns the input's tensor data bits per weight.
func (r *Result) InBitsPerWeight() float64 { return bpw(r.InData, r.Weights) }

func bpw(bytes, weights int64) float64 {
	if weights == 0 {
		return 0
	}
	return float64(bytes) * 8 / float64(weights)
}

// chunkElems is about how many input values one job quantizes: small
// enough to spread a tensor over the workers and keep memory low, large
// enough that the overhead per job does not matter.
const chunkElems = 1 << 18

// Quantize reads the Qwen3 model in (F32, F16 or BF16 tensors) and writes
// it to out in the mixture opts name. The metadata is copied, with
// general.file_type and general.quantization_version set as
// llama-quantize sets them (moved to the end); tensors keep their order
// and the input's alignment. The input is memory-mapped and the output
// streamed, so memory use stays small whatever the model's size. out is
// written under a temporary name in its folder (made when missing) and
// renamed when complete; on error or cancellation nothing is left behind.
// out must not exist or be a regular file.
func Quantize(ctx context.Context, in, out string, opts Options) (*Result, error) {
	start := time.Now()
	res, err := quantizeFile(ctx, in, out, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("quantize: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

func quantizeFile(ctx context.Context, in, out string, opts Options) (*Result, error) {
	m, err := ParseMixture(opts.Mixture)
	if err != nil {
		return nil, err
	}
	if same, err := sameFile(in, out); err != nil {
		return nil, err
	} else if same {
		return nil, fmt.Errorf("input and output are the same file %s", in)
	}
	f, err := gguf.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	model, err := checkInput(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	tensors := make([]Tensor, len(f.Tensors))
	for i, t := range f.Tensors {
		tensors[i] = Tensor{Name: t.Name, Type: t.Type, Shape: t.Shape}
	}
	plan, err := Types(tensors, model, m, opts.Pure)
	if err != nil {
		return nil, err
	}
	if err := checkEncoders(plan.Types); err != nil {
		return nil, err
	}

	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		switch kv.Key {
		case "general.file_type", "general.quantization_version", "split.no", "split.count", "split.tensors.count":
			continue
		}
		if err := w.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	if err := w.Set("general.quantization_version", uint32(2)); err != nil {
		return nil, err
	}
	if err := w.Set("general.file_type", m.FileType); err != nil {
		return nil, err
	}
	if _, ok := f.Value("general.alignment"); !ok {
		w.Alignment = f.Alignment
	}
	res := &Result{Path: out, Mixture: m, Tensors: len(f.Tensors), Fallbacks: plan.Fallbacks, Types: map[gguf.TensorType]int{}}
	sizes := make([]uint64, len(f.Tensors))
	for i, t := range f.Tensors {
		size, err := w.AddTensorInfo(t.Name, plan.Types[i], t.Shape)
		if err != nil {
			return nil, err
		}
		sizes[i] = size
		res.Weights += int64(t.Elements())
		res.InData += int64(len(t.Data))
		res.OutData += int64(size)
		res.Types[plan.Types[i]]++
		if plan.Types[i] != t.Type {
			res.Quantized++
		}
	}
	var header bytes.Buffer
	if _, err := w.WriteHeader(&header); err != nil {
		return nil, err
	}
	total := int64(header.Len())
	for _, s := range sizes {
		total = alignUp(total+int64(s), int64(f.Alignment))
	}

	file, err := outfile.Create(out)
	if err != nil {
		return nil, err
	}
	defer file.Abort() // does nothing once committed
	if err := file.Reserve(total); err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(file, 4<<20)
	var done int64
	progress := func(n int64) {
		done += n
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	if _, err := bw.Write(header.Bytes()); err != nil {
		return nil, err
	}
	progress(int64(header.Len()))
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	o := NewOrdered(ctx, bw, threads, progress)
	err = submitTensors(o, f, plan.Types, int64(f.Alignment))
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = file.Commit()
	}
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(in); err == nil {
		res.InFile = st.Size()
	}
	if st, err := os.Stat(out); err == nil {
		res.OutFile = st.Size()
	}
	return res, nil
}

// submitTensors queues the jobs that write every tensor's data, each
// padded to the alignment.
func submitTensors(o *Ordered, f *gguf.File, types []gguf.TensorType, align int64) error {
	var off int64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		to := types[i]
		n := int64(t.Elements())
		cols := int64(t.Shape[0])
		rows := int64(1)
		if cols > 0 {
			rows = n / cols
		}
		inRow, outRow := rowBytes(t.Type, cols), rowBytes(to, cols)
		step := max(1, chunkElems/max(cols, 1))
		for r := int64(0); r < rows; r += step {
			r1 := min(rows, r+step)
			src := t.Data[r*inRow : r1*inRow]
			from, name, nv, row0 := t.Type, t.Name, int((r1-r)*cols), r
			job := func(dst []byte) ([]byte, error) {
				// llama.cpp's loader refuses such tensors too.
				if i := nonFinite(src, from); i >= 0 {
					return nil, fmt.Errorf("tensor %s: row %d holds a NaN or an infinity", name, row0+int64(i)/cols)
				}
				var err error
				if to == from {
					dst = append(dst, src...)
				} else if dst, err = convert(dst, src, from, to, nv); err != nil {
					return nil, fmt.Errorf("tensor %s: %w", name, err)
				}
				release(src)
				return dst, nil
			}
			if err := o.Submit(job, nil); err != nil {
				return err
			}
		}
		size := rows * outRow
		if cols == 0 {
			size = 0
		}
		off += size
		pad := alignUp(off, align) - off
		off += pad
		data := t.Data
		if err := o.Submit(func(dst []byte) ([]byte, error) {
			return append(dst, make([]byte, pad)...), nil
		}, func() { release(data) }); err != nil {
			return err
		}
	}
	return nil
}

// floatPool holds the float32 buffers convert decodes into.
var floatPool sync.Pool

// convert encodes n values of type from in src as type to, appending to dst.
func convert(dst, src []byte, from, to gguf.TensorType, n int) ([]byte, error) {
	bp, _ := floatPool.Get().(*[]float32)
	if bp == nil || cap(*bp) < n {
		b := make([]float32, n)
		bp = &b
	}
	vals := (*bp)[:n]
	defer floatPool.Put(bp)
	if err := numfmt.DequantizeRow(vals, src, from, n); err != nil {
		return nil, err
	}
	return numfmt.QuantizeRow(dst, vals, to)
}

// nonFinite returns the index of the first NaN or infinity among the
// values of type t in src (F32, F16 or BF16), or -1.
func nonFinite(src []byte, t gguf.TensorType) int {
	switch t {
	case gguf.TensorF32:
		for i := 0; i+4 <= len(src); i += 4 {
			if binary.LittleEndian.Uint32(src[i:])&0x7f800000 == 0x7f800000 {
				return i / 4
			}
		}
	case gguf.TensorF16:
		for i := 0; i+2 <= len(src); i += 2 {
			if binary.LittleEndian.Uint16(src[i:])&0x7c00 == 0x7c00 {
				return i / 2
			}
		}
	case gguf.TensorBF16:
		for i := 0; i+2 <= len(src); i += 2 {
			if binary.LittleEndian.Uint16(src[i:])&0x7f80 == 0x7f80 {
				return i / 2
			}
		}
	}
	return -1
}

func rowBytes(t gguf.TensorType, cols int64) int64 {
	n, _ := t.RowBytes(uint64(cols))
	return int64(n)
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// checkInput checks that f is a model of a registered architecture
// (package family) in F32, F16 or BF16 and returns the hyperparameters the
// rules read.
func checkInput(f *gguf.File) (Model, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return Model{}, err
	}
	if _, ok := family.Lookup(arch); !ok {
		return Model{}, fmt.Errorf("architecture %q is not supported (want %s)", arch, family.Names())
	}
	if n, err := f.Int("split.count"); err == nil && n > 1 {
		return Model{}, fmt.Errorf("the model is split over %d files; merge it first (llama-gguf-split --merge)", n)
	}
	m := Model{Arch: arch}
	for _, p := range []struct {
		key string
		v   *int
	}{
		{arch + ".block_count", &m.Layers},
		{arch + ".attention.head_count", &m.Heads},
		{arch + ".attention.head_count_kv", &m.KVHeads},
	} {
		n, err := f.Int(p.key)
		if err != nil {
			return Model{}, err
		}
		if n <= 0 || n > 1<<20 {
			return Model{}, fmt.Errorf("metadata %s = %d is out of range", p.key, n)
		}
		*p.v = int(n)
	}
	if n, err := f.Int(arch + ".expert_count"); err == nil {
		if n < 0 || n > 1<<16 {
			return Model{}, fmt.Errorf("metadata %s.expert_count = %d is out of range", arch, n)
		}
		m.Experts = int(n)
	}
	for _, t := range f.Tensors {
		switch t.Type {
		case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16:
		default:
			if quantized(t.Type) {
				return Model{}, fmt.Errorf("tensor %s is already quantized (%s); quantize from an F32, F16 or BF16 file", t.Name, t.Type)
			}
			return Model{}, fmt.Errorf("tensor %s has type %s; quantize reads F32, F16 and BF16 tensors", t.Name, t.Type)
		}
	}
	return m, nil
}

// checkEncoders checks that package numfmt can write every type planned,
// so that a missing encoder fails before anything is written.
func checkEncoders(types []gguf.TensorType) error {
	seen := map[gguf.TensorType]bool{}
	for _, t := range types {
		if seen[t] {
			continue
		}
		seen[t] = true
		if _, err := numfmt.QuantizeRow(nil, make([]float32, t.BlockSize()), t); err != nil {
			return fmt.Errorf("writing %s: %w", t, err)
		}
	}
	return nil
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, nil // b does not exist yet
	}
	return os.SameFile(sa, sb), nil
}
