package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"inferno/outfile"
)

// Fetch makes each file of a snapshot present in the cache and returns
// their local paths (snapshots/COMMIT/FILE), in the snapshot's order. A
// file already there costs no request. A download goes to
// blobs/ETAG.incomplete first, continues from what an earlier run left
// there, and enters the cache only once its sha256 matches the hub's.
// When ctx ends the partial file stays for the next run to continue.
func (c *Client) Fetch(ctx context.Context, s *Snapshot) ([]string, error) {
	ch := newCache(c.Cache, s.Repo)
	paths := make([]string, len(s.Files))
	for i, f := range s.Files {
		if p, ok := ch.cached(s.Commit, f); ok {
			paths[i] = p
			continue
		}
		if c.Offline || s.Cached {
			return nil, fmt.Errorf("%s: %s is not in the cache (%s) and working offline", s.Repo, f, c.Cache)
		}
		p, err := c.download(ctx, ch, s, f)
		if err != nil {
			return nil, err
		}
		paths[i] = p
	}
	if !s.Cached {
		if err := ch.setRef(s.Revision, s.Commit); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// fileMeta is what the hub's HEAD says of a file.
type fileMeta struct {
	commit   string
	etag     string // sha256 (LFS) or git blob sha1, lower-case hex
	size     int64
	location string // where to GET the content
}

// resolveURL is the file's download address at a commit.
func (c *Client) resolveURL(repo, commit, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.Endpoint + "/" + repo + "/resolve/" + url.PathEscape(commit) + "/" + strings.Join(segs, "/")
}

// head asks the hub for a file's commit, etag, size and location,
// following only relative redirects (a renamed repository), not the one
// to the CDN, whose address is the location.
func (c *Client) head(ctx context.Context, repo, commit, file string) (*fileMeta, error) {
	u := c.resolveURL(repo, commit, file)
	req, err := c.request(ctx, http.MethodHead, u)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	hc := *c.client()
	hc.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		loc := r.Response.Header.Get("Location")
		if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || len(via) >= 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &transportError{fmt.Errorf("%s: %s: %w", repo, file, err)}
	}
	resp.Body.Close()
	redirect := resp.StatusCode >= 300 && resp.StatusCode < 400
	if resp.StatusCode >= 400 || resp.StatusCode < 200 || redirect && resp.Header.Get("Location") == "" {
		return nil, c.statusError(resp, repo, file)
	}
	m := &fileMeta{commit: resp.Header.Get("X-Repo-Commit"), location: resp.Request.URL.String()}
	if m.commit == "" {
		return nil, fmt.Errorf("%s: %s: the hub's answer has no X-Repo-Commit header: is a proxy or firewall in the way of %s?", repo, file, c.Endpoint)
	}
	m.etag = resp.Header.Get("X-Linked-Etag")
	if m.etag == "" {
		m.etag = resp.Header.Get("ETag")
	}
	m.etag = strings.ToLower(strings.Trim(strings.TrimPrefix(m.etag, "W/"), `"`))
	if !(len(m.etag) == 64 || len(m.etag) == 40) || !isHex(m.etag) {
		return nil, fmt.Errorf("%s: %s: the hub's etag %q is not a sha256 or a git blob id", repo, file, m.etag)
	}
	sz := resp.Header.Get("X-Linked-Size")
	if sz == "" && !redirect {
		sz = resp.Header.Get("Content-Length")
	}
	if m.size, err = strconv.ParseInt(sz, 10, 64); err != nil || m.size < 0 {
		return nil, fmt.Errorf("%s: %s: the hub's answer has no file size (X-Linked-Size %q)", repo, file, sz)
	}
	if redirect {
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: redirect to %q: %w", repo, file, resp.Header.Get("Location"), err)
		}
		m.location = loc.String()
	}
	return m, nil
}

// download fetches one file into the cache and links it into the
// snapshot.
func (c *Client) download(ctx context.Context, ch cache, s *Snapshot, file string) (string, error) {
	m, err := c.head(ctx, s.Repo, s.Commit, file)
	if err != nil {
		return "", err
	}
	blob := ch.blob(m.etag)
	if st, err := os.Stat(blob); err == nil && st.Size() == m.size {
		return ch.link(s.Commit, file, m.etag)
	}
	if err := os.MkdirAll(filepath.Join(ch.dir, "blobs"), 0o755); err != nil {
		return "", fmt.Errorf("the hub cache: %w", err)
	}
	unlock, err := c.lock(ctx, ch.lockFile(m.etag), file)
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have finished the blob while this one waited.
	if st, err := os.Stat(blob); err != nil || st.Size() != m.size {
		if err := c.transfer(ctx, s, file, m, blob); err != nil {
			return "", err
		}
	}
	return ch.link(s.Commit, file, m.etag)
}

// lock takes the blob's lock file, waiting (and saying so once) while
// another process holds it.
func (c *Client) lock(ctx context.Context, path, file string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("the hub cache: %w", err)
	}
	said := false
	for {
		unlock, ok, err := tryLock(path)
		if err != nil {
			return nil, fmt.Errorf("the hub cache: locking %s: %w", path, err)
		}
		if ok {
			return unlock, nil
		}
		if !said {
			c.info("waiting for another process downloading %s (%s)", file, path)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Client) info(format string, args ...any) {
	if c.Info != nil {
		fmt.Fprintf(c.Info, format+"\n", args...)
	}
}

// partial is a download in progress: the .incomplete file and the hash
// of the bytes it holds.
type partial struct {
	f    *os.File
	path string
	h    hash.Hash
	have int64
	size int64
}

// newHash returns the hash an etag is: sha256 of the content for LFS
// files, git's blob sha1 ("blob SIZE\x00" + content) for the others.
func newHash(etag string, size int64) hash.Hash {
	if len(etag) == 64 {
		return sha256.New()
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", size)
	return h
}

// reset empties the partial file.
func (p *partial) reset() error {
	if err := p.f.Truncate(0); err != nil {
		return fmt.Errorf("truncating %s: %w", p.path, err)
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("truncating %s: %w", p.path, err)
	}
	p.h.Reset()
	p.have = 0
	return nil
}

// transfer downloads the file to blob+".incomplete", resuming it, checks
// the sum and renames it to blob.
func (c *Client) transfer(ctx context.Context, s *Snapshot, file string, m *fileMeta, blob string) error {
	repo := s.Repo
	inc := blob + ".incomplete"
	f, err := os.OpenFile(inc, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", repo, file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %s: %w", repo, file, err)
	}
	p := &partial{f: f, path: inc, h: newHash(m.etag, m.size), size: m.size}
	p.have = st.Size()
	if p.have > m.size {
		if err := p.reset(); err != nil {
			return err
		}
	}
	if p.have > 0 {
		// The bytes an earlier run left count toward the sum.
		if _, err := io.Copy(p.h, io.NewSectionReader(f, 0, p.have)); err != nil {
			return fmt.Errorf("reading %s: %w", inc, err)
		}
		if _, err := f.Seek(p.have, io.SeekStart); err != nil {
			return fmt.Errorf("reading %s: %w", inc, err)
		}
		c.info("%s: resuming %s at %d of %d bytes", repo, file, p.have, m.size)
	}
	if free, ok := freeSpaceOf(filepath.Dir(blob)); ok && m.size-p.have > free {
		if p.have == 0 {
			os.Remove(inc)
		}
		return fmt.Errorf("%s: %s needs %d more bytes but the file system of %s has %d free", repo, file, m.size-p.have, c.Cache, free)
	}
	retries := c.Retries
	if retries <= 0 {
		retries = 5
	}
	delay := c.RetryDelay
	if delay <= 0 {
		delay = time.Second
	}
	c.progress(file, p.have, m.size)
	refreshed := false // the location was renewed since the last transfer
	best := p.have     // the most bytes held so far; only more counts as progress
	for failed := 0; p.have < m.size; {
		err := c.get(ctx, m.location, p, file)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			f.Sync()
			return ctx.Err()
		}
		var se *statusErr
		var we *writeError
		if errors.As(err, &se) && se.expired() && !refreshed {
			// The CDN's signed URL expired: ask the hub for a new one.
			fresh, herr := c.head(ctx, repo, s.Commit, file)
			if herr != nil {
				return herr
			}
			if fresh.etag != m.etag || fresh.size != m.size {
				return fmt.Errorf("%s: %s changed on the hub during the download (etag %s, was %s)", repo, file, fresh.etag, m.etag)
			}
			c.info("%s: %s: %v; asked the hub for a new address", repo, file, err)
			m.location, refreshed = fresh.location, true
			continue
		}
		if errors.As(err, &we) || errors.As(err, &se) && !se.retryable() {
			return fmt.Errorf("%s: %w", repo, err)
		}
		refreshed = false
		if p.have > best {
			best, failed = p.have, 0
		}
		if failed++; failed > retries {
			return fmt.Errorf("%s: %s: gave up after %d attempts without progress (%d of %d bytes kept in %s for the next run): %w", repo, file, retries+1, p.have, m.size, inc, err)
		}
		c.info("%s: %s: %v; retrying from byte %d", repo, file, err, p.have)
		select {
		case <-ctx.Done():
			f.Sync()
			return ctx.Err()
		case <-time.After(delay << min(failed-1, 5)):
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: writing %s: %w", repo, inc, err)
	}
	if got := hex.EncodeToString(p.h.Sum(nil)); got != m.etag {
		f.Close()
		os.Remove(inc)
		kind := "sha256"
		if len(m.etag) == 40 {
			kind = "git blob sha1"
		}
		return fmt.Errorf("%s: %s: checksum mismatch: the download's %s is %s but the hub's (X-Linked-Etag) is %s; the download was removed", repo, file, kind, got, m.etag)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: writing %s: %w", repo, inc, err)
	}
	if err := os.Rename(inc, blob); err != nil {
		return fmt.Errorf("%s: %w", repo, err)
	}
	return nil
}

func (c *Client) progress(file string, have, size int64) {
	if c.Progress != nil {
		c.Progress(file, have, size)
	}
}

// freeSpaceOf is outfile.FreeSpace; tests replace it to play a full disk.
var freeSpaceOf = outfile.FreeSpace

// writeError is a failure to write the download to the disk, which no
// retry cures.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// get requests the rest of the file (a Range request from p.have) and
// appends what arrives. A 200 answer to a Range request starts over; a
// 416 means the partial file does not belong to this content and starts
// over too.
func (c *Client) get(ctx context.Context, location string, p *partial, file string) error {
	stall := c.StallTimeout
	if stall <= 0 {
		stall = time.Minute
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errStalled := fmt.Errorf("no data for %v", stall)
	watchdog := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer watchdog.Stop()
	req, err := c.request(ctx, http.MethodGet, location)
	if err != nil {
		return err
	}
	req.Header.Set("Accept-Encoding", "identity")
	if p.have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", p.have))
	}
	hc := *c.client()
	hc.CheckRedirect = noTokenElsewhere
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", file, stalled(ctx, err))
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		if p.have > 0 {
			if err := p.reset(); err != nil {
				return &writeError{err}
			}
		}
	case http.StatusPartialContent:
		start, err := rangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != p.have {
			return fmt.Errorf("%s: asked for bytes from %d, got Content-Range %q", file, p.have, resp.Header.Get("Content-Range"))
		}
	case http.StatusRequestedRangeNotSatisfiable:
		if err := p.reset(); err != nil {
			return &writeError{err}
		}
		return fmt.Errorf("%s: the server refused the range from byte %d (HTTP 416); starting over", file, p.have)
	default:
		return &statusErr{code: resp.StatusCode, msg: fmt.Sprintf("%s: downloading from %s: HTTP %s", file, resp.Request.URL.Host, resp.Status)}
	}
	buf := make([]byte, 1<<20)
	body := io.LimitReader(resp.Body, p.size-p.have)
	for {
		n, rerr := body.Read(buf)
		watchdog.Reset(stall)
		if n > 0 {
			if _, err := p.f.Write(buf[:n]); err != nil {
				return &writeError{fmt.Errorf("writing %s: %w", p.path, err)}
			}
			p.h.Write(buf[:n])
			p.have += int64(n)
			c.progress(file, p.have, p.size)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", file, stalled(ctx, err))
		}
		if rerr == io.EOF {
			if p.have < p.size {
				return fmt.Errorf("%s: the transfer ended at byte %d of %d", file, p.have, p.size)
			}
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("%s: %w", file, stalled(ctx, rerr))
		}
	}
}

// stalled names the watchdog's cause in place of the error it caused.
func stalled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// rangeStart reads the first byte position of "bytes START-END/SIZE".
func rangeStart(cr string) (int64, error) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", cr)
	}
	s, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", cr)
	}
	return strconv.ParseInt(s, 10, 64)
}
