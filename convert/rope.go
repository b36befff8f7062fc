package convert

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"inferno/arch"
)

// readRope reads config.json's RoPE scaling (rope_scaling, or
// rope_parameters since transformers 5; by layer type, full_attention's,
// where layers differ) and the base of the sliding-window layers:
//
//   - llama3, for checkpoints that accept it (family.Checkpoint.Llama3),
//     becomes rope_freqs.weight's factors;
//   - linear and yarn, where the checkpoint lists them, the rope.scaling.*
//     keys llama.cpp's TextModel writes;
//   - longrope (or su), for checkpoints of llama.cpp's Phi-3 kind
//     (LongRoPE), its factors and attention factor (readLongRoPE);
//   - no scaling or "default" nothing; anything else is refused.
func (c *Config) readRope() error {
	done := false // linear, yarn or longrope read: the first map wins, as llama.cpp's
	for _, key := range []string{"rope_scaling", "rope_parameters"} {
		rp, ok := c.raw[key].(map[string]any)
		if !ok {
			continue
		}
		if full, ok := rp["full_attention"].(map[string]any); ok {
			rp = full
		}
		typ, _ := rp["rope_type"].(string)
		if typ == "" {
			typ, _ = rp["type"].(string)
		}
		a := c.arch
		switch lower := strings.ToLower(typ); {
		case typ == "" || typ == "default":
		case lower == "llama3" && a.Llama3:
			if c.ropeFactors != nil {
				continue // rope_scaling and rope_parameters both
			}
			if err := c.readLlama3(key, rp); err != nil {
				return err
			}
		case (lower == "longrope" || lower == "su") && a.LongRoPE:
			if done {
				continue
			}
			if err := c.readLongRoPE(key, rp); err != nil {
				return err
			}
			done = true
		case slices.Contains(a.RopeScaling, typ):
			if done {
				continue
			}
			if err := c.readScaling(key, typ, rp); err != nil {
				return err
			}
			done = true
		default:
			ok := []string{"unscaled RoPE"}
			if a.Llama3 {
				ok = append(ok, "llama3")
			}
			if a.LongRoPE {
				ok = append(ok, "longrope")
			}
			ok = append(ok, a.RopeScaling...)
			only := ""
			if len(ok) == 1 {
				only = "only "
			}
			return fmt.Errorf("config.json: %s type %q is not supported (%s checkpoints: %s%s)", key, typ, a.Title, only, strings.Join(ok, " or "))
		}
	}
	if c.arch.LongRoPE {
		c.extraKVs = append(c.extraKVs, kv{"rope.scaling.original_context_length", uint32(c.origContext())})
	}
	c.readLocalTheta()
	return nil
}

// readLlama3 reads Llama 3's scaling from rp, config.json's key.
func (c *Config) readLlama3(key string, rp map[string]any) error {
	p := map[string]float64{"factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}
	if v, ok := c.raw["original_max_position_embeddings"].(float64); ok {
		p["original_max_position_embeddings"] = v
	}
	for name := range p {
		v, present := rp[name]
		if !present || v == nil {
			continue
		}
		x, ok := v.(float64)
		if !ok || !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("config.json: %s.%s = %s is not a positive number", key, name, jsonText(v))
		}
		p[name] = x
	}
	orig := p["original_max_position_embeddings"]
	if p["high_freq_factor"] <= p["low_freq_factor"] || orig != math.Trunc(orig) || orig > 1<<24 {
		return fmt.Errorf("config.json: %s: llama3 scaling needs low_freq_factor < high_freq_factor and a whole original_max_position_embeddings", key)
	}
	c.ropeFactors = arch.Llama3FreqFactors(c.RopeTheta, c.HeadDim, p["factor"], p["low_freq_factor"], p["high_freq_factor"], int(orig))
	return nil
}

// readScaling reads a linear or YaRN scaling as llama.cpp's TextModel
// writes it: the type and factor (nothing at all without a factor), and
// for YaRN the original context, extrapolation and attention factors and
// betas where rp has them.
func (c *Config) readScaling(key, typ string, rp map[string]any) error {
	num := func(name string) (float64, bool, error) {
		v, present := rp[name]
		if !present || v == nil {
			return 0, false, nil
		}
		x, ok := v.(float64)
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false, fmt.Errorf("config.json: %s.%s = %s is not a number", key, name, jsonText(v))
		}
		return x, true, nil
	}
	factor, ok, err := num("factor")
	if err != nil || !ok {
		return err
	}
	if !(factor > 0) {
		return fmt.Errorf("config.json: %s.factor = %v is not positive", key, factor)
	}
	c.scalingKVs = append(c.scalingKVs, kv{"rope.scaling.type", typ}, kv{"rope.scaling.factor", float32(factor)})
	if typ != "yarn" {
		return nil
	}
	orig, ok, err := num("original_max_position_embeddings")
	if err != nil {
		return err
	}
	if !ok || orig != math.Trunc(orig) || orig <= 0 || orig > 1<<24 {
		return fmt.Errorf("config.json: %s: yarn scaling needs a whole original_max_position_embeddings", key)
	}
	c.scalingKVs = append(c.scalingKVs, kv{"rope.scaling.original_context_length", uint32(orig)})
	for _, p := range []struct{ names []string }{
		{[]string{"extrapolation_factor"}}, {[]string{"attention_factor", "attn_factor"}}, {[]string{"beta_fast"}}, {[]string{"beta_slow"}},
	} {
		var x float64
		found := false
		for _, name := range p.names {
			v, present := rp[name]
			if !present {
				continue
			}
			if v == nil {
				break // None: not written, as llama.cpp's .get
			}
			if x, ok, err = num(name); err != nil {
				return err
			}
			found = ok
			break
		}
		if found {
			gguf := map[string]string{"extrapolation_factor": "yarn_ext_factor", "attention_factor": "yarn_attn_factor",
				"beta_fast": "yarn_beta_fast", "beta_slow": "yarn_beta_slow"}[p.names[0]]
			c.scalingKVs = append(c.scalingKVs, kv{"rope.scaling." + gguf, float32(x)})
		}
	}
	return nil
}

// origContext returns the original context of LongRoPE's scaling:
// config.json's original_max_position_embeddings, at its top or in the
// scaling's map, else Phi3Config's default, 4096.
func (c *Config) origContext() int {
	if n, ok := jsonInt(c.raw["original_max_position_embeddings"]); ok && n > 0 && n <= 1<<24 {
		return int(n)
	}
	for _, key := range []string{"rope_parameters", "rope_scaling"} {
		if rp, ok := c.raw[key].(map[string]any); ok {
			if n, ok := jsonInt(rp["original_max_position_embeddings"]); ok && n > 0 && n <= 1<<24 {
				return int(n)
			}
		}
	}
	return 4096
}

// readLongRoPE reads LongRoPE's long_factor and short_factor (one a pair
// of rotated values) and writes rope.scaling.attn_factor as llama.cpp's
// Phi-3 converter computes it: sqrt(1 + ln(s)/ln(original context)) for
// s = max_position_embeddings / original context when above 1, else 1.
func (c *Config) readLongRoPE(key string, rp map[string]any) error {
	orig := c.origContext()
	if orig < 2 {
		return fmt.Errorf("config.json: original_max_position_embeddings %d: longrope scaling needs more than one position", orig)
	}
	scale := float64(c.MaxPositionEmbeddings) / float64(orig)
	attn := 1.0
	if scale > 1 {
		attn = math.Sqrt(1 + math.Log(scale)/math.Log(float64(orig)))
	}
	pairs := c.rotaryDims() / 2
	factors := func(name string) ([]float32, error) {
		l, ok := rp[name].([]any)
		if !ok {
			return nil, fmt.Errorf("config.json: %s: longrope scaling needs %s, a list of %d numbers", key, name, pairs)
		}
		if len(l) != pairs {
			return nil, fmt.Errorf("config.json: %s.%s has %d factors, want %d (one a pair of the %d rotated values of a head)", key, name, len(l), pairs, 2*pairs)
		}
		out := make([]float32, len(l))
		for i, v := range l {
			x, ok := v.(float64)
			if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("config.json: %s.%s[%d] = %s is not a number", key, name, i, jsonText(v))
			}
			out[i] = float32(x)
		}
		return out, nil
	}
	var err error
	if c.longFactors, err = factors("long_factor"); err != nil {
		return err
	}
	if c.shortFactors, err = factors("short_factor"); err != nil {
		return err
	}
	c.extraKVs = append(c.extraKVs, kv{"rope.scaling.attn_factor", float32(attn)})
	return nil
}

// rotaryDims returns the values of a head that RoPE rotates: the head
// size, or for checkpoints that say so (PartialRotary) llama.cpp's Phi-3
// converter's int(partial_rotary_factor * hidden) / heads.
func (c *Config) rotaryDims() int {
	if !c.arch.PartialRotary {
		return c.HeadDim
	}
	f := 1.0
	if x, ok := c.raw["partial_rotary_factor"].(float64); ok {
		f = x
	}
	return int(f*float64(c.HiddenSize)) / c.NumAttentionHeads
}

// readLocalTheta reads the RoPE base of the sliding-window layers, under
// the names llama.cpp's TextModel looks for (Gemma 3's
// rope_local_base_freq) or as rope_parameters' sliding_attention.
func (c *Config) readLocalTheta() {
	for _, key := range []string{"rope_parameters", "rope_scaling"} {
		if rp, ok := c.raw[key].(map[string]any); ok {
			if _, full := rp["full_attention"]; full {
				if sw, ok := rp["sliding_attention"].(map[string]any); ok {
					if x, ok := sw["rope_theta"].(float64); ok && x > 0 && !math.IsInf(x, 0) {
						c.localTheta = x
					}
				}
				return
			}
		}
	}
	for _, key := range []string{"local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta", "rope_local_base_freq"} {
		if x, ok := c.raw[key].(float64); ok && x > 0 && !math.IsInf(x, 0) {
			c.localTheta = x
			return
		}
	}
	c.localTheta = c.arch.LocalRopeTheta
}

// readExtras reads the settings whose keys only some architectures have,
// into extraKVs in the order llama.cpp's converters write them: the rotated
// values of a head (PartialRotary), the sliding window (SlidingWindow),
// the final logits' soft-capping, the attention scale (AttnScalar), and
// config.json's quantization (only MXFP4, whose experts are kept).
func (c *Config) readExtras() error {
	a := c.arch
	if a.PartialRotary {
		d := c.rotaryDims()
		if d <= 0 || d > c.HeadDim || d%2 != 0 {
			return fmt.Errorf("config.json: partial_rotary_factor %s rotates %d of a head's %d values; want an even number up to it", jsonText(c.raw["partial_rotary_factor"]), d, c.HeadDim)
		}
		c.extraKVs = append(c.extraKVs, kv{"rope.dimension_count", uint32(d)})
	}
	if a.SlidingWindow {
		if n, ok := jsonInt(c.raw["sliding_window_pattern"]); !ok || n != 1 {
			w := int64(a.Window)
			if v, present := c.raw["sliding_window"]; present {
				w = 0
				if v != nil {
					n, ok := jsonInt(v)
					if !ok || n < 0 || n > 1<<32-1 {
						return fmt.Errorf("config.json: sliding_window = %s is not a whole number of positions", jsonText(v))
					}
					w = n
				}
			}
			c.extraKVs = append(c.extraKVs, kv{"attention.sliding_window", uint32(w)})
		}
	}
	if v, ok := c.raw["final_logit_softcapping"]; ok && truthy(v) {
		x, ok := v.(float64)
		if !ok || math.IsInf(x, 0) {
			return fmt.Errorf("config.json: final_logit_softcapping = %s is not a number", jsonText(v))
		}
		c.extraKVs = append(c.extraKVs, kv{"final_logit_softcapping", float32(x)})
	}
	if a.AttnScalar != 0 {
		s := int64(a.AttnScalar)
		if v, ok := c.raw["query_pre_attn_scalar"]; ok && v != nil {
			n, ok := jsonInt(v)
			if !ok || n <= 0 || n > 1<<24 {
				return fmt.Errorf("config.json: query_pre_attn_scalar = %s is not a positive integer", jsonText(v))
			}
			s = n
		}
		if s != int64(c.HeadDim) {
			c.extraKVs = append(c.extraKVs, kv{"attention.scale", float32(1 / math.Sqrt(float64(s)))})
		}
	}
	if q, ok := c.raw["quantization_config"].(map[string]any); ok {
		switch m, _ := q["quant_method"].(string); m {
		case "mxfp4":
			c.mxfp4 = true
		default:
			return fmt.Errorf("config.json: quantization_config: quantized checkpoints (quant_method %q) are not supported, but for MXFP4 experts", m)
		}
	}
	return nil
}
