// Command debroot unpacks Debian packages and everything they depend on
// into a folder, for running a program against libraries newer than the
// machine's own (.ci/run's Vulkan stage: a lavapipe with cooperative
// matrices, from a later Debian release than the CI machine's):
//
//	debroot -o DIR -dist trixie -dist trixie-backports mesa-vulkan-drivers libvulkan1
//
// It reads each -dist's package index (main, amd64) from the mirror
// (HTTPS), a later -dist's version of a package taking the place of an
// earlier's; follows Depends and Pre-Depends (an alternative's first
// package, a virtual package's first provider); downloads the .deb files
// into DIR/debs (kept: a second run with the same versions downloads
// nothing), each checked against the index's SHA256, and unpacks each
// into DIR/root with dpkg-deb. The packages that only a
// system's installation needs (the shell, dpkg, debconf, ...) are left
// out. It prints DIR/root.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// pkg is a package's stanza in an index: what debroot reads of it.
type pkg struct {
	name, filename, sha256 string
	depends, preDepends    string
	provides               string
}

// skip are packages a running program does not need from the root.
var skip = map[string]bool{
	"libc-bin": true, "debconf": true, "dpkg": true, "perl-base": true, "tzdata": true,
	"base-files": true, "bash": true, "coreutils": true, "dash": true, "debianutils": true,
	"init-system-helpers": true, "sensible-utils": true,
}

// parseIndex reads a Packages index: one stanza per package, "Field:
// value" lines, continuation lines starting with a space.
func parseIndex(r io.Reader) ([]pkg, error) {
	var out []pkg
	var cur pkg
	flush := func() {
		if cur.name != "" {
			out = append(out, cur)
		}
		cur = pkg{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("index line %q: no field", line)
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			cur.name = v
		case "Filename":
			cur.filename = v
		case "SHA256":
			cur.sha256 = v
		case "Depends":
			cur.depends = v
		case "Pre-Depends":
			cur.preDepends = v
		case "Provides":
			cur.provides = v
		}
	}
	flush()
	return out, sc.Err()
}

// depNames returns the packages a Depends field names: the first of each
// group of alternatives, without versions or architectures.
func depNames(field string) []string {
	var out []string
	for _, dep := range strings.Split(field, ",") {
		alt, _, _ := strings.Cut(dep, "|")
		name := strings.TrimSpace(alt)
		if i := strings.IndexAny(name, " (:["); i >= 0 {
			name = name[:i]
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// resolve returns the packages of roots and of everything they depend
// on, in the order found. A name that is neither a package nor provided
// by one is an error.
func resolve(index map[string]pkg, provides map[string]string, roots []string) ([]pkg, error) {
	seen := map[string]bool{}
	var out []pkg
	todo := append([]string(nil), roots...)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if skip[name] {
			continue
		}
		p, ok := index[name]
		if !ok {
			by, ok := provides[name]
			if !ok {
				return nil, fmt.Errorf("no package %s", name)
			}
			p = index[by]
		}
		if seen[p.name] {
			continue
		}
		seen[p.name] = true
		out = append(out, p)
		todo = append(todo, depNames(p.preDepends)...)
		todo = append(todo, depNames(p.depends)...)
	}
	return out, nil
}

var client = &http.Client{Timeout: 5 * time.Minute}

// sumIs reports whether b's SHA256 is the hexadecimal want.
func sumIs(b []byte, want string) bool {
	sum := sha256.Sum256(b)
	return want != "" && hex.EncodeToString(sum[:]) == want
}

// get returns the body of url.
func get(url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

type dists []string

func (d *dists) String() string     { return strings.Join(*d, ",") }
func (d *dists) Set(v string) error { *d = append(*d, v); return nil }

func main() {
	out := flag.String("o", "", "the folder to unpack into (required)")
	mirror := flag.String("mirror", "https://deb.debian.org/debian", "the Debian mirror")
	var ds dists
	flag.Var(&ds, "dist", "a distribution to read (repeatable; later ones take precedence)")
	flag.Parse()
	if *out == "" || len(ds) == 0 || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: debroot -o DIR -dist DIST [-dist DIST ...] PACKAGE ...")
		os.Exit(2)
	}
	if err := run(*out, *mirror, ds, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "debroot:", err)
		os.Exit(1)
	}
}

func run(out, mirror string, ds []string, roots []string) error {
	index := map[string]pkg{}
	provides := map[string]string{}
	for _, d := range ds {
		xz, err := get(mirror + "/dists/" + d + "/main/binary-amd64/Packages.xz")
		if err != nil {
			return err
		}
		cmd := exec.Command("xz", "-dc")
		cmd.Stdin = bytes.NewReader(xz)
		text, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s's index: xz: %w", d, err)
		}
		ps, err := parseIndex(bytes.NewReader(text))
		if err != nil {
			return fmt.Errorf("%s's index: %w", d, err)
		}
		for _, p := range ps {
			index[p.name] = p
			for _, v := range depNames(p.provides) {
				if _, ok := provides[v]; !ok {
					provides[v] = p.name
				}
			}
		}
	}
	ps, err := resolve(index, provides, roots)
	if err != nil {
		return err
	}
	debs, root := filepath.Join(out, "debs"), filepath.Join(out, "root")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for _, p := range ps {
		file := filepath.Join(debs, filepath.Base(p.filename))
		if b, err := os.ReadFile(file); err != nil || !sumIs(b, p.sha256) {
			b, err := get(mirror + "/" + p.filename)
			if err != nil {
				return err
			}
			if !sumIs(b, p.sha256) {
				return fmt.Errorf("%s: SHA256 differs from the index's %q", p.filename, p.sha256)
			}
			if err := os.WriteFile(file+".part", b, 0o644); err != nil {
				return err
			}
			if err := os.Rename(file+".part", file); err != nil {
				return err
			}
		}
		if msg, err := exec.Command("dpkg-deb", "-x", file, root).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %v: %s", file, err, msg)
		}
	}
	fmt.Println(root)
	return nil
}
