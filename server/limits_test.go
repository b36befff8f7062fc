package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestSilentConnsGiveWay: with every place of --max-conns taken by
// connections that never send a request, a new client is answered once
// one of them has been silent for silentGrace (it is closed for the
// client), not after the read timeout.
func TestSilentConnsGiveWay(t *testing.T) {
	const timeout = 5 * time.Second
	ts := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.ReadTimeout = timeout }})
	addr := serveHTTP(t, ts.srv, 2)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(50 * time.Millisecond) // both accepted, in StateNew
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a new client beside 2 silent connections: %v", err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != 200 || took > silentGrace+time.Second {
		t.Errorf("status %d after %v: want 200 within %v", resp.StatusCode, took, silentGrace+time.Second)
	}
}

// TestBodyLimits: a Content-Length over the body cap is answered 413 at
// once (the body never sent, nor waited for), and connections that
// announce large bodies and send a byte hold a small buffer each, not
// what they announce.
func TestBodyLimits(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", queue: 64, config: func(c *Config) {
		c.ReadTimeout = 10 * time.Second
		c.MaxBodyBytes = 16 << 20
	}})
	addr := serveHTTP(t, ts.srv, 64)
	dial := func(length int64) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", length)
		return c
	}
	start := time.Now()
	c := dial(16<<20 + 1)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a body over the cap: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close || !bytes.Contains(body, []byte(`"request_too_large"`)) {
		t.Errorf("status %d, close %v, %s: want 413 request_too_large and close", resp.StatusCode, resp.Close, body)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("answered after %v", took)
	}

	// 32 connections announcing 16 MB each.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 32 {
		dial(16 << 20)
	}
	time.Sleep(200 * time.Millisecond) // the handlers reach their reads
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("32 bodies announced at 16 MB, one byte sent: the heap grew %d MB", grew>>20)
	}
}
