package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGenerateConstrained runs generate with --json-schema and --grammar
// on the random-weight golden model, sampled at temperature 1 with three
// seeds (one with -short): whatever stops is valid.
func TestGenerateConstrained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := filepath.Join(dir, "schema.json")
	gbnf := filepath.Join(dir, "answer.gbnf")
	if err := os.WriteFile(schema, []byte(`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 99}, "ok": {"type": "boolean"}}, "required": ["n", "ok"], "additionalProperties": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gbnf, []byte("# yes or no, then a number\nroot ::= (\"yes\" | \"no\") \" \" [0-9]{1,2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^(yes|no) [0-9]{1,2}$`)
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		for _, args := range [][]string{{"--json-schema", schema}, {"--grammar", gbnf}, {"--json-schema", schema, "--chat", "--no-think"}} {
			argv := append([]string{"generate", goldenModel, "Answer:", "-n", "300", "--temperature", "1", "--seed", fmt.Sprint(seed)}, args...)
			out, errOut, code := run(t, "", argv...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			text := strings.TrimSuffix(out, "\n")
			if args[0] == "--grammar" {
				if !re.MatchString(text) {
					t.Errorf("%v seed %d: %q", args, seed, text)
				}
				continue
			}
			var v struct {
				N  *int  `json:"n"`
				OK *bool `json:"ok"`
			}
			if err := json.Unmarshal([]byte(text), &v); err != nil || v.N == nil || v.OK == nil || *v.N > 99 {
				t.Errorf("%v seed %d: %q (%v)", args, seed, text, err)
			}
		}
	}
}

// TestConstraintFlagErrors checks that generate and chat refuse a bad
// --json-schema or --grammar in one line that names it. With -short, each
// case runs through one of the two commands, in turn.
func TestConstraintFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"type": "number", "multipleOf": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	badG := filepath.Join(dir, "bad.gbnf")
	if err := os.WriteFile(badG, []byte("root ::= (\"a\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--json-schema", bad}, "multipleOf"},
		{[]string{"--grammar", badG}, "bad.gbnf"},
		{[]string{"--grammar", filepath.Join(dir, "missing.gbnf")}, "missing.gbnf"},
		{[]string{"--grammar", badG, "--json-schema", bad}, "exclude each other"},
	} {
		for j, cmd := range [][]string{{"generate", goldenModel, "x"}, {"chat", goldenModel}} {
			if testing.Short() && (i+j)%2 != 0 {
				continue
			}
			_, errOut, code := run(t, "hi\n", append(cmd, tc.args...)...)
			if code == 0 || !strings.Contains(errOut, tc.msg) {
				t.Errorf("%s %v: exit %d, stderr %q lacks %q", cmd[0], tc.args, code, errOut, tc.msg)
			}
		}
	}
}

// TestChatConstrained: every chat reply follows the grammar.
func TestChatConstrained(t *testing.T) {
	t.Parallel()
	gbnf := filepath.Join(t.TempDir(), "g.gbnf")
	if err := os.WriteFile(gbnf, []byte(`root ::= "OK" [0-9]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "hello\nagain\n", "chat", goldenModel, "--grammar", gbnf, "--no-think", "--temperature", "1", "--seed", "1", "-n", "20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := regexp.MustCompile(`OK[0-9]`).FindAllString(out, -1); len(got) != 2 {
		t.Errorf("replies %q", out)
	}
}
