package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"inferno/hub"
	"inferno/model"
)

// offline is the persistent --offline flag: hub references resolve from
// the cache alone.
var offline bool

// addHubFlags registers the flags every command shares for pulling models.
func addHubFlags(root *cobra.Command) {
	root.PersistentFlags().BoolVar(&offline, "offline", false, "never touch the network: hub references (REPO:QUANT) resolve from the cache alone (also HF_HUB_OFFLINE=1)")
}

func pullCmd() *cobra.Command {
	var revision string
	cmd := &cobra.Command{
		Use:   "pull REPO[:QUANT] | REPO FILE",
		Short: "Download a GGUF model from the Hugging Face Hub into its cache",
		Long: `Pull downloads a model from the Hugging Face Hub and prints its local path
as the last line. REPO:QUANT takes the GGUF file whose name ends in that
quantization (case-insensitive, e.g. Qwen/Qwen3-0.6B-GGUF:Q8_0); REPO alone
takes Q4_K_M, else Q8_0, else the first GGUF file; REPO FILE (or
hf://REPO/FILE) takes that file. A model split into parts
(-00001-of-00003.gguf) comes whole, and the path printed is its first part.

Files go to the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
~/.cache/huggingface/hub) in its own layout, so files that huggingface-cli
or llama.cpp fetched are not downloaded again. A broken or interrupted
download continues where it stopped, in this run or the next. A file
enters the cache only once its sha256 matches the hub's.

Environment: HF_TOKEN (sent to the hub as a bearer token, for private and
gated repositories), HF_ENDPOINT (a mirror), HF_HUB_CACHE and HF_HOME,
HF_HUB_OFFLINE=1 (as --offline).

generate, chat, serve, bench, logits and tokenize take REPO:QUANT or
hf://REPO/FILE in place of a model path and pull it first.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := hub.ParseRef(args[0])
			if err != nil {
				return err
			}
			if len(args) == 2 {
				if ref.File != "" || ref.Quant != "" {
					return fmt.Errorf("%s FILE: give either REPO FILE or REPO:QUANT", args[0])
				}
				if ref, err = hub.ParseRef("hf://" + ref.Repo + "/" + args[1]); err != nil {
					return err
				}
			}
			ref.Revision = revision
			ctx, stop := signalContext()
			defer stop()
			paths, err := pull(ctx, ref, true)
			if err != nil {
				return err
			}
			if len(paths) > 1 {
				fmt.Fprintf(os.Stderr, "%d parts:\n  %s\n", len(paths), strings.Join(paths, "\n  "))
			}
			fmt.Println(paths[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&revision, "revision", "main", "branch, tag or commit to pull from")
	return cmd
}

// modelPath turns a command's model argument into a local GGUF file: a
// path stays as it is; a hub reference (REPO:QUANT, hf://REPO/FILE) that
// names no local file is pulled into the cache unless already there.
func modelPath(ctx context.Context, arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil || !hub.LooksLikeRef(arg) {
		return arg, nil
	}
	ref, err := hub.ParseRef(arg)
	if err != nil {
		return "", err
	}
	paths, err := pull(ctx, ref, false)
	if err != nil {
		return "", err
	}
	return paths[0], nil
}

// openModel opens the model arg names: a file, or a reference pulled on
// first use (modelPath).
func openModel(ctx context.Context, arg string) (*model.Model, error) {
	path, err := modelPath(ctx, arg)
	if err != nil {
		return nil, err
	}
	return model.Open(path)
}

// pull resolves a reference and fetches its files, with a progress bar
// when standard error is a terminal. A model in parts is refused before
// anything is fetched unless split allows it (the pull command): the
// model loader opens GGUF files in one piece.
func pull(ctx context.Context, ref hub.Ref, split bool) ([]string, error) {
	c, err := hub.FromEnv()
	if err != nil {
		return nil, err
	}
	c.Offline = c.Offline || offline
	c.Info = os.Stderr
	var bar *progressbar.ProgressBar
	var barFile string
	if term.IsTerminal(int(os.Stderr.Fd())) {
		c.Progress = func(file string, have, size int64) {
			if bar == nil || barFile != file {
				barFile = file
				bar = newBar(file, size)
			}
			bar.Set64(have)
			if have == size {
				bar.Finish()
			}
		}
	}
	snap, err := c.Resolve(ctx, ref)
	if err != nil {
		return nil, pullStopped(ctx, err)
	}
	if snap.Note != "" {
		fmt.Fprintln(os.Stderr, snap.Note)
	}
	if len(snap.Files) > 1 && !split {
		return nil, fmt.Errorf("%s is split into %d files (%s, ...); inferno opens a GGUF file in one piece: pull it with \"inferno pull %s\", merge the parts with llama-gguf-split --merge and give the merged file, or choose another quantization",
			ref, len(snap.Files), snap.Files[0], ref)
	}
	paths, err := c.Fetch(ctx, snap)
	if bar != nil && !bar.IsFinished() {
		bar.Exit()
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return nil, pullStopped(ctx, err)
	}
	return paths, nil
}

// pullStopped turns the end of a pull stopped by a signal into the
// command's interrupted error, saying that the next run continues it.
func pullStopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "inferno: the download stopped; the same command continues it")
		return signalled(ctx)
	}
	return err
}
