// Command ggufsum prints one line per tensor of a GGUF file, sorted by
// name: the name, the type, the number of dimensions and the first 16 hex
// digits of the SHA-256 of the tensor's data. compare.sh diffs its output
// for llama-quantize's and inferno's files and records the fixture
// TestLlamaQuantizeFixture checks.
//
//	go run ./quantize/testdata/ggufsum FILE.gguf
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"

	"inferno/gguf"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ggufsum FILE.gguf")
		os.Exit(2)
	}
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ggufsum:", err)
		os.Exit(1)
	}
	defer f.Close()
	ft, _ := f.Int("general.file_type")
	qv, _ := f.Int("general.quantization_version")
	fmt.Printf("#meta\tfile_type=%d\tquantization_version=%d\n", ft, qv)
	ts := append([]gguf.TensorInfo(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	for _, t := range ts {
		sum := sha256.Sum256(t.Data)
		fmt.Printf("%s\t%s\t%d\t%s\n", t.Name, t.Type, len(t.Shape), hex.EncodeToString(sum[:8]))
	}
}
