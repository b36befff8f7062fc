package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// CacheDir returns the hub cache folder Hugging Face's tools share:
// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
func CacheDir() (string, error) {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if d := os.Getenv(v); d != "" {
			return d, nil
		}
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub"), nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("the hub cache: set HF_HUB_CACHE or HF_HOME (%w)", err)
	}
	return filepath.Join(home, ".cache", "huggingface", "hub"), nil
}

// cache is one repository's folder in the hub cache:
// models--OWNER--NAME/{blobs/ETAG, snapshots/COMMIT/PATH, refs/REVISION}.
type cache struct {
	root string // the hub cache
	dir  string // root/models--owner--name
	name string // models--owner--name
}

func newCache(root, repo string) cache {
	name := "models--" + strings.ReplaceAll(repo, "/", "--")
	return cache{root: root, dir: filepath.Join(root, name), name: name}
}

func (c cache) blob(etag string) string { return filepath.Join(c.dir, "blobs", etag) }

func (c cache) snapshot(commit, file string) string {
	return filepath.Join(c.dir, "snapshots", commit, filepath.FromSlash(file))
}

func (c cache) lockFile(etag string) string {
	return filepath.Join(c.root, ".locks", c.name, etag+".lock")
}

// cached returns the snapshot path of file at commit when it is there and
// is a regular file (a symbolic link to an existing blob, or a copy).
func (c cache) cached(commit, file string) (string, bool) {
	p := c.snapshot(commit, file)
	st, err := os.Stat(p)
	return p, err == nil && st.Mode().IsRegular()
}

// commit returns the commit a revision names in the cache: the revision
// itself when it is a commit, else the content of refs/REVISION.
func (c cache) commit(rev string) (string, error) {
	if isCommit(rev) {
		return rev, nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "refs", filepath.FromSlash(rev)))
	if err != nil {
		return "", err
	}
	commit := strings.TrimSpace(string(b))
	if !isCommit(commit) {
		return "", fmt.Errorf("%s: %q is not a commit", filepath.Join(c.dir, "refs", rev), commit)
	}
	return commit, nil
}

// files lists the files of a cached snapshot whose content is present, as
// slash-separated paths inside the repository.
func (c cache) files(commit string) ([]string, error) {
	root := filepath.Join(c.dir, "snapshots", commit)
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil // a link to a blob not downloaded
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(files)
	return files, err
}

// link points snapshots/COMMIT/FILE at blobs/ETAG with a relative symbolic
// link, as huggingface_hub does, replacing whatever was there.
func (c cache) link(commit, file, etag string) (string, error) {
	p := c.snapshot(commit, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("the hub cache: %w", err)
	}
	target := strings.Repeat("../", strings.Count(file, "/")+2) + "blobs/" + etag
	tmp := p + ".linking"
	os.Remove(tmp)
	if err := os.Symlink(filepath.FromSlash(target), tmp); err != nil {
		return "", fmt.Errorf("the hub cache: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("the hub cache: %w", err)
	}
	return p, nil
}

// setRef records that a branch or tag names commit (refs/REVISION, no
// newline, written whole or not at all).
func (c cache) setRef(rev, commit string) error {
	if isCommit(rev) {
		return nil
	}
	p := filepath.Join(c.dir, "refs", filepath.FromSlash(rev))
	if old, err := os.ReadFile(p); err == nil && string(old) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("the hub cache: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".ref-*")
	if err != nil {
		return fmt.Errorf("the hub cache: %w", err)
	}
	_, err = f.WriteString(commit)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("the hub cache: %w", err)
	}
	return nil
}

// errNotCached reports a reference the cache cannot answer offline.
var errNotCached = errors.New("not in the cache")
