package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"inferno/outfile"
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
then prints the five largest with their ids. FILE is written under a
temporary name in its folder (created if needed) and renamed when
complete; a folder or a device as FILE is refused before the model runs,
and a symbolic link is written through.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseIDs(tokens)
			if err != nil {
				return err
			}
			// The output is made first, so that a folder or a device
			// is refused before the model runs.
			file, err := outfile.Create(out)
			if err != nil {
				return err
			}
			defer file.Abort() // does nothing once committed
			m, err := openModel(cmd.Context(), args[0])
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
			if _, err := file.Write(buf); err != nil {
				return err
			}
			if err := file.Commit(); err != nil {
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
	rf.prompts = true
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
