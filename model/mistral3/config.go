// Package mistral3 is the architecture llama.cpp's converter writes for
// Mistral3ForConditionalGeneration checkpoints (Mistral Small 3.1 and
// 3.2, Devstral Small 2505+, Magistral Small): their language model, a
// Llama in all but its GGUF name, read from files named "mistral3". The
// vision tower those checkpoints carry goes, in llama.cpp, to a separate
// projector file (mmproj), which inferno does not run; convert leaves it
// out as llama.cpp's converter does.
//
// llama.cpp's mistral3 graph is Llama's plus an optional attention
// temperature (Ministral 3's "Llama 4 scaling": queries scaled by a
// factor growing with the position's log) with YaRN; files that set it
// are refused by name.
package mistral3

import (
	"fmt"

	"inferno/arch"
	"inferno/gguf"
	"inferno/model/llama"
)

// Architecture is the value of general.architecture for these files.
const Architecture = "mistral3"

// ConfigFromGGUF reads the configuration from f's metadata (the keys
// arch.ReadConfigDefaultHeadDim reads under "mistral3.") and sets Llama's
// options. Mixtures of experts (Mistral 4, written as deepseek2 by
// llama.cpp anyway) and the attention temperature are refused.
func ConfigFromGGUF(f *gguf.File) (arch.Config, error) {
	c, err := arch.ReadConfigDefaultHeadDim(f, Architecture)
	if err != nil {
		return arch.Config{}, err
	}
	if c.MoE.Enabled() {
		return arch.Config{}, fmt.Errorf("mistral3: %d experts: inferno runs the dense Mistral 3 models", c.MoE.Experts)
	}
	for _, key := range []string{"attention.temperature_scale", "rope.scaling.yarn_log_multiplier"} {
		if v, err := f.Float(Architecture + "." + key); err == nil && v != 0 {
			return arch.Config{}, fmt.Errorf("mistral3: %s.%s = %g: Ministral 3's attention temperature scaling is not supported", Architecture, key, v)
		}
	}
	if _, ok := f.Tensor(arch.RoleQBias.Tensor(0)); ok {
		return arch.Config{}, fmt.Errorf("mistral3: tensor %q: attention biases are not supported", arch.RoleQBias.Tensor(0))
	}
	llama.Options(&c)
	return c, c.Validate()
}
