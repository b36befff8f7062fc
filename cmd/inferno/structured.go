package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"inferno/engine"
	"inferno/model"
	"inferno/structured"
)

// constraintFlags are generate's and chat's structured-output flags.
type constraintFlags struct {
	jsonSchema, grammar string

	spec *structured.Spec // read by load
	c    *structured.Compiler
}

func (f *constraintFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.jsonSchema, "json-schema", "", "constrain the reply to JSON valid against the JSON schema in this file")
	fl.StringVar(&f.grammar, "grammar", "", "constrain the reply to the GBNF grammar (llama.cpp's syntax, rule root) in this file")
}

// load reads the files the flags name and checks that the constraint
// compiles against m (a model of vocab logits), so that a bad schema or
// grammar is reported before generation starts.
func (f *constraintFlags) load(m *model.Model, vocab int) error {
	var flag, path string
	var kind structured.Kind
	switch {
	case f.jsonSchema != "" && f.grammar != "":
		return fmt.Errorf("--json-schema and --grammar exclude each other")
	case f.jsonSchema != "":
		flag, path, kind = "--json-schema", f.jsonSchema, structured.JSONSchema
	case f.grammar != "":
		flag, path, kind = "--grammar", f.grammar, structured.GBNF
	default:
		return nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	f.spec = &structured.Spec{Kind: kind, Text: string(text)}
	f.c = structured.NewCompiler(m.Tokenizer, vocab, m.EOG)
	if _, err := f.c.Compile(context.Background(), f.spec, false); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return nil
}

// constraint returns a fresh constraint for a reply to prompt (nil when no
// flag asks for one). chat says whether prompt was rendered with the chat
// template, after which a reasoning model may think first.
func (f *constraintFlags) constraint(m *model.Model, prompt string, chat bool) (engine.Constraint, error) {
	if f.spec == nil {
		return nil, nil
	}
	thinking := structured.NoThinking
	if _, ok := m.Tokenizer.TokenID("</think>"); ok && chat {
		thinking = structured.ThinkingAfter(prompt)
	}
	c, err := f.c.New(context.Background(), f.spec, thinking)
	if err != nil {
		return nil, err
	}
	return c, nil
}
