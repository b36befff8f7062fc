package constrain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"inferno/grammar"
	"inferno/tokenizer"
)

const (
	qwen3TokenizerPath = "../testdata/qwen3-tokenizer/tokenizer.json"
	qwen3Rows          = 151936 // logit rows: the tokenizer's 151,669 ids and padding
)

var qwen3EOG = []int32{151643, 151645}

// prettyWhitespace is the whitespace the corpus's grammars allow between
// JSON tokens: a newline and the indentation of its pretty-printed
// documents (the server's default, grammar.DefaultMaxWhitespace, allows a
// space or a newline only).
const prettyWhitespace = 20

var qwen3 struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	v    *Vocab
	err  error
}

// loadQwen3 returns the real Qwen3 tokenizer and its vocabulary padded to
// the model's logit rows, added tokens without text.
func loadQwen3(tb testing.TB) (*tokenizer.Tokenizer, *Vocab) {
	tb.Helper()
	qwen3.once.Do(func() {
		qwen3.tok, qwen3.err = loadTokenizer(qwen3TokenizerPath)
		if qwen3.err != nil {
			return
		}
		toks := make([][]byte, qwen3Rows)
		for id := range qwen3.tok.VocabSize() {
			switch qwen3.tok.TokenType(int32(id)) {
			case tokenizer.TypeControl, tokenizer.TypeUserDefined:
				continue
			}
			toks[id] = qwen3.tok.DecodeBytes([]int32{int32(id)})
		}
		qwen3.v, qwen3.err = NewVocab(toks, qwen3EOG)
	})
	if qwen3.err != nil {
		tb.Skipf("Qwen3 tokenizer: %v", qwen3.err)
	}
	return qwen3.tok, qwen3.v
}

func loadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	size := 0
	for _, id := range f.Model.Vocab {
		size = max(size, id+1)
	}
	for _, a := range f.AddedTokens {
		size = max(size, a.ID+1)
	}
	cfg := tokenizer.Config{Tokens: make([]string, size), Types: make([]int32, size), Pre: "qwen2"}
	for text, id := range f.Model.Vocab {
		cfg.Tokens[id] = text
		cfg.Types[id] = tokenizer.TypeNormal
	}
	for _, a := range f.AddedTokens {
		cfg.Tokens[a.ID] = a.Content
		cfg.Types[a.ID] = tokenizer.TypeUserDefined
		if a.Special {
			cfg.Types[a.ID] = tokenizer.TypeControl
		}
	}
	for _, raw := range f.Model.Merges {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			cfg.Merges = append(cfg.Merges, s)
			continue
		}
		var pair []string
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("%s: merge %s", path, raw)
		}
		cfg.Merges = append(cfg.Merges, pair[0]+" "+pair[1])
	}
	return tokenizer.New(cfg)
}

// schemaCase is one schema of the test set with its valid documents.
type schemaCase struct {
	name   string
	schema []byte
	docs   [][]byte
}

// schemaSet reads testdata/schemas/*.json and the documents of each under
// testdata/corpus/<name>/.
func schemaSet(tb testing.TB) []schemaCase {
	tb.Helper()
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no schemas in testdata/schemas (%v)", err)
	}
	sort.Strings(files)
	var out []schemaCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		s, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		c := schemaCase{name: name, schema: s}
		docs, _ := filepath.Glob(filepath.Join("testdata/corpus", name, "*.json"))
		sort.Strings(docs)
		for _, d := range docs {
			b, err := os.ReadFile(d)
			if err != nil {
				tb.Fatal(err)
			}
			c.docs = append(c.docs, bytes.TrimRight(b, "\n"))
		}
		out = append(out, c)
	}
	return out
}

// allSchemas returns schemaSet and the schemas of package grammar's
// benchmark set (testdata/schemas there, without documents).
func allSchemas(tb testing.TB) []schemaCase {
	out := schemaSet(tb)
	files, _ := filepath.Glob("../grammar/testdata/schemas/*.json")
	sort.Strings(files)
	for _, f := range files {
		s, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, schemaCase{name: "grammar_" + strings.TrimSuffix(filepath.Base(f), ".json"), schema: s})
	}
	return out
}

func schemaGrammar(tb testing.TB, sc schemaCase) *grammar.Grammar {
	tb.Helper()
	g, err := grammar.FromJSONSchema(sc.schema, grammar.SchemaOptions{MaxWhitespace: prettyWhitespace, AllowAdditionalDefault: true})
	if err != nil {
		tb.Fatalf("%s: %v", sc.name, err)
	}
	return g
}
