package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadPooling feeds sentence-transformers' modules.json and a Pooling
// module's config.json to readConfig: it never panics, fails in one line,
// never reads outside the checkpoint, and what it accepts is a pooling
// type GGUF names (none, mean, cls, last).
func FuzzReadPooling(f *testing.F) {
	modules := `[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
	 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]`
	for _, p := range []string{`{"pooling_mode_lasttoken": true}`, `{"pooling_mode_mean_tokens": true}`, `{"pooling_mode": "cls"}`, `{"pooling_mode_max_tokens": true}`, `[]`, ``} {
		f.Add(modules, p)
	}
	f.Add(`[{"type": "Pooling", "path": "../x"}]`, `{}`)
	f.Add(`[{"type": "Pooling", "path": 3}]`, `{}`)
	f.Add(`{}`, `{}`)
	const config = `{"architectures": ["Qwen3Model"], "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32}`
	f.Fuzz(func(t *testing.T, modules, pooling string) {
		dir := t.TempDir()
		for name, s := range map[string]string{"config.json": config, "modules.json": modules, "1_Pooling/config.json": pooling} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := readConfig(dir)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a message of several lines: %v", err)
			}
			return
		}
		if c.pooling > poolLast {
			t.Fatalf("pooling type %d", c.pooling)
		}
	})
}
