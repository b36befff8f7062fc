package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// fallback stands for the server's own answers to what the page does not
// serve.
var fallback = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusTeapot)
})

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestPage: "/" is the page, with its content type and the headers that
// confine it; HEAD answers the same without the body; a second load with
// the ETag gets 304.
func TestPage(t *testing.T) {
	h := New(fallback)
	rec := get(t, h, "GET", "/")
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(body, `<script type="module" src="/ui/app.js">`) {
		t.Fatalf("GET /: %d %v %.200s", rec.Code, rec.Header(), body)
	}
	for k, v := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-cache",
	} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(ContentSecurityPolicy, "default-src 'self'") || strings.Contains(ContentSecurityPolicy, "unsafe") {
		t.Errorf("policy %q", ContentSecurityPolicy)
	}
	head := get(t, h, "HEAD", "/")
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != rec.Header().Get("Content-Length") ||
		head.Header().Get("Content-Security-Policy") == "" {
		t.Errorf("HEAD /: %d %v %d bytes", head.Code, head.Header(), head.Body.Len())
	}
	etag := rec.Header().Get("ETag")
	if again := get(t, h, "GET", "/", "If-None-Match", etag); etag == "" || again.Code != http.StatusNotModified {
		t.Errorf("GET / with If-None-Match %s: %d", etag, again.Code)
	}
}

// TestAssets: every file the page names (in its HTML and its modules'
// imports) is served with its type, and nothing else under /ui/ is.
func TestAssets(t *testing.T) {
	h := New(fallback)
	want := map[string]string{
		"/ui/app.js": "text/javascript; charset=utf-8", "/ui/style.css": "text/css; charset=utf-8",
		"/ui/icon.svg": "image/svg+xml", "/ui/markdown.js": "text/javascript; charset=utf-8",
	}
	for p, ctype := range want {
		rec := get(t, h, "GET", p)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != ctype || rec.Body.Len() == 0 || rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d %v", p, rec.Code, rec.Header())
		}
	}
	// References: src and href in the HTML, import specifiers in modules.
	refs := regexp.MustCompile(`(?:src|href)="(/ui/[^"]+)"|from "\./([^"]+)"`)
	served := map[string]bool{}
	for _, p := range h.paths() {
		served[p] = true
	}
	for _, p := range h.paths() {
		for _, m := range refs.FindAllStringSubmatch(get(t, h, "GET", p).Body.String(), -1) {
			ref := m[1]
			if ref == "" {
				ref = Prefix + m[2]
			}
			if !served[ref] {
				t.Errorf("%s names %s, which is not served", p, ref)
			}
		}
	}
	for _, p := range []string{"/ui/", "/ui/nope.js", "/ui/../webui.go", "/index.html", "/ui/app.js/x", "/v1/models"} {
		if rec := get(t, h, "GET", p); rec.Code != http.StatusTeapot {
			t.Errorf("GET %s: %d, want the fallback", p, rec.Code)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		if rec := get(t, h, m, "/"); rec.Code != http.StatusTeapot {
			t.Errorf("%s /: %d, want the fallback", m, rec.Code)
		}
	}
}

// TestNoInlineCode: the policy forbids inline scripts, styles and event
// handlers, so the page must have none (the browser would drop them).
func TestNoInlineCode(t *testing.T) {
	h := New(fallback)
	page := get(t, h, "GET", "/").Body.String()
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), regexp.MustCompile(`<style`), regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`(?:src|href)="(?:https?:)?//`),
	} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("index.html has %q", m)
		}
	}
	for _, p := range h.paths() {
		b, _ := io.ReadAll(get(t, h, "GET", p).Body)
		if regexp.MustCompile(`\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function`).Match(b) {
			t.Errorf("%s writes HTML or code from strings", p)
		}
	}
}
