package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Token types of tokenizer.ggml.token_type, as llama.cpp's converter
// assigns them.
const (
	tokenNormal      = 1
	tokenControl     = 3
	tokenUserDefined = 4
	tokenUnused      = 5
)

// qwen2Split is the pre-tokenizer regular expression of Qwen2 and Qwen3
// tokenizer.json files, which llama.cpp and inferno know as "qwen2".
const qwen2Split = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// llama3Split is Llama 3's, "llama-bpe": numbers in threes.
const llama3Split = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// preTokenizers are the split regular expressions inferno and llama.cpp
// implement, by their tokenizer.ggml.pre names.
var preTokenizers = map[string]string{qwen2Split: "qwen2", llama3Split: "llama-bpe"}

// tokenizerJSON is the part of tokenizer.json the converter reads.
type tokenizerJSON struct {
	AddedTokens  []addedToken   `json:"added_tokens"`
	PreTokenizer map[string]any `json:"pre_tokenizer"`
	Model        struct {
		Type   string            `json:"type"`
		Vocab  map[string]int64  `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
}

type addedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// specialTypes are the special token kinds llama.cpp's SpecialVocab looks
// for, in its order.
var specialTypes = []string{"bos", "eos", "unk", "sep", "pad", "cls", "mask"}

// specialIDKeys maps a special token kind to its GGUF key; cls has none, and
// llama.cpp's converter skips it.
var specialIDKeys = map[string]string{
	"bos":  "tokenizer.ggml.bos_token_id",
	"eos":  "tokenizer.ggml.eos_token_id",
	"unk":  "tokenizer.ggml.unknown_token_id",
	"sep":  "tokenizer.ggml.seperator_token_id", // sic, as llama.cpp spells it
	"pad":  "tokenizer.ggml.padding_token_id",
	"mask": "tokenizer.ggml.mask_token_id",
}

// addKeys maps a special token kind to the GGUF key of its add_*_token
// flag; the other kinds have none.
var addKeys = map[string]string{
	"bos": "tokenizer.ggml.add_bos_token",
	"eos": "tokenizer.ggml.add_eos_token",
	"sep": "tokenizer.ggml.add_sep_token",
}

// tokenizerMetadata builds the tokenizer.* metadata of the checkpoint in
// dir as llama.cpp's converter does for a byte-level BPE (gpt2) vocabulary
// (its _set_vocab_gpt2, get_vocab_base and SpecialVocab): the token list
// padded to the configured vocabulary size with "[PADn]" tokens of type
// unused, token types, merges, special token ids, add_*_token flags and the
// chat template.
func tokenizerMetadata(dir string, cfg *Config) ([]kv, error) {
	var tj tokenizerJSON
	if err := readJSON(filepath.Join(dir, "tokenizer.json"), &tj); err != nil {
		return nil, err
	}
	tc, err := readJSONObject(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	if t := tj.Model.Type; t != "" && t != "BPE" {
		return nil, fmt.Errorf("tokenizer.json: tokenizer model %q is not supported (want BPE)", t)
	}
	if len(tj.Model.Vocab) == 0 {
		return nil, fmt.Errorf("tokenizer.json: the BPE model has no vocabulary")
	}
	pre := preTokenizerName(tj.PreTokenizer)
	if pre == "" {
		return nil, fmt.Errorf("tokenizer.json: the pre-tokenizer is not the Qwen2 split or Llama 3's that inferno and llama.cpp implement (tokenizer.ggml.pre \"qwen2\" or \"llama-bpe\")")
	}

	tokens, types, err := vocabulary(&tj, tc, cfg.VocabSize)
	if err != nil {
		return nil, err
	}
	merges, err := mergeList(tj.Model.Merges)
	if err != nil {
		return nil, err
	}
	if len(merges) == 0 {
		return nil, fmt.Errorf("tokenizer.json: the BPE model has no merges")
	}
	out := []kv{
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", pre},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
	}
	special, err := specialVocab(&tj, tc, cfg, dir)
	if err != nil {
		return nil, err
	}
	return append(out, special...), nil
}

// vocabulary returns the token texts and types for ids 0 to n-1.
func vocabulary(tj *tokenizerJSON, tc map[string]any, n int) ([]string, []int32, error) {
	byID := make(map[int64]string, len(tj.Model.Vocab)+len(tj.AddedTokens))
	for text, id := range tj.Model.Vocab {
		if prev, dup := byID[id]; dup {
			a, b := min(prev, text), max(prev, text)
			return nil, nil, fmt.Errorf("tokenizer.json: tokens %q and %q both have id %d", a, b, id)
		}
		byID[id] = text
	}
	// Added tokens: those of tokenizer.json, then those that only
	// tokenizer_config.json's added_tokens_decoder lists, as transformers
	// loads them.
	added := map[string]bool{}
	addedByID := map[int64]addedToken{}
	for _, a := range tj.AddedTokens {
		added[a.Content] = true
		addedByID[a.ID] = a
		byID[a.ID] = a.Content
	}
	if dec, ok := tc["added_tokens_decoder"].(map[string]any); ok {
		ids := make([]string, 0, len(dec))
		for k := range dec {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		for _, k := range ids {
			var id int64
			if _, err := fmt.Sscan(k, &id); err != nil {
				return nil, nil, fmt.Errorf("tokenizer_config.json: added_tokens_decoder key %q is not a token id", k)
			}
			e, _ := dec[k].(map[string]any)
			content, ok := e["content"].(string)
			if !ok {
				return nil, nil, fmt.Errorf("tokenizer_config.json: added token %s has no content", k)
			}
			if _, seen := addedByID[id]; seen {
				continue
			}
			special, _ := e["special"].(bool)
			added[content] = true
			addedByID[id] = addedToken{ID: id, Content: content, Special: special}
			byID[id] = content
		}
	}
	lo, hi := int64(0), int64(-1)
	for id := range byID {
		lo, hi = min(lo, id), max(hi, id)
	}
	if lo < 0 {
		return nil, nil, fmt.Errorf("tokenizer.json: token id %d is negative", lo)
	}
	if hi >= int64(n) {
		return nil, nil, fmt.Errorf("tokenizer.json: token id %d is outside the vocabulary of %d tokens (config.json vocab_size)", hi, n)
	}

	tokens := make([]string, n)
	types := make([]int32, n)
	for i := range n {
		text, ok := byID[int64(i)]
		switch {
		case !ok:
			tokens[i], types[i] = fmt.Sprintf("[PAD%d]", i), tokenUnused
		case added[text]:
			if addedByID[int64(i)].Special || looksSpecial(text) {
				types[i] = tokenControl
			} else {
				text = strings.ReplaceAll(text, "\u2581", " ") // pre-normalize user-defined spaces
				types[i] = tokenUserDefined
			}
			tokens[i] = text
		default:
			tokens[i], types[i] = text, tokenNormal
		}
	}
	return tokens, types, nil
}

// looksSpecial reports whether an added token that is not marked special
// should still be a control token, by llama.cpp's does_token_look_special.
func looksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>") ||
		strings.HasPrefix(s, "<｜") && strings.HasSuffix(s, "｜>") ||
		strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">")
}

// mergeList returns the merges as "left right" strings. tokenizer.json
// holds them as such strings or, since transformers 4.45, as pairs; a
// space inside a pair's part is written as U+0120, as llama.cpp does.
func mergeList(raw []json.RawMessage) ([]string, error) {
	merges := make([]string, len(raw))
	var pair []string
	for i, m := range raw {
		if len(m) > 0 && m[0] == '"' {
			if err := json.Unmarshal(m, &merges[i]); err != nil {
				return nil, fmt.Errorf("tokenizer.json: merge %d: %s", i, jsonError(err))
			}
			continue
		}
		pair = pair[:0]
		if err := json.Unmarshal(m, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("tokenizer.json: merge %d is neither a string nor a pair of strings", i)
		}
		merges[i] = strings.ReplaceAll(pair[0], " ", "\u0120") + " " + strings.ReplaceAll(pair[1], " ", "\u0120")
	}
	return merges, nil
}

// preTokenizerName returns the tokenizer.ggml.pre name of p if it splits
// text by one of the regular expressions of preTokenizers and maps it to
// bytes (a Split with that pattern, alone or in a Sequence with ByteLevel
// steps), else "".
func preTokenizerName(p map[string]any) string {
	steps := []any{p}
	if p["type"] == "Sequence" {
		steps, _ = p["pretokenizers"].([]any)
	}
	name := ""
	for _, s := range steps {
		m, _ := s.(map[string]any)
		switch m["type"] {
		case "Split":
			pat, _ := m["pattern"].(map[string]any)
			re, _ := pat["Regex"].(string)
			if name != "" || preTokenizers[re] == "" {
				return ""
			}
			name = preTokenizers[re]
		case "ByteLevel":
			if m["use_regex"] == true {
				return ""
			}
		default:
			return ""
		}
	}
	return name
}

// specialVocab returns the special token ids, add_*_token flags and chat
// template as llama.cpp's SpecialVocab finds them: ids from
// tokenizer_config.json's *_token entries looked up among tokenizer.json's
// added tokens, then config.json's *_token_id values for kinds still
// unset. generation_config.json is not consulted, as llama.cpp does not.
func specialVocab(tj *tokenizerJSON, tc map[string]any, cfg *Config, dir string) ([]kv, error) {
	type idEntry struct {
		typ string
		id  int64
	}
	var ids []idEntry
	set := func(typ string, id int64) error {
		if id < 0 {
			return fmt.Errorf("invalid value for special token type %s: %d", typ, id)
		}
		for _, e := range ids {
			if e.typ == typ {
				return nil // the first match wins
			}
		}
		if id >= int64(cfg.VocabSize) {
			return nil // out of range: skipped
		}
		ids = append(ids, idEntry{typ, id})
		return nil
	}

	if !truthy(tc["bos_token"]) && truthy(tc["cls_token"]) {
		tc["bos_token"] = tc["cls_token"]
	}
	if !truthy(tc["eos_token"]) && truthy(tc["sep_token"]) {
		tc["eos_token"] = tc["sep_token"]
	}
	template, err := chatTemplate(tc, dir)
	if err != nil {
		return nil, err
	}
	var adds []kv
	for _, typ := range specialTypes {
		if b, ok := tc["add_"+typ+"_token"].(bool); ok && addKeys[typ] != "" {
			adds = append(adds, kv{addKeys[typ], b})
		}
		var content string
		switch e := tc[typ+"_token"].(type) {
		case string:
			content = e
		case map[string]any:
			c, ok := e["content"].(string)
			if !ok {
				continue
			}
			content = c
		default:
			continue
		}
		for _, a := range tj.AddedTokens {
			if a.Content == content {
				if err := set(typ, a.ID); err != nil {
					return nil, fmt.Errorf("tokenizer_config.json: %w", err)
				}
				break
			}
		}
	}
	for _, typ := range specialTypes {
		if id, ok := cfg.tokenID(typ + "_token_id"); ok {
			if err := set(typ, id); err != nil {
				return nil, fmt.Errorf("config.json: %w", err)
			}
		}
	}

	var out []kv
	for _, e := range ids {
		if key := specialIDKeys[e.typ]; key != "" {
			out = append(out, kv{key, uint32(e.id)})
		}
	}
	out = append(out, adds...)
	return append(out, template...), nil
}

// chatTemplate returns the chat template metadata: tokenizer_config.json's
// chat_template when the key is there, else chat_template.jinja (with
// additional_chat_templates/*.jinja), else chat_template.json. A list of
// named templates gives tokenizer.chat_template.NAME for each and
// tokenizer.chat_template for the one named "default".
func chatTemplate(tc map[string]any, dir string) ([]kv, error) {
	tmpl, ok := tc["chat_template"]
	if !ok {
		var err error
		if tmpl, err = chatTemplateFiles(dir); err != nil {
			return nil, err
		}
	}
	switch t := tmpl.(type) {
	case string:
		return []kv{{"tokenizer.chat_template", t}}, nil
	case []any:
		var out []kv
		var names []string
		var def *string
		for _, c := range t {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			text, ok := m["template"].(string)
			name = strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return '_'
			}, name)
			if name == "" || !ok {
				continue
			}
			if name == "default" {
				def = &text
				continue
			}
			names = append(names, name)
			out = append(out, kv{"tokenizer.chat_template." + name, text})
		}
		if len(names) > 0 {
			out = append(out, kv{"tokenizer.chat_templates", names})
		}
		if def != nil {
			out = append(out, kv{"tokenizer.chat_template", *def})
		}
		return out, nil
	}
	return nil, nil // absent, null or of another kind: no template, as llama.cpp
}

// chatTemplateFiles reads the chat template from chat_template.jinja or
// chat_template.json in dir; nil when there is neither.
func chatTemplateFiles(dir string) (any, error) {
	jinja, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja"))
	if err == nil {
		extra, _ := filepath.Glob(filepath.Join(dir, "additional_chat_templates", "*.jinja"))
		if len(extra) == 0 {
			return string(jinja), nil
		}
		sort.Strings(extra)
		list := []any{map[string]any{"name": "default", "template": string(jinja)}}
		for _, path := range extra {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			name := strings.TrimSuffix(filepath.Base(path), ".jinja")
			list = append(list, map[string]any{"name": name, "template": string(b)})
		}
		return list, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m, err := readJSONObject(filepath.Join(dir, "chat_template.json"))
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "chat_template.json")); errors.Is(statErr, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return m["chat_template"], nil
}

// truthy reports whether a decoded JSON value is true in Python's sense.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return true
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is missing", filepath.Base(path))
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: bad JSON: %s", filepath.Base(path), jsonError(err))
	}
	return nil
}
