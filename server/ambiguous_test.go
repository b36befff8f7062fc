package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAmbiguousGrammar: a request whose grammar parses its text in
// exponentially many ways (the audit's x ::= "a" x | "a" x x, made to run
// at least 40 a's) ends within seconds (0.3 s on a quiet 2-core machine;
// 52 s for 14 tokens before the bound) with an error that says so, and a
// plain request sent beside it completes.
func TestAmbiguousGrammar(t *testing.T) {
	ts := modelServer(t)
	grammar, _ := json.Marshal("root ::= x \"a\"{40} \"b\"\nx ::= \"a\" x | \"a\" x x | \"\"")
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
	status, v, _ := ts.post(t, "/v1/completions", `{"prompt": "x", "max_tokens": 80, "temperature": 0, "grammar": `+string(grammar)+`}`)
	took := time.Since(start)
	wg.Wait()
	body := fmt.Sprint(v)
	if e, _ := v["error"].(map[string]any); status != 400 || e["code"] != "grammar_too_ambiguous" || !strings.Contains(body, "too ambiguous") {
		t.Errorf("status %d, %s: want 400 grammar_too_ambiguous", status, body)
	}
	if took > 10*time.Second {
		t.Errorf("the ambiguous request took %v", took)
	}
	if plain != 200 {
		t.Errorf("the plain request beside it: status %d, %v", plain, plainErr)
	}
	t.Logf("status %d after %v: %s", status, took, body)
}
