package main

import (
	"slices"
	"strings"
	"testing"
)

const index = `Package: a
Version: 1
Depends: b (>= 2), c | d, v:any
Filename: pool/a.deb
Description: a
 continued

Package: b
Pre-Depends: libc6
Filename: pool/b.deb

Package: c
Filename: pool/c.deb

Package: e
Provides: v (= 1)
Depends: b
Filename: pool/e.deb

Package: libc6
Depends: libc-bin
Filename: pool/libc6.deb
`

// TestResolve checks the index's reading and the walk of dependencies:
// versions, architectures and later alternatives dropped, a virtual
// package's provider, packages already found and those of skip left out.
func TestResolve(t *testing.T) {
	ps, err := parseIndex(strings.NewReader(index))
	if err != nil {
		t.Fatal(err)
	}
	idx, prov := map[string]pkg{}, map[string]string{}
	for _, p := range ps {
		idx[p.name] = p
		for _, v := range depNames(p.provides) {
			prov[v] = p.name
		}
	}
	got, err := resolve(idx, prov, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.name+"="+p.filename)
	}
	want := []string{"a=pool/a.deb", "b=pool/b.deb", "c=pool/c.deb", "e=pool/e.deb", "libc6=pool/libc6.deb"}
	if !slices.Equal(names, want) {
		t.Errorf("resolve: %v, want %v", names, want)
	}
	if _, err := resolve(idx, prov, []string{"zz"}); err == nil {
		t.Error("resolve of a package not in the index: no error")
	}
}

// FuzzParseIndex checks that no index makes the reader or the walk panic.
func FuzzParseIndex(f *testing.F) {
	f.Add(index)
	f.Add("Package: x\nDepends: ,| (\n")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseIndex(strings.NewReader(s))
		if err != nil {
			return
		}
		idx, prov := map[string]pkg{}, map[string]string{}
		var roots []string
		for _, p := range ps {
			idx[p.name] = p
			roots = append(roots, p.name)
			for _, v := range depNames(p.provides) {
				prov[v] = p.name
			}
		}
		resolve(idx, prov, roots) //nolint:errcheck // only panics matter
	})
}
