package main

// Tests of batched serving and the paged KV cache as a user meets them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestGeneratePaged: generation on the paged cache prints what the basic
// cache prints.
func TestGeneratePaged(t *testing.T) {
	t.Parallel()
	args := []string{"generate", goldenModel, "Once upon a time", "-n", "16", "--ignore-eos", "--backend", testBackend()}
	basic, errOut, code := run(t, "", args...)
	if code != 0 {
		t.Fatalf("basic: %s", errOut)
	}
	paged, errOut, code := run(t, "", append(args, "--kv", "paged")...)
	if code != 0 {
		t.Fatalf("paged: %s", errOut)
	}
	if basic != paged {
		t.Errorf("--kv paged printed %q, --kv basic %q", paged, basic)
	}
	if _, errOut, code := run(t, "", append(args, "--kv", "ring")...); code == 0 || !strings.Contains(errOut, "basic or paged") {
		t.Errorf("--kv ring: exit %d, %s", code, errOut)
	}
}

// TestBenchParallel: bench --parallel reports prompt and generation rates
// for each batch size.
func TestBenchParallel(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "bench", goldenModel, "-p", "16", "-n", "8", "--parallel", "1,3", "-r", "1", "--backend", testBackend(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rs []benchResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	tests := map[string]benchResult{}
	for _, r := range rs {
		tests[r.Test] = r
	}
	for _, name := range []string{"pp16 x1", "tg8 x1", "pp16 x3", "tg8 x3"} {
		r, ok := tests[name]
		if !ok || r.AvgTS <= 0 {
			t.Errorf("%s: %+v (all: %s)", name, r, out)
		}
	}
	if tests["tg8 x3"].NPar != 3 {
		t.Errorf("n_parallel %d, want 3", tests["tg8 x3"].NPar)
	}
	if _, errOut, code := run(t, "", "bench", goldenModel, "-d", "16", "--parallel", "2"); code == 0 {
		t.Errorf("--parallel with -d accepted: %s", errOut)
	}
}

// TestServeBatched: concurrent greedy requests through the batching
// scheduler each print what generate prints alone; the next turn of a
// conversation reuses the cached prefix; the batch metrics count the steps.
func TestServeBatched(t *testing.T) {
	t.Parallel()
	s := startServe(t, goldenModel, "--backend", testBackend(), "--parallel", "4", "--kv-mem", "16MiB", "--ctx", "2048")
	c := s.client()
	ctx := context.Background()
	prompts := []string{"The quick brown fox", "Once upon a time", "In the beginning", "Hello, my name is", "The capital of France is", "To be or not to be"}
	want := make([]string, len(prompts))
	for i, p := range prompts {
		out, errOut, code := run(t, "", "generate", goldenModel, p, "-n", "20", "--backend", testBackend(), "--ignore-eos")
		if code != 0 {
			t.Fatalf("generate: %s", errOut)
		}
		want[i] = strings.TrimSuffix(out, "\n")
	}
	got := make([]string, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			comp := openai.CompletionNewParams{Model: "tiny-q8_0", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(p)},
				MaxTokens: openai.Int(20), Temperature: openai.Float(0)}
			resp, err := c.Completions.New(ctx, comp, option.WithJSONSet("ignore_eos", true))
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = resp.Choices[0].Text
		}()
	}
	wg.Wait()
	for i := range prompts {
		if got[i] != want[i] {
			t.Errorf("%q: batched %q, alone %q", prompts[i], got[i], want[i])
		}
	}

	// The next turn of a conversation reuses the first turn's blocks.
	msgs := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You are a helpful assistant who answers in the style of a sea captain, briefly and kindly."),
		openai.UserMessage("Tell me about the tides."),
	}
	p := openai.ChatCompletionNewParams{Model: "tiny-q8_0", Messages: msgs, MaxTokens: openai.Int(16), Temperature: openai.Float(0)}
	first, err := c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p.Messages = append(msgs, openai.AssistantMessage(first.Choices[0].Message.Content), openai.UserMessage("And the moon?"))
	second, err := c.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	cached := second.Usage.PromptTokensDetails.CachedTokens
	if cached < first.Usage.PromptTokens/2 || cached >= second.Usage.PromptTokens {
		t.Errorf("second turn: %d of %d prompt tokens cached (the first turn had %d)", cached, second.Usage.PromptTokens, first.Usage.PromptTokens)
	}
	if h := s.metric(t, "inferno_prefix_cache_hits_total"); h < float64(cached) {
		t.Errorf("inferno_prefix_cache_hits_total %v, want at least %d", h, cached)
	}
	if n := s.metric(t, "inferno_batch_size_count"); n < 20 {
		t.Errorf("inferno_batch_size_count %v: too few steps recorded", n)
	}
	if sum, n := s.metric(t, "inferno_batch_size_sum"), s.metric(t, "inferno_batch_size_count"); sum <= n {
		t.Errorf("batch sizes sum to %v over %v steps: no step batched more than one sequence", sum, n)
	}
	if free, used := s.metric(t, "inferno_kv_blocks_free"), s.metric(t, "inferno_kv_blocks_used"); free <= 0 || used != 0 {
		t.Errorf("idle pool: %v blocks free, %v used", free, used)
	}
}

// TestServeCancelFreesBlocks: clients that hang up mid-stream get every
// KV block back into the pool.
func TestServeCancelFreesBlocks(t *testing.T) {
	t.Parallel()
	s := startServe(t, goldenModel, "--backend", testBackend(), "--parallel", "4", "--queue", "16", "--kv-mem", "8MiB", "--ctx", "4096")
	total := s.metric(t, "inferno_kv_blocks_free") + s.metric(t, "inferno_kv_blocks_cached")
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"prompt":"Story number %d: once upon a time","max_tokens":2000,"ignore_eos":true,"stream":true}`, i)
			req, _ := http.NewRequestWithContext(ctx, "POST", s.url+"/v1/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			for range 2 + i {
				if _, err := br.ReadString('\n'); err != nil {
					t.Errorf("stream %d: %v", i, err)
					return
				}
			}
			cancel() // hang up mid-stream
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		running, used := s.metric(t, "inferno_num_requests_running"), s.metric(t, "inferno_kv_blocks_used")
		free, cached := s.metric(t, "inferno_kv_blocks_free"), s.metric(t, "inferno_kv_blocks_cached")
		if running == 0 && used == 0 && free+cached == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the clients left: %v running, blocks %v used, %v free, %v cached of %v", running, used, free, cached, total)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
