// Package webui is the chat page inferno serve answers at "/": a page of
// plain HTML, CSS and JavaScript modules embedded in the binary, which
// talks to the server's own /v1/models and /v1/chat/completions from the
// browser. It needs no network but the server's and no build step.
//
// The page is served at "/" and its files under "/ui/", each with its
// content type, an ETag (revalidated on every load, so a new binary's page
// replaces the old one at once) and headers that confine it: a
// Content-Security-Policy that allows only the server's own scripts,
// styles and connections, no framing, no sniffing and no referrer.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed ui
var files embed.FS

// Prefix is the path the page's files are served under.
const Prefix = "/ui/"

// ContentSecurityPolicy is the policy every answer of the handler carries:
// the page runs its own module scripts and styles only (no inline code),
// talks to its own origin only, and may not be framed.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// asset is one file of the page, read once.
type asset struct {
	name  string
	ctype string
	etag  string
	data  []byte
}

// contentTypes are the types of the page's files, by extension; a file of
// another extension is a mistake caught by the package's test.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Handler serves the page and its files; every other path, and a method
// other than GET and HEAD, goes to fallback (the server's own 404 and 405
// answers).
type Handler struct {
	assets   map[string]*asset // by URL path: "/" and "/ui/NAME"
	fallback http.Handler
}

// New returns the handler of the page, with fallback for what it does not
// serve.
func New(fallback http.Handler) *Handler {
	h := &Handler{assets: map[string]*asset{}, fallback: fallback}
	err := fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("webui: %s: no content type for its extension", p)
		}
		sum := sha256.Sum256(data)
		a := &asset{name: path.Base(p), ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, data: data}
		h.assets[Prefix+strings.TrimPrefix(p, "ui/")] = a
		if p == "ui/index.html" {
			h.assets["/"] = a
		}
		return nil
	})
	if err != nil {
		panic(err) // the embedded files are part of the binary
	}
	return h
}

// paths returns the URL paths the handler serves, "/" among them.
func (h *Handler) paths() []string {
	paths := make([]string, 0, len(h.assets))
	for p := range h.assets {
		paths = append(paths, p)
	}
	return paths
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.assets[r.URL.Path]
	if a == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		h.fallback.ServeHTTP(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", a.etag)
	// ServeContent answers HEAD, If-None-Match (304) and ranges.
	http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.data))
}
