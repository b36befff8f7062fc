package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"inferno/family"
	"inferno/tokenizer"
)

// Token types of tokenizer.ggml.token_type, as llama.cpp's converter
// assigns them.
const (
	tokenNormal      = 1
	tokenControl     = 3
	tokenUserDefined = 4
	tokenUnused      = 5
)

// tokenizerJSON is the part of tokenizer.json the converter reads.
type tokenizerJSON struct {
	AddedTokens   []addedToken   `json:"added_tokens"`
	Normalizer    map[string]any `json:"normalizer"`
	PreTokenizer  map[string]any `json:"pre_tokenizer"`
	PostProcessor map[string]any `json:"post_processor"`
	Model         struct {
		Type         string            `json:"type"`
		Vocab        map[string]int64  `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		UnkToken     string            `json:"unk_token"`
		ByteFallback bool              `json:"byte_fallback"`
		IgnoreMerges bool              `json:"ignore_merges"`
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
// dir as llama.cpp's converter does: a SentencePiece vocabulary from
// tokenizer.model for the checkpoints that take one
// (family.Checkpoint.SentencePiece; sentencePieceMetadata), else a
// byte-level BPE (gpt2) one from tokenizer.json (its _set_vocab_gpt2,
// get_vocab_base and SpecialVocab): the token list padded to the
// configured vocabulary size with "[PADn]" tokens of type unused, token
// types, merges, special token ids, add_*_token flags and the chat
// template. A SentencePiece checkpoint whose folder has only a
// tokenizer.json of SentencePiece's kind (byte fallback) gets its
// vocabulary from it (jsonSPMVocab). It sets cfg.realVocab.
func tokenizerMetadata(dir string, cfg *Config) ([]kv, error) {
	a := cfg.arch
	var out []kv
	var err error
	_, statErr := os.Stat(filepath.Join(dir, "tokenizer.model"))
	switch {
	case a.SentencePiece && statErr == nil:
		out, err = sentencePieceMetadata(dir, cfg, nil)
	default:
		out, err = bpeMetadata(dir, cfg)
	}
	if err != nil {
		return nil, err
	}
	switch a.SpacePrefix {
	case family.SpacePrefixOff:
		if m, _ := kvString(out, "tokenizer.ggml.model"); m == "llama" {
			out = append(out, kv{"tokenizer.ggml.add_space_prefix", false})
		}
	case family.SpacePrefixConfig:
		tc, err := readJSONObject(filepath.Join(dir, "tokenizer_config.json"))
		if err == nil {
			if b, ok := tc["add_prefix_space"].(bool); ok {
				out = append(out, kv{"tokenizer.ggml.add_space_prefix", b})
			}
		}
	}
	return out, nil
}

// kvString returns the string value of key in kvs.
func kvString(kvs []kv, key string) (string, bool) {
	for _, p := range kvs {
		if p.key == key {
			s, ok := p.val.(string)
			return s, ok
		}
	}
	return "", false
}

// sentencePieceMetadata returns the metadata of a SentencePiece
// vocabulary (tokenizer.ggml.model "llama", pre "default", tokens, scores
// and types) and its special tokens: tokenizer.model's, or tj's when not
// nil (a tokenizer.json of SentencePiece's kind).
func sentencePieceMetadata(dir string, cfg *Config, tj *tokenizerJSON) ([]kv, error) {
	tc, err := readJSONObject(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "tokenizer_config.json")); !errors.Is(statErr, fs.ErrNotExist) {
			return nil, err
		}
		tc = map[string]any{}
	}
	var v *spmVocab
	if tj != nil {
		if v, err = jsonSPMVocab(tj, tc, cfg.VocabSize); err != nil {
			return nil, err
		}
		cfg.realVocab = len(tj.Model.Vocab) + len(tj.AddedTokens)
	} else {
		if v, err = sentencePieceVocab(dir, cfg.VocabSize, tc); err != nil {
			return nil, err
		}
		cfg.realVocab = len(v.tokens)
		// SpecialVocab reads the special tokens' ids from tokenizer.json
		// where there is one.
		tj = &tokenizerJSON{}
		if err := readJSON(filepath.Join(dir, "tokenizer.json"), tj); err != nil {
			if _, statErr := os.Stat(filepath.Join(dir, "tokenizer.json")); !errors.Is(statErr, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	out := []kv{
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.pre", "default"},
		{"tokenizer.ggml.tokens", v.tokens},
		{"tokenizer.ggml.scores", v.scores},
		{"tokenizer.ggml.token_type", v.types},
	}
	special, err := specialVocab(tj, tc, cfg, dir)
	if err != nil {
		return nil, err
	}
	return append(out, special...), nil
}

// bpeMetadata returns the metadata of tokenizer.json's byte-level BPE
// vocabulary, or of its SentencePiece one for a SentencePiece checkpoint.
func bpeMetadata(dir string, cfg *Config) ([]kv, error) {
	var tj tokenizerJSON
	if err := readJSON(filepath.Join(dir, "tokenizer.json"), &tj); err != nil {
		return nil, err
	}
	if cfg.arch.SentencePiece && tj.Model.Type == "BPE" && tj.Model.ByteFallback {
		return sentencePieceMetadata(dir, cfg, &tj)
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
	pre, err := preTokenizerName(&tj)
	if err != nil {
		return nil, err
	}
	if alias, ok := cfg.arch.Pre[pre]; ok {
		pre = alias
	}
	cfg.realVocab = len(tj.Model.Vocab) + len(tj.AddedTokens)

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

// preTokenizerName returns the tokenizer.ggml.pre name of a byte-level
// BPE tokenizer.json whose pre-tokenizer splits text by one regular
// expression and maps it to bytes (a Split with that pattern, alone or in
// a Sequence with ByteLevel steps), with no normalizer or NFC, as package
// tokenizer names it (tokenizer.PreTokenizerName).
func preTokenizerName(tj *tokenizerJSON) (string, error) {
	nfc := false
	switch n := tj.Normalizer; {
	case n == nil:
	case n["type"] == "NFC":
		nfc = true
	default:
		return "", fmt.Errorf("tokenizer.json: normalizer %s is not supported (want none or NFC)", jsonText(n["type"]))
	}
	p := tj.PreTokenizer
	steps := []any{p}
	if p["type"] == "Sequence" {
		steps, _ = p["pretokenizers"].([]any)
	}
	regex, byteLevel := "", false
	for _, s := range steps {
		m, _ := s.(map[string]any)
		switch m["type"] {
		case "Split":
			pat, _ := m["pattern"].(map[string]any)
			re, ok := pat["Regex"].(string)
			if !ok || regex != "" {
				return "", errPre
			}
			regex = re
		case "ByteLevel":
			if m["use_regex"] == true {
				return "", errPre
			}
			byteLevel = true
		default:
			return "", errPre
		}
	}
	name := tokenizer.PreTokenizerName(regex, nfc, tj.Model.IgnoreMerges)
	if name == "" || !byteLevel {
		return "", errPre
	}
	return name, nil
}

// errPre reports a pre-tokenizer of tokenizer.json that neither package
// tokenizer nor llama.cpp implements.
var errPre = fmt.Errorf("tokenizer.json: the pre-tokenizer is not a byte-level split that inferno and llama.cpp implement (tokenizer.ggml.pre %s)",
	strings.Join(quoted(tokenizer.PreTokenizers()), ", "))

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
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
	setAdd := func(typ string, b bool) {
		key := addKeys[typ]
		if key == "" {
			return
		}
		for i := range adds {
			if adds[i].key == key {
				adds[i].val = b
				return
			}
		}
		adds = append(adds, kv{key, b})
	}
	templateAdds(tj, tc, setAdd)
	for _, typ := range specialTypes {
		if b, ok := tc["add_"+typ+"_token"].(bool); ok {
			setAdd(typ, b)
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

// templateAdds reads, as llama.cpp's SpecialVocab does, whether the
// tokenizer adds a beginning, end or separator token from tokenizer.json's
// post-processor, a TemplateProcessing (alone or in a Sequence): a
// single-sequence template that starts with a special token adds bos
// when that token is tokenizer_config.json's bos_token (or cls_token),
// one that ends with one adds eos when it is the eos_token; the pair
// template between its sequences A and B, past those two tokens, adds sep
// when a token there is the sep_token or eos_token (which is then the sep
// token if there is none). (llama.cpp also makes
// a single template's last token the eos token, the old one an eot token,
// when they differ; that is not done here.)
func templateAdds(tj *tokenizerJSON, tc map[string]any, set func(typ string, b bool)) {
	pp := tj.PostProcessor
	if pp == nil {
		return
	}
	procs := []any{pp}
	if l, ok := pp["processors"].([]any); ok {
		procs = l
	}
	step := func(s any, kind string) string {
		m, _ := s.(map[string]any)
		st, _ := m[kind].(map[string]any)
		id, _ := st["id"].(string)
		return id
	}
	special := func(s any) string { return step(s, "SpecialToken") }
	for _, p := range procs {
		m, _ := p.(map[string]any)
		if m["type"] != "TemplateProcessing" {
			continue
		}
		bos, _ := tc["bos_token"].(string)
		cls, _ := tc["cls_token"].(string)
		eos, _ := tc["eos_token"].(string)
		sep, _ := tc["sep_token"].(string)
		single, _ := m["single"].([]any)
		first, last := "", ""
		if len(single) > 1 {
			if first = special(single[0]); first != "" {
				if len(tc) == 0 {
					bos = first
				}
				set("bos", first == bos || first == cls)
			}
			if last = special(single[len(single)-1]); last != "" {
				if len(tc) == 0 {
					eos = last
				}
				if last == eos {
					set("eos", true)
				}
			}
		}
		pair, _ := m["pair"].([]any)
		if len(pair) == 0 {
			continue
		}
		if first != "" && special(pair[0]) == first {
			pair = pair[1:]
		}
		if last != "" && len(pair) > 0 && special(pair[len(pair)-1]) == last {
			pair = pair[:len(pair)-1]
		}
		if len(pair) < 3 || step(pair[0], "Sequence") != "A" || step(pair[len(pair)-1], "Sequence") != "B" {
			continue
		}
		mid := pair[1 : len(pair)-1]
		add := false
		if e := special(mid[0]); e != "" && (e == sep || e == eos) && last == "" {
			add = true
		}
		if len(mid) == 2 {
			if e := special(mid[1]); e != "" && (e == sep || e == eos) {
				add = true
			}
		}
		set("sep", add)
		if add && sep == "" && len(tc) > 0 {
			tc["sep_token"] = eos
		}
	}
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
