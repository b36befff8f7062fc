package convert

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// SentencePiece piece types (sentencepiece_model.proto's
// SentencePiece.Type), which are also GGUF's token types but for
// user-defined pieces, which llama.cpp's converter writes as normal ones.
const (
	spmNormal      = 1
	spmUnknown     = 2
	spmControl     = 3
	spmUserDefined = 4
	spmUnused      = 5
	spmByte        = 6
)

// spmPiece is one piece of a SentencePiece model.
type spmPiece struct {
	piece string
	score float32
	typ   int32
}

// parseSentencePiece reads the pieces of a SentencePiece model
// (tokenizer.model, a serialized ModelProto): field 1, each a
// SentencePiece message of piece (1, a string), score (2, a float) and
// type (3, an enum, NORMAL when absent). The other fields (trainer and
// normalizer specs) are skipped. It fails, as SentencePiece's loader
// does, on a model without pieces, an empty piece or a piece defined
// twice, and on malformed protobuf.
func parseSentencePiece(data []byte) ([]spmPiece, error) {
	var pieces []spmPiece
	seen := map[string]bool{}
	err := protoFields(data, func(field int, wire int, v uint64, b []byte) error {
		if field != 1 {
			return nil
		}
		if wire != 2 {
			return fmt.Errorf("piece %d: wire type %d, want a message", len(pieces), wire)
		}
		p := spmPiece{typ: spmNormal}
		err := protoFields(b, func(field int, wire int, v uint64, b []byte) error {
			switch {
			case field == 1 && wire == 2:
				if !utf8.Valid(b) {
					return fmt.Errorf("piece %q is not UTF-8", b)
				}
				p.piece = string(b)
			case field == 2 && wire == 5:
				p.score = math.Float32frombits(uint32(v))
			case field == 3 && wire == 0:
				if v < spmNormal || v > spmByte {
					return fmt.Errorf("type %d is not a SentencePiece type (1 to 6)", v)
				}
				p.typ = int32(v)
			case field <= 3:
				return fmt.Errorf("field %d has wire type %d", field, wire)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("piece %d: %w", len(pieces), err)
		}
		switch {
		case p.piece == "":
			return fmt.Errorf("piece %d is empty", len(pieces))
		case seen[p.piece]:
			return fmt.Errorf("piece %d, %q, is defined twice", len(pieces), p.piece)
		}
		seen[p.piece] = true
		pieces = append(pieces, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(pieces) == 0 {
		return nil, errors.New("the model has no pieces")
	}
	return pieces, nil
}

// protoFields calls f for each field of the protobuf message data, in
// order: its number, wire type and value (v for varints and fixed-size
// values, b for length-delimited ones). Groups are refused.
func protoFields(data []byte, f func(field, wire int, v uint64, b []byte) error) error {
	for len(data) > 0 {
		key, n := binary.Uvarint(data)
		if n <= 0 {
			return errors.New("malformed field key")
		}
		data = data[n:]
		field, wire := key>>3, int(key&7)
		if field == 0 || field > 1<<29-1 {
			return fmt.Errorf("field number %d", field)
		}
		var v uint64
		var b []byte
		switch wire {
		case 0:
			if v, n = binary.Uvarint(data); n <= 0 {
				return fmt.Errorf("field %d: malformed varint", field)
			}
			data = data[n:]
		case 1:
			if len(data) < 8 {
				return fmt.Errorf("field %d: truncated", field)
			}
			v, data = binary.LittleEndian.Uint64(data), data[8:]
		case 5:
			if len(data) < 4 {
				return fmt.Errorf("field %d: truncated", field)
			}
			v, data = uint64(binary.LittleEndian.Uint32(data)), data[4:]
		case 2:
			l, n := binary.Uvarint(data)
			if n <= 0 || l > uint64(len(data)-n) {
				return fmt.Errorf("field %d: length past the end of the message", field)
			}
			b, data = data[n:n+int(l)], data[n+int(l):]
		default:
			return fmt.Errorf("field %d: wire type %d is not supported", field, wire)
		}
		if err := f(int(field), wire, v, b); err != nil {
			return err
		}
	}
	return nil
}

// spmVocab is a SentencePiece vocabulary as llama.cpp writes it: a token,
// score and type an id.
type spmVocab struct {
	tokens []string
	scores []float32
	types  []int32
}

// newSPMVocab returns n "[PADi]" tokens of type unused and score -10000,
// as llama.cpp's _create_vocab_sentencepiece starts.
func newSPMVocab(n int) *spmVocab {
	v := &spmVocab{tokens: make([]string, n), scores: make([]float32, n), types: make([]int32, n)}
	for i := range n {
		v.tokens[i], v.scores[i], v.types[i] = fmt.Sprintf("[PAD%d]", i), -10000, spmUnused
	}
	return v
}

// sentencePieceVocab builds the vocabulary of dir/tokenizer.model for a
// model of n tokens (config.json's vocab_size) as llama.cpp's
// _create_vocab_sentencepiece does: the pieces (user-defined ones as
// normal tokens), then added_tokens.json's tokens as user-defined ones,
// then tokenizer_config.json's added_tokens_decoder (control tokens when
// special or looking special, else user-defined with U+2581 as spaces),
// these last two with score -1000. Ids from n on are ignored.
func sentencePieceVocab(dir string, n int, tc map[string]any) (*spmVocab, error) {
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.model"))
	if err != nil {
		return nil, err
	}
	pieces, err := parseSentencePiece(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.model: %w", err)
	}
	v := newSPMVocab(n)
	for id, p := range pieces[:min(len(pieces), n)] {
		typ := p.typ
		if typ == spmUserDefined {
			typ = spmNormal
		}
		v.tokens[id], v.scores[id], v.types[id] = p.piece, p.score, typ
	}
	if err := v.addedTokensFile(dir); err != nil {
		return nil, err
	}
	if err := v.addedTokensDecoder(tc); err != nil {
		return nil, err
	}
	return v, nil
}

// addedTokensFile applies added_tokens.json ({"text": id, ...}), if the
// folder has one.
func (v *spmVocab) addedTokensFile(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "added_tokens.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("added_tokens.json: bad JSON: %s", jsonError(err))
	}
	texts := make([]string, 0, len(m))
	for text := range m {
		texts = append(texts, text)
	}
	sort.Strings(texts)
	for _, text := range texts {
		id, ok := jsonInt(m[text])
		if !ok || id < 0 {
			return fmt.Errorf("added_tokens.json: token %q has id %s, not a token id", text, jsonText(m[text]))
		}
		if id >= int64(len(v.tokens)) {
			continue
		}
		v.tokens[id], v.scores[id], v.types[id] = text, -1000, spmUserDefined
	}
	return nil
}

// addedTokensDecoder applies tokenizer_config.json's added_tokens_decoder.
func (v *spmVocab) addedTokensDecoder(tc map[string]any) error {
	dec, _ := tc["added_tokens_decoder"].(map[string]any)
	keys := make([]string, 0, len(dec))
	for k := range dec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var id int64
		if _, err := fmt.Sscan(k, &id); err != nil || id < 0 {
			return fmt.Errorf("tokenizer_config.json: added_tokens_decoder key %q is not a token id", k)
		}
		e, _ := dec[k].(map[string]any)
		content, ok := e["content"].(string)
		if !ok {
			return fmt.Errorf("tokenizer_config.json: added token %s has no content", k)
		}
		if id >= int64(len(v.tokens)) {
			continue
		}
		typ := int32(spmControl)
		if special, _ := e["special"].(bool); !special && !looksSpecial(content) {
			content = strings.ReplaceAll(content, "\u2581", " ")
			typ = spmUserDefined
		}
		v.tokens[id], v.scores[id], v.types[id] = content, -1000, typ
	}
	return nil
}

// byteToken matches SentencePiece's byte pieces, <0x00> to <0xFF>.
var byteToken = regexp.MustCompile(`^<0x[0-9A-Fa-f]{2}>$`)

// jsonSPMVocab builds a SentencePiece vocabulary of n tokens from a
// tokenizer.json that holds one as a BPE model with byte fallback (the
// form transformers gives SentencePiece tokenizers), for a folder without
// tokenizer.model. llama.cpp's converter has no such path for Gemma (its
// fallback, a byte-level vocabulary, does not know Gemma's
// pre-tokenizer), and its LlamaHfVocab gives every token the score
// -1000, losing the merge order; here each token's score is minus the
// rank of the first merge that makes it (-Inf for tokens no merge
// makes), which orders merges as the SentencePiece scores they were made
// from. <0xXX> tokens are byte tokens, the model's unk_token unknown, and
// the added tokens (tokenizer.json's, then those only
// tokenizer_config.json's added_tokens_decoder lists) are control or
// user-defined tokens of score -1000, as for tokenizer.model.
func jsonSPMVocab(tj *tokenizerJSON, tc map[string]any, n int) (*spmVocab, error) {
	v := newSPMVocab(n)
	for text, id := range tj.Model.Vocab {
		if id < 0 || id >= int64(n) {
			return nil, fmt.Errorf("tokenizer.json: token %q has id %d, outside the vocabulary of %d tokens (config.json vocab_size)", text, id, n)
		}
		typ := int32(spmNormal)
		switch {
		case text == tj.Model.UnkToken:
			typ = spmUnknown
		case byteToken.MatchString(text):
			typ = spmByte
		}
		v.tokens[id], v.scores[id], v.types[id] = text, float32(math.Inf(-1)), typ
	}
	merges, err := mergeList(tj.Model.Merges)
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(merges))
	for rank, m := range merges {
		left, right, ok := strings.Cut(m, " ")
		if !ok {
			return nil, fmt.Errorf("tokenizer.json: merge %d, %q, is not two tokens", rank, m)
		}
		id, ok := tj.Model.Vocab[left+right]
		if !ok {
			return nil, fmt.Errorf("tokenizer.json: merge %d makes %q, which is not in the vocabulary", rank, left+right)
		}
		if !seen[id] {
			seen[id] = true
			v.scores[id] = -float32(rank)
		}
	}
	for _, a := range tj.AddedTokens {
		if a.ID < 0 || a.ID >= int64(n) {
			continue
		}
		typ, text := int32(spmControl), a.Content
		if !a.Special && !looksSpecial(text) {
			text, typ = strings.ReplaceAll(text, "\u2581", " "), spmUserDefined
		}
		v.tokens[a.ID], v.scores[a.ID], v.types[a.ID] = text, -1000, typ
	}
	if err := v.addedTokensDecoder(withoutAdded(tc, tj)); err != nil {
		return nil, err
	}
	return v, nil
}

// withoutAdded returns tc with only the entries of added_tokens_decoder
// whose ids tokenizer.json's added_tokens do not have.
func withoutAdded(tc map[string]any, tj *tokenizerJSON) map[string]any {
	dec, _ := tc["added_tokens_decoder"].(map[string]any)
	out := map[string]any{}
	have := map[string]bool{}
	for _, a := range tj.AddedTokens {
		have[fmt.Sprint(a.ID)] = true
	}
	for k, e := range dec {
		if !have[k] {
			out[k] = e
		}
	}
	return map[string]any{"added_tokens_decoder": out}
}
