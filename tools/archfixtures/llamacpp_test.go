package archfixtures_test

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var llamaLogits = flag.String("llama-logits", "", "the path of tools/llama-logits built against llama.cpp (tools/archfixtures/llamacpp.sh): TestLlamaCpp and TestLlamaCppEmbedding run it")

// TestLlamaCpp checks that llama.cpp loads the files inferno's converter
// makes of make.py's and qwen3moe.py's checkpoints (but the one llama.cpp
// cannot run: Qwen3-MoE without renormalized expert weights) and
// computes transformers' logits from
// them (relative L2 at most 1e-4 at every position of every prompt). It
// runs tools/llama-logits, built against a llama.cpp checkout
// (tools/llama-logits/build.sh), named by the flag -llama-logits; without
// it the test is skipped, as llama.cpp is not part of this repository
// (tools/archfixtures/llamacpp.sh builds it and runs the test).
func TestLlamaCpp(t *testing.T) {
	bin := *llamaLogits
	if bin == "" {
		t.Skip("no -llama-logits (the path of tools/llama-logits built against llama.cpp)")
	}
	var fx struct {
		Models map[string]struct {
			Kind    string `json:"kind"`
			Prompts []struct {
				IDs    []int32     `json:"ids"`
				First  int         `json:"first"`
				Logits [][]float64 `json:"logits"`
			} `json:"prompts"`
		} `json:"models"`
	}
	for _, file := range []string{"logits.json", "qwen3moe.logits.json"} {
		data, err := os.ReadFile(filepath.Join(testdata, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &fx); err != nil { // adds to fx.Models
			t.Fatal(err)
		}
	}
	// llama.cpp's qwen3moe renormalizes the chosen experts' weights
	// whatever the file says: a checkpoint with norm_topk_prob false runs
	// otherwise there.
	delete(fx.Models, "qwen3moe-nonorm")
	for name, mf := range fx.Models {
		t.Run(name, func(t *testing.T) {
			dir := checkpointDir(t, mf.Kind, nil, filepath.Join(testdata, name+".config.json"), nil, filepath.Join(testdata, name+".safetensors"))
			m := convertOpen(t, dir)
			vocab := m.Arch.Hyper().Vocab
			for _, p := range mf.Prompts {
				ids := make([]string, len(p.IDs))
				for i, id := range p.IDs {
					ids[i] = strconv.Itoa(int(id))
				}
				out := filepath.Join(t.TempDir(), "logits.f32")
				cmd := exec.Command(bin, "--kv", "f32", m.Path, strings.Join(ids, ","), out)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", cmd, err, b)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != 4*len(p.IDs)*vocab {
					t.Fatalf("llama-logits wrote %d bytes for %d positions of %d logits", len(b), len(p.IDs), vocab)
				}
				worst := 0.0
				for i, want := range p.Logits {
					row := make([]float32, vocab)
					off := 4 * (p.First + i) * vocab
					for j := range row {
						row[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*j:]))
					}
					worst = max(worst, relErr(row, want))
				}
				if worst > 1e-4 {
					t.Errorf("prompt of %d: llama.cpp's logits are %.3g from transformers' (relative L2)", len(p.IDs), worst)
				}
				t.Logf("prompt of %d: llama.cpp within %.2g of transformers", len(p.IDs), worst)
			}
		})
	}
}

// TestLlamaCppEmbedding checks that llama.cpp loads the file inferno's
// converter makes of embed.py's Qwen3-Embedding checkpoint (with
// sentence-transformers' Pooling module of last-token pooling) as an
// embedding model and computes transformers' embeddings from it: for each
// input of embed.json, tools/llama-logits --embd (llama.cpp's pooled
// embedding, pooled as the file's qwen3.pooling_type says, with an F32 KV
// cache) must be within the cosine similarity TestEmbedding asks of
// inferno's scalar backend (0.9999). Skipped without -llama-logits, as
// TestLlamaCpp is.
func TestLlamaCppEmbedding(t *testing.T) {
	bin := *llamaLogits
	if bin == "" {
		t.Skip("no -llama-logits (the path of tools/llama-logits built against llama.cpp)")
	}
	fx := readEmbedFixture(t)
	pooling, err := os.ReadFile(filepath.Join(testdata, "embed.pooling.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := convertOpen(t, embedDir(t, pooling))
	worst := 1.0
	for i, in := range fx.Inputs {
		ids := make([]string, len(in.IDs))
		for k, id := range in.IDs {
			ids[k] = strconv.Itoa(int(id))
		}
		out := filepath.Join(t.TempDir(), "embd.f32")
		cmd := exec.Command(bin, "--embd", "--kv", "f32", m.Path, strings.Join(ids, ","), out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 4*fx.Hidden {
			t.Fatalf("llama-logits --embd wrote %d bytes, want an embedding of %d float32 values", len(b), fx.Hidden)
		}
		e := make([]float32, fx.Hidden)
		for j := range e {
			e[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
		c := cosine(e, in.Embedding)
		if c < embedCosine["scalar"] {
			t.Errorf("input %d (%d tokens): llama.cpp's embedding has cosine similarity %.6f to transformers', want %g", i, len(in.IDs), c, embedCosine["scalar"])
		}
		worst = min(worst, c)
	}
	t.Logf("%d inputs: llama.cpp's lowest cosine similarity to transformers' %.9f", len(fx.Inputs), worst)
}
