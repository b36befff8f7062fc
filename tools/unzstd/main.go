// Command unzstd writes the uncompressed contents of zstd files to standard
// output, one after another (standard input when no file is named): the
// zstd -dc that backend/cuda/build_ptx.sh needs to read the compressed
// kernel images, for machines without the zstd command (build it with
// CGO_ENABLED=0 go build -o bin/unzstd ./tools/unzstd and set UNZSTD to
// it; devrun.sh's cubin90 stage does where bin/unzstd exists).
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "unzstd:", err)
		os.Exit(1)
	}
}

// run uncompresses each file of names, or in when there is none, to out.
func run(names []string, in io.Reader, out io.Writer) error {
	if len(names) == 0 {
		return copyZstd(out, in, "standard input")
	}
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return err
		}
		err = copyZstd(out, f, n)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// copyZstd writes the uncompressed bytes of the zstd stream r, called
// name in errors, to w.
func copyZstd(w io.Writer, r io.Reader, name string) error {
	d, err := zstd.NewReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer d.Close()
	if _, err := d.WriteTo(w); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
