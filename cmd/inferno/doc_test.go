package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestPackageDoc: the package documentation's usage lists every command,
// and no command that does not exist.
func TestPackageDoc(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	listed := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(line, "\tinferno "); ok {
			listed[strings.Fields(rest)[0]] = true
		}
	}
	root := rootCmd()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !listed[c.Name()] {
			t.Errorf("the package doc does not list %q", c.Name())
		}
		delete(listed, c.Name())
	}
	for name := range listed {
		t.Errorf("the package doc lists %q, which is no command", name)
	}
}

// TestServeHelp: every flag of serve is described, and the help names the
// flags the server's protections hang on.
func TestServeHelp(t *testing.T) {
	t.Parallel()
	cmd := serveCmd()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if len(strings.Fields(f.Usage)) < 3 {
			t.Errorf("--%s: usage %q says too little", f.Name, f.Usage)
		}
	})
	for _, name := range []string{"--read-timeout", "--max-conns", "--allowed-hosts", "--cors-origin", "--tls-cert", "--api-key", "--queue", "--grace"} {
		if !strings.Contains(cmd.Long, name) {
			t.Errorf("serve's help does not mention %s", name)
		}
	}
}
