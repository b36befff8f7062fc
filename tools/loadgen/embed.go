package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// embedRequest sends one /v1/embeddings request (-embeddings): -inputs
// inputs of -prompt random token ids each, and checks that every input
// got an embedding. Its result counts the inputs in tokens and the whole
// request's time in ttft.
func embedRequest(ctx context.Context, o options, rng *rand.Rand) result {
	input := make([][]int, o.inputs)
	for i := range input {
		input[i] = make([]int, o.prompt)
		for j := range input[i] {
			input[i][j] = rng.IntN(o.vocab)
		}
	}
	start := time.Now()
	resp, err := post(ctx, o, bearer, "/v1/embeddings", map[string]any{"input": input, "encoding_format": "base64"})
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return result{err: err}
	}
	var list struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body.Bytes(), &list); err != nil {
		return result{err: fmt.Errorf("an answer that is not JSON: %w", err)}
	}
	if len(list.Data) != o.inputs || list.Usage.PromptTokens != o.inputs*o.prompt {
		return result{err: fmt.Errorf("%d embeddings and %d prompt tokens for %d inputs of %d tokens", len(list.Data), list.Usage.PromptTokens, o.inputs, o.prompt)}
	}
	for _, d := range list.Data {
		if d.Embedding == "" {
			return result{err: errors.New("an empty embedding")}
		}
	}
	return result{tokens: o.inputs, prompt: o.inputs * o.prompt, ttft: time.Since(start)}
}

// reportEmbeddings prints what the requests of an -embeddings run that
// succeeded (ok) measured.
func reportEmbeddings(o options, ok []result, failed int, wall time.Duration) {
	inputs := 0
	var lat []time.Duration
	for _, r := range ok {
		inputs += r.tokens
		lat = append(lat, r.ttft)
	}
	fmt.Printf("embeddings: clients %d, requests %d, errors %d, %d inputs a request of %d tokens\n", o.clients, len(ok)+failed, failed, o.inputs, o.prompt)
	if len(ok) == 0 {
		return
	}
	fmt.Printf("embedded %d inputs (%d tokens) in %.2f s: %.1f inputs/s, %.0f tok/s\n",
		inputs, inputs*o.prompt, wall.Seconds(), float64(inputs)/wall.Seconds(), float64(inputs*o.prompt)/wall.Seconds())
	fmt.Printf("request latency: mean %.1f ms, p50 %.1f ms, p99 %.1f ms\n", ms(mean(lat)), ms(pct(lat, 50)), ms(pct(lat, 99)))
}
