package main

// Benchmarks of "inferno serve" against "inferno bench" on the same model
// and backend. They load the tiny golden model unless -model names
// another (a path from cmd/inferno, where go test runs them, or an
// absolute one); figures worth recording need a model of realistic size:
//
//	go test ./cmd/inferno -run '^$' -bench BenchmarkServe -benchtime 7x -model $PWD/models/q06.gguf -backend pool
//
// and on a GPU machine without Go, with the binaries built elsewhere
// (go build -o bin/inferno ./cmd/inferno; go test -c -o bin/cli.test
// ./cmd/inferno), from cmd/inferno, where the tests find their files:
//
//	../../bin/cli.test -test.run '^$' -test.bench BenchmarkServe -test.benchtime 7x -inferno-bin ../../bin/inferno -model /tmp/q06.gguf -backend cuda

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	benchModel   = flag.String("model", goldenModel, "the model the BenchmarkServe benchmarks load")
	benchClients = flag.Int("clients", 32, "BenchmarkServeBatch's concurrent streaming clients")
)

// median returns the middle value of v (the upper one of an even count).
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// benchTG runs "inferno bench" with args and returns the rate of its
// generation test of gen tokens.
func benchTG(b *testing.B, gen int, args ...string) float64 {
	b.Helper()
	out, errOut, code := run(b, "", append([]string{"bench", *benchModel, "-n", fmt.Sprint(gen), "--json", "--backend", testBackend()}, args...)...)
	if code != 0 {
		b.Fatalf("bench: %s", errOut)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		b.Fatalf("bench output %q: %v", out, err)
	}
	for _, r := range res {
		if r.NGen == gen {
			return r.AvgTS
		}
	}
	b.Fatalf("bench output %q has no tg%d", out, gen)
	return 0
}

// BenchmarkServeStream measures one stream through the server against
// bench's tg128. Each iteration runs bench's tg128 once (untimed) and then
// streams 129 tokens (ignore_eos) with the sub-benchmark's sampling; the
// stream's decode rate is the 128 tokens after the first over the time
// from the first token's chunk to the last one's, as tg128 counts them.
// Bench runs and streams alternate so that the machine's drift falls on
// both alike. Metrics: tok/s, the streams' median rate; bench-tok/s,
// bench's median; of-bench, their ratio (docs/PERF.md's floor for the
// greedy stream is 0.9).
func BenchmarkServeStream(b *testing.B) {
	s := startServe(b, *benchModel, "--backend", testBackend(), "--parallel", "1")
	stream := func(sampling string) float64 {
		body := `{"prompt":"The history of the city begins","max_tokens":129,"ignore_eos":true,"stream":true,` + sampling + `}`
		resp, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var first, last time.Time
		chunks := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), "data: {") {
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
			b.Fatalf("%d chunks", chunks)
		}
		// Chunks carry one token each, except where a character spans
		// tokens; the 129 tokens' chunks span 128 decode steps.
		return 128 / last.Sub(first).Seconds()
	}
	stream(`"temperature":0`) // warm up
	for _, c := range []struct{ name, sampling string }{
		{"greedy", `"temperature":0`},
		// Qwen3's settings (top-k, selected on the GPU where there is one).
		{"top-k", `"temperature":0.7,"top_p":0.8,"top_k":20,"seed":1`},
		// Temperature alone: the whole vocabulary's logits.
		{"temperature", `"temperature":1,"seed":1`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var benchTS, serverTS []float64
			for b.Loop() {
				b.StopTimer()
				benchTS = append(benchTS, benchTG(b, 128, "-p", "0", "-r", "1"))
				b.StartTimer()
				serverTS = append(serverTS, stream(c.sampling))
			}
			bench, server := median(benchTS), median(serverTS)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(server, "tok/s")
			b.ReportMetric(bench, "bench-tok/s")
			b.ReportMetric(server/bench, "of-bench")
		})
	}
}

// BenchmarkServeBatch measures -clients streaming clients at once against
// "inferno bench --parallel" at the same batch size: each iteration is a
// round in which every client sends a 128-token prompt at the same moment
// and generates 128 tokens. The server's aggregate decode rate is counted
// while every client decodes (from the last first token to the first last
// token: the steady state bench's S_TG measures). Metrics: tok/s, the
// rounds' median aggregate rate; bench-tok/s, bench's tg128 at the batch
// size; of-bench, their ratio (docs/PERF.md's floor: 0.8); ttft-ms and
// ttft-p90-ms, the median and 90th percentile of the time to first token
// (floor: a median under 100 ms).
func BenchmarkServeBatch(b *testing.B) {
	clients := *benchClients
	if clients < 1 {
		b.Fatalf("-clients %d", clients)
	}
	const prompt, gen = 128, 128
	sTG := benchTG(b, gen, "-p", fmt.Sprint(prompt), "--parallel", fmt.Sprint(clients), "-r", "2", "--ctx", "4096")
	s := startServe(b, *benchModel, "--backend", testBackend(), "--parallel", fmt.Sprint(clients), "--queue", fmt.Sprint(clients), "--ctx", "4096")
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
				b.Fatalf("client %d: %v", i, c.err)
			}
		}
		return cs
	}
	round(0) // warm up
	var rates, ttfts []float64
	r := 0
	for b.Loop() {
		r++
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
		if !t1.After(t0) {
			b.Fatalf("round %d: the clients never all decoded at once", r)
		}
		n := 0
		for _, c := range cs {
			for _, ts := range c.stamps {
				if ts.After(t0) && !ts.After(t1) {
					n++
				}
			}
		}
		rates = append(rates, float64(n)/t1.Sub(t0).Seconds())
	}
	rate := median(rates)
	slices.Sort(ttfts)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(rate, "tok/s")
	b.ReportMetric(sTG, "bench-tok/s")
	b.ReportMetric(rate/sTG, "of-bench")
	b.ReportMetric(ttfts[len(ttfts)/2], "ttft-ms")
	b.ReportMetric(ttfts[len(ttfts)*9/10], "ttft-p90-ms")
}
