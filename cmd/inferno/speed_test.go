package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
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
	// Bench runs and server streams alternate, and the medians are
	// compared, so that the machine's drift (other work on it) falls on
	// both alike.
	const reps = 7
	benchOnce := func() (float64, string) {
		out, errOut, code := run(t, "", "bench", path, "-p", "0", "-n", "128", "-r", "1", "--json", "--backend", backend)
		if code != 0 {
			t.Fatalf("bench: %s", errOut)
		}
		var res []benchResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
			t.Fatalf("bench output %q: %v", out, err)
		}
		return res[0].AvgTS, res[0].Backend
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
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	list := func(v []float64) string {
		var b strings.Builder
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%.1f", x)
		}
		return b.String()
	}
	stream(`"temperature":0`) // warm up
	var benchTS, serverTS []float64
	var name string
	for range reps {
		var b float64
		b, name = benchOnce()
		benchTS = append(benchTS, b)
		serverTS = append(serverTS, stream(`"temperature":0`))
	}
	bench, server := median(benchTS), median(serverTS)
	ratio := server / bench
	t.Logf("%s on %s: bench tg128 median %.1f tok/s (%s); one greedy stream through the server median %.1f tok/s (%s): %.3f of bench",
		path, name, bench, list(benchTS), server, list(serverTS), ratio)
	// Sampled streams, for the record: Qwen3's settings (top-k, selected
	// on the GPU where there is one), and temperature alone (the whole
	// vocabulary's logits).
	for _, p := range []string{`"temperature":0.7,"top_p":0.8,"top_k":20,"seed":1`, `"temperature":1,"seed":1`} {
		var v []float64
		for range reps {
			v = append(v, stream(p))
		}
		t.Logf("sampled stream {%s}: median %.1f tok/s (%s): %.3f of bench", p, median(v), list(v), median(v)/bench)
	}
	if ratio < 0.9 {
		t.Errorf("the server decodes at %.3f of bench's speed, want at least 0.9", ratio)
	}
}
