package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Pooling types as llama.cpp's GGUF files state them (name.pooling_type,
// its enum llama_pooling_type).
const (
	poolNone = 0
	poolMean = 1
	poolCLS  = 2
	poolLast = 3
)

// readPooling sets c.pooling from the checkpoint in dir, as llama.cpp's
// converter does (its _try_set_pooling_type): the Pooling module that
// sentence-transformers' modules.json lists, and that module's
// config.json (pooling_mode_mean_tokens, pooling_mode_cls_token,
// pooling_mode_lasttoken or pooling_mode). Without modules.json a
// Qwen3Model checkpoint (Qwen3-Embedding's transformers class: the model
// without a head) gets last-token pooling, the model card's; any other
// architecture none.
func (c *Config) readPooling(dir string) error {
	modules, err := readJSONArray(filepath.Join(dir, "modules.json"))
	if errors.Is(err, fs.ErrNotExist) {
		if c.arch.Embedding {
			c.pooling = poolLast
		}
		return nil
	}
	if err != nil {
		return err
	}
	path := ""
	found := false
	for _, m := range modules {
		mod, _ := m.(map[string]any)
		typ, _ := mod["type"].(string)
		if strings.HasSuffix(typ, "Pooling") {
			path, _ = mod["path"].(string)
			found = true
			break
		}
	}
	if !found {
		if c.arch.Embedding {
			c.pooling = poolLast
		}
		return nil
	}
	if filepath.IsAbs(path) || !filepath.IsLocal(path) {
		return fmt.Errorf("modules.json: the Pooling module's path %q is not inside the checkpoint", path)
	}
	p, err := readJSONObject(filepath.Join(dir, path, "config.json"))
	if err != nil {
		return fmt.Errorf("modules.json's Pooling module: %w", err)
	}
	flag := func(k string) bool { b, _ := p[k].(bool); return b }
	mode, _ := p["pooling_mode"].(string)
	switch {
	case flag("pooling_mode_mean_tokens"):
		c.pooling = poolMean
	case flag("pooling_mode_cls_token"):
		c.pooling = poolCLS
	case flag("pooling_mode_lasttoken"):
		c.pooling = poolLast
	case mode == "mean":
		c.pooling = poolMean
	case mode == "cls":
		c.pooling = poolCLS
	case mode == "lasttoken":
		c.pooling = poolLast
	default:
		return fmt.Errorf("%s: no pooling mode that GGUF describes (mean, cls or lasttoken)", filepath.Join(path, "config.json"))
	}
	return nil
}

// readJSONArray reads a JSON file holding an array.
func readJSONArray(path string) ([]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v []any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: bad JSON: %s", filepath.Base(path), jsonError(err))
	}
	return v, nil
}

// addModelPrefix names a checkpoint of a model without a head as
// transformers names the same weights inside a ForCausalLM
// (embed_tokens.weight becomes model.embed_tokens.weight), as llama.cpp's
// converter maps Qwen2Model's; names already so are kept.
func (c *checkpoint) addModelPrefix() {
	for name, ref := range c.tensors {
		if strings.HasPrefix(name, "model.") || name == "lm_head.weight" {
			continue
		}
		if _, clash := c.tensors["model."+name]; clash {
			continue
		}
		delete(c.tensors, name)
		c.tensors["model."+name] = ref
	}
}
