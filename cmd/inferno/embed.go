package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/arch"
	"inferno/engine"
	"inferno/model"
	"inferno/placement"
	"inferno/scheduler"
	"inferno/server"
)

func embedCmd() *cobra.Command {
	var (
		rf          runnerFlags
		dims        int
		instruct    string
		format      string
		parallel    int
		batchTokens int
		pooling     string
	)
	cmd := &cobra.Command{
		Use:   "embed MODEL.gguf TEXT...",
		Short: "Print the embeddings of texts as JSON (embedding models such as Qwen3-Embedding)",
		Long: `Embed runs each TEXT through an embedding model (a GGUF file that states a
pooling type, such as Qwen3-Embedding's, or "inferno synth --embedding")
and prints one JSON object, the shape of OpenAI's /v1/embeddings answer
(--pooling last runs a file that states no pooling type as one):

  {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [...]}, ...],
   "model": "NAME", "usage": {"prompt_tokens": N, "total_tokens": N}}

with the embeddings in the order of the texts. An embedding is the final
normed hidden state of the text's last token (the text ends with
<|endoftext|>, which is appended), L2-normalized; --dimensions keeps its
first N values and normalizes them again. TEXT "-" reads standard input.

Qwen3-Embedding is instruction-aware: its model card writes a query as
"Instruct: {task}\nQuery:{query}" and a document as it is. --instruct TASK
writes every TEXT so, e.g.
  --instruct 'Given a web search query, retrieve relevant passages that answer the query'
(embed the documents without it).

The texts run as prefill-only sequences of the server's scheduler, up to
--parallel at once in passes of --batch-tokens tokens. How long that took
is printed to standard error.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "float" && format != "base64" {
				return fmt.Errorf("--encoding-format %q: want float or base64", format)
			}
			if parallel < 1 || batchTokens < parallel {
				return fmt.Errorf("--parallel %d and --batch-tokens %d: want at least 1 sequence, and a pass of at least --parallel tokens", parallel, batchTokens)
			}
			m, err := openModel(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer m.Close()
			path := m.Path
			if err := setPooling(m, pooling); err != nil {
				return err
			}
			c := m.Arch.Hyper()
			if !m.Embedding() {
				return fmt.Errorf("%s is not an embedding model (its file has no %s.pooling_type): inferno embed runs models such as Qwen3-Embedding", path, c.Arch)
			}
			if m.Rank() {
				return fmt.Errorf("%s is a reranker (rank pooling): serve it and use /v1/rerank", path)
			}
			if dims == 0 {
				dims = c.Hidden
			}
			if dims < 1 || dims > c.Hidden {
				return fmt.Errorf("--dimensions %d: want 1 to the model's %d", dims, c.Hidden)
			}
			inputs := make([][]int32, len(args)-1)
			for i, a := range args[1:] {
				text, err := textArg(a)
				if err != nil {
					return err
				}
				if text == "" {
					return fmt.Errorf("text %d is empty", i+1)
				}
				if instruct != "" {
					text = "Instruct: " + instruct + "\nQuery:" + text
				}
				inputs[i] = m.EmbedTokens(text)
			}
			b, err := rf.open(m)
			if err != nil {
				return err
			}
			defer b.Close()
			par := min(parallel, len(inputs))
			br, err := b.NewBatchRunner(placement.BatchConfig{Sequences: par, Contiguous: rf.kv == "basic"})
			if err != nil {
				return err
			}
			defer br.Close()
			if mb, ok := br.(interface{ MaxBatch() int }); ok {
				batchTokens = min(batchTokens, mb.MaxBatch())
			}
			sched, err := scheduler.NewBatcher(br, scheduler.Config{Parallel: par, BatchTokens: max(batchTokens, par), Queue: len(inputs)})
			if err != nil {
				return err
			}
			defer sched.Close()
			ctx := cmd.Context()
			start := time.Now()
			streams := make([]*scheduler.Stream, len(inputs))
			for i, ids := range inputs {
				if streams[i], err = sched.Submit(ctx, engine.Request{Prompt: ids, Embed: true}); err != nil {
					return fmt.Errorf("text %d: %w", i+1, err)
				}
			}
			out := server.EmbeddingList{Object: "list", Data: make([]server.Embedding, len(inputs)), Model: strings.TrimSuffix(filepath.Base(path), ".gguf")}
			for i, st := range streams {
				v, err := lastEmbedding(cmd, st)
				if err != nil {
					return fmt.Errorf("text %d: %w", i+1, err)
				}
				if dims < len(v) {
					if v, err = engine.Normalize(v[:dims]); err != nil {
						return fmt.Errorf("text %d: %w", i+1, err)
					}
				}
				out.Data[i] = server.NewEmbedding(i, v, format)
				out.Usage.PromptTokens += len(inputs[i])
			}
			took := time.Since(start)
			out.Usage.TotalTokens = out.Usage.PromptTokens
			fmt.Fprintf(os.Stderr, "embedded %d texts (%d tokens) in %.3f s on %s: %.1f texts/s, %.0f tok/s\n", len(inputs), out.Usage.PromptTokens,
				took.Seconds(), b.Name(), float64(len(inputs))/took.Seconds(), float64(out.Usage.PromptTokens)/took.Seconds())
			enc := json.NewEncoder(os.Stdout)
			enc.SetEscapeHTML(false)
			return enc.Encode(out)
		},
	}
	rf.register(cmd)
	rf.kv = "paged" // many texts share the pool, as the server's requests do
	cmd.Flags().Lookup("kv").DefValue = "paged"
	cmd.Flags().IntVar(&dims, "dimensions", 0, "keep the first N values of each embedding, normalized again (0: all of the model's)")
	cmd.Flags().StringVar(&instruct, "instruct", "", "a task description: each TEXT becomes \"Instruct: TASK\\nQuery:TEXT\" (Qwen3-Embedding's queries)")
	cmd.Flags().StringVar(&format, "encoding-format", "float", "float (JSON numbers) or base64 (little-endian float32 bytes)")
	cmd.Flags().IntVar(&parallel, "parallel", 16, "texts run at once")
	cmd.Flags().IntVar(&batchTokens, "batch-tokens", 2048, "most tokens one forward pass runs")
	cmd.Flags().StringVar(&pooling, "pooling", "", poolingHelp)
	return cmd
}

// poolingHelp documents the --pooling flag of embed and serve.
const poolingHelp = "last: run the model as an embedding model with last-token pooling whatever its file states (llama.cpp's --pooling last); rank: as a yes/no reranker such as Qwen3-Reranker (serve answers /v1/rerank); none: as a language model; empty: as its file's pooling_type says"

// setPooling applies a --pooling flag to m's configuration.
func setPooling(m *model.Model, pooling string) error {
	switch pooling {
	case "":
	case "last":
		m.Arch.Hyper().Pooling = arch.PoolLast
	case "rank":
		m.Arch.Hyper().Pooling = arch.PoolRank
	case "none":
		m.Arch.Hyper().Pooling = arch.PoolNone
	default:
		return fmt.Errorf("--pooling %q: want last, rank or none (or leave it out)", pooling)
	}
	return nil
}

// lastEmbedding waits for the last event of an embedding request.
func lastEmbedding(cmd *cobra.Command, st *scheduler.Stream) ([]float32, error) {
	for {
		ev, ok := st.Next(cmd.Context())
		if !ok {
			return nil, cmd.Context().Err()
		}
		if ev.Err != nil {
			return nil, ev.Err
		}
		if ev.Finish != "" {
			return ev.Embedding, nil
		}
	}
}
