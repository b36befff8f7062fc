// Package quantize rewrites a Qwen3 GGUF model stored in F32, F16 or BF16
// into one of llama.cpp's quantization mixtures (Q4_K_M, Q5_0, Q6_K, ...),
// the way llama.cpp's llama-quantize does.
//
// A mixture is not one type: llama-quantize gives some tensors more bits
// (the output head, some attn_v and ffn_down layers) and falls back to a
// type with a smaller block when a row does not hold a whole number of
// blocks. Types ports those rules from llama.cpp's src/llama-quant.cpp
// (llama_tensor_get_type and its helpers) for the dense Qwen3
// architecture; the blocks themselves are encoded by package numfmt with
// ggml's rounding, so without an importance matrix the tensor data is
// byte for byte what llama-quantize writes for the same input and mixture
// (quantize/testdata/compare.sh checks it against a llama.cpp build, and
// TestLlamaQuantizeFixture against hashes recorded from one).
package quantize

import (
	"fmt"
	"strconv"
	"strings"

	"inferno/gguf"
)

// A Mixture is one of llama-quantize's output types (llama.cpp's
// llama_ftype): the name llama-quantize accepts, the number written to
// general.file_type, and the default type of the weight matrices, which the
// rules then adjust per tensor.
type Mixture struct {
	Name     string
	FileType uint32
	Default  gguf.TensorType
}

// mixtures are the mixtures Quantize writes, in llama-quantize's order.
// The numbers are llama.h's LLAMA_FTYPE_* values.
var mixtures = []Mixture{
	{"Q4_0", 2, gguf.TensorQ4_0},
	{"Q4_1", 3, gguf.TensorQ4_1},
	{"MXFP4_MOE", 38, gguf.TensorMXFP4},
	{"Q5_0", 8, gguf.TensorQ5_0},
	{"Q5_1", 9, gguf.TensorQ5_1},
	{"Q2_K", 10, gguf.TensorQ2_K},
	{"Q3_K_S", 11, gguf.TensorQ3_K},
	{"Q3_K_M", 12, gguf.TensorQ3_K},
	{"Q3_K_L", 13, gguf.TensorQ3_K},
	{"IQ4_NL", 25, gguf.TensorIQ4_NL},
	{"IQ4_XS", 30, gguf.TensorIQ4_XS},
	{"Q4_K_S", 14, gguf.TensorQ4_K},
	{"Q4_K_M", 15, gguf.TensorQ4_K},
	{"Q5_K_S", 16, gguf.TensorQ5_K},
	{"Q5_K_M", 17, gguf.TensorQ5_K},
	{"Q6_K", 18, gguf.TensorQ6_K},
	{"Q8_0", 7, gguf.TensorQ8_0},
	{"F16", 1, gguf.TensorF16},
	{"BF16", 32, gguf.TensorBF16},
	{"F32", 0, gguf.TensorF32},
}

// aliases are the other names llama-quantize accepts for a mixture.
var aliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// Mixtures returns every mixture Quantize writes.
func Mixtures() []Mixture { return append([]Mixture(nil), mixtures...) }

// Names returns the mixtures' names, comma-separated, for messages.
func Names() string {
	names := make([]string, len(mixtures))
	for i, m := range mixtures {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// ParseMixture returns the mixture llama-quantize means by name: a name as
// it spells it, in any case (Q4_K_M, q4_k_m, the aliases Q3_K, Q4_K and
// Q5_K), or the general.file_type number ("15").
func ParseMixture(name string) (Mixture, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	if a, ok := aliases[up]; ok {
		up = a
	}
	for _, m := range mixtures {
		if m.Name == up {
			return m, nil
		}
	}
	if n, err := strconv.ParseUint(up, 10, 32); err == nil {
		for _, m := range mixtures {
			if uint64(m.FileType) == n {
				return m, nil
			}
		}
	}
	return Mixture{}, fmt.Errorf("unknown quantization type %q (want one of %s)", name, Names())
}

// MixtureOf returns the mixture whose file type is ft.
func MixtureOf(ft uint32) (Mixture, bool) {
	for _, m := range mixtures {
		if m.FileType == ft {
			return m, true
		}
	}
	return Mixture{}, false
}

// quantized reports whether t is a block-quantized type (ggml_is_quantized):
// the float types F32, F16 and BF16 are not.
func quantized(t gguf.TensorType) bool {
	switch t {
	case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16, gguf.TensorF64,
		gguf.TensorI8, gguf.TensorI16, gguf.TensorI32, gguf.TensorI64:
		return false
	}
	return true
}
