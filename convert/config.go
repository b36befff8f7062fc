package convert

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"inferno/family"
)

// Config is the part of a Hugging Face config.json that describes a model
// of one of the architectures Convert takes (the registered families'
// checkpoints, family.Checkpoint). Fields that config.json
// leaves out take the defaults of transformers' configuration class (such
// as Qwen3Config), which is what llama.cpp's converter reads.
type Config struct {
	Architecture          string
	HiddenSize            int
	IntermediateSize      int
	NumHiddenLayers       int
	NumAttentionHeads     int
	NumKeyValueHeads      int
	HeadDim               int
	MaxPositionEmbeddings int
	VocabSize             int
	RMSNormEps            float64
	RopeTheta             float64
	// TieWordEmbeddings is nil when config.json does not say.
	TieWordEmbeddings *bool
	// A mixture of experts (Qwen3-MoE): experts a layer, experts a
	// token, one expert's feed-forward width, and whether the chosen
	// experts' weights are renormalized to sum to one (norm_topk_prob).
	NumExperts          int
	NumExpertsPerTok    int
	MoEIntermediateSize int
	NormTopKProb        bool

	raw  map[string]any
	arch *archSpec
	// hasHeadDim: config.json states head_dim.
	hasHeadDim bool
	// ropeFactors are Llama 3's RoPE frequency factors (rope_freqs.weight),
	// nil without its scaling.
	ropeFactors []float32
	// longFactors and shortFactors are LongRoPE's per-pair factors
	// (rope_factors_long.weight, rope_factors_short.weight), nil without
	// it.
	longFactors, shortFactors []float32
	// scalingKVs are the rope.scaling.* keys (without the architecture's
	// prefix) of a linear or YaRN scaling, in llama.cpp's order.
	scalingKVs []kv
	// localTheta is the RoPE base of sliding-window layers
	// (rope.freq_base_swa); 0: none stated.
	localTheta float64
	// extraKVs are the architecture's keys (without its prefix) that not
	// every architecture has: the sliding window, the attention scale,
	// LongRoPE's, ... (readExtras).
	extraKVs []kv
	// pooling is name.pooling_type (readPooling); poolNone: not written.
	pooling uint32
	// mxfp4: config.json's quantization_config names MXFP4 (the experts
	// of gpt-oss as released).
	mxfp4 bool
	// realVocab is the number of the tokenizer's tokens (set by
	// tokenizerMetadata), to which a checkpoint that trims its embedding
	// (family.Checkpoint.TrimVocab) trims it.
	realVocab int
}

// ReadConfig reads and checks dir/config.json.
func ReadConfig(dir string) (*Config, error) {
	c, err := readConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	return c, nil
}

func readConfig(dir string) (*Config, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	raw, err := readJSONObject(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if tc, ok := raw["text_config"].(map[string]any); ok {
		// Multimodal wrappers keep the language model's settings here;
		// llama.cpp's converter lifts them to the top level.
		merged := map[string]any{}
		for k, v := range raw {
			merged[k] = v
		}
		for k, v := range tc {
			merged[k] = v
		}
		raw = merged
	}
	c := &Config{raw: raw}
	names, _ := raw["architectures"].([]any)
	if len(names) == 0 {
		return nil, fmt.Errorf("config.json names no architecture (want one of %s)", family.CheckpointNames())
	}
	c.Architecture, _ = names[0].(string)
	var ok bool
	if c.arch, ok = lookupArch(c.Architecture); !ok {
		return nil, fmt.Errorf("architecture %q is not supported (want one of %s)", fmt.Sprint(names[0]), family.CheckpointNames())
	}
	a := c.arch

	ints := []struct {
		key string
		dst *int
		def int // 0: required
	}{
		{key: "hidden_size", dst: &c.HiddenSize},
		{key: "intermediate_size", dst: &c.IntermediateSize},
		{key: "num_hidden_layers", dst: &c.NumHiddenLayers},
		{key: "num_attention_heads", dst: &c.NumAttentionHeads, def: a.Heads},
		{key: "num_key_value_heads", dst: &c.NumKeyValueHeads, def: cmp.Or(a.KVHeads, -1)},
		{key: "head_dim", dst: &c.HeadDim, def: -1},
		{key: "max_position_embeddings", dst: &c.MaxPositionEmbeddings, def: a.MaxPos},
		{key: "vocab_size", dst: &c.VocabSize, def: a.Vocab},
	}
	for _, p := range ints {
		v, ok := raw[p.key]
		if !ok || v == nil {
			if p.def == 0 {
				return nil, fmt.Errorf("config.json: %s is missing", p.key)
			}
			*p.dst = p.def
			continue
		}
		n, ok := jsonInt(v)
		if !ok || n <= 0 || n > 1<<24 {
			return nil, fmt.Errorf("config.json: %s = %s is not a positive integer up to 2^24", p.key, jsonText(v))
		}
		*p.dst = int(n)
	}
	if c.NumKeyValueHeads < 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	c.hasHeadDim = c.HeadDim > 0
	switch {
	case c.hasHeadDim:
	case a.HeadDim > 0:
		c.HeadDim = a.HeadDim
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return nil, fmt.Errorf("config.json: no head_dim, and num_attention_heads %d does not divide hidden_size %d", c.NumAttentionHeads, c.HiddenSize)
	default:
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.NumAttentionHeads%c.NumKeyValueHeads != 0 {
		return nil, fmt.Errorf("config.json: num_attention_heads %d is not a multiple of num_key_value_heads %d", c.NumAttentionHeads, c.NumKeyValueHeads)
	}
	if c.HeadDim%2 != 0 {
		return nil, fmt.Errorf("config.json: head_dim %d is odd; RoPE needs pairs", c.HeadDim)
	}

	floats := []struct {
		key string
		dst *float64
		def float64
	}{
		{"rms_norm_eps", &c.RMSNormEps, cmp.Or(a.Eps, 1e-6)},
		{"rope_theta", &c.RopeTheta, 0},
	}
	for _, p := range floats {
		v, ok := raw[p.key]
		if !ok || v == nil {
			*p.dst = p.def
			continue
		}
		x, ok := v.(float64)
		if !ok || !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("config.json: %s = %s is not a positive number", p.key, jsonText(v))
		}
		*p.dst = x
	}
	if c.RopeTheta == 0 {
		// transformers 5 moves rope_theta into rope_parameters (by layer
		// type where layers differ: full_attention's).
		c.RopeTheta = cmp.Or(a.RopeTheta, 10000)
		for _, key := range []string{"rope_parameters", "rope_scaling"} {
			if rp, ok := raw[key].(map[string]any); ok {
				if full, ok := rp["full_attention"].(map[string]any); ok {
					rp = full
				}
				if x, ok := rp["rope_theta"].(float64); ok && x > 0 && !math.IsInf(x, 0) {
					c.RopeTheta = x
					break
				}
			}
		}
	}
	if v, ok := raw["tie_word_embeddings"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("config.json: tie_word_embeddings = %s is not true or false", jsonText(v))
		}
		c.TieWordEmbeddings = &b
	}
	if err := c.readRope(); err != nil {
		return nil, err
	}
	if a.MoE != nil {
		if err := c.readMoE(); err != nil {
			return nil, err
		}
	}
	if err := c.readPooling(dir); err != nil {
		return nil, err
	}
	if err := c.readExtras(); err != nil {
		return nil, err
	}
	return c, nil
}

// readMoE reads a mixture of experts' settings, under the first of the
// names llama.cpp's converter looks for that config.json has
// (transformers 5 writes num_local_experts), with the defaults of the
// checkpoint's configuration class (family.CheckpointMoE; Qwen3MoeConfig:
// 128 experts of width 768, 8 a token, norm_topk_prob false). Every layer
// must be sparse (decoder_sparse_step 1, no mlp_only_layers), as
// llama.cpp's qwen3moe reads the file.
func (c *Config) readMoE() error {
	m := c.arch.MoE
	for _, p := range []struct {
		keys []string
		dst  *int
		def  int
	}{
		{[]string{"num_local_experts", "num_experts"}, &c.NumExperts, m.Experts},
		{[]string{"num_experts_per_tok", "num_experts_per_token", "top_k_experts"}, &c.NumExpertsPerTok, m.TopK},
		{[]string{cmp.Or(m.FFNKey, "moe_intermediate_size")}, &c.MoEIntermediateSize, m.FFN},
	} {
		*p.dst = p.def
		for _, key := range p.keys {
			v, ok := c.raw[key]
			if !ok || v == nil {
				continue
			}
			n, ok := jsonInt(v)
			if !ok || n <= 0 || n > 1<<16 {
				return fmt.Errorf("config.json: %s = %s is not a positive integer up to 65536", key, jsonText(v))
			}
			*p.dst = int(n)
			break
		}
		if *p.dst <= 0 {
			return fmt.Errorf("config.json: %s is missing", p.keys[0])
		}
	}
	if c.NumExpertsPerTok > c.NumExperts {
		return fmt.Errorf("config.json: num_experts_per_tok %d is more than num_experts %d", c.NumExpertsPerTok, c.NumExperts)
	}
	if v, ok := c.raw["norm_topk_prob"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("config.json: norm_topk_prob = %s is not true or false", jsonText(v))
		}
		c.NormTopKProb = b
	}
	if v, ok := c.raw["decoder_sparse_step"]; ok && v != nil {
		if n, ok := jsonInt(v); !ok || n != 1 {
			return fmt.Errorf("config.json: decoder_sparse_step = %s: only models with experts in every layer (1) are supported", jsonText(v))
		}
	}
	if v, ok := c.raw["mlp_only_layers"]; ok && v != nil {
		if l, ok := v.([]any); !ok || len(l) > 0 {
			return fmt.Errorf("config.json: mlp_only_layers = %s: only models with experts in every layer are supported", jsonText(v))
		}
	}
	return nil
}

// tokenID returns config.json's integer value of key (such as
// "bos_token_id"), as llama.cpp's SpecialVocab reads it: other kinds of
// value, lists included, do not count.
func (c *Config) tokenID(key string) (int64, bool) {
	v, ok := c.raw[key]
	if !ok {
		return 0, false
	}
	return jsonInt(v)
}

// checkDir reports a missing or unusable checkpoint folder.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint folder %s does not exist", dir)
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder (want a Hugging Face checkpoint folder)", dir)
	}
	return nil
}

// readJSONObject reads a JSON object from path, with numbers as float64.
func readJSONObject(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing", filepath.Base(path))
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: bad JSON: %s", filepath.Base(path), jsonError(err))
	}
	if m == nil {
		return nil, fmt.Errorf("%s: bad JSON: not an object", filepath.Base(path))
	}
	return m, nil
}

// jsonInt returns v as an integer when it is a JSON number without a
// fractional part that fits in int64.
func jsonInt(v any) (int64, bool) {
	x, ok := v.(float64)
	if !ok || x != math.Trunc(x) || math.Abs(x) >= 1<<62 {
		return 0, false
	}
	return int64(x), true
}

// jsonText formats a decoded JSON value for an error message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 40 {
		b = append(bytes.Clone(b[:37]), "..."...)
	}
	return string(b)
}
