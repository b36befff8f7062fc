// Package hub pulls GGUF model files from the Hugging Face Hub into
// Hugging Face's own cache layout, so that files fetched by huggingface-cli
// or llama.cpp are found and files fetched here are found by them.
//
// A Ref names what to pull: a repository and either one of its files or a
// quantization ("Qwen/Qwen3-0.6B-GGUF:Q8_0"). A Client resolves a Ref to a
// Snapshot (one commit and the files chosen from it) with Resolve, and
// downloads them with Fetch: resumable transfers, a sha256 check against
// the hub's LFS id before a file enters the cache, a lock per file so two
// processes never write the same blob.
package hub

import (
	"errors"
	"fmt"
	"strings"
)

// Ref names files in a model repository of the hub.
type Ref struct {
	// Repo is the repository id, "owner/name".
	Repo string
	// Revision is a branch, tag or 40-digit commit; "" means "main".
	Revision string
	// File is a path inside the repository. When empty the file is chosen
	// by Quant.
	File string
	// Quant is a quantization tag such as "Q8_0", matched against GGUF
	// file names without regard to case. Empty (or "latest") picks a
	// default: Q4_K_M, else Q8_0, else the first GGUF file.
	Quant string
}

// String formats the reference the way ParseRef reads it back.
func (r Ref) String() string {
	switch {
	case r.File != "":
		return "hf://" + r.Repo + "/" + r.File
	case r.Quant != "":
		return r.Repo + ":" + r.Quant
	}
	return r.Repo
}

func (r Ref) revision() string {
	if r.Revision == "" {
		return "main"
	}
	return r.Revision
}

// ParseRef reads a model reference in one of the forms
//
//	owner/name            the default quantization
//	owner/name:QUANT      the GGUF file of that quantization
//	hf://owner/name[:QUANT]
//	hf://owner/name/PATH  one file of the repository
//
// A "hf.co/" or "huggingface.co/" prefix (as ollama writes them) is
// accepted in place of "hf://". A QUANT ending in ".gguf" names a file.
func ParseRef(s string) (Ref, error) {
	rest := s
	for _, p := range []string{"hf://", "https://huggingface.co/", "huggingface.co/", "hf.co/"} {
		if strings.HasPrefix(rest, p) {
			rest = rest[len(p):]
			break
		}
	}
	var r Ref
	owner, after, ok := strings.Cut(rest, "/")
	if !ok {
		return Ref{}, fmt.Errorf("model reference %q: want owner/name, owner/name:QUANT or hf://owner/name/FILE", s)
	}
	name, file, hasFile := strings.Cut(after, "/")
	if hasFile {
		r.File = file
	} else if n, q, hasQuant := strings.Cut(name, ":"); hasQuant {
		name = n
		if q == "" {
			return Ref{}, fmt.Errorf("model reference %q: empty quantization after ':'", s)
		}
		if strings.HasSuffix(strings.ToLower(q), ".gguf") {
			r.File = q
		} else {
			r.Quant = q
		}
	}
	r.Repo = owner + "/" + name
	if err := CheckRepo(r.Repo); err != nil {
		return Ref{}, fmt.Errorf("model reference %q: %w", s, err)
	}
	if r.File != "" {
		if err := checkFile(r.File); err != nil {
			return Ref{}, fmt.Errorf("model reference %q: %w", s, err)
		}
	}
	if r.Quant != "" {
		if err := checkQuant(r.Quant); err != nil {
			return Ref{}, fmt.Errorf("model reference %q: %w", s, err)
		}
	}
	return r, nil
}

// LooksLikeRef reports whether a command's model argument is meant as a
// hub reference rather than a local path: it starts with "hf://" (or
// "hf.co/", "huggingface.co/"), or it reads as owner/name:QUANT. A caller
// checks for a local file of that name first.
func LooksLikeRef(s string) bool {
	for _, p := range []string{"hf://", "hf.co/", "huggingface.co/", "https://huggingface.co/"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	repo, _, ok := strings.Cut(s, ":")
	return ok && strings.Count(repo, "/") == 1 && CheckRepo(repo) == nil
}

// CheckRepo reports whether id is a valid repository id: owner/name, each
// part of letters, digits, '-', '_' and '.', not starting or ending with
// '-' or '.', without "--" or "..", at most 96 characters in all (the
// hub's rules).
func CheckRepo(id string) error {
	owner, name, ok := strings.Cut(id, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("repository %q: want owner/name", id)
	}
	if len(id) > 96 {
		return fmt.Errorf("repository %q: longer than 96 characters", id)
	}
	for _, part := range []string{owner, name} {
		if part == "" {
			return fmt.Errorf("repository %q: want owner/name", id)
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				return fmt.Errorf("repository %q: %q is not allowed in a repository id", id, part[i:i+1])
			}
		}
		if strings.ContainsAny(part[:1], "-.") || strings.ContainsAny(part[len(part)-1:], "-.") ||
			strings.Contains(part, "--") || strings.Contains(part, "..") {
			return fmt.Errorf("repository %q: a part starts or ends with '-' or '.', or holds \"--\" or \"..\"", id)
		}
	}
	return nil
}

// checkFile refuses a repository path that could leave the snapshot's
// folder or that no repository holds.
func checkFile(p string) error {
	if p == "" {
		return errors.New("empty file name")
	}
	if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("file %q: a path inside the repository has no leading or trailing '/'", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("file %q: empty, '.' or '..' path element", p)
		}
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("file %q: control character or backslash", p)
		}
	}
	return nil
}

// checkQuant accepts a quantization tag: letters, digits, '_', '-', '.'.
func checkQuant(q string) error {
	if len(q) > 64 {
		return fmt.Errorf("quantization %q: longer than 64 characters", q)
	}
	for i := 0; i < len(q); i++ {
		c := q[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("quantization %q: %q is not allowed", q, q[i:i+1])
		}
	}
	return nil
}

// checkRevision refuses a revision that could leave the refs folder.
func checkRevision(rev string) error {
	if rev == "" || len(rev) > 256 {
		return fmt.Errorf("revision %q: want 1 to 256 characters", rev)
	}
	if err := checkFile(rev); err != nil {
		return fmt.Errorf("revision %q: not a branch, tag or commit", rev)
	}
	return nil
}

// isCommit reports whether rev is a full commit hash.
func isCommit(rev string) bool {
	return len(rev) == 40 && isHex(rev)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
