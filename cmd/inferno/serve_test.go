package main

// Tests of "inferno serve" as a user runs it: the binary on a loopback
// port, the tiny golden model, the official OpenAI client.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

var loadDuration = flag.Duration("load-duration", 0, "how long TestServeLoad runs (0: 5s, 2s with -short; 30s for the full test)")

// serving is an "inferno serve" process.
type serving struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening addr=(http://[0-9.:]+)`)

// startServe runs "inferno serve" on a free loopback port and waits until
// /health says it is ready.
func startServe(t testing.TB, args ...string) *serving {
	t.Helper()
	s := &serving{stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(inferno, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(s.stderr.String()); m != nil && s.url == "" {
			s.url = m[1]
		}
		if s.url != "" {
			resp, err := http.Get(s.url + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return s
				}
			}
		}
		select {
		case err := <-s.done:
			s.done <- err // for the cleanup
			t.Fatalf("serve exited: %v\n%s", err, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve not ready after 30 s:\n%s", s.stderr.String())
	return nil
}

// waitExit waits up to 15 s for serve to exit (after a signal) and
// reports a failed exit.
func (s *serving) waitExit(t testing.TB) {
	t.Helper()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, s.stderr.String())
		}
		s.done <- nil
	case <-time.After(15 * time.Second):
		t.Fatal("serve still running 15 s after SIGTERM")
	}
}

func (s *serving) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(s.url+"/v1/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
}

// metric reads one sample from /metrics.
func (s *serving) metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestServe drives the real model through the server with the official
// client: greedy output equals the generate command's, seeds reproduce,
// top_k=1 is greedy, streams end properly.
func TestServe(t *testing.T) {
	t.Parallel()
	s := startServe(t, goldenModel, "--backend", testBackend(), "--parallel", "2")
	c := s.client()
	ctx := context.Background()

	// Greedy completions equal "inferno generate" on the same backend.
	out, errOut, code := run(t, "", "generate", goldenModel, "The quick brown fox", "-n", "12", "--backend", testBackend(), "--ignore-eos")
	if code != 0 {
		t.Fatalf("generate: %s", errOut)
	}
	want := strings.TrimSuffix(out, "\n")
	comp := openai.CompletionNewParams{Model: "tiny-q8_0", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("The quick brown fox")},
		MaxTokens: openai.Int(12), Temperature: openai.Float(0)}
	resp, err := c.Completions.New(ctx, comp, option.WithJSONSet("ignore_eos", true))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Text != want || resp.Usage.CompletionTokens != 12 || resp.Choices[0].FinishReason != "length" {
		t.Errorf("server %q (%d tokens, %s), generate %q", resp.Choices[0].Text, resp.Usage.CompletionTokens, resp.Choices[0].FinishReason, want)
	}

	// top_k = 1 at temperature 1 is greedy.
	comp.Temperature = openai.Float(1)
	resp, err = c.Completions.New(ctx, comp, option.WithJSONSet("ignore_eos", true), option.WithJSONSet("top_k", 1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Text != want {
		t.Errorf("top_k=1: %q, greedy %q", resp.Choices[0].Text, want)
	}

	// A seed reproduces a sampled reply; another seed gives another one.
	chat := func(seed int64) string {
		p := openai.ChatCompletionNewParams{Model: "tiny-q8_0", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story.")},
			MaxTokens: openai.Int(24), Temperature: openai.Float(1), Seed: openai.Int(seed)}
		r, err := c.Chat.Completions.New(ctx, p, option.WithJSONSet("ignore_eos", true))
		if err != nil {
			t.Fatal(err)
		}
		return r.Choices[0].Message.Content + string(r.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw())
	}
	a, b, other := chat(42), chat(42), chat(43)
	if a != b {
		t.Errorf("seed 42 twice: %q and %q", a, b)
	}
	if a == other {
		t.Errorf("seeds 42 and 43 both gave %q", a)
	}

	// A stream with usage ends with [DONE].
	body := `{"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":8,"stream_options":{"include_usage":true}}`
	hr, err := http.Post(s.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	if !bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")) || !bytes.Contains(raw, []byte(`"usage":{"prompt_tokens":9,`)) {
		t.Errorf("stream:\n%s", raw)
	}
}

// TestServeShutdown: SIGTERM lets a short request finish, cancels a long
// one after the grace period, and the process exits 0.
func TestServeShutdown(t *testing.T) {
	t.Parallel()
	s := startServe(t, goldenModel, "--backend", testBackend(), "--grace", "1s")
	long := `{"prompt":"Once upon a time","max_tokens":40000,"ignore_eos":true,"stream":true}`
	resp, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(long))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(br) // the stream ends once the grace period is over
	s.waitExit(t)
	if d := time.Since(start); d < 900*time.Millisecond || d > 10*time.Second {
		t.Errorf("shut down after %v with a grace of 1 s", d)
	}
	if !bytes.Contains(rest, []byte("shutting_down")) {
		t.Errorf("the cancelled stream does not say why: ...%q", rest[max(0, len(rest)-300):])
	}
}

// TestServeTrace: serve --trace prints the table of the operations its
// forward passes ran once it shuts down (on the GPU, the kernels of its
// passes other than decode steps).
func TestServeTrace(t *testing.T) {
	t.Parallel()
	s := startServe(t, goldenModel, "--backend", testBackend(), "--trace")
	body := `{"prompt":"Once upon a time","max_tokens":4}`
	resp, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.waitExit(t)
	out := s.stderr.String()
	if !strings.Contains(out, "trace (") || !strings.Contains(out, "total") {
		t.Errorf("no trace table after shutdown:\n%s", out)
	}
}

// TestServeLoad runs 32 concurrent streaming clients against --parallel 4
// for -load-duration: no errors but the queue's 503s, every stream ends
// with [DONE], and afterwards the server's goroutines and heap are back
// to where they started.
func TestServeLoad(t *testing.T) {
	t.Parallel()
	duration := *loadDuration
	if duration == 0 {
		duration = 5 * time.Second
		if testing.Short() {
			duration = 2 * time.Second
		}
	}
	s := startServe(t, goldenModel, "--backend", testBackend(), "--parallel", "4", "--queue", "8")
	warm, err := http.Post(s.url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"hi","max_tokens":4}`))
	if err != nil {
		t.Fatal(err)
	}
	warm.Body.Close()
	g0, heap0 := s.metric(t, "go_goroutines"), s.metric(t, "go_memstats_heap_alloc_bytes")
	var ok, busy, bad atomic.Int64
	var badMsg atomic.Value
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(end); n++ {
				body := fmt.Sprintf(`{"messages":[{"role":"user","content":"Client %d, request %d"}],"stream":true,"max_tokens":%d,"temperature":0.7,"seed":%d}`, i, n, 8+(i*7+n)%24, i)
				resp, err := http.Post(s.url+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					bad.Add(1)
					badMsg.Store(err.Error())
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					busy.Add(1)
					time.Sleep(20 * time.Millisecond)
				case resp.StatusCode == 200 && bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) && bytes.Contains(b, []byte(`"finish_reason":"`)):
					ok.Add(1)
				default:
					bad.Add(1)
					badMsg.Store(fmt.Sprintf("status %d: %.300s", resp.StatusCode, b))
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%v: %d streams completed, %d turned away with 503, %d errors", duration, ok.Load(), busy.Load(), bad.Load())
	if bad.Load() > 0 {
		t.Errorf("%d errors, e.g. %v", bad.Load(), badMsg.Load())
	}
	if ok.Load() == 0 {
		t.Error("no stream completed")
	}
	if r := s.metric(t, "inferno_num_requests_running"); r != 0 {
		t.Errorf("%v requests still running", r)
	}
	// Goroutines and heap settle back: idle connections close, and the
	// heap (live data and garbage not yet collected, at most about twice
	// the live data with GOGC=100) stays within the collector's bound.
	var g1, heap1 float64
	for range 50 {
		http.DefaultClient.CloseIdleConnections()
		g1, heap1 = s.metric(t, "go_goroutines"), s.metric(t, "go_memstats_heap_alloc_bytes")
		if g1 <= g0+2 && heap1 <= 2*heap0+16<<20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("goroutines %v -> %v, heap %.1f -> %.1f MiB", g0, g1, heap0/(1<<20), heap1/(1<<20))
	if g1 > g0+2 {
		t.Errorf("goroutines %v after the load, %v before", g1, g0)
	}
	if heap1 > 2*heap0+16<<20 {
		t.Errorf("heap %.1f MiB after the load, %.1f MiB before", heap1/(1<<20), heap0/(1<<20))
	}
}
