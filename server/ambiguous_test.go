package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAmbiguousGrammarRefused: the audit's grammar, whose parses of
// "aaa..." double every byte or so, and a variant that needs 40 a's, are
// refused with 400 grammar_too_ambiguous when they are compiled, naming
// the rule and the text, before anything reaches the scheduler.
func TestAmbiguousGrammarRefused(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "ok"})
	rec := recordPrompts(ts)
	for _, src := range []string{
		"root ::= x \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"",
		"root ::= x \"a\"{40} \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"",
	} {
		g, _ := json.Marshal(src)
		for _, tc := range []struct{ path, body, param string }{
			{"/v1/completions", `{"prompt": "x", "max_tokens": 80, "grammar": ` + string(g) + `}`, "grammar"},
			{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "guided_grammar": ` + string(g) + `}`, "guided_grammar"},
		} {
			start := time.Now()
			status, v, _ := ts.post(t, tc.path, tc.body)
			took := time.Since(start)
			e, _ := v["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if status != 400 || e["code"] != "grammar_too_ambiguous" || e["param"] != tc.param ||
				!strings.Contains(msg, "too ambiguous") || !strings.Contains(msg, `rule "x"`) || !strings.Contains(msg, `"aaa`) {
				t.Errorf("%s %q: status %d, %v: want 400 grammar_too_ambiguous naming rule x", tc.path, src, status, v)
			}
			if took > 2*time.Second {
				t.Errorf("%s: refused after %v", tc.path, took)
			}
			t.Logf("%s: %d after %v: %s", tc.path, status, took, msg)
		}
	}
	if n := len(rec.prompts); n != 0 {
		t.Errorf("%d requests reached the scheduler", n)
	}
	// The server still serves.
	if status, v, _ := ts.post(t, "/v1/completions", `{"prompt": "x", "max_tokens": 4, "grammar": "root ::= \"ok\""}`); status != 200 {
		t.Errorf("a plain grammar after the refusals: %d %v", status, v)
	}
}

// TestAmbiguousGrammarRuntime: a grammar whose explosion lies further
// from its start than the compile-time probe walks (300 c's first) is
// accepted, and its request ends within seconds, once its parses pass
// the matcher's bound, with the same error (0.3 s for the explosion
// itself on a quiet 2-core machine; 52 s for 14 tokens before the
// bound), while a plain request sent beside it completes.
func TestAmbiguousGrammarRuntime(t *testing.T) {
	ts := modelServer(t)
	grammar, _ := json.Marshal("root ::= \"c\"{300} x \"a\"{40} \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"")
	var wg sync.WaitGroup
	var plain int
	var plainErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		status, v, _ := ts.post(t, "/v1/completions", `{"prompt": "In the beginning", "max_tokens": 24, "temperature": 0}`)
		plain = status
		if status != 200 {
			plainErr = fmt.Errorf("%v", v)
		}
	}()
	start := time.Now()
	status, v, _ := ts.post(t, "/v1/completions", `{"prompt": "x", "max_tokens": 400, "temperature": 0, "grammar": `+string(grammar)+`}`)
	took := time.Since(start)
	wg.Wait()
	body := fmt.Sprint(v)
	if e, _ := v["error"].(map[string]any); status != 400 || e["code"] != "grammar_too_ambiguous" || !strings.Contains(body, "too ambiguous") ||
		!strings.Contains(body, "token") {
		t.Errorf("status %d, %s: want 400 grammar_too_ambiguous from generation", status, body)
	}
	if took > 20*time.Second {
		t.Errorf("the ambiguous request took %v", took)
	}
	if plain != 200 {
		t.Errorf("the plain request beside it: status %d, %v", plain, plainErr)
	}
	t.Logf("status %d after %v: %s", status, took, body)
}
