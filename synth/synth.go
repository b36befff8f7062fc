// Package synth writes Qwen3-architecture GGUF models with deterministic
// random weights. With the real tokenizer copied in, they stand in for
// real checkpoints in tests and benchmarks: same shapes, same bytes per
// step, no download.
package synth

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"inferno/gguf"
	"inferno/quant"
)

// Preset is a model shape.
type Preset struct {
	Name          string
	Layers        int
	Hidden        int
	FFN           int
	Heads         int
	KVHeads       int
	HeadDim       int
	Vocab         int
	ContextLength int
}

// Presets are the shapes synth can write. "0.6b" is exactly Qwen3-0.6B.
var Presets = map[string]Preset{
	"tiny": {Name: "tiny", Layers: 2, Hidden: 64, FFN: 192, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 151936, ContextLength: 40960},
	"0.6b": {Name: "0.6b", Layers: 28, Hidden: 1024, FFN: 3072, Heads: 16, KVHeads: 8, HeadDim: 128, Vocab: 151936, ContextLength: 40960},
}

// Options choose what Write produces.
type Options struct {
	Preset string          // a key of Presets
	Type   gguf.TensorType // type of the weight matrices: Q8_0, F16, BF16 or F32 (norms are always F32)
	Seed   uint64
	// Vocab is a GGUF file whose tokenizer metadata (tokenizer.*) is
	// copied. When nil, a byte-level vocabulary of 256 byte tokens and the
	// Qwen chat control tokens is written instead.
	Vocab *gguf.File
}

// fileType maps a weight type to general.file_type (llama.cpp's LLAMA_FTYPE).
var fileType = map[gguf.TensorType]uint32{
	gguf.TensorF32:  0,
	gguf.TensorF16:  1,
	gguf.TensorQ8_0: 7,
	gguf.TensorBF16: 32,
}

// Write writes a model as opts describe to w.
func Write(w io.Writer, opts Options) error {
	p, ok := Presets[opts.Preset]
	if !ok {
		return fmt.Errorf("synth: unknown preset %q (want tiny or 0.6b)", opts.Preset)
	}
	ft, ok := fileType[opts.Type]
	if !ok {
		return fmt.Errorf("synth: unsupported weight type %s (want q8_0, f16, bf16 or f32)", opts.Type)
	}
	gw := gguf.NewWriter()
	arch := "qwen3."
	meta := []struct {
		key string
		val any
	}{
		{"general.architecture", "qwen3"},
		{"general.name", "inferno-synth-qwen3-" + p.Name},
		{arch + "block_count", uint32(p.Layers)},
		{arch + "context_length", uint32(p.ContextLength)},
		{arch + "embedding_length", uint32(p.Hidden)},
		{arch + "feed_forward_length", uint32(p.FFN)},
		{arch + "attention.head_count", uint32(p.Heads)},
		{arch + "attention.head_count_kv", uint32(p.KVHeads)},
		{arch + "attention.key_length", uint32(p.HeadDim)},
		{arch + "attention.value_length", uint32(p.HeadDim)},
		{arch + "rope.freq_base", float32(1e6)},
		{arch + "attention.layer_norm_rms_epsilon", float32(1e-6)},
		{"general.file_type", ft},
		{"general.quantization_version", uint32(2)},
	}
	for _, kv := range meta {
		if err := gw.Set(kv.key, kv.val); err != nil {
			return err
		}
	}
	if err := setTokenizer(gw, opts.Vocab, p.Vocab); err != nil {
		return err
	}

	g := gen{rng: rand.New(rand.NewPCG(opts.Seed, 0x696e6665726e6f)), typ: opts.Type}
	// Embeddings small (std 0.02, as trained models have); projections with
	// std 1/sqrt(fan-in) so activations keep their scale through a layer;
	// the final norm's gain is large enough that logits have a spread of
	// about 5, so the top token wins by a margin of order 1.
	g.matrix(gw, "token_embd.weight", p.Vocab, p.Hidden, 0.02)
	for i := range p.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		qd, kvd := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
		g.norm(gw, b+"attn_norm.weight", p.Hidden, 1, 0.1)
		g.matrix(gw, b+"attn_q.weight", qd, p.Hidden, 1/math.Sqrt(float64(p.Hidden)))
		g.matrix(gw, b+"attn_k.weight", kvd, p.Hidden, 1/math.Sqrt(float64(p.Hidden)))
		g.matrix(gw, b+"attn_v.weight", kvd, p.Hidden, 1/math.Sqrt(float64(p.Hidden)))
		g.norm(gw, b+"attn_q_norm.weight", p.HeadDim, 1, 0.1)
		g.norm(gw, b+"attn_k_norm.weight", p.HeadDim, 1, 0.1)
		g.matrix(gw, b+"attn_output.weight", p.Hidden, qd, 1/math.Sqrt(float64(qd)))
		g.norm(gw, b+"ffn_norm.weight", p.Hidden, 1, 0.1)
		g.matrix(gw, b+"ffn_gate.weight", p.FFN, p.Hidden, 1/math.Sqrt(float64(p.Hidden)))
		g.matrix(gw, b+"ffn_up.weight", p.FFN, p.Hidden, 1/math.Sqrt(float64(p.Hidden)))
		g.matrix(gw, b+"ffn_down.weight", p.Hidden, p.FFN, 1/math.Sqrt(float64(p.FFN)))
	}
	g.norm(gw, "output_norm.weight", p.Hidden, 5/(0.02*math.Sqrt(float64(p.Hidden))), 0.1)
	if g.err != nil {
		return fmt.Errorf("synth: %w", g.err)
	}
	if _, err := gw.WriteTo(w); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// gen draws weights from a seeded generator and remembers the first error.
type gen struct {
	rng *rand.Rand
	typ gguf.TensorType
	err error
}

// matrix adds a rows x cols weight of g.typ with values of standard
// deviation std, uniform in [-std*sqrt(3), std*sqrt(3)].
func (g *gen) matrix(w *gguf.Writer, name string, rows, cols int, std float64) {
	if g.err != nil {
		return
	}
	n := rows * cols
	var data []byte
	if g.typ == gguf.TensorQ8_0 {
		// Draw the int8 values directly: uniform q in [-127, 127] has std
		// 127/sqrt(3), so scale d = std*sqrt(3)/127.
		d := quant.F32ToF16(float32(std * math.Sqrt(3) / 127))
		data = make([]byte, n/quant.QK8_0*quant.BlockQ8_0Bytes)
		for b := 0; b < len(data); b += quant.BlockQ8_0Bytes {
			binary.LittleEndian.PutUint16(data[b:], d)
			q := data[b+2 : b+quant.BlockQ8_0Bytes]
			for j := 0; j < quant.QK8_0; j += 8 {
				u := g.rng.Uint64()
				for k := range 8 {
					q[j+k] = byte(int8(int((u>>(8*k))&0xff)%255 - 127))
				}
			}
		}
	} else {
		a := float32(std * math.Sqrt(3))
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = (2*g.rng.Float32() - 1) * a
		}
		var err error
		if data, err = quant.QuantizeRow(make([]byte, 0, n*4), vals, g.typ); err != nil {
			g.err = err
			return
		}
	}
	g.err = w.AddTensor(name, g.typ, []uint64{uint64(cols), uint64(rows)}, data)
}

// norm adds an F32 gain vector of n values around center, each off by up to spread*center.
func (g *gen) norm(w *gguf.Writer, name string, n int, center, spread float64) {
	if g.err != nil {
		return
	}
	data := make([]byte, 4*n)
	for i := range n {
		v := center * (1 + spread*(2*g.rng.Float64()-1))
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(v)))
	}
	g.err = w.AddTensor(name, gguf.TensorF32, []uint64{uint64(n)}, data)
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

// setByteVocab writes a minimal gpt2-style vocabulary: the 256 byte-level
// tokens (no merges) and the control tokens a Qwen chat prompt uses,
// padded to vocab tokens.
func setByteVocab(w *gguf.Writer, vocab int) error {
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
