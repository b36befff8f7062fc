package family

import (
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

func testFamily(name string) *Family {
	return &Family{
		Name:    name,
		Title:   strings.ToUpper(name),
		Config:  func(*gguf.File) (arch.Config, error) { return arch.Config{}, nil },
		Options: func(c *arch.Config) { c.QKNorm = true },
		Checkpoints: []Checkpoint{
			{HF: name + "ForCausalLM"},
		},
		Presets: []Preset{{Name: name + "-tiny", Config: arch.Config{
			Arch: name, Layers: 1, Hidden: 8, FFN: 8, Heads: 2, KVHeads: 1, HeadDim: 4, Vocab: 16, ContextLength: 32, Eps: 1e-6,
			Rope: arch.Rope{Theta: 1e4},
		}}},
	}
}

// mustPanic runs f and fails unless it panics with a message containing
// want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Errorf("panic %v, want one containing %q", r, want)
		}
	}()
	f()
}

func TestRegistry(t *testing.T) {
	a, b := testFamily("ta"), testFamily("tb")
	Register(a)
	Register(b)
	if f, ok := Lookup("ta"); !ok || f != a {
		t.Errorf("Lookup(ta) = %v, %v", f, ok)
	}
	if _, ok := Lookup("tc"); ok {
		t.Error("Lookup(tc) found a family")
	}
	if !a.Presets[0].Config.QKNorm {
		t.Error("Register did not apply Options to the presets")
	}
	if f, c, ok := ByCheckpoint("tbForCausalLM"); !ok || f != b || c != &b.Checkpoints[0] {
		t.Errorf("ByCheckpoint(tbForCausalLM) = %v, %v, %v", f, c, ok)
	}
	if f, p, ok := LookupPreset("ta-tiny"); !ok || f != a || p.Config.Arch != "ta" {
		t.Errorf("LookupPreset(ta-tiny) = %v, %v, %v", f, p, ok)
	}
	if got := Names(); got != `"ta", "tb"` {
		t.Errorf("Names() = %s", got)
	}
	if got := CheckpointNames(); got != "taForCausalLM, tbForCausalLM" {
		t.Errorf("CheckpointNames() = %s", got)
	}
	if got := PresetNames(); strings.Join(got, " ") != "ta-tiny tb-tiny" {
		t.Errorf("PresetNames() = %v", got)
	}

	mustPanic(t, "registered twice", func() { Register(testFamily("ta")) })
	dupCkpt := testFamily("td")
	dupCkpt.Checkpoints[0].HF = "taForCausalLM"
	mustPanic(t, "checkpoint taForCausalLM of td is also ta's", func() { Register(dupCkpt) })
	dupPreset := testFamily("te")
	dupPreset.Presets[0].Name = "ta-tiny"
	mustPanic(t, "preset ta-tiny of te is also ta's", func() { Register(dupPreset) })
	bad := testFamily("tf")
	bad.Presets[0].Config.KVHeads = 3
	mustPanic(t, "preset tf-tiny", func() { Register(bad) })
	mustPanic(t, "needs a name", func() { Register(&Family{Name: "tg"}) })
	noConfig := testFamily("th")
	noConfig.Config = nil
	mustPanic(t, "no configuration reader", func() { Register(noConfig) })
	if _, ok := Lookup("td"); ok {
		t.Error("a refused family was registered")
	}
}

func TestReplyFormat(t *testing.T) {
	c := Chat{Reply: "qwen", Replies: map[string]string{"[TOOL_CALLS]": "mistral", "<|channel|>": "harmony"}}
	for _, tc := range []struct {
		vocab []string
		want  string
	}{
		{nil, "qwen"},
		{[]string{"[TOOL_CALLS]"}, "mistral"},
		{[]string{"<|channel|>", "[TOOL_CALLS]"}, "harmony"},
	} {
		has := func(tok string) bool { return slices.Contains(tc.vocab, tok) }
		if got := c.ReplyFormat(has); got != tc.want {
			t.Errorf("vocabulary %v: %q, want %q", tc.vocab, got, tc.want)
		}
	}
}
