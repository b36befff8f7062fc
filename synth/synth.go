// Package synth writes GGUF models with deterministic random weights in
// the shapes of released models: the presets of the registered
// architectures (package family), each a configuration of its family
// whose tensors are those its roles name (arch.Config.LayerRoles). With
// the real tokenizer copied in, they stand in for real checkpoints in
// tests and benchmarks: same shapes, same bytes per step, no download.
//
// The weights are drawn in one of two ways:
//
//   - Direct: every value is drawn in turn from one PCG generator seeded
//     with Options.Seed, tensor after tensor in file order, and encoded in
//     the tensor's type. A direct file in a quantization mixture holds
//     exactly what `inferno quantize` (and llama-quantize) make of the
//     direct F32 file with the same seed, except the Q8_0 mixture, whose
//     int8 values are drawn directly.
//   - Bank: for models too large to draw value by value in reasonable time
//     (above a billion weights: the 1.7b preset and up), each group of
//     matrices with the same row length, scale and type shares a bank of
//     distinct random rows (1024 unless Options.Bank says otherwise),
//     drawn and encoded once, in parallel; row r of tensor i is bank row
//     splitmix64(seed, i, r) mod the bank's size. Writing is then mostly
//     copying, so a 32B Q4_K_M file takes about as long as the disk
//     needs. Rows repeat, which matters to nothing but the model's
//     "knowledge".
//
// Either way the output depends only on the options, never on the number
// of threads, and is streamed to the writer without holding the model in
// memory.
package synth

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"

	"inferno/arch"
	"inferno/family"
	"inferno/gguf"
	"inferno/numfmt"
	"inferno/quantize"
)

// poolingLast is name.pooling_type's value for last-token pooling.
const poolingLast = uint32(arch.PoolLast)

// Options choose what Write produces.
type Options struct {
	Preset string // a preset's name (PresetNames)
	Shape  Shape  // changes to the preset's shape
	// Mixture is a quantization mixture as llama-quantize names it
	// (Q4_K_M, Q8_0, F16, ...: quantize.ParseMixture); each tensor gets
	// the type llama-quantize would give it. When empty, Type says what
	// the weight matrices are: F32, F16, BF16 or Q8_0 are those mixtures,
	// any other block type (Q4_K, IQ4_XS, ...) is given to every matrix.
	// Norms are always F32.
	Mixture string
	Type    gguf.TensorType
	// Pure gives every weight matrix the mixture's base type, without
	// llama-quantize's per-tensor rules (llama-quantize --pure).
	Pure bool
	Seed uint64
	// Vocab is a GGUF file whose tokenizer metadata (tokenizer.*) is
	// copied. When nil, a byte-level vocabulary of 256 byte tokens and the
	// Qwen chat control tokens is written instead.
	Vocab *gguf.File
	// Bank chooses how weights are drawn (see the package doc): 0 draws
	// directly up to a billion weights and from banks of 1024 rows above,
	// a negative value always directly, a positive one from banks of that
	// many rows.
	Bank int
	// Workers is the number of goroutines that encode; GOMAXPROCS when 0.
	// The output does not depend on it.
	Workers int
	// Progress, when set, is called as data is written with the bytes
	// written so far and the size of the file.
	Progress func(done, total int64)
	// Embedding writes the preset as an embedding model, as
	// Qwen3-Embedding's files are: name.pooling_type 3 (last-token
	// pooling). Only families with embedding models take it.
	Embedding bool
}

// directLimit is the number of weights up to which Bank 0 draws directly.
const directLimit = 1_000_000_000

// defaultBank is the number of rows of a bank when Bank is 0.
const defaultBank = 1024

// Write writes a model as opts describe to w.
func Write(w io.Writer, opts Options) error {
	return WriteContext(context.Background(), w, opts)
}

// reserver is implemented by writers that can check for room before the
// data comes, as *outfile.File does.
type reserver interface {
	Reserve(size int64) error
}

// WriteContext is Write, stopped early when ctx is done. When w has a
// method Reserve(size int64) error, as *outfile.File has, it is called
// with the size of the file before the tensor data is written, and an
// error from it ends the write.
func WriteContext(ctx context.Context, w io.Writer, opts Options) error {
	p, err := Resolve(opts)
	if err != nil {
		return err
	}
	m, pure, err := mixtureOf(opts)
	if err != nil {
		return err
	}
	c := &p.Config
	sp := specs(c)
	types, err := plan(c, sp, m, pure)
	if err != nil {
		return err
	}
	meta := []keyValue{
		{"general.architecture", c.Arch},
		{"general.name", "inferno-synth-" + c.Arch + "-" + p.Name},
	}
	meta = append(meta, keys(c)...)
	meta = append(meta, keyValue{"general.file_type", m.FileType}, keyValue{"general.quantization_version", uint32(2)})
	meta = append(meta, moeKeys(c)...)
	if opts.Embedding {
		if f, _ := family.Lookup(c.Arch); f == nil || !embeddingFamily(f) {
			return fmt.Errorf("synth: an embedding model of preset %s: the %s architecture has no embedding models", p.Name, c.Arch)
		}
		meta = append(meta, keyValue{c.Arch + ".pooling_type", poolingLast})
	}
	gw := gguf.NewWriter()
	for _, kv := range meta {
		if err := gw.Set(kv.key, kv.val); err != nil {
			return err
		}
	}
	if err := setTokenizer(gw, opts.Vocab, c.Vocab); err != nil {
		return err
	}
	sizes := make([]int64, len(sp))
	var weights int64
	for i, s := range sp {
		size, err := gw.AddTensorInfo(s.name, types[i], s.shape())
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		sizes[i] = int64(size)
		weights += int64(s.rows) * int64(s.cols)
	}
	bw := bufio.NewWriterSize(w, 4<<20)
	hn, err := gw.WriteHeader(bw)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	total := hn
	for _, s := range sizes {
		total = alignUp(total+s, gguf.DefaultAlignment)
	}
	if r, ok := w.(reserver); ok {
		if err := r.Reserve(total); err != nil {
			return fmt.Errorf("synth: %w", err)
		}
	}
	done := hn
	progress := func(n int64) {
		done += n
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	progress(0)
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bank := opts.Bank
	if bank == 0 && weights > directLimit {
		bank = defaultBank
	}
	g := &writer{sp: sp, types: types, sizes: sizes, seed: opts.Seed, q8: m.Default == gguf.TensorQ8_0}
	o := quantize.NewOrdered(ctx, bw, workers, progress)
	if bank > 0 {
		err = g.banked(ctx, o, bank, workers)
	} else {
		err = g.direct(o)
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// writer submits the tensors' data to an Ordered pipeline.
type writer struct {
	sp    []spec
	types []gguf.TensorType
	sizes []int64
	seed  uint64
	q8    bool // the Q8_0 mixture: draw int8 values directly
}

// chunkElems is about how many values one job encodes.
const chunkElems = 1 << 18

// pad submits the zeros that follow tensor i.
func (g *writer) pad(o *quantize.Ordered, i int) error {
	n := int(alignUp(g.sizes[i], gguf.DefaultAlignment) - g.sizes[i])
	if n == 0 {
		return nil
	}
	return o.Submit(func(dst []byte) ([]byte, error) { return append(dst, make([]byte, n)...), nil }, nil)
}

// newPCG returns the generator a direct file draws from.
func newPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x696e6665726e6f) }

// float32From is rand.Rand.Float32 on a raw 64-bit draw: uniform in [0, 1).
func float32From(u uint64) float32 { return float32(uint32(u>>32)<<8>>8) / (1 << 24) }

// float64From is rand.Rand.Float64 on a raw 64-bit draw.
func float64From(u uint64) float64 { return float64(u<<11>>11) / (1 << 53) }

// normData draws a norm's gains from src.
func normData(s spec, src *rand.PCG) []byte {
	data := make([]byte, 4*s.cols)
	for i := range s.cols {
		v := s.center * (1 + s.spread*(2*float64From(src.Uint64())-1))
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(v)))
	}
	return data
}

// q8Rows draws rows of int8 Q8_0 values directly: uniform q in [-127,
// 127] has std 127/sqrt(3), so the scale is d = std*sqrt(3)/127.
func q8Rows(s spec, n int, src *rand.PCG) []byte {
	d := numfmt.F32ToF16(float32(s.std * math.Sqrt(3) / 127))
	data := make([]byte, n/numfmt.QK8_0*numfmt.BlockQ8_0Bytes)
	for b := 0; b < len(data); b += numfmt.BlockQ8_0Bytes {
		binary.LittleEndian.PutUint16(data[b:], d)
		q := data[b+2 : b+numfmt.BlockQ8_0Bytes]
		for j := 0; j < numfmt.QK8_0; j += 8 {
			u := src.Uint64()
			for k := range 8 {
				q[j+k] = byte(int8(int((u>>(8*k))&0xff)%255 - 127))
			}
		}
	}
	return data
}

// floatRows draws n values uniform in [-std*sqrt(3), std*sqrt(3)].
func floatRows(s spec, n int, src *rand.PCG) []float32 {
	a := float32(s.std * math.Sqrt(3))
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = (2*float32From(src.Uint64()) - 1) * a
	}
	return vals
}

// direct draws every value from one generator, in file order; workers
// encode the rows while the next are drawn.
func (g *writer) direct(o *quantize.Ordered) error {
	src := newPCG(g.seed)
	for i, s := range g.sp {
		if s.kind == fixed {
			if err := o.Submit(func(dst []byte) ([]byte, error) { return append(dst, s.data...), nil }, nil); err != nil {
				return err
			}
		} else if s.kind == norm {
			data := normData(s, src)
			if err := o.Submit(func(dst []byte) ([]byte, error) { return append(dst, data...), nil }, nil); err != nil {
				return err
			}
		} else {
			typ := g.types[i]
			step := max(1, chunkElems/s.cols)
			for r := 0; r < s.rows; r += step {
				n := (min(s.rows, r+step) - r) * s.cols
				var job quantize.Job
				if g.q8 && typ == gguf.TensorQ8_0 {
					data := q8Rows(s, n, src)
					job = func(dst []byte) ([]byte, error) { return append(dst, data...), nil }
				} else {
					vals := floatRows(s, n, src)
					job = func(dst []byte) ([]byte, error) { return numfmt.QuantizeRow(dst, vals, typ) }
				}
				if err := o.Submit(job, nil); err != nil {
					return err
				}
			}
		}
		if err := g.pad(o, i); err != nil {
			return err
		}
	}
	return nil
}

// bankKey identifies the matrices that share a bank of rows.
type bankKey struct {
	cols int
	std  float64
	typ  gguf.TensorType
}

// bankOf is a bank of encoded rows.
type bankOf struct {
	rows     int
	rowBytes int
	data     []byte
}

// splitmix64 is a 64-bit mixing function (Steele, Lea and Flood's
// SplitMix64 finalizer).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// banked builds one bank of rows per bankKey, then writes every matrix
// row as a copy of a bank row drawn by hash. Norms draw from a generator
// seeded per tensor.
func (g *writer) banked(ctx context.Context, o *quantize.Ordered, size, workers int) error {
	banks := map[bankKey]*bankOf{}
	var keys []bankKey
	for i, s := range g.sp {
		if s.kind != matrix {
			continue
		}
		k := bankKey{s.cols, s.std, g.types[i]}
		b := banks[k]
		if b == nil {
			rb, _ := k.typ.RowBytes(uint64(k.cols))
			b = &bankOf{rowBytes: int(rb)}
			banks[k] = b
			keys = append(keys, k)
		}
		b.rows = max(b.rows, min(size, s.rows))
	}
	// Fill the banks: row j of a bank is drawn from a generator seeded by
	// the seed, the bank's key and j, so rows can be made in any order.
	type job struct {
		k      bankKey
		j0, j1 int
	}
	jobs := make(chan job)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for _, k := range keys {
		b := banks[k]
		b.data = make([]byte, b.rows*b.rowBytes)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range jobs {
				b := banks[jb.k]
				s := spec{std: jb.k.std}
				out := b.data[jb.j0*b.rowBytes : jb.j0*b.rowBytes]
				bankSeed := splitmix64(g.seed ^ splitmix64(uint64(jb.k.cols)<<32^math.Float64bits(jb.k.std)^uint64(jb.k.typ)<<56))
				for j := jb.j0; j < jb.j1; j++ {
					src := newPCG(splitmix64(bankSeed + uint64(j)))
					var err error
					if out, err = numfmt.QuantizeRow(out, floatRows(s, jb.k.cols, src), jb.k.typ); err != nil {
						select {
						case errs <- err:
						default:
						}
						return
					}
				}
			}
		}()
	}
	for _, k := range keys {
		b := banks[k]
		step := max(1, chunkElems/k.cols)
		for j := 0; j < b.rows; j += step {
			select {
			case jobs <- job{k, j, min(b.rows, j+step)}:
			case err := <-errs:
				close(jobs)
				wg.Wait()
				return err
			case <-ctx.Done():
				close(jobs)
				wg.Wait()
				return ctx.Err()
			}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}

	for i, s := range g.sp {
		if s.kind != matrix {
			data := s.data
			if s.kind == norm {
				data = normData(s, newPCG(splitmix64(g.seed^uint64(i)<<40^1<<39)))
			}
			if err := o.Submit(func(dst []byte) ([]byte, error) { return append(dst, data...), nil }, nil); err != nil {
				return err
			}
		} else {
			b := banks[bankKey{s.cols, s.std, g.types[i]}]
			step := max(1, (4<<20)/b.rowBytes)
			for r := 0; r < s.rows; r += step {
				r0, r1, tensorSeed := r, min(s.rows, r+step), splitmix64(g.seed^uint64(i)<<40)
				if err := o.Submit(func(dst []byte) ([]byte, error) {
					for row := r0; row < r1; row++ {
						j := int(splitmix64(tensorSeed+uint64(row)) % uint64(b.rows))
						dst = append(dst, b.data[j*b.rowBytes:(j+1)*b.rowBytes]...)
					}
					return dst, nil
				}, nil); err != nil {
					return err
				}
			}
		}
		if err := g.pad(o, i); err != nil {
			return err
		}
	}
	return nil
}

// setTokenizer copies the tokenizer metadata of src, or writes the
// byte-level fallback. The token list is padded with unused "[PADn]" tokens
// to one token per embedding row, as llama.cpp's converter does and its
// loader expects.
func setTokenizer(w *gguf.Writer, src *gguf.File, vocab int) error {
	if src == nil {
		return setByteVocab(w, vocab)
	}
	tokens, err := src.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return fmt.Errorf("synth: vocabulary source: %w", err)
	}
	if len(tokens) > vocab {
		return fmt.Errorf("synth: vocabulary source has %d tokens, more than the %d embedding rows", len(tokens), vocab)
	}
	types, err := src.Int32s("tokenizer.ggml.token_type")
	if err != nil {
		return fmt.Errorf("synth: vocabulary source: %w", err)
	}
	if len(types) != len(tokens) {
		return fmt.Errorf("synth: vocabulary source has %d tokens but %d token types", len(tokens), len(types))
	}
	tokens, types = pad(tokens, types, vocab)
	for _, kv := range src.KVs {
		var err error
		switch {
		case kv.Key == "tokenizer.ggml.tokens":
			err = w.Set(kv.Key, tokens)
		case kv.Key == "tokenizer.ggml.token_type":
			err = w.Set(kv.Key, types)
		case strings.HasPrefix(kv.Key, "tokenizer."):
			err = w.Set(kv.Key, kv.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pad extends tokens and types to n entries with unused padding tokens.
func pad(tokens []string, types []int32, n int) ([]string, []int32) {
	tokens = append(tokens[:len(tokens):len(tokens)], make([]string, n-len(tokens))...)
	types = append(types[:len(types):len(types)], make([]int32, n-len(types))...)
	for i := range tokens {
		if tokens[i] == "" && types[i] == 0 {
			tokens[i] = fmt.Sprintf("[PAD%d]", i)
			types[i] = 5 // unused
		}
	}
	return tokens, types
}

// byteVocabSize is the number of tokens setByteVocab writes before padding.
const byteVocabSize = 256 + 3

// setByteVocab writes a minimal gpt2-style vocabulary: the 256 byte-level
// tokens (no merges) and the control tokens a Qwen chat prompt uses,
// padded to vocab tokens.
func setByteVocab(w *gguf.Writer, vocab int) error {
	if vocab < byteVocabSize {
		return fmt.Errorf("synth: vocabulary of %d tokens is smaller than the %d of the byte-level vocabulary", vocab, byteVocabSize)
	}
	var tokens []string
	var types []int32
	for b := range 256 {
		tokens = append(tokens, string(byteRune(byte(b))))
		types = append(types, 1)
	}
	eos := int32(len(tokens) + 2)
	for _, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
		tokens = append(tokens, s)
		types = append(types, 3)
	}
	tokens, types = pad(tokens, types, vocab)
	for _, kv := range []struct {
		key string
		val any
	}{
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "qwen2"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", []string{}},
		{"tokenizer.ggml.eos_token_id", uint32(eos)},
		{"tokenizer.ggml.padding_token_id", uint32(256)},
		{"tokenizer.ggml.bos_token_id", uint32(256)},
		{"tokenizer.ggml.add_bos_token", false},
	} {
		if err := w.Set(kv.key, kv.val); err != nil {
			return err
		}
	}
	return nil
}

// byteRune is GPT-2's bytes_to_unicode: printable bytes map to themselves,
// the rest to code points from U+0100 on.
func byteRune(b byte) rune {
	switch {
	case b >= '!' && b <= '~', b >= 0xa1 && b <= 0xac, b >= 0xae:
		return rune(b)
	}
	n := 0
	for c := 0; c < int(b); c++ {
		cb := byte(c)
		if !(cb >= '!' && cb <= '~' || cb >= 0xa1 && cb <= 0xac || cb >= 0xae) {
			n++
		}
	}
	return rune(256 + n)
}
