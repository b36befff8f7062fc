package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticBinary builds a small cgo-free program for the test to package.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hi\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hi")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeCerts(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(p, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildWritesLoadableImage(t *testing.T) {
	bin := staticBinary(t)
	out := filepath.Join(t.TempDir(), "img.tar")
	created := time.Unix(1700000000, 0).UTC()
	o := options{bin: bin, certs: writeCerts(t), version: "v9", revision: "abc", created: created}
	img, err := build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(out, name.MustParseReference("inferno:test"), img); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("inferno:test")
	back, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatalf("reading the tarball back: %v", err)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.Architecture != "amd64" || cf.OS != "linux" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/bin/inferno"}) {
		t.Errorf("entrypoint %q", c.Entrypoint)
	}
	if !slices.Contains(c.Env, "HF_HOME=/models") {
		t.Errorf("env %q lacks HF_HOME=/models", c.Env)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v lack 8080/tcp", c.ExposedPorts)
	}
	if c.Labels["org.opencontainers.image.version"] != "v9" || c.Labels["org.opencontainers.image.revision"] != "abc" {
		t.Errorf("labels %v", c.Labels)
	}
	if !cf.Created.Time.Equal(created) {
		t.Errorf("created %v, want %v", cf.Created.Time, created)
	}

	layers, err := back.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	want, _ := os.ReadFile(bin)
	seen := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name] = h
		if !h.ModTime.Equal(created) {
			t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, created)
		}
		data, _ := io.ReadAll(tr)
		switch h.Name {
		case "usr/bin/inferno":
			if h.Mode != 0o755 || string(data) != string(want) {
				t.Errorf("binary: mode %o, %d bytes; want 0755 and the %d bytes built", h.Mode, len(data), len(want))
			}
		case "etc/passwd":
			if !strings.Contains(string(data), "nonroot:x:65532:65532:") {
				t.Errorf("passwd lacks the nonroot user:\n%s", data)
			}
		}
	}
	for _, p := range []string{"etc/ssl/certs/ca-certificates.crt", "etc/group", "tmp/", "home/nonroot/"} {
		if seen[p] == nil {
			t.Errorf("layer lacks %s", p)
		}
	}
	if h := seen["models/"]; h == nil || h.Uid != 65532 || h.Typeflag != tar.TypeDir {
		t.Errorf("models/ is not a directory owned by 65532: %+v", h)
	}
	if h := seen["tmp/"]; h != nil && h.Mode != 0o1777 {
		t.Errorf("tmp/ mode %o, want 1777", h.Mode)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	o := options{bin: staticBinary(t), certs: writeCerts(t), version: "v1", created: time.Unix(0, 0).UTC()}
	var digests []string
	for range 2 {
		img, err := build(o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d.String())
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same input: %s and %s", digests[0], digests[1])
	}
}

func TestBuildRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755)
	certs := writeCerts(t)
	noPEM := filepath.Join(dir, "empty.crt")
	os.WriteFile(noPEM, []byte("nothing here\n"), 0o644)
	cases := []struct {
		name string
		o    options
		want string
	}{
		{"missing binary", options{bin: filepath.Join(dir, "nope"), certs: certs}, "no such file"},
		{"not ELF", options{bin: text, certs: certs}, "not an ELF executable"},
		{"missing certs", options{bin: staticBinary(t), certs: filepath.Join(dir, "nope.crt")}, "CA certificates"},
		{"certs without PEM", options{bin: staticBinary(t), certs: noPEM}, "no PEM certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestDynamicBinaryGetsItsLibraries packages /bin/true, linked against the
// C library as inferno is (purego links it to call dlopen).
func TestDynamicBinaryGetsItsLibraries(t *testing.T) {
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	info, err := readELF(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.interp == "" || !slices.Contains(info.needed, "libc.so.6") {
		t.Skipf("/bin/true is not linked against glibc here: %+v", info)
	}
	files, err := sharedLibraries(info, options{}.libDirs(info), []string{"libm.so.6"})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]file{}
	for _, f := range files {
		byPath[f.path] = f
	}
	dir := "usr/lib/" + info.triple + "/"
	for _, lib := range []string{"libc.so.6", "libm.so.6", path.Base(info.interp)} {
		f, ok := byPath[dir+lib]
		if !ok {
			t.Errorf("no %s%s among %d files", dir, lib, len(files))
			continue
		}
		if _, err := readELF(f.data); err != nil {
			t.Errorf("%s: %v", lib, err)
		}
	}
	if l := byPath[info.interp[1:]]; path.Join(path.Dir(info.interp), l.link) != "/"+dir+path.Base(info.interp) {
		t.Errorf("%s links to %q, want the copied interpreter", info.interp, l.link)
	}

	_, err = sharedLibraries(info, []string{t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "libc.so.6") && !strings.Contains(err.Error(), path.Base(info.interp)) {
		t.Errorf("with no libraries to copy: error %v, want one naming the missing library", err)
	}
}

func TestStaticBinaryGetsNoLibraries(t *testing.T) {
	data, err := os.ReadFile(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	info, err := readELF(data)
	if err != nil {
		t.Fatal(err)
	}
	files, err := sharedLibraries(info, nil, []string{"libm.so.6"})
	if info.interp != "" || len(files) != 0 || err != nil {
		t.Errorf("static binary: interpreter %q, %d library files, error %v; want none", info.interp, len(files), err)
	}
}

func TestParents(t *testing.T) {
	if got := parents("a/b/c"); !slices.Equal(got, []string{"a", "a/b", "a/b/c"}) {
		t.Errorf("parents(a/b/c) = %q", got)
	}
	if got := parents("lib64"); !slices.Equal(got, []string{"lib64"}) {
		t.Errorf("parents(lib64) = %q", got)
	}
}
