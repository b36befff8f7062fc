// Command testsummary reads the output of "go test -json" on standard
// input and prints what plain "go test" prints: a line for each package
// as it ends (ok, FAIL, or no test files), the output of each failed test
// and of each package that failed to build. It ends with one line that
// counts the top-level tests:
//
//	go test: 812 passed, 0 failed, 14 skipped
//
// and exits 1 when a test or a build failed. .ci/run pipes "go test -json
// ./..." into it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of "go test -json": a test2json TestEvent, or a
// BuildEvent of a package that does not compile.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

func main() {
	passed, failed, skipped, bad, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	fmt.Printf("go test: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || bad {
		os.Exit(1)
	}
}

// summarize reads the events from r and writes the report to w; it
// returns the counts of top-level tests and whether a package or a build
// failed.
func summarize(r io.Reader, w io.Writer) (passed, failed, skipped int, bad bool, err error) {
	// The output of every top-level test (its subtests' included, in
	// order) and package under way, kept until it ends: printed if it
	// failed, dropped if it passed.
	output := map[[2]string]*strings.Builder{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A line go test printed outside the JSON stream (a
			// setup failure, say): show it as it is.
			fmt.Fprintln(w, sc.Text())
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
			continue
		case "build-fail":
			bad = true
			continue
		}
		top, _, sub := strings.Cut(e.Test, "/")
		key := [2]string{e.Package, top}
		switch e.Action {
		case "output":
			b := output[key]
			if b == nil {
				b = &strings.Builder{}
				output[key] = b
			}
			b.WriteString(e.Output)
		case "pass", "skip", "fail":
			if sub {
				continue // reported with its top-level test
			}
			out := output[key]
			delete(output, key)
			if e.Test == "" {
				// The package's end: its own lines (ok, FAIL, no test
				// files, a panic outside the tests).
				if out != nil {
					fmt.Fprint(w, packageLines(out.String(), e.Action == "fail"))
				}
				if e.Action == "fail" {
					bad = true
				}
				continue
			}
			if e.Action == "fail" && out != nil {
				fmt.Fprint(w, out.String())
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				failed++
			case "skip":
				skipped++
			}
		}
	}
	return passed, failed, skipped, bad, sc.Err()
}

// packageLines returns the lines of a package's own output that plain
// "go test" prints: all of them if it failed, else its closing line.
func packageLines(out string, failed bool) string {
	if failed {
		return out
	}
	lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasSuffix(last, "\n") {
		last += "\n"
	}
	return last
}
