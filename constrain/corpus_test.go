package constrain

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t testing.TB, sc schemaCase) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(sc.name+".json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(sc.name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestCorpus feeds every valid document of the schema set, as written and
// compacted, through the matcher token by token as the real Qwen3
// tokenizer splits it: every token must be in the mask and accepted, and
// the grammar must end exactly at the end.
func TestCorpus(t *testing.T) {
	t.Parallel()
	tok, v := loadQwen3(t)
	mask := make([]uint64, MaskWords(v.Size()))
	for _, sc := range schemaSet(t) {
		if len(sc.docs) == 0 {
			t.Errorf("%s: no documents in testdata/corpus", sc.name)
		}
		val := compileSchema(t, sc)
		c, err := Compile(schemaGrammar(t, sc), v)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		for i, doc := range sc.docs {
			var compact bytes.Buffer
			if err := json.Compact(&compact, doc); err != nil {
				t.Fatalf("%s doc %d: %v", sc.name, i, err)
			}
			for _, text := range [][]byte{doc, compact.Bytes()} {
				if err := validate(val, text); err != nil {
					t.Fatalf("%s doc %d is not valid: %v", sc.name, i, err)
				}
				m := c.NewMatcher()
				ids := tok.EncodeOrdinary(string(text))
				for k, id := range ids {
					m.FillMask(mask)
					if mask[id/64]>>(id%64)&1 == 0 {
						t.Fatalf("%s doc %d: token %d %q after %q not in the mask", sc.name, i, k, v.toks[id], tok.DecodeBytes(ids[:k]))
					}
					if err := m.Accept(id); err != nil {
						t.Fatalf("%s doc %d: token %d: %v", sc.name, i, k, err)
					}
				}
				m.FillMask(mask)
				for _, e := range qwen3EOG {
					if mask[e/64]>>(e%64)&1 == 0 || !m.CanEnd() {
						t.Fatalf("%s doc %d: cannot end after the document", sc.name, i)
					}
				}
				// A cut document cannot end.
				m.Reset()
				for _, id := range ids[:len(ids)/2] {
					must(t, m.Accept(id))
				}
				if m.CanEnd() {
					t.Fatalf("%s doc %d: can end after half the document", sc.name, i)
				}
			}
		}
	}
}

// TestRandomWalks samples documents from the masks of each schema with a
// seeded generator, leaning towards structural tokens so that walks end,
// and validates every finished document against its schema.
func TestRandomWalks(t *testing.T) {
	t.Parallel()
	_, v := loadQwen3(t)
	mask := make([]uint64, MaskWords(v.Size()))
	walks := 8
	if testing.Short() {
		walks = 3
	}
	for _, sc := range allSchemas(t) {
		val := compileSchema(t, sc)
		c, err := Compile(schemaGrammar(t, sc), v)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(len(sc.name))))
		finished := 0
		for w := range walks {
			m := c.NewMatcher()
			var out []byte
			var allowed, structural, closers []int32
			for step := 0; step < 1000 && !m.Done(); step++ {
				m.FillMask(mask)
				allowed, structural, closers = allowed[:0], structural[:0], closers[:0]
				for i, x := range mask {
					for x != 0 {
						id := int32(i*64 + bits.TrailingZeros64(x))
						x &= x - 1
						allowed = append(allowed, id)
						if v.textSlice[id/64]>>(id%64)&1 == 0 {
							structural = append(structural, id)
							if b := v.toks[id]; bytes.ContainsAny(b, "\"]}") && !bytes.ContainsAny(b, "[{") {
								closers = append(closers, id)
							}
						}
					}
				}
				if len(allowed) == 0 {
					t.Fatalf("%s walk %d: no token allowed after %q", sc.name, w, out)
				}
				var id int32
				switch {
				case m.CanEnd():
					id = qwen3EOG[rng.IntN(2)]
				case step > 100 && len(closers) > 0 && rng.IntN(8) != 0:
					id = closers[rng.IntN(len(closers))]
				case len(structural) > 0 && rng.IntN(4) != 0:
					id = structural[rng.IntN(len(structural))]
				default:
					id = allowed[rng.IntN(len(allowed))]
				}
				if err := m.Accept(id); err != nil {
					t.Fatalf("%s walk %d: Accept(%q) from the mask after %q: %v", sc.name, w, v.toks[id], out, err)
				}
				if !m.Done() {
					out = append(out, v.toks[id]...)
				}
			}
			if !m.Done() {
				continue
			}
			finished++
			if err := validate(val, out); err != nil {
				t.Fatalf("%s walk %d produced an invalid document %q: %v", sc.name, w, out, err)
			}
			if strings.TrimSpace(string(out)) != string(out) {
				t.Fatalf("%s walk %d: whitespace around the document %q", sc.name, w, out)
			}
		}
		if finished < walks/4 {
			t.Errorf("%s: only %d of %d walks finished", sc.name, finished, walks)
		}
		t.Logf("%s: %d of %d walks finished and validated", sc.name, finished, walks)
	}
}
