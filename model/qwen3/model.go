package qwen3

import (
	"fmt"

	"inferno/backend"
	"inferno/gguf"
	"inferno/quant"
)

// Model is a Qwen3 model's configuration and weights. Matrices point into
// the memory-mapped GGUF file; norm gains are copied out as float32.
type Model struct {
	Config     Config
	Embed      *backend.Weight // token_embd.weight: Vocab rows of Hidden
	Output     *backend.Weight // output.weight, or Embed when tied
	OutputNorm []float32
	Layers     []Layer
	plan       []Step // the forward pass's operations (Plan), made by Load
}

// Layer is one transformer block.
type Layer struct {
	AttnNorm  []float32
	Attention Attention
	FFNNorm   []float32
	MLP       MLP
}

// Attention holds one layer's attention weights.
type Attention struct {
	Q, K, V, O   *backend.Weight
	QNorm, KNorm []float32 // per-head RMSNorm gains, HeadDim values
}

// MLP holds one layer's SwiGLU feed-forward weights.
type MLP struct {
	Gate, Up, Down *backend.Weight
}

// Load reads the configuration and weights of a Qwen3 model from f. Every
// tensor's presence, type and shape is checked against the configuration.
// The model refers to f's memory, so f must stay open while it is used.
func Load(f *gguf.File) (*Model, error) {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	// Each layer has 11 tensors: check the count before allocating, so a
	// corrupt block_count fails at once.
	if cfg.Layers > len(f.Tensors)/11 {
		return nil, fmt.Errorf("qwen3: block_count %d needs %d tensors, the file has %d", cfg.Layers, 11*cfg.Layers+2, len(f.Tensors))
	}
	m := &Model{Config: cfg, Layers: make([]Layer, cfg.Layers)}
	m.plan = makePlan(cfg.Layers)
	l := loader{f: f}
	m.Embed = l.matrix("token_embd.weight", cfg.Vocab, cfg.Hidden)
	m.OutputNorm = l.vector("output_norm.weight", cfg.Hidden)
	if _, ok := f.Tensor("output.weight"); ok {
		m.Output = l.matrix("output.weight", cfg.Vocab, cfg.Hidden)
	} else {
		m.Output = m.Embed
	}
	for i := 0; i < len(m.Layers) && l.err == nil; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		m.Layers[i] = Layer{
			AttnNorm: l.vector(p+"attn_norm.weight", cfg.Hidden),
			Attention: Attention{
				Q:     l.matrix(p+"attn_q.weight", cfg.QDim(), cfg.Hidden),
				K:     l.matrix(p+"attn_k.weight", cfg.KVDim(), cfg.Hidden),
				V:     l.matrix(p+"attn_v.weight", cfg.KVDim(), cfg.Hidden),
				O:     l.matrix(p+"attn_output.weight", cfg.Hidden, cfg.QDim()),
				QNorm: l.vector(p+"attn_q_norm.weight", cfg.HeadDim),
				KNorm: l.vector(p+"attn_k_norm.weight", cfg.HeadDim),
			},
			FFNNorm: l.vector(p+"ffn_norm.weight", cfg.Hidden),
			MLP: MLP{
				Gate: l.matrix(p+"ffn_gate.weight", cfg.FFN, cfg.Hidden),
				Up:   l.matrix(p+"ffn_up.weight", cfg.FFN, cfg.Hidden),
				Down: l.matrix(p+"ffn_down.weight", cfg.Hidden, cfg.FFN),
			},
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	return m, nil
}

// WeightBytes returns the number of weight bytes one decode step reads:
// every layer matrix, the norms and the output head.
func (m *Model) WeightBytes() int64 {
	n := int64(len(m.Output.Data)) + 4*int64(len(m.OutputNorm))
	for _, l := range m.Layers {
		for _, w := range []*backend.Weight{l.Attention.Q, l.Attention.K, l.Attention.V, l.Attention.O, l.MLP.Gate, l.MLP.Up, l.MLP.Down} {
			n += int64(len(w.Data))
		}
		n += 4 * int64(len(l.AttnNorm)+len(l.FFNNorm)+len(l.Attention.QNorm)+len(l.Attention.KNorm))
	}
	return n
}

// Matrices returns every weight matrix of the model, each once (a tied
// output head is the embedding).
func (m *Model) Matrices() []*backend.Weight {
	ws := []*backend.Weight{m.Embed}
	if m.Output != m.Embed {
		ws = append(ws, m.Output)
	}
	for _, l := range m.Layers {
		ws = append(ws, l.Attention.Q, l.Attention.K, l.Attention.V, l.Attention.O, l.MLP.Gate, l.MLP.Up, l.MLP.Down)
	}
	return ws
}

// CheckBackend returns an error, in one line naming the tensor and its
// type, if ops cannot compute with one of the model's matrices. The
// embedding is only read row by row (dequantized with package quant), so
// any type quant knows will do for it, unless it is also the output head.
func (m *Model) CheckBackend(ops backend.Ops) error {
	ws := m.Matrices()
	if m.Output != m.Embed {
		ws = ws[1:]
	}
	if err := backend.CheckSupport(ops, ws...); err != nil {
		return fmt.Errorf("qwen3: %w", err)
	}
	return nil
}

// loader looks tensors up and remembers the first error.
type loader struct {
	f   *gguf.File
	err error
}

func (l *loader) tensor(name string) *gguf.TensorInfo {
	if l.err != nil {
		return nil
	}
	t, ok := l.f.Tensor(name)
	if !ok {
		l.err = fmt.Errorf("qwen3: missing tensor %q", name)
	}
	return t
}

func (l *loader) matrix(name string, rows, cols int) *backend.Weight {
	t := l.tensor(name)
	if t == nil {
		return nil
	}
	w, err := backend.NewWeight(t, rows, cols)
	if err != nil {
		l.err = fmt.Errorf("qwen3: %w", err)
	}
	return w
}

func (l *loader) vector(name string, n int) []float32 {
	t := l.tensor(name)
	if t == nil {
		return nil
	}
	if len(t.Shape) != 1 || t.Shape[0] != uint64(n) {
		l.err = fmt.Errorf("qwen3: tensor %q: shape %v, want [%d]", name, t.Shape, n)
		return nil
	}
	if !backend.SupportedType(t.Type) {
		l.err = fmt.Errorf("qwen3: tensor %q: type %s is not supported", name, t.Type)
		return nil
	}
	v := make([]float32, n)
	if err := quant.DequantizeRow(v, t.Data, t.Type, n); err != nil {
		l.err = fmt.Errorf("qwen3: tensor %q: %w", name, err)
	}
	return v
}
