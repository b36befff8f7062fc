// Command loadgen drives an inference server (inferno serve) with
// streaming clients and reports generated tokens per second and the
// latency between tokens, as a server under that many users sees them,
// through any of the protocols the server speaks, so that they compare
// in one run.
//
//	loadgen -url http://127.0.0.1:8080 -clients 64 -requests 4 -prompt 128 -max-tokens 128 -temperature 1
//	loadgen -api messages -clients 64 -requests 4 -prompt 128 -max-tokens 128 -temperature 1
//
// Each client sends its requests one after another, streamed, through
// the API -api names:
//
//   - completions (the default): POST /v1/completions, a prompt of
//     -prompt random token ids, usage from the final chunk
//     (stream_options.include_usage).
//   - chat: POST /v1/chat/completions, usage as completions'.
//   - responses: POST /v1/responses, text from response.output_text.delta
//     events, usage (output_tokens) from response.completed, or
//     response.incomplete when max_output_tokens ended the reply.
//   - messages: Anthropic's POST /v1/messages (the key, if any, in
//     x-api-key), text from content_block_delta events, usage
//     (output_tokens) from message_delta.
//   - ollama: POST /api/chat, NDJSON lines of message.content, the last
//     (done) with eval_count.
//
// The chat-shaped APIs (all but completions) send one user message of
// -prompt words drawn from a fixed list of common English words, each
// one token with its leading space in the vocabularies of Qwen3, Llama 3
// and GPT-4o: -prompt N is about N tokens, plus the chat template's
// framing (a dozen tokens for Qwen3's); a synthetic model's byte-level
// vocabulary makes it several tokens a word. The report gives the prompt
// tokens the server counted. Each spells the same sampling settings its
// own way (max_tokens, max_output_tokens, or options.num_predict;
// temperature, top_p, top_k, min_p and seed where it has them:
// Anthropic's API has no min_p or seed, and a temperature over 1 is
// refused there) and turns reasoning off, so that every API generates
// the same kind of text: chat_template_kwargs enable_thinking false for
// chat, reasoning effort "none" for responses, thinking disabled for
// messages, think false for ollama. ignore_eos (-ignore-eos, on by
// default), so that every request generates max-tokens tokens, is sent
// to completions and chat only, the APIs that take it; the others'
// replies end at the model's end of text, which a synthetic
// random-weight model rarely samples: compare APIs by tok/s and the
// latencies, which are per generated token, not by request counts.
//
// The prompts are drawn from -prompt-seed and the client's number: runs
// with the same seed send the same prompts, whatever the API (a server's
// prefix cache then holds them after the first run), runs with
// different seeds new ones. Generated tokens are counted from the
// stream's usage; the latency between tokens is the time between the
// stream's events that carry text (content, reasoning or a tool call's
// arguments), after the first (a server sends one when a token completes
// some text: a tokenizer's partial characters make events of several
// tokens, and a synthetic model's byte-level vocabulary, whose tokens
// mostly carry none, makes these latencies meaningless: synthesize with
// --vocab-from); the time to first token is the time from sending the
// request to the first such event, and the time per output token a
// stream's time from its first such event to its end over its other
// tokens. With -json-schema every request constrains its reply to the
// schema in that file (json_schema for completions, response_format,
// text.format, output_config.format or format for the others): the reply
// ends when the schema's document is complete, ignore_eos or not, so a
// schema whose documents run past -max-tokens keeps the token counts of
// an unconstrained run (array40.json here is one).
//
// Without -model, the requests name the first model /v1/models lists.
// A request that fails is counted and reported, and its client goes on;
// loadgen exits with status 1 if any failed.
//
// With -embeddings the clients send /v1/embeddings requests to an
// embedding model instead (-inputs inputs of -prompt random token ids a
// request), and it reports inputs and tokens embedded per second and the
// requests' latency.
package main

import (
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
	api               string // -api: a key of apis
	model             string
	apiKey            string
	clients, requests int
	prompt, maxTokens int
	vocab             int
	temperature       float64
	topP, minP        float64
	topK              int
	seed              int64
	ignoreEOS         bool
	promptSeed        uint64
	timeout, wait     time.Duration
	schema            json.RawMessage // -json-schema's file
	embeddings        bool            // -embeddings: /v1/embeddings requests of inputs inputs
	inputs            int
	client            *http.Client
}

// result is what one request measured.
type result struct {
	tokens int           // generated (or, with -embeddings, inputs embedded)
	prompt int           // the prompt's tokens as the server counted them; -1 if not reported
	texted bool          // an event carried text: ttft and tpot are measured
	ttft   time.Duration // to the first event that carries text
	tpot   time.Duration // after the first such event, the stream's time over its other tokens (0 for one token)
	gaps   []time.Duration
	err    error
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the server's base URL")
	flag.StringVar(&o.api, "api", "completions", "the API: "+strings.Join(apiNames, ", "))
	flag.StringVar(&o.model, "model", "", "the model requests name (default: the first /v1/models lists)")
	flag.StringVar(&o.apiKey, "api-key", os.Getenv("INFERNO_API_KEY"), "the server's API key (default $INFERNO_API_KEY)")
	flag.IntVar(&o.clients, "clients", 64, "concurrent streaming clients")
	flag.IntVar(&o.requests, "requests", 4, "requests each client sends, one after another")
	flag.IntVar(&o.prompt, "prompt", 128, "prompt length: random token ids with -api completions, words (about a token each) with the others")
	flag.IntVar(&o.maxTokens, "max-tokens", 128, "most tokens a request generates")
	flag.IntVar(&o.vocab, "vocab", 151936, "prompt token ids are drawn below this (-api completions)")
	flag.Float64Var(&o.temperature, "temperature", 0, "sampling temperature (0: greedy)")
	flag.Float64Var(&o.topP, "top-p", 1, "top_p")
	flag.IntVar(&o.topK, "top-k", 0, "top_k (0: off)")
	flag.Float64Var(&o.minP, "min-p", 0, "min_p (not with -api messages)")
	flag.Int64Var(&o.seed, "seed", -1, "seed of every request (-1: none; not with -api messages)")
	flag.BoolVar(&o.ignoreEOS, "ignore-eos", true, "send ignore_eos, so that replies run to -max-tokens (-api completions and chat)")
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
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	o.client = newClient(o.clients)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if err := waitHealthy(ctx, o.url, o.wait); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
	if o.model == "" && !o.embeddings {
		m, err := firstModel(ctx, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: -model not given, and", err)
			os.Exit(1)
		}
		o.model = m
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// check checks the options' values and combinations.
func (o *options) check() error {
	if o.clients < 1 || o.requests < 1 || o.prompt < 1 || o.maxTokens < 1 || o.vocab < 1 || o.inputs < 1 {
		return errors.New("-clients, -requests, -prompt, -max-tokens, -vocab and -inputs must be at least 1")
	}
	if _, ok := apis[o.api]; !ok {
		return fmt.Errorf("-api %q is not one of %s", o.api, strings.Join(apiNames, ", "))
	}
	if o.embeddings && o.api != "completions" {
		return errors.New("-embeddings sends /v1/embeddings requests: leave -api out")
	}
	if o.api == "messages" {
		switch {
		case o.temperature > 1:
			return fmt.Errorf("-temperature %g: Anthropic's API takes temperatures in [0, 1]", o.temperature)
		case o.minP > 0:
			return errors.New("-min-p: Anthropic's API has no min_p")
		case o.seed >= 0:
			return errors.New("-seed: Anthropic's API has no seed")
		}
	}
	return nil
}

// newClient returns the HTTP client of a run: it keeps a connection for
// each of the clients alive between their requests, as SDKs do.
func newClient(clients int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = clients
	t.MaxIdleConns = clients
	return &http.Client{Transport: t}
}

// firstModel returns the id of the first model the server's /v1/models
// lists.
func firstModel(ctx context.Context, o options) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(o.url, "/")+"/v1/models", nil)
	if err != nil {
		return "", err
	}
	bearer(req.Header, o.apiKey)
	resp, err := o.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /v1/models: status %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", errors.New("GET /v1/models lists no model")
	}
	return list.Data[0].ID, nil
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

// run runs the clients, reports what they measured, and returns an
// error if a request failed.
func run(ctx context.Context, o options) error {
	var (
		mu  sync.Mutex
		all []result
		wg  sync.WaitGroup
	)
	send := request
	if o.embeddings {
		send = embedRequest
	}
	start := time.Now()
	for c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), o.promptSeed))
			for range o.requests {
				r := send(ctx, o, rng)
				mu.Lock()
				all = append(all, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	failed := 0
	var firstErr error
	var ok []result
	for _, r := range all {
		if r.err != nil {
			failed++
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		ok = append(ok, r)
	}
	if o.embeddings {
		reportEmbeddings(o, ok, failed, wall)
	} else {
		report(o, ok, failed, wall)
	}
	if firstErr != nil {
		return fmt.Errorf("%d of %d requests failed, the first: %w", failed, len(all), firstErr)
	}
	return nil
}

// report prints what the requests that succeeded (ok) measured, of a run
// that took wall.
func report(o options, ok []result, failed int, wall time.Duration) {
	tokens, prompt, prompts := 0, 0, 0
	var gaps, ttfts, tpots []time.Duration
	for _, r := range ok {
		tokens += r.tokens
		if r.prompt >= 0 {
			prompt += r.prompt
			prompts++
		}
		gaps = append(gaps, r.gaps...)
		if r.texted {
			ttfts = append(ttfts, r.ttft)
			if r.tokens > 1 {
				tpots = append(tpots, r.tpot)
			}
		}
	}
	fmt.Printf("api %s, model %s, clients %d, requests %d, errors %d, prompt %d, max_tokens %d, temperature %g, top_p %g, top_k %d, min_p %g, json schema %t\n",
		o.api, o.model, o.clients, len(ok)+failed, failed, o.prompt, o.maxTokens, o.temperature, o.topP, o.topK, o.minP, o.schema != nil)
	if len(ok) == 0 {
		return
	}
	fmt.Printf("generated %d tokens in %.2f s: %.1f tok/s (%.1f tokens a request, prompts of %.1f tokens)\n",
		tokens, wall.Seconds(), float64(tokens)/wall.Seconds(), ratio(tokens, len(ok)), ratio(prompt, prompts))
	fmt.Printf("inter-token latency: mean %.2f ms, p50 %.2f ms, p99 %.2f ms\n", ms(mean(gaps)), ms(pct(gaps, 50)), ms(pct(gaps, 99)))
	fmt.Printf("time per output token: mean %.2f ms, p50 %.2f ms, p99 %.2f ms\n", ms(mean(tpots)), ms(pct(tpots, 50)), ms(pct(tpots, 99)))
	fmt.Printf("time to first token: mean %.1f ms, p50 %.1f ms, p99 %.1f ms\n", ms(mean(ttfts)), ms(pct(ttfts, 50)), ms(pct(ttfts, 99)))
}

// ratio is n / d, 0 when d is.
func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
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

// post sends body as JSON to the server's path, its headers set by
// header, and returns the response of status 200 (the caller closes its
// body), or an error with the server's message.
func post(ctx context.Context, o options, header func(http.Header, string), path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.url, "/")+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	header(req.Header, o.apiKey)
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: status %s: %s", path, resp.Status, strings.TrimSpace(msg.String()))
	}
	return resp, nil
}
