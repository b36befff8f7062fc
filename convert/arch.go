package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"inferno/arch"
	"inferno/family"
)

// archSpec is what Convert knows of one architecture: the registry's
// description of the checkpoint (package family) and of the family whose
// files it becomes.
type archSpec struct {
	*family.Checkpoint
	fam  *family.Family
	gguf string // general.architecture, and the prefix of its keys
}

// lookupArch returns the registered architecture of config.json's
// architectures[0].
func lookupArch(hf string) (*archSpec, bool) {
	f, c, ok := family.ByCheckpoint(hf)
	if !ok {
		return nil, false
	}
	return &archSpec{Checkpoint: c, fam: f, gguf: f.Name}, true
}

// tensorSpec is one tensor of the output and where its data come from.
type tensorSpec struct {
	gguf  string  // GGUF name
	shape []int64 // PyTorch shape of the output, outermost first
	// src is the checkpoint's tensor, with {i} replaced by the layer.
	src family.Source
	// srcRows, when not 0, is the rows of the checkpoint's tensor, of
	// which the output keeps the first shape[0] (the embedding trimmed to
	// the vocabulary).
	srcRows int64
	// heads, when not 0: the rows are heads of this many, permuted as
	// llama.cpp's LlamaModel.permute does.
	heads int
	// shift is added to every value (family.Checkpoint.NormShift).
	shift float32
	// data, when not nil, is the tensor's F32 data, made by the converter
	// (rope_freqs.weight) rather than read from the checkpoint.
	data []byte
}

// hfName names the tensor in messages: the checkpoint's name, or the
// GGUF one for a tensor the converter makes.
func (s *tensorSpec) hfName() string {
	if s.src.Name != "" {
		return s.src.Name
	}
	return s.gguf
}

// archConfig returns the configuration of the family's files for cfg's
// hyperparameters: which tensors they hold (arch.Config.LayerRoles), of
// what shapes and names.
func archConfig(cfg *Config) arch.Config {
	c := arch.Config{
		Arch: cfg.arch.gguf, Layers: cfg.NumHiddenLayers, Hidden: cfg.HiddenSize, FFN: cfg.IntermediateSize,
		Heads: cfg.NumAttentionHeads, KVHeads: cfg.NumKeyValueHeads, HeadDim: cfg.HeadDim, Vocab: cfg.VocabSize,
		ContextLength: cfg.MaxPositionEmbeddings, Eps: float32(cfg.RMSNormEps), Rope: arch.Rope{Theta: cfg.RopeTheta},
	}
	if cfg.arch.MoE != nil {
		c.MoE = arch.MoE{Experts: cfg.NumExperts, TopK: cfg.NumExpertsPerTok, ExpertFFN: cfg.MoEIntermediateSize, NormTopK: cfg.NormTopKProb}
	}
	cfg.arch.fam.Options(&c)
	return c
}

// shape returns the PyTorch shape of role r's tensor in a model of c.
func shape(c *arch.Config, r arch.Role) []int64 {
	rows, cols, experts := c.Shape(r)
	switch {
	case r.Vector() && experts > 1:
		return []int64{int64(experts), int64(rows)}
	case r.Vector():
		return []int64{int64(rows)}
	case experts > 1 || r == arch.RoleExpertGate || r == arch.RoleExpertUp || r == arch.RoleExpertDown:
		return []int64{int64(experts), int64(rows), int64(cols)}
	}
	return []int64{int64(rows), int64(cols)}
}

// specs lists the tensors of a model of cfg's architecture and shapes, in
// the order they are written: the tensors the converter makes, the
// embedding, each layer's tensors of its roles in the family's order
// (arch.Config.LayerRoles; a fused matrix in place of its first role),
// the final norm and, when output is set, the head. vocabRows is the
// embedding's rows in the output (the vocabulary's size, or less when
// the checkpoint trims it).
func specs(cfg *Config, output bool, vocabRows int) ([]tensorSpec, error) {
	a := cfg.arch
	c := archConfig(cfg)
	h := int64(c.Hidden)
	var s []tensorSpec
	if cfg.ropeFactors != nil {
		s = append(s, tensorSpec{gguf: "rope_freqs.weight", shape: []int64{int64(len(cfg.ropeFactors))}, data: f32Bytes(cfg.ropeFactors)})
	}
	if cfg.longFactors != nil {
		s = append(s,
			tensorSpec{gguf: "rope_factors_long.weight", shape: []int64{int64(len(cfg.longFactors))}, data: f32Bytes(cfg.longFactors)},
			tensorSpec{gguf: "rope_factors_short.weight", shape: []int64{int64(len(cfg.shortFactors))}, data: f32Bytes(cfg.shortFactors)})
	}
	role := func(r arch.Role, i int, name string, shp []int64) error {
		src, ok := a.Tensor(r, i)
		if !ok {
			return fmt.Errorf("%s checkpoints: the layout names no tensor for %s (the family's registration is incomplete)", a.Title, r)
		}
		sp := tensorSpec{gguf: name, shape: shp, src: src}
		if a.Permute && (r == arch.RoleQ || r == arch.RoleK) {
			sp.heads = map[arch.Role]int{arch.RoleQ: c.Heads, arch.RoleK: c.KVHeads}[r]
		}
		if isNorm(name) {
			sp.shift = a.NormShift
		}
		s = append(s, sp)
		return nil
	}
	if err := role(arch.RoleEmbed, 0, arch.RoleEmbed.Tensor(0), []int64{int64(vocabRows), h}); err != nil {
		return nil, err
	}
	if vocabRows != c.Vocab {
		s[len(s)-1].srcRows = int64(c.Vocab)
	}
	for i := range c.Layers {
		for _, r := range c.LayerRoles() {
			switch {
			case c.FusedQKV && (r == arch.RoleK || r == arch.RoleV), c.FusedGateUp && r == arch.RoleUp:
				continue
			case c.FusedQKV && r == arch.RoleQ:
				s = append(s, tensorSpec{gguf: fmt.Sprintf("blk.%d.attn_qkv.weight", i),
					shape: []int64{int64(c.QDim() + 2*c.KVDim()), h}, src: a.QKV.Layer(i)})
				continue
			case c.FusedGateUp && r == arch.RoleGate:
				s = append(s, tensorSpec{gguf: arch.RoleUp.Tensor(i), shape: []int64{int64(2 * c.FFN), h}, src: a.GateUp.Layer(i)})
				continue
			}
			if err := role(r, i, c.TensorName(r, i), shape(&c, r)); err != nil {
				return nil, err
			}
		}
	}
	if err := role(arch.RoleOutputNorm, 0, arch.RoleOutputNorm.Tensor(0), []int64{h}); err != nil {
		return nil, err
	}
	if output {
		if err := role(arch.RoleOutput, 0, arch.RoleOutput.Tensor(0), []int64{int64(c.Vocab), h}); err != nil {
			return nil, err
		}
	}
	for _, sp := range s {
		if sp.data == nil && sp.src.Name == "" {
			return nil, fmt.Errorf("%s checkpoints: the layout names no tensor for %s", a.Title, sp.gguf)
		}
	}
	return s, nil
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

// keepsF32 reports whether llama.cpp's converter writes the GGUF tensor
// of this name and number of dimensions as F32 whatever the output type:
// vectors, norms' gains, routers and every tensor whose name does not end
// in ".weight" (the experts' biases, stacks of vectors).
func keepsF32(name string, dims int) bool {
	return dims <= 1 || isNorm(name) || isRouter(name) || !strings.HasSuffix(name, ".weight")
}

// isRouter reports whether a GGUF tensor is a mixture of experts' router,
// which llama.cpp's converter writes as F32 whatever the output type.
func isRouter(name string) bool { return strings.HasSuffix(name, "ffn_gate_inp.weight") }
