package scheduler

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/backend/forward"
	"inferno/backend/simd"
	"inferno/batch"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/model/qwen3"
)

// mixedRunner counts the forward passes that ran chat outputs and
// embedding rows together.
type mixedRunner struct {
	*forward.Batched
	mixed int
}

func (r *mixedRunner) Forward(b *batch.Batch) error {
	if len(b.Outputs) > 0 && len(b.Hidden) > 0 {
		r.mixed++
	}
	return r.Batched.Forward(b)
}

// soloEmbedding returns the normalized last hidden state of prompt, run
// alone in one pass.
func soloEmbedding(t *testing.T, m *qwen3.Model, prompt []int32) []float32 {
	t.Helper()
	br, err := forward.NewBatched(m, simd.New(), 128, 1, 128, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var b batch.Batch
	b.AddHidden(b.AddSeq([]int32{0}), prompt, 0)
	if err := br.Forward(&b); err != nil {
		t.Fatal(err)
	}
	h, err := br.Hidden(0)
	if err != nil {
		t.Fatal(err)
	}
	v, err := engine.Normalize(h)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBatcherEmbeddingsWithChat: embedding requests run as prefill-only
// sequences in the same passes as chat requests (chunked when longer than
// a pass), and each gives the embedding of its prompt run alone, bit for
// bit, while every chat request gives its transcript run alone.
func TestBatcherEmbeddingsWithChat(t *testing.T) {
	m := tinyModel(t)
	r := &mixedRunner{Batched: cpuBatched(t, m, 128, 64, 16)}
	s := startBatcher(t, r, Config{Parallel: 8, BatchTokens: 48, Queue: 64, PrefixCache: true})
	chat := requests(m.Config.Vocab, 6, 3)
	rng := rand.New(rand.NewPCG(5, 1))
	var reqs []engine.Request
	for i := range 12 {
		if i%2 == 0 {
			reqs = append(reqs, chat[i/2])
			continue
		}
		p := make([]int32, 1+rng.IntN(70))
		for j := range p {
			p[j] = int32(rng.IntN(m.Config.Vocab))
		}
		reqs = append(reqs, engine.Request{Prompt: p, Embed: true})
	}
	got, last := runAll(t, s, reqs)
	for i, req := range reqs {
		if last[i].Err != nil || last[i].Finish != engine.FinishStop && req.Embed {
			t.Fatalf("request %d: last event %+v", i, last[i])
		}
		if !req.Embed {
			if want := solo(t, m, req); !slicesEqual(got[i], want) {
				t.Errorf("chat request %d: %v, alone %v", i, got[i], want)
			}
			continue
		}
		if len(got[i]) != 0 {
			t.Errorf("embedding request %d generated tokens %v", i, got[i])
		}
		want := soloEmbedding(t, m, req.Prompt)
		if len(last[i].Embedding) != len(want) {
			t.Fatalf("embedding request %d: %d values, want %d", i, len(last[i].Embedding), len(want))
		}
		for j, v := range want {
			if last[i].Embedding[j] != v {
				t.Fatalf("embedding request %d: value %d is %v, alone %v", i, j, last[i].Embedding[j], v)
			}
		}
	}
	if r.mixed == 0 {
		t.Error("no pass ran chat outputs and embedding rows together")
	}
	if st := waitIdle(t, s); st.KV.Used != 0 {
		t.Errorf("blocks still in use: %+v", st.KV)
	}
}

// TestBatcherEmbeddingsNeedEmbedder: a runner without hidden states
// refuses embedding requests when they are submitted.
func TestBatcherEmbeddingsNeedEmbedder(t *testing.T) {
	s, _ := scripted(t, 2, 4, []int32{5, 6}, 0)
	_, err := s.Submit(context.Background(), engine.Request{Prompt: []int32{1, 2}, Embed: true})
	if err == nil || !strings.Contains(err.Error(), "does not return hidden states") {
		t.Errorf("Submit: %v", err)
	}
}
