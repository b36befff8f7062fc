package convert

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"inferno/family"
)

// archSpec is what Convert knows of one architecture: the registry's
// description of the checkpoint (package family) and the GGUF
// architecture it becomes.
type archSpec struct {
	*family.Checkpoint
	gguf string // general.architecture, and the prefix of its keys
}

// lookupArch returns the registered architecture of config.json's
// architectures[0].
func lookupArch(hf string) (*archSpec, bool) {
	f, c, ok := family.ByCheckpoint(hf)
	if !ok {
		return nil, false
	}
	return &archSpec{Checkpoint: c, gguf: f.Name}, true
}

// tensorSpec is one tensor of a checkpoint.
type tensorSpec struct {
	hf    string  // Hugging Face name
	gguf  string  // GGUF name
	shape []int64 // PyTorch shape, outermost first
	// heads, when not 0: the rows are heads of this many, permuted as
	// llama.cpp's LlamaModel.permute does.
	heads int
	// data, when not nil, is the tensor's F32 data, made by the converter
	// (rope_freqs.weight) rather than read from the checkpoint.
	data []byte
	// parts, when not nil, are the checkpoint's tensors stacked, in order,
	// along the first dimension (one expert's projection each); fused is
	// the tensor that holds them all otherwise (transformers 5's expert
	// layout), of which each part is half (first or second half of the
	// second dimension) or the whole of one expert's slice.
	parts []string
	fused string
	half  int // 0: the whole slice, 1: its first half, 2: its second
}

// specs lists the tensors of a model of cfg's architecture and shapes, in
// the order they are written. The output head is listed when output is
// set.
func specs(cfg *Config, output bool) []tensorSpec {
	a := cfg.arch
	h, ffn, hd := int64(cfg.HiddenSize), int64(cfg.IntermediateSize), int64(cfg.HeadDim)
	q, kv := int64(cfg.NumAttentionHeads)*hd, int64(cfg.NumKeyValueHeads)*hd
	vocab := int64(cfg.VocabSize)
	var s []tensorSpec
	if cfg.ropeFactors != nil {
		s = append(s, tensorSpec{gguf: "rope_freqs.weight", shape: []int64{int64(len(cfg.ropeFactors))}, data: f32Bytes(cfg.ropeFactors)})
	}
	s = append(s, tensorSpec{hf: "model.embed_tokens.weight", gguf: "token_embd.weight", shape: []int64{vocab, h}})
	qHeads, kHeads := 0, 0
	if a.Permute {
		qHeads, kHeads = cfg.NumAttentionHeads, cfg.NumKeyValueHeads
	}
	for i := range cfg.NumHiddenLayers {
		hf := "model.layers." + strconv.Itoa(i) + "."
		g := "blk." + strconv.Itoa(i) + "."
		s = append(s,
			tensorSpec{hf: hf + "input_layernorm.weight", gguf: g + "attn_norm.weight", shape: []int64{h}},
			tensorSpec{hf: hf + "self_attn.q_proj.weight", gguf: g + "attn_q.weight", shape: []int64{q, h}, heads: qHeads},
			tensorSpec{hf: hf + "self_attn.k_proj.weight", gguf: g + "attn_k.weight", shape: []int64{kv, h}, heads: kHeads},
			tensorSpec{hf: hf + "self_attn.v_proj.weight", gguf: g + "attn_v.weight", shape: []int64{kv, h}},
		)
		if a.Bias {
			s = append(s,
				tensorSpec{hf: hf + "self_attn.q_proj.bias", gguf: g + "attn_q.bias", shape: []int64{q}},
				tensorSpec{hf: hf + "self_attn.k_proj.bias", gguf: g + "attn_k.bias", shape: []int64{kv}},
				tensorSpec{hf: hf + "self_attn.v_proj.bias", gguf: g + "attn_v.bias", shape: []int64{kv}},
			)
		}
		if a.QKNorm {
			s = append(s,
				tensorSpec{hf: hf + "self_attn.q_norm.weight", gguf: g + "attn_q_norm.weight", shape: []int64{hd}},
				tensorSpec{hf: hf + "self_attn.k_norm.weight", gguf: g + "attn_k_norm.weight", shape: []int64{hd}},
			)
		}
		if a.MoE {
			s = append(s,
				tensorSpec{hf: hf + "self_attn.o_proj.weight", gguf: g + "attn_output.weight", shape: []int64{h, q}},
				tensorSpec{hf: hf + "post_attention_layernorm.weight", gguf: g + "ffn_norm.weight", shape: []int64{h}},
			)
			s = append(s, moeSpecs(cfg, hf, g)...)
			continue
		}
		s = append(s,
			tensorSpec{hf: hf + "self_attn.o_proj.weight", gguf: g + "attn_output.weight", shape: []int64{h, q}},
			tensorSpec{hf: hf + "post_attention_layernorm.weight", gguf: g + "ffn_norm.weight", shape: []int64{h}},
			tensorSpec{hf: hf + "mlp.gate_proj.weight", gguf: g + "ffn_gate.weight", shape: []int64{ffn, h}},
			tensorSpec{hf: hf + "mlp.up_proj.weight", gguf: g + "ffn_up.weight", shape: []int64{ffn, h}},
			tensorSpec{hf: hf + "mlp.down_proj.weight", gguf: g + "ffn_down.weight", shape: []int64{h, ffn}},
		)
	}
	s = append(s, tensorSpec{hf: "model.norm.weight", gguf: "output_norm.weight", shape: []int64{h}})
	if output {
		s = append(s, tensorSpec{hf: "lm_head.weight", gguf: "output.weight", shape: []int64{vocab, h}})
	}
	return s
}

// moeSpecs lists a mixture-of-experts layer's feed-forward tensors (hf
// and g its Hugging Face and GGUF name prefixes): the router, F32 as
// llama.cpp's converter keeps it, and the experts' gate, up and down
// projections, each stacked into one 3-D tensor of experts x rows x
// columns (llama.cpp's Qwen2MoeModel.modify_tensors), from one tensor per
// expert (the Hub's layout) or from transformers 5's fused gate_up_proj
// and down_proj.
func moeSpecs(cfg *Config, hf, g string) []tensorSpec {
	e, f, h := int64(cfg.NumExperts), int64(cfg.MoEIntermediateSize), int64(cfg.HiddenSize)
	stack := func(proj, name, fused string, half int, rows, cols int64) tensorSpec {
		parts := make([]string, e)
		for i := range parts {
			parts[i] = hf + "mlp.experts." + strconv.Itoa(i) + "." + proj + ".weight"
		}
		return tensorSpec{hf: hf + "mlp.experts." + proj, gguf: g + name, shape: []int64{e, rows, cols},
			parts: parts, fused: hf + "mlp.experts." + fused, half: half}
	}
	return []tensorSpec{
		{hf: hf + "mlp.gate.weight", gguf: g + "ffn_gate_inp.weight", shape: []int64{e, h}},
		stack("gate_proj", "ffn_gate_exps.weight", "gate_up_proj", 1, f, h),
		stack("up_proj", "ffn_up_exps.weight", "gate_up_proj", 2, f, h),
		stack("down_proj", "ffn_down_exps.weight", "down_proj", 0, h, f),
	}
}

// permuteRow returns the checkpoint row that row r of a permuted matrix
// of heads heads comes from: llama.cpp's LlamaModel.permute reshapes the
// rows to (heads, 2, headDim/2) and swaps the last two axes, so that row
// h*headDim + 2i + j is row h*headDim + j*headDim/2 + i.
func permuteRow(r, rows, heads int) int {
	hd := rows / heads
	h, k := r/hd, r%hd
	return h*hd + (k%2)*(hd/2) + k/2
}

// f32Bytes encodes v as little-endian float32 values.
func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// isNorm reports whether a GGUF tensor is a norm's gains, written as F32.
func isNorm(name string) bool { return strings.HasSuffix(name, "_norm.weight") }

// isRouter reports whether a GGUF tensor is a mixture of experts' router,
// which llama.cpp's converter writes as F32 whatever the output type.
func isRouter(name string) bool { return strings.HasSuffix(name, "ffn_gate_inp.weight") }
