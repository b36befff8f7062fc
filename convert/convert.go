// Package convert turns a Hugging Face checkpoint folder (config.json,
// safetensors weights, tokenizer.json or tokenizer.model, and
// tokenizer_config.json) of one of the architectures the registry lists
// (package family: each family's Checkpoints) into a GGUF file that
// inferno and llama.cpp load. It names no architecture: which tensors a
// file holds is the family's arch.Config, where each one's data lie in
// the checkpoint and what metadata the family's files carry is the
// family's family.Checkpoint.
//
// The output follows llama.cpp's convert_hf_to_gguf.py: the same metadata
// keys and tensor names, the same tokenizer metadata (token list padded to
// the embedding's rows, token types, merges or SentencePiece scores,
// special ids, chat template), norm weights, biases and routers in F32,
// MXFP4 experts repacked as they are, and the other weights in the chosen
// type, with bit-identical F16, BF16 and Q8_0 encoding.
//
// Conversion streams: the safetensors files are memory-mapped, each tensor
// is converted in chunks and written to the output as it goes, and pages
// of the input that have been converted are given back to the kernel, so
// memory use stays under a hundred megabytes whatever the checkpoint's
// size.
package convert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"inferno/gguf"
	"inferno/numfmt"
	"inferno/outfile"
)

// Options choose what Convert writes.
type Options struct {
	// Type is the type of the weight matrices: gguf.TensorF32 (the zero
	// value), TensorF16, TensorBF16 or TensorQ8_0. Norm weights are always
	// F32. A matrix whose rows are not a multiple of 32 values is written
	// as F16 when Q8_0 is asked for, as llama.cpp does.
	Type gguf.TensorType
	// Name is general.name; the checkpoint folder's name when empty.
	Name string
	// Progress, when set, is called after each chunk of output with the
	// bytes written so far and the total the file will have.
	Progress func(done, total int64)
	// Workers is the number of goroutines that convert; GOMAXPROCS when 0.
	Workers int
}

// Result describes a file Convert wrote.
type Result struct {
	Path     string
	Type     gguf.TensorType // Options.Type
	Tensors  int
	Params   int64 // weights in the file (a tied output head is counted once)
	Bytes    int64 // size of the file
	Tied     bool  // no output.weight: the head is the token embedding
	Duration time.Duration
}

// fileTypes maps a weight type to general.file_type (llama.cpp's
// LLAMA_FTYPE).
var fileTypes = map[gguf.TensorType]uint32{
	gguf.TensorF32:  0,
	gguf.TensorF16:  1,
	gguf.TensorQ8_0: 7,
	gguf.TensorBF16: 32,
}

// fileMXFP4MoE is general.file_type of a file whose experts are MXFP4
// and the rest F32, F16 or BF16 (llama.cpp's LLAMA_FTYPE_MOSTLY_MXFP4_MOE).
const fileMXFP4MoE = 38

// sourceTypes maps the safetensors types Convert reads to ggml types.
var sourceTypes = map[DType]gguf.TensorType{
	F32:  gguf.TensorF32,
	F16:  gguf.TensorF16,
	BF16: gguf.TensorBF16,
}

// Convert converts the Hugging Face checkpoint in the folder dir to
// the GGUF file out. The file is written to a temporary file in out's
// folder (created if needed) and renamed to out at the end, so out is
// never left half-written; on failure the temporary file and the folders
// made for it are removed. A folder or a device as out is refused, and a
// symbolic link is written through. Errors name the file, tensor or
// setting at fault.
func Convert(ctx context.Context, dir, out string, opts Options) (*Result, error) {
	start := time.Now()
	res, err := convert(ctx, dir, out, opts)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// Metadata returns the metadata pairs Convert writes for the checkpoint
// in dir, in file order: general.*, the architecture's (qwen3.*, ...) and
// tokenizer.*. It reads
// config.json, generation_config.json and the tokenizer files, not the
// weights.
func Metadata(dir string, opts Options) ([]gguf.KV, error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, err
	}
	kvs, err := metadata(dir, cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	out := make([]gguf.KV, len(kvs))
	for i, p := range kvs {
		v, err := gguf.MakeValue(p.val)
		if err != nil {
			return nil, fmt.Errorf("convert: metadata %q: %w", p.key, err)
		}
		out[i] = gguf.KV{Key: p.key, Value: v}
	}
	return out, nil
}

func metadata(dir string, cfg *Config, opts Options) ([]kv, error) {
	ft, ok := fileTypes[opts.Type]
	if !ok {
		return nil, fmt.Errorf("output type %s is not supported (want F32, F16, BF16 or Q8_0)", opts.Type)
	}
	name := opts.Name
	if name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		name = filepath.Base(abs)
	}
	kvs := []kv{
		{"general.architecture", cfg.arch.gguf},
		{"general.type", "model"},
	}
	kvs = append(kvs, samplingMetadata(dir)...)
	a := cfg.arch.gguf + "."
	kvs = append(kvs, kv{"general.name", name})
	if cfg.arch.VocabKeys {
		// llama.cpp's LlamaModel adds these two.
		kvs = append(kvs, kv{a + "vocab_size", uint32(cfg.VocabSize)}, kv{a + "rope.dimension_count", uint32(cfg.HeadDim)})
	}
	kvs = append(kvs,
		kv{a + "block_count", uint32(cfg.NumHiddenLayers)},
		kv{a + "context_length", uint32(cfg.MaxPositionEmbeddings)},
		kv{a + "embedding_length", uint32(cfg.HiddenSize)},
		kv{a + "feed_forward_length", uint32(cfg.IntermediateSize)},
		kv{a + "attention.head_count", uint32(cfg.NumAttentionHeads)},
		kv{a + "attention.head_count_kv", uint32(cfg.NumKeyValueHeads)},
	)
	for _, p := range cfg.scalingKVs {
		kvs = append(kvs, kv{a + p.key, p.val})
	}
	kvs = append(kvs, kv{a + "rope.freq_base", float32(cfg.RopeTheta)})
	if cfg.localTheta != 0 {
		kvs = append(kvs, kv{a + "rope.freq_base_swa", float32(cfg.localTheta)})
	}
	kvs = append(kvs, kv{a + "attention.layer_norm_rms_epsilon", float32(cfg.RMSNormEps)})
	if cfg.hasHeadDim || !cfg.arch.HeadDimKeys {
		kvs = append(kvs, kv{a + "attention.key_length", uint32(cfg.HeadDim)}, kv{a + "attention.value_length", uint32(cfg.HeadDim)})
	}
	if cfg.pooling != poolNone {
		kvs = append(kvs, kv{a + "pooling_type", cfg.pooling})
	}
	if m := cfg.arch.MoE; m != nil {
		kvs = append(kvs,
			kv{a + "expert_count", uint32(cfg.NumExperts)},
			kv{a + "expert_used_count", uint32(cfg.NumExpertsPerTok)},
			kv{a + "expert_feed_forward_length", uint32(cfg.MoEIntermediateSize)},
		)
		if m.NormKey {
			kvs = append(kvs, kv{a + "expert_weights_norm", cfg.NormTopKProb})
		}
	}
	for _, p := range cfg.extraKVs {
		kvs = append(kvs, kv{a + p.key, p.val})
	}
	if cfg.mxfp4 && opts.Type != gguf.TensorQ8_0 {
		ft = fileMXFP4MoE // the float types' files keep MXFP4 experts, as llama.cpp's
	}
	kvs = append(kvs,
		kv{"general.file_type", ft},
		kv{"general.quantization_version", uint32(2)},
	)
	tok, err := tokenizerMetadata(dir, cfg)
	if err != nil {
		return nil, err
	}
	return append(kvs, tok...), nil
}

// samplingMetadata returns the recommended sampler settings of
// generation_config.json that llama.cpp's converter copies into
// general.sampling.*. A missing or unreadable file gives none, as there.
func samplingMetadata(dir string) []kv {
	m, err := readJSONObject(filepath.Join(dir, "generation_config.json"))
	if err != nil {
		return nil
	}
	var out []kv
	for _, p := range []struct {
		json, key string
		kind      byte // s string, i int32, f float32
	}{
		{"sequence", "sequence", 's'},
		{"top_k", "top_k", 'i'},
		{"top_p", "top_p", 'f'},
		{"min_p", "min_p", 'f'},
		{"xtc_probability", "xtc_probability", 'f'},
		{"xtc_threshold", "xtc_threshold", 'f'},
		{"temperature", "temp", 'f'},
		{"penalty_last_n", "penalty_last_n", 'i'},
		{"penalty_repeat", "penalty_repeat", 'f'},
		{"mirostat", "mirostat", 'i'},
		{"mirostat_tau", "mirostat_tau", 'f'},
		{"mirostat_eta", "mirostat_eta", 'f'},
	} {
		v := m[p.json]
		key := "general.sampling." + p.key
		switch x := v.(type) {
		case string:
			if p.kind == 's' {
				out = append(out, kv{key, x})
			}
		case float64:
			switch p.kind {
			case 'f':
				out = append(out, kv{key, float32(x)})
			case 'i':
				if n, ok := jsonInt(x); ok && n >= -1<<31 && n < 1<<31 {
					out = append(out, kv{key, int32(n)})
				}
			}
		}
	}
	return out
}

// ignored reports whether a checkpoint tensor is one llama.cpp's converter
// drops: buffers that are not weights.
func ignored(name string) bool {
	for _, suffix := range []string{".rotary_emb.inv_freq", ".attention.masked_bias", ".attention.bias"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// job is one tensor to write: where it comes from and what it becomes.
type job struct {
	name string // the checkpoint's name of it, for messages
	view *view  // nil for a tensor the converter made (data)
	data []byte // F32 data
	out  outTensor
	// shift is added to every value (tensorSpec.shift).
	shift float32
}

// plan is a checked conversion: metadata, tensors and their layout.
type plan struct {
	ckpt  *checkpoint
	kvs   []kv
	jobs  []job
	total uint64 // bytes of tensor data
	tied  bool
}

func newPlan(dir string, opts Options) (*plan, error) {
	cfg, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	kvs, err := metadata(dir, cfg, opts)
	if err != nil {
		return nil, err
	}
	ck, err := openCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	p := &plan{ckpt: ck, kvs: kvs}
	if err := p.mapTensors(cfg, opts.Type); err != nil {
		ck.close()
		return nil, err
	}
	return p, nil
}

// mapTensors matches the checkpoint's tensors to the architecture's layout, checks
// their types and shapes, and chooses each output type.
func (p *plan) mapTensors(cfg *Config, typ gguf.TensorType) error {
	p.ckpt.textOnly()
	if cfg.arch.Embedding {
		p.ckpt.addModelPrefix()
	}
	_, hasHead := p.ckpt.tensors["lm_head.weight"]
	tie := cfg.TieWordEmbeddings
	switch {
	case cfg.arch.Embedding:
		// A model without a head: the embedding stands in (llama.cpp
		// duplicates it the same way), read by no embedding.
		hasHead = false
	case !hasHead && tie != nil && !*tie:
		return fmt.Errorf("tensor %q is missing (config.json has tie_word_embeddings false)", "lm_head.weight")
	case hasHead && tie != nil && *tie:
		hasHead = false // the head is the embedding: no copy, as llama.cpp's tied models
	}
	p.tied = !hasHead
	vocabRows := cfg.VocabSize
	if cfg.arch.TrimVocab && cfg.realVocab > 0 {
		vocabRows = min(vocabRows, cfg.realVocab)
	}
	want, err := specs(cfg, hasHead, vocabRows)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(want))
	for _, s := range want {
		for _, name := range sourceNames(s.src, cfg.NumExperts) {
			known[name] = true
		}
	}
	names := make([]string, 0, len(p.ckpt.tensors))
	for name := range p.ckpt.tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !known[name] && !ignored(name) && !(name == "lm_head.weight" && p.tied) {
			return fmt.Errorf("tensor %q (in %s) is not part of a %s model with %d layers", name, p.ckpt.tensors[name].fileName, cfg.arch.Title, cfg.NumHiddenLayers)
		}
	}
	for i := range want {
		s := &want[i]
		j := job{name: s.hfName(), data: s.data, shift: s.shift}
		o := outTensor{name: s.gguf, typ: typ, shape: make([]uint64, len(s.shape))}
		for i, d := range s.shape {
			o.shape[len(s.shape)-1-i] = uint64(d) // ggml order is reversed
		}
		if s.data == nil {
			if j.view, err = p.ckpt.resolve(s); err != nil {
				return err
			}
		}
		switch {
		case j.view != nil && j.view.blocks.t != nil:
			o.typ = gguf.TensorMXFP4
		case keepsF32(s.gguf, len(o.shape)):
			o.typ = gguf.TensorF32
		case typ == gguf.TensorQ8_0 && o.shape[0]%numfmt.QK8_0 != 0:
			o.typ = gguf.TensorF16
		}
		n := uint64(1)
		for _, d := range o.shape {
			n *= d
		}
		o.size, _ = o.typ.RowBytes(n)
		j.out = o
		p.jobs = append(p.jobs, j)
	}
	outs := make([]outTensor, len(p.jobs))
	for i := range p.jobs {
		outs[i] = p.jobs[i].out
	}
	p.total = layout(outs)
	for i := range p.jobs {
		p.jobs[i].out.offset = outs[i].offset
	}
	return nil
}

func convert(ctx context.Context, dir, out string, opts Options) (*Result, error) {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a folder; give the path of the GGUF file to write", out)
	}
	p, err := newPlan(dir, opts)
	if err != nil {
		return nil, err
	}
	defer p.ckpt.close()
	outs := make([]outTensor, len(p.jobs))
	for i, j := range p.jobs {
		outs[i] = j.out
	}
	header, err := encodeHeader(p.kvs, outs)
	if err != nil {
		return nil, err
	}
	total := uint64(len(header)) + p.total

	file, err := outfile.Create(out)
	if err != nil {
		return nil, err
	}
	defer file.Abort() // does nothing once committed
	if err := file.Reserve(int64(total)); err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(file, 4<<20)
	w := &padWriter{w: bw}
	progress := func() {
		if opts.Progress != nil {
			opts.Progress(int64(w.n), int64(total))
		}
	}
	if _, err := w.Write(header); err != nil {
		return nil, err
	}
	progress()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c := newConverter(workers)
	var params int64
	for _, j := range p.jobs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := c.write(ctx, w, &j, progress)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", j.name, err)
		}
		if err := w.pad(); err != nil {
			return nil, err
		}
		params += n
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if w.n != total {
		return nil, fmt.Errorf("wrote %d bytes, the layout has %d", w.n, total)
	}
	if err := verify(file.TempName(), outs); err != nil {
		return nil, err
	}
	if err := file.Commit(); err != nil {
		return nil, err
	}
	return &Result{Path: out, Type: opts.Type, Tensors: len(p.jobs), Params: params, Bytes: int64(total), Tied: p.tied}, nil
}

// verify reads the written file back with package gguf and checks that
// every tensor is where the layout put it.
func verify(path string, outs []outTensor) error {
	f, err := gguf.Open(path)
	if err != nil {
		return fmt.Errorf("reading the output back: %w", err)
	}
	defer f.Close()
	if len(f.Tensors) != len(outs) {
		return fmt.Errorf("reading the output back: %d tensors, want %d", len(f.Tensors), len(outs))
	}
	for i, t := range f.Tensors {
		if t.Name != outs[i].name || t.Type != outs[i].typ || t.Offset != outs[i].offset || uint64(len(t.Data)) != outs[i].size {
			return fmt.Errorf("reading the output back: tensor %d is %q %s at %d, want %q %s at %d",
				i, t.Name, t.Type, t.Offset, outs[i].name, outs[i].typ, outs[i].offset)
		}
	}
	return nil
}

// checkpoint is the set of safetensors files of a checkpoint folder.
type checkpoint struct {
	files   []*Safetensors
	tensors map[string]tensorRef
}

type tensorRef struct {
	t        *Tensor
	file     *Safetensors
	fileName string
}

func (c *checkpoint) close() {
	for _, f := range c.files {
		f.Close()
	}
}

// openCheckpoint opens the weights of dir: the files that
// model.safetensors.index.json lists, or else every model*.safetensors
// file, as llama.cpp's converter finds them.
func openCheckpoint(dir string) (_ *checkpoint, err error) {
	c := &checkpoint{tensors: map[string]tensorRef{}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	const indexName = "model.safetensors.index.json"
	var weightMap map[string]string
	var parts []string
	indexPath := filepath.Join(dir, indexName)
	if _, err := os.Stat(indexPath); err == nil {
		var index struct {
			WeightMap map[string]any `json:"weight_map"`
		}
		if err := readJSON(indexPath, &index); err != nil {
			return nil, err
		}
		if len(index.WeightMap) == 0 {
			return nil, fmt.Errorf("%s: no weight_map", indexName)
		}
		weightMap = map[string]string{}
		seen := map[string]bool{}
		for name, v := range index.WeightMap {
			file, ok := v.(string)
			if !ok || !filepath.IsLocal(file) || !strings.HasSuffix(file, ".safetensors") {
				return nil, fmt.Errorf("%s: tensor %q: %s is not a safetensors file in the folder", indexName, name, jsonText(v))
			}
			weightMap[name] = file
			if !seen[file] {
				seen[file] = true
				parts = append(parts, file)
			}
		}
		sort.Strings(parts)
	} else if errors.Is(err, fs.ErrNotExist) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if n := e.Name(); strings.HasPrefix(n, "model") && strings.HasSuffix(n, ".safetensors") {
				parts = append(parts, n)
			}
		}
		if len(parts) == 0 {
			msg := fmt.Sprintf("no model.safetensors or %s in %s", indexName, dir)
			if _, err := os.Stat(filepath.Join(dir, "pytorch_model.bin")); err == nil {
				msg += " (PyTorch .bin checkpoints are not supported; save the model with safetensors)"
			}
			return nil, errors.New(msg)
		}
	} else {
		return nil, err
	}

	for _, part := range parts {
		f, err := openSafetensors(filepath.Join(dir, part), part)
		if errors.Is(err, fs.ErrNotExist) {
			if weightMap != nil {
				return nil, fmt.Errorf("%s is missing (listed in %s)", part, indexName)
			}
			return nil, fmt.Errorf("%s is missing", part)
		}
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, f)
		for i := range f.Tensors {
			t := &f.Tensors[i]
			if prev, dup := c.tensors[t.Name]; dup {
				return nil, fmt.Errorf("tensor %q is in both %s and %s", t.Name, prev.fileName, part)
			}
			if weightMap != nil && weightMap[t.Name] != part {
				if weightMap[t.Name] == "" {
					return nil, fmt.Errorf("tensor %q in %s is not listed in %s", t.Name, part, indexName)
				}
				return nil, fmt.Errorf("tensor %q is in %s, but %s puts it in %s", t.Name, part, indexName, weightMap[t.Name])
			}
			c.tensors[t.Name] = tensorRef{t: t, file: f, fileName: part}
		}
	}
	if weightMap != nil {
		names := make([]string, 0, len(weightMap))
		for name := range weightMap {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if _, ok := c.tensors[name]; !ok {
				return nil, fmt.Errorf("tensor %q is not in %s, where %s puts it", name, weightMap[name], indexName)
			}
		}
	}
	return c, nil
}
