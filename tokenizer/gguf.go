package tokenizer

import (
	"fmt"

	"inferno/gguf"
)

// GGUF metadata keys of the tokenizer, as llama.cpp's converter writes them.
const (
	keyModel          = "tokenizer.ggml.model"
	keyPre            = "tokenizer.ggml.pre"
	keyTokens         = "tokenizer.ggml.tokens"
	keyTypes          = "tokenizer.ggml.token_type"
	keyMerges         = "tokenizer.ggml.merges"
	keyScores         = "tokenizer.ggml.scores"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
)

// FromGGUF builds the tokenizer described by the tokenizer.ggml.* metadata
// of f: byte-level BPE (tokenizer.ggml.model "gpt2": tokens, token types,
// merges and the pre-tokenizer) or SentencePiece BPE ("llama": tokens,
// token types, scores and add_space_prefix). Where a key llama.cpp treats
// as optional is absent, FromGGUF takes llama.cpp's default: add_bos_token
// is set for SentencePiece and for the pre-tokenizers that llama.cpp adds
// BOS for (Llama 3's, tekken), add_space_prefix for SentencePiece. Without
// tokenizer.ggml.bos_token_id no BOS is added.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	var cfg Config
	var err error
	if cfg.Model, err = f.String(keyModel); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if cfg.Tokens, err = f.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if _, ok := f.Value(keyTypes); ok {
		if cfg.Types, err = f.Int32s(keyTypes); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	addBOS := false
	switch cfg.Model {
	case ModelByteLevel:
		if cfg.Merges, err = f.Strings(keyMerges); err != nil {
			return nil, fmt.Errorf("tokenizer: byte-level BPE needs its merges: %w", err)
		}
		if _, ok := f.Value(keyPre); ok {
			if cfg.Pre, err = f.String(keyPre); err != nil {
				return nil, fmt.Errorf("tokenizer: %w", err)
			}
		}
		if p, ok := preTokenizers[cfg.Pre]; ok {
			addBOS = p.addBOS
		}
	case ModelSPM:
		if cfg.Scores, err = float32s(f, keyScores); err != nil {
			return nil, fmt.Errorf("tokenizer: SentencePiece BPE needs its scores: %w", err)
		}
		cfg.AddSpacePrefix = true
		if err := optionalBool(f, keyAddSpacePrefix, &cfg.AddSpacePrefix); err != nil {
			return nil, err
		}
		addBOS = true
	default:
		return nil, fmt.Errorf("tokenizer: tokenizer model %q is not supported (want %q, byte-level BPE, or %q, SentencePiece BPE)", cfg.Model, ModelByteLevel, ModelSPM)
	}
	if err := optionalBool(f, keyAddBOS, &addBOS); err != nil {
		return nil, err
	}
	if _, ok := f.Value(keyBOS); ok && addBOS {
		bos, err := f.Int(keyBOS)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if bos < 0 || bos >= int64(len(cfg.Tokens)) {
			return nil, fmt.Errorf("tokenizer: %s %d is not a token (the vocabulary has %d)", keyBOS, bos, len(cfg.Tokens))
		}
		cfg.BOS, cfg.AddBOS = int32(bos), true
	}
	return New(cfg)
}

// optionalBool sets *b to the boolean value of key if f has it.
func optionalBool(f *gguf.File, key string, b *bool) error {
	if _, ok := f.Value(key); !ok {
		return nil
	}
	v, err := f.Bool(key)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	*b = v
	return nil
}

// float32s returns the float32 array value of key.
func float32s(f *gguf.File, key string) ([]float32, error) {
	v, ok := f.Value(key)
	if !ok {
		return nil, fmt.Errorf("gguf: %w %q", gguf.ErrMissingKey, key)
	}
	if a, ok := v.AsArray(); ok {
		if s, ok := a.Values.([]float32); ok {
			return s, nil
		}
		return nil, fmt.Errorf("gguf: metadata %q is an array of %s, want float32", key, a.Elem)
	}
	return nil, fmt.Errorf("gguf: metadata %q is a %s, want an array of float32", key, v.Type)
}
