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

// TestServeBatchSpeed measures many clients at once against "inferno
// bench --parallel": INFERNO_SPEED_CLIENTS (default 32) streaming clients
// send 128-token prompts at the same moment and generate 128 tokens each.
// The server's aggregate decode rate is counted while every client
// decodes (from the last first token to the first last token: the
// steady state bench's S_TG measures), and compared with bench's tg128
// at the same batch size; the median time to first token is reported
// too. It runs only when asked:
//
//	INFERNO_SPEED_MODEL=models/q06.gguf INFERNO_SPEED_BACKEND=cuda go test ./cmd/inferno -run TestServeBatchSpeed -v
func TestServeBatchSpeed(t *testing.T) {
	path := os.Getenv("INFERNO_SPEED_MODEL")
	if path == "" {
		t.Skip("set INFERNO_SPEED_MODEL (and INFERNO_SPEED_BACKEND, INFERNO_SPEED_CLIENTS) to measure")
	}
	backend := os.Getenv("INFERNO_SPEED_BACKEND")
	if backend == "" {
		backend = "auto"
	}
	clients := 32
	if v := os.Getenv("INFERNO_SPEED_CLIENTS"); v != "" {
		if _, err := fmt.Sscan(v, &clients); err != nil || clients < 1 {
			t.Fatalf("INFERNO_SPEED_CLIENTS=%q", v)
		}
	}
	const prompt, gen = 128, 128
	out, errOut, code := run(t, "", "bench", path, "-p", fmt.Sprint(prompt), "-n", fmt.Sprint(gen), "--parallel", fmt.Sprint(clients),
		"-r", "2", "--json", "--backend", backend, "--ctx", "4096")
	if code != 0 {
		t.Fatalf("bench: %s", errOut)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bench output %q: %v", out, err)
	}
	var sTG float64
	for _, r := range res {
		if r.NGen == gen {
			sTG = r.AvgTS
		}
	}
	s := startServe(t, path, "--backend", backend, "--parallel", fmt.Sprint(clients), "--queue", fmt.Sprint(clients), "--ctx", "4096")
	type client struct {
		submit, first, last time.Time
		stamps              []time.Time
		err                 error
	}
	round := func(seed int) []client {
		cs := make([]client, clients)
		start := make(chan struct{})
		done := make(chan int)
		for i := range cs {
			go func() {
				defer func() { done <- i }()
				ids := make([]string, prompt)
				for k := range ids {
					ids[k] = fmt.Sprint(1000 + (seed*7919+i*131+k*17)%50000)
				}
				body := fmt.Sprintf(`{"prompt":[%s],"max_tokens":%d,"ignore_eos":true,"stream":true,"temperature":0}`, strings.Join(ids, ","), gen+1)
				<-start
				c := &cs[i]
				c.submit = time.Now()
				resp, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(body))
				if err != nil {
					c.err = err
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "data: {") {
						c.stamps = append(c.stamps, time.Now())
					}
				}
				if len(c.stamps) < gen/2 {
					c.err = fmt.Errorf("%d chunks, status %d", len(c.stamps), resp.StatusCode)
					return
				}
				c.first, c.last = c.stamps[0], c.stamps[len(c.stamps)-1]
			}()
		}
		close(start)
		for range cs {
			<-done
		}
		for i, c := range cs {
			if c.err != nil {
				t.Fatalf("client %d: %v", i, c.err)
			}
		}
		return cs
	}
	round(0) // warm up
	var rates, ttfts []float64
	for r := 1; r <= 3; r++ {
		cs := round(r)
		var t0, t1 time.Time
		for i, c := range cs {
			if i == 0 || c.first.After(t0) {
				t0 = c.first
			}
			if i == 0 || c.last.Before(t1) {
				t1 = c.last
			}
			ttfts = append(ttfts, c.first.Sub(c.submit).Seconds()*1000)
		}
		n := 0
		for _, c := range cs {
			for _, ts := range c.stamps {
				if ts.After(t0) && !ts.After(t1) {
					n++
				}
			}
		}
		if !t1.After(t0) {
			t.Fatalf("round %d: the clients never all decoded at once", r)
		}
		rates = append(rates, float64(n)/t1.Sub(t0).Seconds())
	}
	slices.Sort(ttfts)
	slices.Sort(rates)
	rate, ttft := rates[len(rates)/2], ttfts[len(ttfts)/2]
	t.Logf("%s on %s, %d clients: bench tg%d x%d %.1f tok/s; server aggregate %.1f tok/s (rounds %v): %.3f of bench; time to first token median %.1f ms, p90 %.1f ms",
		path, backend, clients, gen, clients, sTG, rate, rates, rate/sTG, ttft, ttfts[len(ttfts)*9/10])
	if rate < 0.8*sTG {
		t.Errorf("aggregate %.1f tok/s is below 0.8 of bench's %.1f", rate, sTG)
	}
	if ttft > 100 {
		t.Errorf("median time to first token %.1f ms, want under 100 ms", ttft)
	}
}
