package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestRun checks that files are uncompressed in the order named, standard
// input when none is, and that a file that is not zstd is an error naming it.
func TestRun(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var names []string
	var want bytes.Buffer
	for i, s := range []string{"first ", strings.Repeat("second ", 1000)} {
		n := filepath.Join(dir, string(rune('a'+i))+".zst")
		if err := os.WriteFile(n, enc.EncodeAll([]byte(s), nil), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
		want.WriteString(s)
	}
	var out bytes.Buffer
	if err := run(names, nil, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("files: got %d bytes, want %d", out.Len(), want.Len())
	}
	out.Reset()
	if err := run(nil, bytes.NewReader(enc.EncodeAll([]byte("stdin"), nil)), &out); err != nil || out.String() != "stdin" {
		t.Errorf("standard input: %q, %v", out.String(), err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not zstd"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{plain}, nil, &out); err == nil || !strings.Contains(err.Error(), plain) {
		t.Errorf("a plain file: %v", err)
	}
}
