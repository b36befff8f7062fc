package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeSpeed compares the decode speed of one stream through the
// server with "inferno bench"'s tg128 on the same model and backend. It
// needs a model of realistic size, so it runs only when asked:
//
//	INFERNO_SPEED_MODEL=models/q06.gguf INFERNO_SPEED_BACKEND=pool go test ./cmd/inferno -run TestServeSpeed -v
//
// The stream generates 129 tokens greedily (ignore_eos) and its decode
// speed is the 128 tokens after the first over the time from the first
// token's chunk to the last one's, as tg128 counts them.
func TestServeSpeed(t *testing.T) {
	path := os.Getenv("INFERNO_SPEED_MODEL")
	if path == "" {
		t.Skip("set INFERNO_SPEED_MODEL (and INFERNO_SPEED_BACKEND) to measure")
	}
	backend := os.Getenv("INFERNO_SPEED_BACKEND")
	if backend == "" {
		backend = "auto"
	}
	const reps = 5
	out, errOut, code := run(t, "", "bench", path, "-p", "0", "-n", "128", "-r", fmt.Sprint(reps), "--json", "--backend", backend)
	if code != 0 {
		t.Fatalf("bench: %s", errOut)
	}
	var bench []benchResult
	if err := json.Unmarshal([]byte(out), &bench); err != nil || len(bench) != 1 {
		t.Fatalf("bench output %q: %v", out, err)
	}
	s := startServe(t, path, "--backend", backend, "--parallel", "1")
	stream := func(sampling string) float64 {
		body := `{"prompt":"The history of the city begins","max_tokens":129,"ignore_eos":true,"stream":true,` + sampling + `}`
		resp, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var first, last time.Time
		chunks := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: {") {
				continue
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			last = now
			chunks++
		}
		if chunks < 100 {
			t.Fatalf("%d chunks", chunks)
		}
		// Chunks carry one token each, except where a character spans
		// tokens; the 129 tokens' chunks span 128 decode steps.
		return 128 / last.Sub(first).Seconds()
	}
	measure := func(sampling string) (float64, string) {
		stream(sampling) // warm up
		var sum float64
		var samples []string
		for range reps {
			v := stream(sampling)
			sum += v
			samples = append(samples, fmt.Sprintf("%.1f", v))
		}
		return sum / reps, strings.Join(samples, ", ")
	}
	server, samples := measure(`"temperature":0`)
	ratio := server / bench[0].AvgTS
	t.Logf("%s on %s: bench tg128 %.1f ± %.1f tok/s; one greedy stream through the server %.1f tok/s (%s): %.3f of bench",
		path, bench[0].Backend, bench[0].AvgTS, bench[0].StdTS, server, samples, ratio)
	// Sampled streams, for the record: Qwen3's settings (top-k, selected
	// on the GPU where there is one), and temperature alone (the whole
	// vocabulary's logits).
	for _, p := range []string{`"temperature":0.7,"top_p":0.8,"top_k":20,"seed":1`, `"temperature":1,"seed":1`} {
		v, samples := measure(p)
		t.Logf("sampled stream {%s}: %.1f tok/s (%s): %.3f of bench", p, v, samples, v/bench[0].AvgTS)
	}
	if ratio < 0.9 {
		t.Errorf("the server decodes at %.3f of bench's speed, want at least 0.9", ratio)
	}
}
