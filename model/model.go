// Package model opens a GGUF model file and assembles what generation
// needs from it: the architecture's description and weights (an
// arch.Model, loaded by the architecture's package), the tokenizer and the
// ids that end generation.
package model

import (
	"fmt"

	"inferno/arch"
	"inferno/family"
	"inferno/gguf"
	"inferno/tokenizer"

	// The architectures: each registers its family.
	_ "inferno/model/gemma3"
	_ "inferno/model/gptoss"
	_ "inferno/model/llama"
	_ "inferno/model/mistral3"
	_ "inferno/model/phi3"
	_ "inferno/model/qwen2"
	_ "inferno/model/qwen3"
	_ "inferno/model/qwen3moe"
)

// Model is an opened model file.
type Model struct {
	Path string
	File *gguf.File
	// Family is the file's architecture as registered (package family).
	Family *family.Family
	// Arch is the forward pass and weights, as the backends run them.
	Arch      arch.Model
	Tokenizer *tokenizer.Tokenizer
	// EOG holds the end-of-generation ids: the file's eos token and the
	// family's chat terminators the vocabulary has (family.Chat.EOG).
	EOG map[int32]bool
	// ChatTemplate is tokenizer.chat_template, or where the file has none
	// its family's default (family.Chat.DefaultTemplate), "" if none.
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
	name, err := f.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	fam, ok := family.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("model: unsupported architecture %q (inferno runs %s)", name, family.Names())
	}
	a, err := arch.LoadModel(f, fam.Config)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if vocab := a.Hyper().Vocab; tok.VocabSize() > vocab {
		return nil, fmt.Errorf("model: %d tokenizer tokens but only %d embedding rows", tok.VocabSize(), vocab)
	}
	m := &Model{Path: path, File: f, Family: fam, Arch: a, Tokenizer: tok, EOG: map[int32]bool{}}
	if eos, err := f.Int("tokenizer.ggml.eos_token_id"); err == nil && eos >= 0 && eos < int64(tok.VocabSize()) {
		m.EOG[int32(eos)] = true
	}
	for _, s := range fam.Chat.EOG {
		if id, ok := tok.TokenID(s); ok {
			m.EOG[id] = true
		}
	}
	if m.ChatTemplate, _ = f.String("tokenizer.chat_template"); m.ChatTemplate == "" {
		pre, _ := f.String("tokenizer.ggml.pre")
		m.ChatTemplate = fam.Chat.DefaultTemplate(m.hasToken, pre)
	}
	return m, nil
}

// ReplyFormat returns the format of the model's replies (package parser's
// names): its family's (family.Chat), by the tokens its vocabulary has.
func (m *Model) ReplyFormat() string {
	return m.Family.Chat.ReplyFormat(m.hasToken)
}

// hasToken reports whether the vocabulary has a token of text tok.
func (m *Model) hasToken(tok string) bool {
	_, ok := m.Tokenizer.TokenID(tok)
	return ok
}

// Embedding reports whether the model is an embedding model (its file
// states a pooling type, arch.Config.Pooling): it returns embeddings of
// its inputs (EmbedTokens), not generated text.
func (m *Model) Embedding() bool { return m.Arch.Hyper().Embedding() }

// EmbedTokens returns the ids an embedding model embeds for text: the
// text tokenized (special-token text becomes its id) and, as
// Qwen3-Embedding's model card does, ended with <|endoftext|> (or the
// file's eos token where it has no such token) unless it already ends so.
func (m *Model) EmbedTokens(text string) []int32 {
	ids := m.Tokenizer.Encode(text)
	end, ok := m.Tokenizer.TokenID("<|endoftext|>")
	if !ok {
		eos, err := m.File.Int("tokenizer.ggml.eos_token_id")
		if err != nil || eos < 0 || eos >= int64(m.Tokenizer.VocabSize()) {
			return ids
		}
		end = int32(eos)
	}
	if len(ids) == 0 || ids[len(ids)-1] != end {
		ids = append(ids, end)
	}
	return ids
}

// Close unmaps the file. The model must not be used afterwards.
func (m *Model) Close() error { return m.File.Close() }
