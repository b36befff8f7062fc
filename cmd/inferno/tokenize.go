package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"inferno/gguf"
	"inferno/tokenizer"
)

func tokenizeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tokenize MODEL.gguf TEXT",
		Short: "Print the token ids of TEXT as a JSON array",
		Long: `Tokenize encodes TEXT with the model's tokenizer and prints the ids as one
JSON array. TEXT "-" reads standard input verbatim (a trailing newline is
kept). Special-token text such as <|im_end|> maps to its single id.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := modelPath(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			f, err := gguf.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			tok, err := tokenizer.FromGGUF(f)
			if err != nil {
				return err
			}
			text, err := textArg(args[1])
			if err != nil {
				return err
			}
			ids := tok.Encode(text)
			if ids == nil {
				ids = []int32{}
			}
			b, _ := json.Marshal(ids)
			_, err = fmt.Printf("%s\n", b)
			return err
		},
	}
}

// textArg returns s, or all of standard input when s is "-".
func textArg(s string) (string, error) {
	if s != "-" {
		return s, nil
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	return string(b), nil
}
