package quantize

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"inferno/family"
	"inferno/gguf"
)

// Tensor is what the rules read of a tensor: its name, its type in the
// input and its shape (ggml order, Shape[0] the row length).
type Tensor struct {
	Name  string
	Type  gguf.TensorType
	Shape []uint64
}

// Model is the hyperparameters the rules read: the architecture and the
// number of layers (which make llama.cpp's 70B type), the number of
// layers again (block_count, which the ffn_down rules divide) and the
// query and KV head counts, whose quotient is the GQA ratio the attn_v
// rules test, and the number of experts (llama.cpp's n_expert), of which
// exactly 8 gives attn_k, attn_v and attn_output more bits.
type Model struct {
	Layers  int
	Heads   int
	KVHeads int
	Experts int    // 0 for a dense model
	Arch    string // general.architecture, a registered family
}

// is70B reports whether llama.cpp's loader gives the model the type
// LLM_TYPE_70B, the only model type llama-quantize's rules read, as the
// architecture's family says (family.Quant).
func (m Model) is70B() bool {
	f, ok := family.Lookup(m.Arch)
	return ok && f.Quant.Is70B != nil && f.Quant.Is70B(m.Layers, m.Heads, m.KVHeads)
}

// gqa is llama.cpp's hparams.n_gqa(): an integer quotient, 0 without KV heads.
func (m Model) gqa() int {
	if m.KVHeads <= 0 {
		return 0
	}
	return m.Heads / m.KVHeads
}

// Plan is the outcome of the rules for one model: each tensor's type, in
// the order of the tensors given, and how many tensors fell back to
// another type because their rows do not hold whole blocks.
type Plan struct {
	Types     []gguf.TensorType
	Fallbacks int
}

// category is llama-quant.cpp's tensor_category.
type category int

const (
	catOther category = iota
	catTokenEmbd
	catAttnQ
	catAttnV
	catAttnK
	catAttnQKV
	catAttnKVB
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOutput
)

// categoryOf is tensor_get_category.
func categoryOf(name string) category {
	has := func(s string) bool { return strings.Contains(name, s) }
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case has("attn_qkv.weight"):
		return catAttnQKV
	case has("attn_kv_b.weight"):
		return catAttnKVB
	case has("attn_v.weight"):
		return catAttnV
	case has("attn_k.weight"):
		return catAttnK
	case has("attn_q.weight"):
		return catAttnQ
	case has("attn_output.weight"):
		return catAttnOutput
	case has("ffn_up"):
		return catFFNUp
	case has("ffn_gate"):
		return catFFNGate
	case has("ffn_down"):
		return catFFNDown
	}
	return catOther
}

// isAttnV is category_is_attn_v.
func (c category) isAttnV() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// nDims is ggml_n_dims: the number of dimensions up to the last one
// larger than 1, at least 1.
func nDims(shape []uint64) int {
	n := 1
	for i, d := range shape {
		if d > 1 {
			n = i + 1
		}
	}
	return n
}

// allowsQuantization is tensor_allows_quantization with llama-quantize's
// default parameters (the output tensor is quantized, not only copied):
// weights of two or more dimensions whose name ends in "weight", except
// norms and the small special tensors of other architectures.
func allowsQuantization(t Tensor) bool {
	if nDims(t.Shape) < 2 {
		return false
	}
	name := t.Name
	if !strings.HasSuffix(name, "weight") {
		return false
	}
	if name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, s := range []string{
		"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj",
		"ssm_conv1d", "shortconv.conv.weight",
		"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
		"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
		"time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
		"time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
		"attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
		".rel_pos", ".patch_embd", ".patch_merger",
	} {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// useMoreBits is the use_more_bits rule: the first and last eighth of the
// layers and every third layer between them.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// layerOf is the layer number llama.cpp's model loader sorts tensors by
// (sscanf "blk.%d."), -1 for tensors outside the blocks.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	end := 0
	if end < len(rest) && (rest[end] == '-' || rest[end] == '+') {
		end++
	}
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return -1
	}
	return n
}

// state is quantize_state_impl: the counters the rules advance as they
// visit the tensors.
type state struct {
	m                Mixture
	model            Model
	tied             bool // no output.weight: token_embd is the output head
	nAttnV, nFFNDown int
	iAttnV, iFFNDown int
	iFFNGate, iFFNUp int
	fallbacks        int
	hasImatrix       bool // always false: no importance matrix
}

// Types chooses each tensor's type under mixture m, as llama-quantize does
// without an importance matrix: the mixture's default type for every
// weight matrix, adjusted per tensor by llama_tensor_get_type's rules
// unless pure is set (llama-quantize --pure), and replaced by
// tensor_type_fallback's type when a row does not hold a whole number of
// blocks. Tensors the rules do not quantize (norms, 1-D tensors) keep
// their type.
//
// The rules count attn_v and ffn_down tensors in the order llama.cpp's
// model loader lists them (by layer, then by name), whatever the order of
// tensors; the types are returned in the order given. Shapes for which no
// type fits are an error naming the tensor.
func Types(tensors []Tensor, model Model, m Mixture, pure bool) (*Plan, error) {
	s := &state{m: m, model: model, tied: true, nFFNDown: model.Layers}
	for _, t := range tensors {
		c := categoryOf(t.Name)
		if c.isAttnV() {
			s.nAttnV++
		}
		if c == catOutput {
			s.tied = false
		}
	}
	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		na, nb := tensors[order[a]].Name, tensors[order[b]].Name
		la, lb := layerOf(na), layerOf(nb)
		if la != lb {
			return la < lb
		}
		return na < nb
	})
	plan := &Plan{Types: make([]gguf.TensorType, len(tensors))}
	for _, i := range order {
		t := tensors[i]
		typ, err := s.tensorType(t, pure)
		if err != nil {
			return nil, err
		}
		plan.Types[i] = typ
	}
	plan.Fallbacks = s.fallbacks
	return plan, nil
}

// tensorType is llama_tensor_get_type.
func (s *state) tensorType(t Tensor, pure bool) (gguf.TensorType, error) {
	if !allowsQuantization(t) {
		return t.Type, nil
	}
	typ := s.m.Default
	if pure || !quantized(typ) {
		if len(t.Shape) > 0 && t.Shape[0]%uint64(typ.BlockSize()) != 0 {
			return 0, fmt.Errorf("tensor %s: rows of %d values are not a multiple of the %s block size %d",
				t.Name, t.Shape[0], typ, typ.BlockSize())
		}
		return typ, nil
	}
	typ = s.rules(t, typ)
	return s.fallback(t, typ)
}

// rules is llama_tensor_get_type_impl for every architecture but Falcon
// (the 70B type as the family says, family.Quant) and the mixtures of this
// package; the branches for the IQ1/IQ2/IQ3 mixtures and the ternary types
// are left out. An expert stack
// (ffn_gate_exps, ffn_up_exps, ffn_down_exps) is ruled as its layer's
// dense matrix of the same category: llama.cpp reads its layer from its
// name, which is the count the rules keep with one stack a layer.
func (s *state) rules(t Tensor, typ gguf.TensorType) gguf.TensorType {
	ft := s.m.Name
	gqa := s.model.gqa()
	c := categoryOf(t.Name)
	switch {
	case ft == "MXFP4_MOE":
		// Expert stacks (a third dimension over 1) MXFP4, every other
		// matrix Q8_0, the output head included.
		typ = gguf.TensorQ8_0
		if c != catOutput && !(s.tied && c == catTokenEmbd) && len(t.Shape) > 2 && t.Shape[2] > 1 {
			typ = gguf.TensorMXFP4
		}
	case c == catOutput || (s.tied && c == catTokenEmbd):
		// The output head, or the token embedding that serves as one.
		if nx := t.Shape[0]; nx%uint64(typ.BlockSize()) != 0 {
			typ = gguf.TensorQ8_0
		} else if typ != gguf.TensorQ8_0 {
			typ = gguf.TensorQ6_K
		}
	case c == catTokenEmbd:
		// Only the IQ1/IQ2/IQ3 and ternary mixtures change it.
	case c.isAttnV():
		switch {
		case ft == "Q2_K":
			if gqa >= 4 {
				typ = gguf.TensorQ4_K
			} else {
				typ = gguf.TensorQ3_K
			}
		case ft == "Q3_K_M":
			if s.iAttnV < 2 {
				typ = gguf.TensorQ5_K
			} else {
				typ = gguf.TensorQ4_K
			}
		case ft == "Q3_K_L":
			typ = gguf.TensorQ5_K
		case (ft == "IQ4_NL" || ft == "IQ4_XS") && gqa >= 4:
			typ = gguf.TensorQ5_K
		case (ft == "Q4_K_M" || ft == "Q5_K_M") && useMoreBits(s.iAttnV, s.nAttnV):
			typ = gguf.TensorQ6_K
		case ft == "Q4_K_S" && s.iAttnV < 4:
			typ = gguf.TensorQ5_K
		}
		if s.model.is70B() && (typ == gguf.TensorQ3_K || typ == gguf.TensorQ4_K) {
			// Eight query heads share each KV head: attn_v is small.
			typ = gguf.TensorQ5_K
		}
		if s.model.Experts == 8 {
			// llama.cpp's rule for 8-expert models (Mixtral): a small
			// tensor, kept at Q8_0.
			typ = gguf.TensorQ8_0
		}
		s.iAttnV++
	case c == catAttnK && s.model.Experts == 8:
		typ = gguf.TensorQ8_0
	case c == catAttnK || c == catAttnQ:
		// Only the IQ3 mixtures change them.
	case c == catFFNDown:
		i, n := s.iFFNDown, s.nFFNDown
		switch {
		case ft == "Q2_K":
			typ = gguf.TensorQ3_K
		case ft == "Q3_K_M":
			if i < n/16 {
				typ = gguf.TensorQ5_K
			} else {
				typ = gguf.TensorQ4_K
			}
		case ft == "Q3_K_L":
			typ = gguf.TensorQ5_K
		case ft == "Q4_K_M":
			if useMoreBits(i, n) {
				typ = gguf.TensorQ6_K
			}
		case i < n/8 && (ft == "IQ4_NL" || ft == "IQ4_XS") && !s.hasImatrix:
			typ = gguf.TensorQ5_K
		case ft == "Q5_K_M" && useMoreBits(i, n):
			typ = gguf.TensorQ6_K
		case ft == "Q4_K_S" && i < n/8:
			typ = gguf.TensorQ5_K
		}
		s.iFFNDown++
	case c == catAttnOutput && s.model.Experts == 8:
		switch ft {
		case "Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS":
			typ = gguf.TensorQ5_K
		}
	case c == catAttnOutput:
		switch ft {
		case "Q2_K":
			typ = gguf.TensorQ3_K
		case "Q3_K_M":
			typ = gguf.TensorQ4_K
		case "Q3_K_L":
			typ = gguf.TensorQ5_K
		}
	case c == catAttnQKV:
		switch ft {
		case "Q3_K_M", "Q3_K_L":
			typ = gguf.TensorQ4_K
		case "Q4_K_M":
			typ = gguf.TensorQ5_K
		case "Q5_K_M":
			typ = gguf.TensorQ6_K
		}
	case c == catFFNGate:
		s.iFFNGate++ // the IQ3_XS rule that reads it is left out
	case c == catFFNUp:
		s.iFFNUp++
	}
	return typ
}

// fallback is tensor_type_fallback: a type whose blocks fit rows the
// chosen type's blocks do not divide.
func (s *state) fallback(t Tensor, typ gguf.TensorType) (gguf.TensorType, error) {
	ncols := t.Shape[0]
	if ncols%uint64(typ.BlockSize()) == 0 {
		return typ, nil
	}
	s.fallbacks++
	var to gguf.TensorType
	switch typ {
	case gguf.TensorIQ1_S, gguf.TensorIQ1_M, gguf.TensorIQ2_XXS, gguf.TensorIQ2_XS, gguf.TensorIQ2_S,
		gguf.TensorIQ3_XXS, gguf.TensorIQ3_S, gguf.TensorIQ4_XS:
		to = gguf.TensorIQ4_NL
	case gguf.TensorQ2_K, gguf.TensorQ3_K, gguf.TensorTQ1_0, gguf.TensorTQ2_0:
		to = gguf.TensorQ4_0
	case gguf.TensorQ4_K:
		to = gguf.TensorQ5_0
	case gguf.TensorQ5_K:
		to = gguf.TensorQ5_1
	case gguf.TensorQ6_K:
		to = gguf.TensorQ8_0
	default:
		return 0, fmt.Errorf("tensor %s: rows of %d values are not a multiple of the %s block size %d, and %s has no fallback type",
			t.Name, ncols, typ, typ.BlockSize(), typ)
	}
	if ncols%uint64(to.BlockSize()) != 0 {
		// llama.cpp's last resort for rows that are not a multiple of 32.
		to = gguf.TensorF16
	}
	return to, nil
}
