package scheduler

import (
	"path/filepath"
	"testing"

	"inferno/backend/forward"
	"inferno/backend/simd"
	"inferno/kvcache"
	"inferno/model"
)

// TestBatcherWindowPool: on models of gpt-oss and Gemma 3 (sliding
// windows of 6 positions), many requests sharing prefixes, batched with
// chunked prefill, the sliding-window layers' keys and values in a window
// pool that frees what falls out of the window, each give the transcript
// of their request run alone with every layer's keys and values kept;
// a window pool of a few windows makes sequences wait for one another.
// Afterwards no block is held.
func TestBatcherWindowPool(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"gemma3", "gpt-oss"} {
		m, err := model.Open(filepath.Join("..", "testdata", "arch", name+".llamacpp.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		c := m.Arch.Hyper()
		reqs := requests(c.Vocab, 12, 3)
		for _, tc := range []struct {
			name             string
			blocks, local    int
			parallel, tokens int
		}{
			{"roomy", 200, kvcache.WindowBlocks(5, c.Window, 24, 4), 5, 24},
			{"tight-window", 200, 2 * (c.Window/4 + 2), 5, 24},
			{"tight-both", 34, kvcache.WindowBlocks(3, c.Window, 8, 4), 5, 8},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				br, err := forward.NewWindowBatched(m.Arch, simd.New(), 128, tc.blocks, tc.local, 4, kvcache.F16)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { br.Close() })
				s := startBatcher(t, br, Config{Parallel: tc.parallel, BatchTokens: tc.tokens, Queue: 64, PrefixCache: true})
				got, last := runAll(t, s, reqs)
				for i, req := range reqs {
					if last[i].Err != nil {
						t.Fatalf("request %d: %v", i, last[i].Err)
					}
					if want := solo(t, m.Arch, req); !slicesEqual(got[i], want) {
						t.Errorf("request %d (prompt %d tokens): batched %v, alone %v", i, len(req.Prompt), got[i], want)
					}
				}
				st := waitIdle(t, s)
				if st.KV.Used != 0 || st.KVWindow.Used != 0 || st.KVWindow.Blocks != tc.local || st.KVWindow.Window != c.Window {
					t.Errorf("after the run: %+v, window pool %+v", st.KV, st.KVWindow)
				}
				if st.KV.CachedTokens == 0 {
					t.Errorf("no prefix cache hit among requests that share prefixes")
				}
				t.Logf("%+v, window pool %+v, preemptions %d", st.KV, st.KVWindow, st.Preemptions)
			})
		}
	}
}
