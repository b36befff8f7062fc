// Command loadgen drives an OpenAI-compatible server (inferno serve) with
// streaming clients and reports generated tokens per second and the
// latency between tokens, as a server under that many users sees them.
//
//	loadgen -url http://127.0.0.1:8080 -clients 64 -requests 4 -prompt 128 -max-tokens 128 -temperature 1
//
// Each client sends its requests one after another to /v1/completions:
// a prompt of random token ids, streamed, ignore_eos set so every request
// generates max-tokens tokens. The prompts are drawn from -prompt-seed and
// the client's number: runs with the same seed send the same prompts (a
// server's prefix cache then holds them after the first run), runs with
// different seeds new ones. Generated tokens are counted from the
// usage of the final chunk; the latency between tokens is the time
// between content chunks of a stream, after the first (a server sends a
// chunk when a token completes some text: a tokenizer's partial
// characters make chunks of several tokens, and a synthetic model's
// byte-level vocabulary, whose tokens mostly carry none, makes these
// latencies meaningless: synthesize with --vocab-from), and the time per
// output token a stream's time from its first chunk to its end over its
// other tokens. With -json-schema
// every request constrains its reply to the schema in that file (the
// request's json_schema field): with ignore_eos the reply still ends when
// the schema's document is complete, so a schema whose documents run past
// -max-tokens keeps the token counts of an unconstrained run (array40.json
// here is one).
//
// With -embeddings the clients send /v1/embeddings requests to an
// embedding model instead (-inputs inputs of -prompt random token ids a
// request), and it reports inputs and tokens embedded per second and the
// requests' latency.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

type options struct {
	url               string
	clients, requests int
	prompt, maxTokens int
	vocab             int
	temperature       float64
	topP, minP        float64
	topK              int
	seed              int64
	promptSeed        uint64
	timeout, wait     time.Duration
	schema            json.RawMessage // -json-schema's file
	embeddings        bool            // -embeddings: /v1/embeddings requests of inputs inputs
	inputs            int
}

// result is what one request measured.
type result struct {
	tokens int
	ttft   time.Duration
	tpot   time.Duration // after the first chunk, the stream's time over its other tokens (0 for one token)
	gaps   []time.Duration
	err    error
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the server's base URL")
	flag.IntVar(&o.clients, "clients", 64, "concurrent streaming clients")
	flag.IntVar(&o.requests, "requests", 4, "requests each client sends, one after another")
	flag.IntVar(&o.prompt, "prompt", 128, "prompt length in tokens (random token ids)")
	flag.IntVar(&o.maxTokens, "max-tokens", 128, "tokens each request generates (ignore_eos)")
	flag.IntVar(&o.vocab, "vocab", 151936, "prompt token ids are drawn below this")
	flag.Float64Var(&o.temperature, "temperature", 0, "sampling temperature (0: greedy)")
	flag.Float64Var(&o.topP, "top-p", 1, "top_p")
	flag.IntVar(&o.topK, "top-k", 0, "top_k (0: off)")
	flag.Float64Var(&o.minP, "min-p", 0, "min_p")
	flag.Int64Var(&o.seed, "seed", -1, "seed of every request (-1: none)")
	flag.Uint64Var(&o.promptSeed, "prompt-seed", 1, "seed of the random prompts: another value sends prompts no earlier run sent (no prefix-cache hits)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "time limit of the whole run")
	flag.DurationVar(&o.wait, "wait", 0, "first wait up to this long for the server's /health to answer 200")
	schemaFile := flag.String("json-schema", "", "constrain every reply to the JSON schema in this file")
	flag.BoolVar(&o.embeddings, "embeddings", false, "send /v1/embeddings requests (to an embedding model) of -inputs inputs of -prompt random token ids, and report inputs per second")
	flag.IntVar(&o.inputs, "inputs", 1, "with -embeddings: inputs a request")
	flag.Parse()
	if *schemaFile != "" {
		b, err := os.ReadFile(*schemaFile)
		if err == nil && !json.Valid(b) {
			err = errors.New("not JSON")
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadgen: -json-schema %s: %v\n", *schemaFile, err)
			os.Exit(2)
		}
		o.schema = b
	}
	if o.clients < 1 || o.requests < 1 || o.prompt < 1 || o.maxTokens < 1 || o.vocab < 1 || o.inputs < 1 {
		fmt.Fprintln(os.Stderr, "loadgen: -clients, -requests, -prompt, -max-tokens, -vocab and -inputs must be at least 1")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := waitHealthy(ctx, o.url, o.wait); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// waitHealthy polls url's /health until it answers 200, for at most d.
func waitHealthy(ctx context.Context, url string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	deadline := time.Now().Add(d)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server at %s is not healthy after %v", url, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func run(ctx context.Context, o options) error {
	var (
		mu  sync.Mutex
		all []result
		wg  sync.WaitGroup
	)
	start := time.Now()
	for c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), o.promptSeed))
			for range o.requests {
				send := request
				if o.embeddings {
					send = embedRequest
				}
				r := send(ctx, o, rng)
				mu.Lock()
				all = append(all, r)
				mu.Unlock()
				if r.err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	tokens, failed := 0, 0
	var gaps, ttfts, tpots []time.Duration
	var firstErr error
	for _, r := range all {
		if r.err != nil {
			failed++
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		tokens += r.tokens
		gaps = append(gaps, r.gaps...)
		ttfts = append(ttfts, r.ttft)
		if r.tokens > 1 {
			tpots = append(tpots, r.tpot)
		}
	}
	if firstErr != nil {
		return fmt.Errorf("%d of %d requests failed, the first: %w", failed, len(all), firstErr)
	}
	if o.embeddings {
		reportEmbeddings(o, all, wall)
		return nil
	}
	fmt.Printf("clients %d, requests %d, prompt %d, max_tokens %d, temperature %g, top_p %g, top_k %d, min_p %g, json schema %t\n",
		o.clients, len(all), o.prompt, o.maxTokens, o.temperature, o.topP, o.topK, o.minP, o.schema != nil)
	fmt.Printf("generated %d tokens in %.2f s: %.1f tok/s\n", tokens, wall.Seconds(), float64(tokens)/wall.Seconds())
	fmt.Printf("inter-token latency: mean %.2f ms, p50 %.2f ms, p99 %.2f ms\n", ms(mean(gaps)), ms(pct(gaps, 50)), ms(pct(gaps, 99)))
	fmt.Printf("time per output token: mean %.2f ms, p50 %.2f ms, p99 %.2f ms\n", ms(mean(tpots)), ms(pct(tpots, 50)), ms(pct(tpots, 99)))
	fmt.Printf("time to first token: mean %.1f ms, p50 %.1f ms, p99 %.1f ms\n", ms(mean(ttfts)), ms(pct(ttfts, 50)), ms(pct(ttfts, 99)))
	return nil
}

// request sends one streamed completion and measures it.
func request(ctx context.Context, o options, rng *rand.Rand) result {
	prompt := make([]int, o.prompt)
	for i := range prompt {
		prompt[i] = rng.IntN(o.vocab)
	}
	body := map[string]any{
		"prompt":         prompt,
		"max_tokens":     o.maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"ignore_eos":     true,
		"temperature":    o.temperature,
		"top_p":          o.topP,
	}
	if o.topK > 0 {
		body["top_k"] = o.topK
	}
	if o.minP > 0 {
		body["min_p"] = o.minP
	}
	if o.seed >= 0 {
		body["seed"] = o.seed
	}
	if o.schema != nil {
		body["json_schema"] = o.schema
	}
	start := time.Now()
	resp, err := post(ctx, o, "/v1/completions", body)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	var r result
	last := time.Time{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return result{err: fmt.Errorf("a chunk that is not JSON: %w", err)}
		}
		if chunk.Error != nil {
			return result{err: errors.New(chunk.Error.Message)}
		}
		if chunk.Usage != nil {
			r.tokens = chunk.Usage.CompletionTokens
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		now := time.Now()
		if last.IsZero() {
			r.ttft = now.Sub(start)
		} else {
			r.gaps = append(r.gaps, now.Sub(last))
		}
		last = now
	}
	if err := sc.Err(); err != nil {
		return result{err: err}
	}
	if r.tokens == 0 {
		return result{err: errors.New("the stream reported no usage")}
	}
	if r.tokens > 1 && !last.IsZero() {
		r.tpot = time.Since(start.Add(r.ttft)) / time.Duration(r.tokens-1)
	}
	return r
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var s time.Duration
	for _, v := range d {
		s += v
	}
	return s / time.Duration(len(d))
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// post sends body as JSON to the server's path and returns the response
// of status 200 (the caller closes its body), or an error with the
// server's message.
func post(ctx context.Context, o options, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.url, "/")+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("status %s: %s", resp.Status, strings.TrimSpace(msg.String()))
	}
	return resp, nil
}
