package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"inferno/server/webui"
)

// TestChatPage: the server answers "/" and the page's files with the page
// (GET and HEAD, unauthenticated even with a key: it holds no data); other
// paths keep their JSON 404, and other methods on "/" get 405. With
// NoWebUI there is no page.
func TestChatPage(t *testing.T) {
	ts := newTestServer(t, serverOpts{reply: "Hi", apiKey: "k"})
	do := func(method, path string) (*http.Response, string) {
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, body := do("GET", "/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		resp.Header.Get("Content-Security-Policy") != webui.ContentSecurityPolicy || !strings.Contains(body, "/ui/app.js") {
		t.Fatalf("GET /: %d %v %.100s", resp.StatusCode, resp.Header, body)
	}
	if resp, body := do("HEAD", "/"); resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD /: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	for _, p := range []string{"/ui/app.js", "/ui/api.js", "/ui/store.js", "/ui/markdown.js", "/ui/style.css", "/ui/icon.svg"} {
		if resp, body := do("GET", p); resp.StatusCode != 200 || body == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/nope", 404}, {"GET", "/nope", 404}, {"GET", "/ui/nope.js", 404}, {"GET", "/ui/", 404},
		{"GET", "/index.html", 404}, {"POST", "/", 405}, {"DELETE", "/ui/app.js", 405}, {"POST", "/v1/nope", 404},
	} {
		resp, body := do(c.method, c.path)
		var v struct {
			Error struct{ Message string } `json:"error"`
		}
		if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &v) != nil || v.Error.Message == "" {
			t.Errorf("%s %s: %d %q, want %d with a JSON error", c.method, c.path, resp.StatusCode, body, c.status)
		}
	}
	if resp, _ := do("GET", "/v1/models"); resp.StatusCode != 401 {
		t.Errorf("GET /v1/models without the key: %d", resp.StatusCode)
	}
	// NoWebUI: "/" and the files are paths without an endpoint.
	bare := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.NoWebUI = true }})
	for _, p := range []string{"/", "/ui/app.js"} {
		resp, err := http.Get(bare.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("NoWebUI: GET %s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// TestSameOrigin: the page's own requests, which carry an Origin equal to
// the server's scheme://Host, pass the guard without --cors-origin; an
// origin a DNS rebinding could forge (a name not checked, no key) does not.
func TestSameOrigin(t *testing.T) {
	chat := `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}`
	try := func(ts *testServer, host, origin string, hdr ...string) int {
		t.Helper()
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chat))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		ts.srv.ServeHTTP(rec, req)
		if rec.Code == 200 && rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Host %s Origin %s: CORS headers on a same-origin answer", host, origin)
		}
		return rec.Code
	}
	// On loopback without a key (CheckHost), as serve runs by default.
	loop := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.CheckHost = true }})
	for _, c := range []struct {
		host, origin string
		hdr          []string
		status       int
	}{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", nil, 200},
		{"localhost:8080", "http://LOCALHOST:8080", nil, 200},
		{"[::1]:8080", "http://[::1]:8080", nil, 200},
		{"127.0.0.1:8080", "http://127.0.0.1:8081", nil, 403},  // another port, another origin
		{"127.0.0.1:8080", "https://127.0.0.1:8080", nil, 403}, // another scheme
		{"127.0.0.1:8080", "https://127.0.0.1:8080", []string{"X-Forwarded-Proto", "https"}, 200},
		{"127.0.0.1:8080", "http://localhost:8080", nil, 403},
		{"127.0.0.1:8080", "null", nil, 403},
		{"evil.example:8080", "http://evil.example:8080", nil, 403}, // the Host check
	} {
		if got := try(loop, c.host, c.origin, c.hdr...); got != c.status {
			t.Errorf("loopback: Host %s Origin %s %v: %d, want %d", c.host, c.origin, c.hdr, got, c.status)
		}
	}
	// On a network address without a key: addresses and listed names only,
	// since a rebinding name's page would share its origin with its Host.
	lan := newTestServer(t, serverOpts{reply: "Hi", config: func(c *Config) { c.AllowedHosts = []string{"inferno.lan"} }})
	for _, c := range []struct {
		host, origin string
		status       int
	}{
		{"192.168.1.5:8080", "http://192.168.1.5:8080", 200},
		{"[fd00::5]:8080", "http://[fd00::5]:8080", 200},
		{"inferno.lan:8080", "http://inferno.lan:8080", 200},
		{"evil.example:8080", "http://evil.example:8080", 403},
		{"192.168.1.5:8080", "http://evil.example:8080", 403},
	} {
		if got := try(lan, c.host, c.origin); got != c.status {
			t.Errorf("network: Host %s Origin %s: %d, want %d", c.host, c.origin, got, c.status)
		}
	}
	// With a key, any Host's own origin passes the guard, and the key
	// decides.
	keyed := newTestServer(t, serverOpts{reply: "Hi", apiKey: "k"})
	if got := try(keyed, "chat.example", "http://chat.example"); got != 401 {
		t.Errorf("keyed, no key: %d, want 401", got)
	}
	if got := try(keyed, "chat.example", "http://chat.example", "Authorization", "Bearer k"); got != 200 {
		t.Errorf("keyed, with the key: %d, want 200", got)
	}
	if got := try(keyed, "chat.example", "http://other.example", "Authorization", "Bearer k"); got != 403 {
		t.Errorf("keyed, another origin: %d, want 403", got)
	}
}
