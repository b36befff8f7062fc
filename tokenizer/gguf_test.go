package tokenizer

import (
	"bytes"
	"strings"
	"testing"

	"inferno/gguf"
)

// ggufKV is one metadata pair of a test GGUF.
type ggufKV struct {
	key string
	val any
}

// writeGGUF returns a GGUF file with the given metadata and no tensors.
func writeGGUF(tb testing.TB, kvs []ggufKV) *gguf.File {
	tb.Helper()
	w := gguf.NewWriter()
	for _, kv := range kvs {
		if err := w.Set(kv.key, kv.val); err != nil {
			tb.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// ggufMetadata returns the tokenizer metadata llama.cpp's converter writes
// for cfg.
func ggufMetadata(cfg Config) []ggufKV {
	kvs := []ggufKV{
		{keyModel, cfg.Model},
		{keyTokens, cfg.Tokens},
		{keyTypes, cfg.Types},
	}
	if cfg.Model == ModelSPM {
		kvs = append(kvs, ggufKV{keyPre, "default"}, ggufKV{keyScores, cfg.Scores},
			ggufKV{keyAddSpacePrefix, cfg.AddSpacePrefix})
	} else {
		kvs[0].val = ModelByteLevel
		kvs = append(kvs, ggufKV{keyPre, cfg.Pre}, ggufKV{keyMerges, cfg.Merges})
	}
	if cfg.AddBOS {
		kvs = append(kvs, ggufKV{keyBOS, uint32(cfg.BOS)}, ggufKV{keyAddBOS, true})
	}
	return kvs
}

// TestFromGGUFFamilies builds each family's tokenizer from GGUF metadata,
// as llama.cpp's converter writes it (SentencePiece: tokens, types, scores,
// add_space_prefix false as for Gemma 3, add_bos_token; byte-level: tokens,
// types, merges, pre), and checks the reference ids.
func TestFromGGUFFamilies(t *testing.T) {
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			cases := f.cases(t)
			cfg, _ := f.load(t)
			tok, err := FromGGUF(writeGGUF(t, ggufMetadata(cfg)))
			if err != nil {
				t.Fatal(err)
			}
			checkCases(t, f.name+" from GGUF", tok, cases)
			if f.name == "gemma3" {
				bos, add := tok.BOS()
				if !add || tok.TokenText(bos) != "<bos>" {
					t.Errorf("BOS() = %d (%q), %v, want <bos>, true", bos, tok.TokenText(bos), add)
				}
			}
		})
	}
}

// smallGGUF is the metadata of a small byte-level vocabulary.
func smallGGUF() []ggufKV {
	var toks []string
	for b := range 256 {
		toks = append(toks, string(byteToRune[b]))
	}
	toks = append(toks, "ab", "<s>")
	types := make([]int32, len(toks))
	for i := range types {
		types[i] = TypeNormal
	}
	types[len(types)-1] = TypeControl
	return []ggufKV{
		{keyModel, "gpt2"}, {keyPre, "llama-bpe"}, {keyTokens, toks}, {keyTypes, types},
		{keyMerges, []string{"a b"}}, {keyBOS, uint32(257)},
	}
}

// smallSPMGGUF is the metadata of a small SentencePiece vocabulary.
func smallSPMGGUF() []ggufKV {
	toks := []string{"<unk>", "<s>", "▁", "a", "b", "▁a", "ab", "▁ab", "<0x41>", "<0xC3>", "<0xA9>"}
	types := []int32{TypeUnknown, TypeControl, 1, 1, 1, 1, 1, 1, TypeByte, TypeByte, TypeByte}
	scores := []float32{0, 0, -1, -2, -3, -4, -5, -6, 0, 0, 0}
	return []ggufKV{
		{keyModel, "llama"}, {keyTokens, toks}, {keyTypes, types}, {keyScores, scores}, {keyBOS, uint32(1)},
	}
}

// with returns kvs with key set to val, or removed if val is nil.
func with(kvs []ggufKV, key string, val any) []ggufKV {
	out := make([]ggufKV, 0, len(kvs)+1)
	found := false
	for _, kv := range kvs {
		if kv.key == key {
			found = true
			if val == nil {
				continue
			}
			kv.val = val
		}
		out = append(out, kv)
	}
	if !found && val != nil {
		out = append(out, ggufKV{key, val})
	}
	return out
}

// TestFromGGUFDefaults: add_bos_token and add_space_prefix take llama.cpp's
// defaults when absent, and the GGUF's values when present.
func TestFromGGUFDefaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kvs     []ggufKV
		wantBOS bool
	}{
		{"llama-bpe default", smallGGUF(), true},
		{"gpt-4o default", with(smallGGUF(), keyPre, "gpt-4o"), false},
		{"tekken default", with(smallGGUF(), keyPre, "tekken"), true},
		{"dbrx default", with(smallGGUF(), keyPre, "dbrx"), false},
		{"key false", with(smallGGUF(), keyAddBOS, false), false},
		{"key true", with(with(smallGGUF(), keyPre, "qwen2"), keyAddBOS, true), true},
		{"no bos id", with(smallGGUF(), keyBOS, nil), false},
		{"spm default", smallSPMGGUF(), true},
	} {
		tok, err := FromGGUF(writeGGUF(t, tc.kvs))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if _, add := tok.BOS(); add != tc.wantBOS {
			t.Errorf("%s: BOS() add = %v, want %v", tc.name, add, tc.wantBOS)
		}
	}

	tok, err := FromGGUF(writeGGUF(t, smallSPMGGUF()))
	if err != nil {
		t.Fatal(err)
	}
	// add_space_prefix defaults to true: "ab" is encoded as "▁ab".
	if got := tok.Encode("ab"); len(got) != 1 || tok.TokenText(got[0]) != "▁ab" {
		t.Errorf("Encode(ab) with the default add_space_prefix = %v", got)
	}
	if got := tok.PrependBOS(tok.Encode("ab")); len(got) != 2 || got[0] != 1 {
		t.Errorf("PrependBOS(Encode(ab)) = %v, want <s> first", got)
	}
	if got := tok.PrependBOS([]int32{1, 7}); len(got) != 2 {
		t.Errorf("PrependBOS([<s> ▁ab]) = %v, want no second <s>", got)
	}
	tok, err = FromGGUF(writeGGUF(t, with(smallSPMGGUF(), keyAddSpacePrefix, false)))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("ab"); len(got) != 1 || tok.TokenText(got[0]) != "ab" {
		t.Errorf("Encode(ab) without add_space_prefix = %v", got)
	}
}

func TestFromGGUFErrors(t *testing.T) {
	for name, kvs := range map[string][]ggufKV{
		"no model":           with(smallGGUF(), keyModel, nil),
		"model not a string": with(smallGGUF(), keyModel, uint32(1)),
		"unknown model":      with(smallGGUF(), keyModel, "rwkv"),
		"no tokens":          with(smallGGUF(), keyTokens, nil),
		"tokens not strings": with(smallGGUF(), keyTokens, []int32{1, 2}),
		"types not int32":    with(smallGGUF(), keyTypes, []string{"a"}),
		"types length":       with(smallGGUF(), keyTypes, []int32{1, 1}),
		"no merges":          with(smallGGUF(), keyMerges, nil),
		"unknown pre":        with(smallGGUF(), keyPre, "falcon"),
		"pre not a string":   with(smallGGUF(), keyPre, true),
		"bos out of range":   with(smallGGUF(), keyBOS, uint32(9999)),
		"bos not an integer": with(smallGGUF(), keyBOS, "1"),
		"add_bos not bool":   with(smallGGUF(), keyAddBOS, uint8(1)),
		"no scores":          with(smallSPMGGUF(), keyScores, nil),
		"scores not float32": with(smallSPMGGUF(), keyScores, []float64{0}),
		"scores scalar":      with(smallSPMGGUF(), keyScores, float32(0)),
		"scores length":      with(smallSPMGGUF(), keyScores, []float32{0}),
		"space prefix type":  with(smallSPMGGUF(), keyAddSpacePrefix, "yes"),
	} {
		tok, err := FromGGUF(writeGGUF(t, kvs))
		if err == nil {
			t.Errorf("%s: FromGGUF succeeded", name)
			continue
		}
		if tok != nil {
			t.Errorf("%s: FromGGUF returned a tokenizer with error %v", name, err)
		}
		if !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}

// FuzzFromGGUF checks that FromGGUF returns a tokenizer or an error, never
// panics, on any GGUF that parses, and that what it returns encodes.
func FuzzFromGGUF(f *testing.F) {
	// Small seeds: the fuzzer minimizes what it finds, slowly for large
	// inputs.
	tiny := []ggufKV{
		{keyModel, "gpt2"}, {keyPre, "llama-bpe"}, {keyTokens, []string{"a", "b", "ab", "Ġ", "<s>"}},
		{keyTypes, []int32{1, 1, 1, 1, 3}}, {keyMerges, []string{"a b"}}, {keyBOS, uint32(4)},
	}
	for _, kvs := range [][]ggufKV{tiny, smallSPMGGUF(), with(tiny, keyPre, "tekken")} {
		w := gguf.NewWriter()
		for _, kv := range kvs {
			if err := w.Set(kv.key, kv.val); err != nil {
				f.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.Parse(data)
		if err != nil {
			return
		}
		tok, err := FromGGUF(g)
		if err != nil {
			return
		}
		ids := tok.Encode("a b\xff<s>ab é")
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("Encode returned id %d out of range", id)
			}
		}
		tok.Decode(ids)
	})
}
