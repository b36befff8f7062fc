package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"inferno/model"
)

func logitsCmd() *cobra.Command {
	var (
		rf     runnerFlags
		tokens string
		out    string
	)
	cmd := &cobra.Command{
		Use:   "logits MODEL.gguf --tokens 1,2,3 --out FILE",
		Short: "Write the last position's logits for a list of token ids",
		Long: `Logits runs the token ids through the model and writes the last position's
logits to FILE as little-endian float32 (one value per vocabulary entry),
then prints the five largest with their ids.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseIDs(tokens)
			if err != nil {
				return err
			}
			m, err := model.Open(args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			r, b, err := rf.newRunner(m)
			if err != nil {
				return err
			}
			defer b.Close()
			defer r.Close()
			if err := r.Forward(ids); err != nil {
				return err
			}
			logits, err := r.Logits()
			if err != nil {
				return err
			}
			buf := make([]byte, 4*len(logits))
			for i, v := range logits {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			if err := writeAtomic(out, buf); err != nil {
				return err
			}
			order := make([]int, len(logits))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
			fmt.Printf("wrote %d logits to %s (backend %s)\ntop 5:\n", len(logits), out, r.Backend())
			for _, id := range order[:min(5, len(order))] {
				fmt.Printf("  %6d  %10.5f  %q\n", id, logits[id], m.Tokenizer.TokenText(int32(id)))
			}
			return rf.reportTrace(os.Stderr, r, b)
		},
	}
	cmd.Flags().StringVar(&tokens, "tokens", "", "comma-separated token ids (required)")
	cmd.Flags().StringVar(&out, "out", "", "file to write the logits to (required)")
	cmd.MarkFlagRequired("tokens")
	cmd.MarkFlagRequired("out")
	rf.register(cmd)
	return cmd
}

// parseIDs parses "1,2,3" into token ids.
func parseIDs(s string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--tokens: %q is not a token id", f)
		}
		ids = append(ids, int32(n))
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("--tokens: no token ids given")
	}
	return ids, nil
}

// writeAtomic writes data to path through a temporary file in the same
// folder, renamed into place once complete, so that a reader never sees a
// partial file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
