// Package model opens a GGUF model file and assembles what generation
// needs from it: the architecture's weights, the tokenizer and the ids that
// end generation.
package model

import (
	"fmt"

	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/tokenizer"
)

// Model is an opened model file.
type Model struct {
	Path      string
	File      *gguf.File
	Qwen3     *qwen3.Model
	Tokenizer *tokenizer.Tokenizer
	// EOG holds the end-of-generation ids: the file's eos token and the
	// Qwen chat terminators <|im_end|> and <|endoftext|> where present.
	EOG map[int32]bool
	// ChatTemplate is tokenizer.chat_template, or "" when absent.
	ChatTemplate string
}

// Open memory-maps and loads the model at path. Close releases it.
func Open(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := load(path, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return m, nil
}

func load(path string, f *gguf.File) (*Model, error) {
	q, err := qwen3.Load(f)
	if err != nil {
		return nil, err
	}
	tok, err := TokenizerFromGGUF(f)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() > q.Config.Vocab {
		return nil, fmt.Errorf("model: %d tokenizer tokens but only %d embedding rows", tok.VocabSize(), q.Config.Vocab)
	}
	m := &Model{Path: path, File: f, Qwen3: q, Tokenizer: tok, EOG: map[int32]bool{}}
	if eos, err := f.Int("tokenizer.ggml.eos_token_id"); err == nil && eos >= 0 && eos < int64(tok.VocabSize()) {
		m.EOG[int32(eos)] = true
	}
	for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
		if id, ok := tok.TokenID(s); ok {
			m.EOG[id] = true
		}
	}
	m.ChatTemplate, _ = f.String("tokenizer.chat_template")
	return m, nil
}

// Close unmaps the file. The model must not be used afterwards.
func (m *Model) Close() error { return m.File.Close() }

// TokenizerFromGGUF builds the tokenizer described by f's tokenizer.ggml.*
// metadata. Only the gpt2 (byte-level BPE) model is supported.
func TokenizerFromGGUF(f *gguf.File) (*tokenizer.Tokenizer, error) {
	kind, err := f.String("tokenizer.ggml.model")
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if kind != "gpt2" {
		return nil, fmt.Errorf("model: tokenizer model %q is not supported (want gpt2, byte-level BPE)", kind)
	}
	var cfg tokenizer.Config
	if cfg.Tokens, err = f.Strings("tokenizer.ggml.tokens"); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if _, ok := f.Value("tokenizer.ggml.token_type"); ok {
		if cfg.Types, err = f.Int32s("tokenizer.ggml.token_type"); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if cfg.Merges, err = f.Strings("tokenizer.ggml.merges"); err != nil {
		return nil, fmt.Errorf("model: byte-level BPE needs its merges: %w", err)
	}
	cfg.Pre, _ = f.String("tokenizer.ggml.pre")
	tok, err := tokenizer.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return tok, nil
}
