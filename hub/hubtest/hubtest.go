// Package hubtest is a stand-in for the Hugging Face Hub on the loopback
// interface, for tests that must not reach the internet. It answers as
// the hub does: the revision listing GET /api/models/OWNER/NAME/revision/REV,
// HEAD and GET of /OWNER/NAME/resolve/REV/PATH with X-Repo-Commit and, for
// LFS files (*.gguf), a redirect to a second server standing for the CDN
// with X-Linked-Etag (the sha256) and X-Linked-Size; 401 for a repository
// that is missing or private without the token; Range requests answered
// 206 or 416 by the CDN. Faults can be injected: transfers cut after some
// bytes, corrupted content, Range requests ignored.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Request is one request either server received.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string
	Auth   string // the Authorization header
	Range  string // the Range header
}

// Server is the stand-in: Hub answers the API and resolve URLs, CDN
// serves LFS content.
type Server struct {
	Hub, CDN *httptest.Server
	// Token is the bearer token private repositories require.
	Token string

	mu       sync.Mutex
	repos    map[string]*repo
	renamed  map[string]string // old id -> new id
	blobs    map[string][]byte // sha256 -> content served by the CDN
	requests []Request
	cuts     int   // transfers still to cut
	cutAfter int64 // bytes each cut transfer sends
	stall    bool  // cut transfers stall instead of closing
	noRange  bool
	rate     int64 // bytes per second the CDN sends; 0 is no limit
	sig      int   // the CDN URLs' signature; Expire changes it
}

type repo struct {
	commit  string
	files   map[string][]byte
	sums    map[string]string // file -> sha256, hex
	private bool
}

// New starts the stand-in; Close stops it.
func New() *Server {
	s := &Server{repos: map[string]*repo{}, renamed: map[string]string{}, blobs: map[string][]byte{}, Token: "hf_test_token"}
	s.Hub = httptest.NewServer(http.HandlerFunc(s.hub))
	s.CDN = httptest.NewServer(http.HandlerFunc(s.cdn))
	return s
}

// URL is the hub's address, the value for HF_ENDPOINT.
func (s *Server) URL() string { return s.Hub.URL }

// Close stops both servers.
func (s *Server) Close() {
	s.Hub.Close()
	s.CDN.Close()
}

// Add publishes a repository with the given files and returns its
// commit. A private repository answers only requests with the token.
func (s *Server) Add(id string, files map[string][]byte, private bool) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha1.New()
	fmt.Fprintln(h, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	sums := map[string]string{}
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		sums[n] = hex.EncodeToString(sum[:])
		fmt.Fprintln(h, n, sums[n])
		s.blobs[sums[n]] = files[n]
	}
	r := &repo{commit: hex.EncodeToString(h.Sum(nil)), files: files, sums: sums, private: private}
	s.repos[id] = r
	return r.commit
}

// Rename moves a repository to a new id; requests for the old one are
// redirected with a relative Location, as the hub does.
func (s *Server) Rename(old, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id] = s.repos[old]
	delete(s.repos, old)
	s.renamed[old] = id
}

// Cut makes the next n content transfers stop after bytes bytes, the
// connection closed mid-body.
func (s *Server) Cut(n int, bytes int64) {
	s.mu.Lock()
	s.cuts, s.cutAfter, s.stall = n, bytes, false
	s.mu.Unlock()
}

// Stall makes the next n content transfers stop sending after bytes
// bytes and hold the connection open until the client gives up.
func (s *Server) Stall(n int, bytes int64) {
	s.mu.Lock()
	s.cuts, s.cutAfter, s.stall = n, bytes, true
	s.mu.Unlock()
}

// Corrupt changes one byte of the content the CDN serves for a file,
// leaving the hub's sha256 of it as it was.
func (s *Server) Corrupt(id, file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	content := s.repos[id].files[file]
	sum := sha256.Sum256(content)
	bad := bytes.Clone(content)
	bad[len(bad)/2] ^= 0xff
	s.blobs[hex.EncodeToString(sum[:])] = bad
}

// Truncate makes the CDN hold only the first n bytes of a file while the
// hub still gives its full size, as a broken mirror might.
func (s *Server) Truncate(id, file string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[s.repos[id].sums[file]] = s.repos[id].files[file][:n]
}

// Expire makes the CDN refuse (403) the URLs the hub gave so far, as
// signed URLs expire.
func (s *Server) Expire() {
	s.mu.Lock()
	s.sig++
	s.mu.Unlock()
}

// IgnoreRange makes the CDN answer Range requests with the whole file
// (200), as some CDNs do.
func (s *Server) IgnoreRange(on bool) {
	s.mu.Lock()
	s.noRange = on
	s.mu.Unlock()
}

// SetRate limits the CDN to bytes per second (0: no limit), so that a
// test can interrupt a transfer in the middle.
func (s *Server) SetRate(bytes int64) {
	s.mu.Lock()
	s.rate = bytes
	s.mu.Unlock()
}

// Requests returns the requests received so far and forgets them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

func (s *Server) log(server string, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Server: server, Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Range: r.Header.Get("Range")})
	s.mu.Unlock()
}

// lookup finds the repository a path starts with and checks access, as
// the hub does: 401 for a missing repository, for a private one without
// a token and for a wrong token.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request, owner, name string) *repo {
	s.mu.Lock()
	rp := s.repos[owner+"/"+name]
	s.mu.Unlock()
	auth := r.Header.Get("Authorization")
	switch {
	case auth != "" && auth != "Bearer "+s.Token:
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return nil
	case rp == nil && auth == "", rp != nil && rp.private && auth == "":
		hubError(w, http.StatusUnauthorized, "RepoNotFound", "Repository not found")
		return nil
	case rp == nil:
		hubError(w, http.StatusNotFound, "RepoNotFound", "Repository not found")
		return nil
	}
	return rp
}

func hubError(w http.ResponseWriter, code int, errCode, msg string) {
	if errCode != "" {
		w.Header().Set("X-Error-Code", errCode)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (s *Server) hub(w http.ResponseWriter, r *http.Request) {
	s.log("hub", r)
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
	for _, i := range []int{0, 2} {
		if len(parts) < i+2 {
			continue
		}
		s.mu.Lock()
		id, ok := s.renamed[parts[i]+"/"+parts[i+1]]
		s.mu.Unlock()
		if ok {
			old := "/" + parts[i] + "/" + parts[i+1] + "/"
			w.Header().Set("Location", strings.Replace(r.URL.RequestURI(), old, "/"+id+"/", 1))
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
	}
	switch {
	case len(parts) == 5 && parts[0] == "api" && parts[1] == "models" && strings.HasPrefix(parts[4], "revision/"):
		// /api/models/OWNER/NAME/revision/REV
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rp := s.lookup(w, r, parts[2], parts[3])
		if rp == nil {
			return
		}
		rev := strings.TrimPrefix(parts[4], "revision/")
		if rev != "main" && rev != rp.commit {
			hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
			return
		}
		type sibling struct {
			RFilename string `json:"rfilename"`
		}
		info := struct {
			ID       string    `json:"id"`
			SHA      string    `json:"sha"`
			Siblings []sibling `json:"siblings"`
		}{ID: parts[2] + "/" + parts[3], SHA: rp.commit}
		for n := range rp.files {
			info.Siblings = append(info.Siblings, sibling{n})
		}
		slices.SortFunc(info.Siblings, func(a, b sibling) int { return strings.Compare(a.RFilename, b.RFilename) })
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(info)
	case len(parts) == 5 && parts[2] == "resolve":
		// /OWNER/NAME/resolve/REV/PATH
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rp := s.lookup(w, r, parts[0], parts[1])
		if rp == nil {
			return
		}
		rev, file := parts[3], parts[4]
		if rev != "main" && rev != rp.commit {
			hubError(w, http.StatusNotFound, "RevisionNotFound", "Invalid rev id: "+rev)
			return
		}
		w.Header().Set("X-Repo-Commit", rp.commit)
		content, ok := rp.files[file]
		if !ok {
			hubError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
			return
		}
		if !strings.HasSuffix(file, ".gguf") {
			// A regular git file: its etag is the git blob id.
			h := sha1.New()
			fmt.Fprintf(h, "blob %d\x00", len(content))
			h.Write(content)
			w.Header().Set("ETag", `"`+hex.EncodeToString(h.Sum(nil))+`"`)
			http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(content))
			return
		}
		etag := rp.sums[file]
		w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(content)))
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef01234567"`) // the pointer file's
		s.mu.Lock()
		sig := s.sig
		s.mu.Unlock()
		w.Header().Set("Location", fmt.Sprintf("%s/blobs/%s?X-Amz-Signature=%d", s.CDN.URL, etag, sig))
		w.WriteHeader(http.StatusFound)
	default:
		hubError(w, http.StatusNotFound, "", "Not found: "+r.URL.Path)
	}
}

func (s *Server) cdn(w http.ResponseWriter, r *http.Request) {
	s.log("cdn", r)
	s.mu.Lock()
	content, ok := s.blobs[strings.TrimPrefix(r.URL.Path, "/blobs/")]
	cut := s.cuts > 0 && r.Method == http.MethodGet
	if cut {
		s.cuts--
	}
	after, noRange, rate, stall := s.cutAfter, s.noRange, s.rate, s.stall
	sig := fmt.Sprint(s.sig)
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("X-Amz-Signature") != sig {
		http.Error(w, "AccessDenied", http.StatusForbidden)
		return
	}
	if noRange {
		r.Header.Del("Range")
	}
	var out http.ResponseWriter = w
	if cut {
		out = &cutWriter{ResponseWriter: w, left: after}
		if stall {
			out.(*cutWriter).stall = r.Context().Done()
		}
	}
	if rate > 0 {
		out = &slowWriter{ResponseWriter: out, rate: rate}
	}
	http.ServeContent(out, r, "", time.Time{}, bytes.NewReader(content))
}

// cutWriter sends left bytes of the body, then drops the connection, or
// when stall is set waits for it to be closed.
type cutWriter struct {
	http.ResponseWriter
	left  int64
	stall <-chan struct{}
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	c.ResponseWriter.Write(p[:c.left])
	c.ResponseWriter.(http.Flusher).Flush()
	if c.stall != nil {
		<-c.stall
	}
	panic(http.ErrAbortHandler)
}

// slowWriter sends at most rate bytes a second.
type slowWriter struct {
	http.ResponseWriter
	rate int64
}

func (s *slowWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(int64(len(p)), max(s.rate/10, 1))
		m, err := s.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[k:]
		time.Sleep(time.Duration(k) * time.Second / time.Duration(s.rate))
	}
	return n, nil
}
