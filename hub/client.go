package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultEndpoint is the hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Client resolves references against the hub and downloads files into
// its cache. The zero value is not usable; FromEnv makes one.
type Client struct {
	// Endpoint is the hub's base URL, without a trailing '/'.
	Endpoint string
	// Token, when set, is sent to the hub as "Authorization: Bearer
	// TOKEN" (never to another host a download is redirected to).
	Token string
	// Cache is the hub cache folder (CacheDir).
	Cache string
	// Offline answers from the cache alone, never touching the network.
	Offline bool
	// HTTP sends the requests; nil means a client with no overall time
	// limit (downloads take long) but a limit on waiting for headers.
	HTTP *http.Client
	// Progress, when set, is called as a download advances: the file's
	// path in the repository, the bytes present and the file's size.
	Progress func(file string, have, size int64)
	// Info, when set, receives one line for each thing worth saying that
	// is not an error: a default taken, a resumed download, a wait.
	Info io.Writer
	// Retries is how many times in a row a transfer that breaks is
	// resumed without receiving a byte before Fetch gives up; 0 means 5.
	Retries int
	// RetryDelay is the wait before the first retry, doubling after
	// each; 0 means one second.
	RetryDelay time.Duration
	// StallTimeout ends a transfer (to be resumed) when no byte has
	// arrived for this long; 0 means one minute.
	StallTimeout time.Duration
}

// FromEnv returns a client configured as huggingface_hub configures
// itself: HF_ENDPOINT, HF_TOKEN (or HUGGING_FACE_HUB_TOKEN, or the token
// file $HF_TOKEN_PATH, default $HF_HOME/token), the cache folder of
// CacheDir and HF_HUB_OFFLINE (1, ON, YES or TRUE).
func FromEnv() (*Client, error) {
	dir, err := CacheDir()
	if err != nil {
		return nil, err
	}
	c := &Client{Endpoint: DefaultEndpoint, Cache: dir}
	if e := os.Getenv("HF_ENDPOINT"); e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("HF_ENDPOINT %q: want an http or https URL", e)
		}
		c.Endpoint = strings.TrimRight(e, "/")
	}
	c.Token = os.Getenv("HF_TOKEN")
	if c.Token == "" {
		c.Token = os.Getenv("HUGGING_FACE_HUB_TOKEN")
	}
	if c.Token == "" {
		path := os.Getenv("HF_TOKEN_PATH")
		if path == "" {
			if home := os.Getenv("HF_HOME"); home != "" {
				path = filepath.Join(home, "token")
			} else if h, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(h, ".cache", "huggingface", "token")
			}
		}
		if b, err := os.ReadFile(path); err == nil && path != "" {
			c.Token = strings.TrimSpace(string(b))
		}
	}
	switch strings.ToUpper(os.Getenv("HF_HUB_OFFLINE")) {
	case "1", "ON", "YES", "TRUE":
		c.Offline = true
	}
	return c, nil
}

// Snapshot is what a reference resolved to: one commit of a repository
// and the files chosen from it (several for a split GGUF file, its parts
// in order).
type Snapshot struct {
	Repo     string
	Revision string
	Commit   string
	Files    []string
	// Note says which default was taken or why the cache answered, if
	// anything; empty otherwise.
	Note string
	// Cached is true when the snapshot came from the cache alone.
	Cached bool
}

// Resolve finds the commit a reference's revision names and chooses its
// files: from the hub's listing of the repository, or, offline or when
// the hub cannot be reached at all, from the cache.
func (c *Client) Resolve(ctx context.Context, ref Ref) (*Snapshot, error) {
	if err := CheckRepo(ref.Repo); err != nil {
		return nil, err
	}
	rev := ref.revision()
	if err := checkRevision(rev); err != nil {
		return nil, err
	}
	if c.Offline {
		s, err := c.resolveCached(ref)
		if errors.Is(err, errNotCached) {
			return nil, fmt.Errorf("%s: %w (%s) and working offline (--offline or HF_HUB_OFFLINE)", ref, err, c.Cache)
		}
		return s, err
	}
	var info struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			RFilename string `json:"rfilename"`
		} `json:"siblings"`
	}
	u := c.Endpoint + "/api/models/" + ref.Repo + "/revision/" + url.PathEscape(rev)
	err := c.getJSON(ctx, u, ref.Repo, &info)
	var netErr *transportError
	if errors.As(err, &netErr) && ctx.Err() == nil {
		if s, cerr := c.resolveCached(ref); cerr == nil {
			s.Note = strings.TrimSpace(fmt.Sprintf("%v; using the cached copy\n%s", netErr.err, s.Note))
			return s, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if !isCommit(info.SHA) {
		return nil, fmt.Errorf("%s: the hub's listing of revision %s has no commit (%q)", ref.Repo, rev, info.SHA)
	}
	files := make([]string, 0, len(info.Siblings))
	for _, s := range info.Siblings {
		if checkFile(s.RFilename) == nil {
			files = append(files, s.RFilename)
		}
	}
	picked, note, err := selectFiles(ref.Repo, files, ref)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Repo: ref.Repo, Revision: rev, Commit: info.SHA, Files: picked, Note: note}, nil
}

// resolveCached resolves a reference from the cache alone.
func (c *Client) resolveCached(ref Ref) (*Snapshot, error) {
	ch := newCache(c.Cache, ref.Repo)
	commit, err := ch.commit(ref.revision())
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNotCached
	}
	if err != nil {
		return nil, err
	}
	files, err := ch.files(commit)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(files) == 0 {
		return nil, errNotCached
	}
	if err != nil {
		return nil, fmt.Errorf("the hub cache: %w", err)
	}
	picked, note, err := selectFiles(ref.Repo, files, ref)
	if err != nil {
		return nil, fmt.Errorf("%w (looking in the cache only)", err)
	}
	return &Snapshot{Repo: ref.Repo, Revision: ref.revision(), Commit: commit, Files: picked, Note: note, Cached: true}, nil
}

// transportError is a request that got no HTTP answer at all.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// client returns the HTTP client: c.HTTP, or one on the package's shared
// transport (callers set a CheckRedirect that never carries the token to
// a host other than the first request's).
func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Transport: transport()}
}

// transport is the default client's transport, made once so that the
// requests of a pull (the listing, a HEAD and a GET per file, the
// retries) reuse its connections rather than each open its own and leave
// it idle: net/http's, with a limit on waiting for headers.
var transport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return t
})

// request makes a request to the hub, with the token when it goes to the
// hub's own host.
func (c *Client) request(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "inferno")
	if c.Token != "" && sameHost(u, c.Endpoint) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Host, ub.Host) && ua.Scheme == ub.Scheme
}

// noTokenElsewhere is a CheckRedirect that drops the Authorization header
// when a redirect leaves the first request's host (Go itself keeps it for
// a subdomain, and the CDN's URLs are signed already).
func noTokenElsewhere(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !strings.EqualFold(req.URL.Host, via[0].URL.Host) || req.URL.Scheme != via[0].URL.Scheme {
		req.Header.Del("Authorization")
	}
	return nil
}

// getJSON fetches a JSON document from the hub.
func (c *Client) getJSON(ctx context.Context, u, repo string, v any) error {
	req, err := c.request(ctx, http.MethodGet, u)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	hc := *c.client()
	hc.CheckRedirect = noTokenElsewhere
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &transportError{fmt.Errorf("%s: the hub is not reachable: %w", repo, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.statusError(resp, repo, "")
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v); err != nil {
		return fmt.Errorf("%s: reading the hub's answer from %s: %w", repo, u, err)
	}
	return nil
}

// statusError explains a response the hub refused, with the hub's own
// X-Error-Message where it gives one. file is "" for the repository.
func (c *Client) statusError(resp *http.Response, repo, file string) error {
	what := repo
	if file != "" {
		what = repo + ": " + file
	}
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" && resp.Request != nil && resp.Request.Method != http.MethodHead {
		var body struct {
			Error string `json:"error"`
		}
		if b, err := io.ReadAll(io.LimitReader(resp.Body, 4096)); err == nil && json.Unmarshal(b, &body) == nil {
			msg = body.Error
		}
	}
	if msg != "" {
		msg = " (" + msg + ")"
	}
	code := resp.Header.Get("X-Error-Code")
	switch {
	case resp.StatusCode == http.StatusUnauthorized && c.Token == "":
		return fmt.Errorf("%s: HTTP 401%s: the repository does not exist, or it is private or gated and needs a token: set HF_TOKEN", what, msg)
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s: HTTP 401%s: the repository does not exist, or the token in HF_TOKEN is invalid or has no access to it", what, msg)
	case resp.StatusCode == http.StatusForbidden && code == "GatedRepo":
		return fmt.Errorf("%s: HTTP 403%s: the repository is gated; ask for access on its page at %s/%s", what, msg, c.Endpoint, repo)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: HTTP 403%s: the token has no permission to read it", what, msg)
	case resp.StatusCode == http.StatusNotFound && code == "RevisionNotFound":
		return fmt.Errorf("%s: HTTP 404%s: no such revision", what, msg)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: HTTP 404%s: not found", what, msg)
	}
	return &statusErr{code: resp.StatusCode, msg: fmt.Sprintf("%s: HTTP %s%s", what, resp.Status, msg)}
}

// statusErr is an HTTP status that a retry may cure (429, 5xx) or not.
type statusErr struct {
	code int
	msg  string
}

func (e *statusErr) Error() string { return e.msg }

// expired reports a refusal that a signed URL gone stale gets.
func (e *statusErr) expired() bool {
	return e.code == http.StatusForbidden || e.code == http.StatusUnauthorized || e.code == http.StatusGone
}

func (e *statusErr) retryable() bool {
	return e.code == http.StatusTooManyRequests || e.code == http.StatusRequestTimeout || e.code >= 500
}
