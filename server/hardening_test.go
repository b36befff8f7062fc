package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// serveHTTP serves srv as serve does, through HTTPServer on a loopback
// listener that holds at most maxConns connections, and returns its
// address.
func serveHTTP(t *testing.T, srv *Server, maxConns int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	lim := LimitListener(ln, maxConns)
	hs.ConnState = lim.ConnState
	go hs.Serve(lim)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// slowBody opens a connection to addr and sends a chat request's header
// announcing a body of 1000 bytes, and the body's first byte. With
// trickle, it goes on sending a byte every 20 ms until stop is closed.
func slowBody(t *testing.T, addr string, trickle bool, stop <-chan struct{}) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	if trickle {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
	}
	return c
}

// expectTimeoutAnswer reads a 408 with "Connection: close" from c, then
// the connection's end, each in time, and returns when the answer came.
func expectTimeoutAnswer(t *testing.T, c net.Conn) time.Time {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	answered := time.Now()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("status %d, Connection %q: want 408 and close", resp.StatusCode, resp.Header.Get("Connection"))
	}
	if !bytes.Contains(body, []byte(`"request_timeout"`)) || bytes.Contains(body, []byte("127.0.0.1")) {
		t.Errorf("body %s: want the code request_timeout and no socket address", body)
	}
	// The server closes the connection: what the client still sends is
	// never read. (The close is a reset when the client's bytes were
	// left unread.)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var ne net.Error
	if n, err := io.Copy(io.Discard, br); errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the connection stays open after the answer (%d more bytes, %v)", n, err)
	}
	return answered
}

// TestSlowBody: a body that stalls, or trickles a byte at a time, gets 408
// and its connection closed within the read timeout.
func TestSlowBody(t *testing.T) {
	const timeout = 300 * time.Millisecond
	log := &syncBuffer{}
	ts := newTestServer(t, serverOpts{reply: "Hi", log: log, config: func(c *Config) { c.ReadTimeout = timeout }})
	addr := serveHTTP(t, ts.srv, 16)
	for _, trickle := range []bool{false, true} {
		t.Run(fmt.Sprintf("trickle=%v", trickle), func(t *testing.T) {
			stop := make(chan struct{})
			defer close(stop)
			start := time.Now()
			c := slowBody(t, addr, trickle, stop)
			// The upper bound leaves room for a loaded machine.
			if took := expectTimeoutAnswer(t, c).Sub(start); took < timeout || took > timeout+3*time.Second {
				t.Errorf("answered after %v, want about %v", took, timeout)
			}
		})
	}
	// The server answered them itself: no "client disconnected" line.
	waitFor(t, "two 408s in the metrics", func() bool { return requestCount(t, ts.srv, "chat_completions", "408") == 2 })
	if strings.Contains(log.String(), "request cancelled") {
		t.Errorf("a 408 logged as a cancelled request: %s", log.String())
	}
}

// TestSlowHeader: a header trickled a line at a time (slowloris) loses its
// connection within the read timeout.
func TestSlowHeader(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.ReadTimeout = timeout }})
	addr := serveHTTP(t, ts.srv, 16)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n")
	go func() {
		for i := 0; ; i++ {
			time.Sleep(20 * time.Millisecond)
			if _, err := fmt.Fprintf(c, "X-Pad-%d: x\r\n", i); err != nil {
				return
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Closed: an end of file, or a reset when the server closes with the
	// client's headers still unread; only the read deadline means open.
	if _, err := io.Copy(io.Discard, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the connection is still open after %v: %v", time.Since(start), err)
	}
	if took := time.Since(start); took > timeout+3*time.Second {
		t.Errorf("closed after %v, want about %v", took, timeout)
	}
}

// TestManySlowBodies: slow clients beyond --max-conns wait unaccepted, are
// answered in their turn, and leave no goroutine behind.
func TestManySlowBodies(t *testing.T) {
	const timeout, conns, limit = 300 * time.Millisecond, 6, 3
	ts := newTestServer(t, serverOpts{reply: "Hi", queue: conns, config: func(c *Config) { c.ReadTimeout = timeout }})
	addr := serveHTTP(t, ts.srv, limit)
	baseline := runtime.NumGoroutine()
	start := time.Now()
	stop := make(chan struct{})
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	for range conns {
		c := slowBody(t, addr, true, stop)
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := expectTimeoutAnswer(t, c)
			c.Close()
			mu.Lock()
			times = append(times, at.Sub(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	late := 0
	for _, d := range times {
		if d >= 2*timeout {
			late++ // accepted only once an earlier connection closed
		}
	}
	if late < conns-limit {
		t.Errorf("answers after %v: %d of %d came after two read timeouts, want at least %d (at most %d connections at once)",
			times, late, conns, conns-limit, limit)
	}
	close(stop)
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > baseline+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline+2 {
		t.Errorf("%d goroutines, %d before the slow clients", n, baseline)
	}
}

// TestIdleConnsGiveWay: with every place of --max-conns taken, by a
// request under way and an idle keep-alive connection, a new client is
// answered at once (the idle connection is closed for it), not after the
// idle timeout, and the request under way goes on to its end.
func TestIdleConnsGiveWay(t *testing.T) {
	const timeout = 4 * time.Second
	ts := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.ReadTimeout = timeout }})
	addr := serveHTTP(t, ts.srv, 2)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	health := func(c net.Conn, within time.Duration) error {
		_ = c.SetDeadline(time.Now().Add(within))
		if _, err := fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	busy := slowBody(t, addr, true, stop)
	idle := dial()
	for range 2 { // kept alive while no one waits
		if err := health(idle, 2*time.Second); err != nil {
			t.Fatalf("idle connection: %v", err)
		}
	}
	if err := health(dial(), 2*time.Second); err != nil {
		t.Fatalf("a new client with every place taken: %v", err)
	}
	if took := time.Since(start); took >= timeout {
		t.Errorf("the new client was answered after %v, once the busy connection had timed out", took)
	}
	if err := health(idle, time.Second); err == nil {
		t.Error("the idle connection still answers, want it closed for the new client")
	}
	expectTimeoutAnswer(t, busy) // the request under way was not cut
}

// pending returns the requests admitted and not yet in the scheduler.
func (s *Server) pendingRequests() int {
	s.admit.mu.Lock()
	defer s.admit.mu.Unlock()
	return s.admit.pending
}

// TestAdmission: requests whose bodies are still arriving (trickled, as
// the audit's 70 slow clients did) take no place of the queue: with the
// one slot free and no queue, a complete request beside them is served,
// not answered 503 until their read timeout.
func TestAdmission(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", parallel: 1, queue: 0})
	addr := serveHTTP(t, ts.srv, 16)
	stop := make(chan struct{})
	defer close(stop)
	for range 8 {
		slowBody(t, addr, true, stop)
	}
	time.Sleep(100 * time.Millisecond) // their handlers are reading
	if n := ts.srv.pendingRequests(); n != 0 {
		t.Errorf("%d requests admitted while their bodies arrive", n)
	}
	body := `{"messages":[{"role":"user","content":"Hi"}]}`
	if status, v, _ := ts.post(t, "/v1/chat/completions", body); status != 200 {
		t.Fatalf("beside 8 slow bodies: status %d %v", status, v)
	}
}

// TestPromptBytes: a prompt with more bytes than the context's tokens can
// hold is refused before it is rendered or tokenized, whatever endpoint
// takes it.
func TestPromptBytes(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", ctx: 64})
	limit := ts.model.promptBytes()
	if limit != 64*128 { // Qwen3's longest token is 128 spaces
		t.Fatalf("prompt byte limit %d, want %d", limit, 64*128)
	}
	big := strings.Repeat("a", limit+1)
	for _, tc := range []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"` + big + `"}]}`, "messages"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","description":"` + big + `"}}]}`, "messages"},
		{"/v1/completions", `{"prompt":"` + big + `"}`, "prompt"},
		{"/tokenize", `{"content":"` + big + `"}`, "content"},
		{"/apply-template", `{"messages":[{"role":"user","content":"` + big + `"}]}`, "messages"},
	} {
		status, v, _ := ts.post(t, tc.path, tc.body)
		e := errorOf(t, v)
		if status != 400 || e["code"] != "context_length_exceeded" || e["param"] != tc.param || !strings.Contains(e["message"].(string), "context is 64 tokens") {
			t.Errorf("%s: status %d %v", tc.path, status, e)
		}
	}
	// A prompt that fits the bytes but not the tokens is refused after
	// tokenizing, with the same code.
	status, v, _ := ts.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"`+strings.Repeat("word ", 100)+`"}]}`)
	if e := errorOf(t, v); status != 400 || e["code"] != "context_length_exceeded" {
		t.Errorf("too many tokens: status %d %v", status, e)
	}
}

// BenchmarkHugePrompt measures what chat requests whose content is 15 MB
// cost the server, one at a time and eight at once, on a model with
// Qwen3's context of 40960 tokens: the bytes allocated per request
// (-benchmem) and the peak of the live heap above what it was before
// (peak-MiB).
func BenchmarkHugePrompt(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("concurrent=%d", n), func(b *testing.B) {
			ts := newTestServer(b, serverOpts{reply: "Hi", ctx: 40960, maxBody: 32 << 20, queue: 64})
			body := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("word ", 3<<20) + `"}],"max_tokens":1}`)
			post := func() {
				resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 400 {
					b.Errorf("status %d", resp.StatusCode)
				}
			}
			peak := peakHeap(b)
			b.ReportAllocs()
			for b.Loop() {
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						post()
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(peak()/(1<<20), "peak-MiB")
		})
	}
}

// peakHeap samples the live heap every millisecond until the returned
// function is called, which returns its peak in bytes above the heap at
// the start (after a collection).
func peakHeap(b *testing.B) func() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var top uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() float64 {
		close(stop)
		<-done
		return float64(top) - float64(base)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHostCheck: with CheckHost, only loopback names and the allowed
// hosts are answered (DNS rebinding).
func TestHostCheck(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) {
		c.CheckHost = true
		c.AllowedHosts = []string{"inferno.internal"}
	}})
	for host, want := range map[string]int{
		"localhost": 200, "localhost:8080": 200, "LOCALHOST.:80": 200, "api.localhost": 200, "127.0.0.1:8080": 200, "127.1.2.3": 200,
		"[::1]:8080": 200, "[::ffff:127.0.0.1]": 200, "inferno.internal:8080": 200,
		"evil.example": 403, "evil.example:8080": 403, "192.168.1.1": 403, "localhost.evil.example": 403,
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/models", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
		if want == 403 && !bytes.Contains(b, []byte("host_not_allowed")) {
			t.Errorf("Host %q: %s", host, b)
		}
	}
	// Without CheckHost (a server on a public address, or with a key),
	// any Host is answered.
	open := newTestServer(t, serverOpts{reply: "Hi"})
	req, _ := http.NewRequest("GET", open.URL+"/health", nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("without CheckHost: status %d", resp.StatusCode)
	}
}

// TestOrigin: browser origins not allowed by CORSOrigins are refused, even
// for "simple" requests that need no preflight; allowed ones get CORS
// headers and preflight answers; clients without Origin are unaffected.
func TestOrigin(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.CORSOrigins = []string{"https://app.example"} }})
	chatBody := `{"messages":[{"role":"user","content":"Hi"}]}`
	do := func(method, origin, ctype string, hdr ...string) (*http.Response, string) {
		req, _ := http.NewRequest(method, ts.URL+"/v1/chat/completions", strings.NewReader(chatBody))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	// A web page's simple cross-origin POST.
	resp, b := do("POST", "https://evil.example", "text/plain")
	if resp.StatusCode != 403 || !strings.Contains(b, "origin_not_allowed") || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign origin: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do("POST", "null", "text/plain"); resp.StatusCode != 403 {
		t.Errorf("origin null: %d", resp.StatusCode)
	}
	if resp, _ := do("OPTIONS", "https://evil.example", "", "Access-Control-Request-Method", "POST"); resp.StatusCode != 403 {
		t.Errorf("foreign preflight: %d", resp.StatusCode)
	}
	resp, b = do("OPTIONS", "https://app.example", "", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
	if h := resp.Header; resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || h.Get("Access-Control-Allow-Headers") != "authorization, content-type" {
		t.Errorf("allowed preflight: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	resp, b = do("POST", "https://app.example", "application/json")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("allowed origin: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if resp, b := do("POST", "", "application/json"); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no origin: %d %s", resp.StatusCode, b)
	}
	// "*" allows every origin.
	any := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.CORSOrigins = []string{"*"} }})
	req, _ := http.NewRequest("GET", any.URL+"/v1/models", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 200 || r2.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("origin with *: %d %v", r2.StatusCode, r2.Header)
	}
}

// TestAuthScheme: the Bearer scheme is matched without case, and a 401
// says which scheme it wants.
func TestAuthScheme(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "s3cret"})
	for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret "} {
		resp, err := http.DefaultClient.Do(mustRequest(t, "GET", ts.URL+"/v1/models", "Authorization", h))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("Authorization %q: status %d", h, resp.StatusCode)
		}
	}
	for _, h := range []string{"", "Bearers3cret", "Basic s3cret", "bearer wrong"} {
		resp, err := http.DefaultClient.Do(mustRequest(t, "GET", ts.URL+"/v1/models", "Authorization", h))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q", h, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func mustRequest(t *testing.T, method, url string, hdr ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return req
}

// syncBuffer is a log sink the server's goroutines share.
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

// requestCount reads inferno_requests_total for endpoint and status.
func requestCount(t *testing.T, s *Server, endpoint, status string) float64 {
	t.Helper()
	mfs, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "inferno_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labels(m)["endpoint"] == endpoint && labels(m)["status"] == status {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestCancelled: a request whose client leaves before the first byte is
// counted with status 499, not 200, and every cancelled request leaves one
// log line with its id, route, tokens so far and reason.
func TestCancelled(t *testing.T) {
	log := &syncBuffer{}
	ts := newTestServer(t, serverOpts{reply: strings.Repeat("a ", 2000), parallel: 1, queue: 4, delay: 2 * time.Millisecond, log: log})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3000}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request was answered before its client left")
	}
	waitFor(t, "a 499 in the metrics", func() bool { return requestCount(t, ts.srv, "chat_completions", "499") == 1 })
	for _, status := range []string{"200", "500"} {
		if n := requestCount(t, ts.srv, "chat_completions", status); n != 0 {
			t.Errorf("%v requests counted as %s", n, status)
		}
	}
	waitFor(t, "the log line", func() bool { return strings.Contains(log.String(), "request cancelled") })
	line := log.String()
	for _, want := range []string{"id=chatcmpl-", "route=chat_completions", "tokens=", `reason="the client disconnected"`, "status=499"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %q: %s", want, line)
		}
	}
	if strings.Count(line, "request cancelled") != 1 {
		t.Errorf("want one line: %s", line)
	}

	// A stream the client leaves mid-way: one line, with the tokens sent.
	ctx2, cancel2 := context.WithCancel(context.Background())
	resp := openStream(t, ctx2, ts.URL+"/v1/completions", `{"prompt":"Hi","max_tokens":3000,"stream":true}`)
	cancel2()
	resp.Body.Close()
	waitFor(t, "the stream's log line", func() bool { return strings.Count(log.String(), "request cancelled") == 2 })
	if !strings.Contains(log.String(), "route=completions") || !strings.Contains(log.String(), "id=cmpl-") {
		t.Errorf("stream's line: %s", log.String())
	}
	// A finished request leaves no such line.
	if status, v, _ := ts.post(t, "/v1/completions", `{"prompt":"Hi","max_tokens":2}`); status != 200 {
		t.Fatal(status, v)
	}
	if n := strings.Count(log.String(), "request cancelled"); n != 2 {
		t.Errorf("%d cancelled lines after a finished request", n)
	}
}

// TestModelByID: GET /v1/models/{id} answers for each of the model's names
// and 404 in OpenAI's error shape for others.
func TestModelByID(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi"})
	for _, id := range []string{"tiny", "tiny-alias"} {
		resp, err := http.Get(ts.URL + "/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"`+id+`"`) || !strings.Contains(string(b), `"object":"model"`) {
			t.Errorf("%s: %d %s", id, resp.StatusCode, b)
		}
	}
	resp, err := http.Get(ts.URL + "/v1/models/Qwen/other")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"code":"model_not_found"`) {
		t.Errorf("unknown model: %d %s", resp.StatusCode, b)
	}
}

// TestToolArgumentsObject: a tool call's arguments given as a JSON object
// render as the same arguments given as a string.
func TestToolArgumentsObject(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi"})
	body := func(args string) string {
		return `{"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":` + args + `}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`
	}
	status, str, _ := ts.post(t, "/apply-template", body(`"{\"city\": \"Paris\", \"days\": 2}"`))
	if status != 200 {
		t.Fatal(status, str)
	}
	status, obj, _ := ts.post(t, "/apply-template", body(`{"city": "Paris", "days": 2}`))
	if status != 200 {
		t.Fatal(status, obj)
	}
	if str["prompt"] != obj["prompt"] || !strings.Contains(obj["prompt"].(string), "Paris") {
		t.Errorf("string arguments render\n%q\nobject arguments\n%q", str["prompt"], obj["prompt"])
	}
	if status, v, _ := ts.post(t, "/v1/chat/completions", body(`{"city": "Paris"}`)); status != 200 {
		t.Errorf("chat with object arguments: %d %v", status, v)
	}
	status, v, _ := ts.post(t, "/apply-template", body(`[1, 2]`))
	if e := errorOf(t, v); status != 400 || e["param"] != "messages[1].tool_calls[0].function.arguments" {
		t.Errorf("array arguments: %d %v", status, e)
	}
}

// FuzzGuard sends arbitrary Host and Origin headers: the answer is a
// success or a 403 in OpenAI's shape, never a panic, and a 403 names no
// more than a hundred bytes of the value.
//
//	go test ./server -run '^$' -fuzz FuzzGuard -fuzztime 30s
func FuzzGuard(f *testing.F) {
	for _, s := range [][2]string{
		{"localhost:8080", ""}, {"127.0.0.1", "http://localhost:3000"}, {"[::1]:80", "null"}, {"evil.example", "https://evil.example"},
		{"[::ffff:127.0.0.1]", ""}, {"inferno.lan:1", "https://app.example/"}, {"[", "\x00"}, {"LOCALHOST.", "*"},
		{"127.0.0.1:80", "http://127.0.0.1:80"}, {"inferno.lan:1", "https://inferno.lan:1"}, {"evil.example", "http://evil.example"},
	} {
		f.Add(s[0], s[1])
	}
	ts := newTestServer(f, serverOpts{reply: "Hi", config: func(c *Config) {
		c.CheckHost = true
		c.AllowedHosts = []string{"inferno.lan"}
		c.CORSOrigins = []string{"https://app.example"}
	}})
	f.Fuzz(func(t *testing.T, host, origin string) {
		req := httptest.NewRequest("GET", "/health", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		switch rec.Code {
		case 200:
		case 403:
			if !json.Valid(rec.Body.Bytes()) || rec.Body.Len() > 400 {
				t.Fatalf("403 body %q", rec.Body.Bytes())
			}
		default:
			t.Fatalf("Host %q Origin %q: status %d", host, origin, rec.Code)
		}
	})
}
