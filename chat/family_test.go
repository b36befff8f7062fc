package chat

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The chat templates of the model families inferno runs, the conversations
// rendered with them, and transformers' renderings, which
// tools/archfixtures/chat_templates.py writes.
const (
	familiesPath      = "../testdata/chat/families.json"
	conversationsPath = "../testdata/chat/family_conversations.json"
	familyCasesPath   = "../testdata/chat/family_cases.json"
)

// family is an entry of families.json.
type family struct {
	Template string `json:"template"`
	BOSToken string `json:"bos_token"`
	EOSToken string `json:"eos_token"`
	Source   string `json:"source"`
}

// familyTemplate parses the template of family name.
func familyTemplate(t *testing.T, families map[string]family, name string) *Template {
	t.Helper()
	f, ok := families[name]
	if !ok {
		t.Fatalf("family %q is not in %s", name, familiesPath)
	}
	src, err := os.ReadFile(filepath.Join("../testdata/chat/templates", f.Template))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := New(string(src), f.BOSToken, f.EOSToken)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tmpl
}

// familyConversation is a case of family_conversations.json.
type familyConversation struct {
	Name                 string                     `json:"name"`
	Families             []string                   `json:"families"`
	Messages             json.RawMessage            `json:"messages"`
	Tools                string                     `json:"tools"`
	AddGenerationPrompt  bool                       `json:"add_generation_prompt"`
	ContinueFinalMessage bool                       `json:"continue_final_message"`
	Kwargs               map[string]json.RawMessage `json:"kwargs"`
}

// rendering is a case of family_cases.json.
type rendering struct {
	familyConversation
	Family   string  `json:"family"`
	Rendered *string `json:"rendered"`
	Error    string  `json:"error"`
}

// pinnedDay is the day strftime_now gives in the generator.
var pinnedDay = time.Date(2026, time.January, 15, 9, 30, 0, 0, time.UTC)

// TestFamilyTemplates renders the conversations of
// family_conversations.json with the real templates of gpt-oss, Gemma 3,
// Phi-4, Phi-4-mini, Mistral Small 3.2 and Mistral Nemo and compares with
// what transformers' apply_chat_template gave, text or error.
func TestFamilyTemplates(t *testing.T) {
	data, err := os.ReadFile(familyCasesPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist yet: run python3 tools/archfixtures/chat_templates.py where transformers is installed", familyCasesPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Transformers string      `json:"transformers"`
		Date         string      `json:"date"`
		Cases        []rendering `json:"cases"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", familyCasesPath, err)
	}
	if out.Date != pinnedDay.Format(time.DateOnly) {
		t.Fatalf("%s was rendered on %s, the test pins %s", familyCasesPath, out.Date, pinnedDay.Format(time.DateOnly))
	}
	var families map[string]family
	readJSON(t, familiesPath, &families)
	var conv struct {
		Tools map[string][]json.RawMessage `json:"tools"`
		Cases []familyConversation         `json:"cases"`
	}
	readJSON(t, conversationsPath, &conv)

	// The renderings are those of the conversations as they are now.
	type key struct{ name, family string }
	byKey := map[key]rendering{}
	for _, r := range out.Cases {
		byKey[key{r.Name, r.Family}] = r
	}
	n := 0
	for _, c := range conv.Cases {
		for _, f := range c.Families {
			r, ok := byKey[key{c.Name, f}]
			if !ok || !sameJSON(r.Messages, c.Messages) || r.Tools != c.Tools || r.AddGenerationPrompt != c.AddGenerationPrompt ||
				r.ContinueFinalMessage != c.ContinueFinalMessage || !sameKwargs(r.Kwargs, c.Kwargs) {
				t.Fatalf("%s has no up-to-date rendering of %q with %s: run tools/archfixtures/chat_templates.py again", familyCasesPath, c.Name, f)
			}
			n++
		}
	}
	if n != len(out.Cases) {
		t.Fatalf("%s has %d renderings, the conversations ask for %d", familyCasesPath, len(out.Cases), n)
	}

	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return pinnedDay }
	templates := map[string]*Template{}
	for _, r := range out.Cases {
		t.Run(r.Family+"/"+r.Name, func(t *testing.T) {
			tmpl := templates[r.Family]
			if tmpl == nil {
				tmpl = familyTemplate(t, families, r.Family)
				templates[r.Family] = tmpl
			}
			var wire []wireMessage
			if err := json.Unmarshal(r.Messages, &wire); err != nil {
				t.Fatal(err)
			}
			msgs := make([]Message, len(wire))
			for i, w := range wire {
				msgs[i] = w.message()
			}
			var tools []json.RawMessage
			if r.Tools != "" {
				if tools = conv.Tools[r.Tools]; tools == nil {
					t.Fatalf("no tools %q", r.Tools)
				}
			}
			got, err := tmpl.Render(msgs, Options{
				Tools:                tools,
				AddGenerationPrompt:  r.AddGenerationPrompt,
				ContinueFinalMessage: r.ContinueFinalMessage,
				Kwargs:               rawKwargs(r.Kwargs),
			})
			switch {
			case r.Rendered == nil && err == nil:
				t.Errorf("rendered %q, want an error like transformers' %q", got, r.Error)
			case r.Rendered == nil:
				t.Logf("error %v (transformers: %s)", err, r.Error)
			case err != nil:
				t.Errorf("error %v, want %q", err, *r.Rendered)
			case got != *r.Rendered:
				t.Error(diff(got, *r.Rendered))
			}
		})
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func sameKwargs(a, b map[string]json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !sameJSON(v, b[k]) {
			return false
		}
	}
	return true
}

// TestFamilyTemplateSources checks the templates against the tokenizer
// files of testdata/*-tokenizer that carry one (written by the tokenizer
// tests' generator), where those files exist.
func TestFamilyTemplateSources(t *testing.T) {
	var families map[string]family
	readJSON(t, familiesPath, &families)
	for name, cfgPath := range map[string]string{"gemma3": "../testdata/gemma3-tokenizer/tokenizer_config.json.gz"} {
		f, err := os.Open(cfgPath)
		if errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s: no %s to compare with", name, cfgPath)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", cfgPath, err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", cfgPath, err)
		}
		var cfg struct {
			ChatTemplate string `json:"chat_template"`
			BOSToken     string `json:"bos_token"`
			EOSToken     string `json:"eos_token"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", cfgPath, err)
		}
		src, err := os.ReadFile(filepath.Join("../testdata/chat/templates", families[name].Template))
		if err != nil {
			t.Fatal(err)
		}
		if string(src) != cfg.ChatTemplate {
			t.Errorf("%s: the template differs from %s's", name, cfgPath)
		}
		if fam := families[name]; fam.BOSToken != cfg.BOSToken || fam.EOSToken != cfg.EOSToken {
			t.Errorf("%s: tokens %q %q, %s has %q %q", name, fam.BOSToken, fam.EOSToken, cfgPath, cfg.BOSToken, cfg.EOSToken)
		}
	}
}
