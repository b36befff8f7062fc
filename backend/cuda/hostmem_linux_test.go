package cuda

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"inferno/engine"
	"inferno/gguf"
	"inferno/model/qwen3"
)

// TestReleaseHostPages checks that only pages of read-only shared file
// mappings are dropped, and that their bytes read back the same afterwards.
func TestReleaseHostPages(t *testing.T) {
	if residentBytes() < 0 {
		t.Skip("no /proc/self/status")
	}
	path := filepath.Join(t.TempDir(), "f")
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	data, err := syscall.Mmap(int(fh.Fd()), 0, len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(data)
	var sum int
	for i := 0; i < len(data); i += 4096 {
		sum += int(data[i])
	}
	if n := releaseHostPages(data[100 : len(data)-100]); n != int64(len(data)) {
		t.Errorf("released %d bytes of a %d-byte mapping", n, len(data))
	}
	for i := range data {
		if data[i] != want[i] {
			t.Fatalf("byte %d reads %d after the release, want %d", i, data[i], want[i])
		}
	}
	// Views of one tensor (a fused QKV matrix's Q, K and V, capped as
	// arch.Weight.RowRange caps them), in any order: the range they
	// cover, once; two ranges apart, each.
	q, k, v := data[100:3000001:3000001], data[3000001:5000003:5000003], data[5000003:len(data)-100]
	if n := releaseHostPages(k, v, q); n != int64(len(data)) {
		t.Errorf("views of the whole mapping: released %d bytes, want %d", n, len(data))
	}
	if n := releaseHostPages(data[:4096], data[3*4096:4*4096]); n != 2*4096 {
		t.Errorf("two pages apart: released %d bytes, want %d", n, 2*4096)
	}
	// A private mapping whose pages were written while it was writable
	// (as a program's relocated data): dropping them would lose the
	// writes, so it is left alone.
	priv, err := syscall.Mmap(int(fh.Fd()), 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(priv)
	priv[5] = want[5] + 1
	if err := syscall.Mprotect(priv, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
	if n := releaseHostPages(priv); n != 0 {
		t.Errorf("released %d bytes of a private mapping", n)
	}
	if priv[5] != want[5]+1 {
		t.Errorf("a private page's write was lost: byte 5 reads %d, want %d", priv[5], want[5]+1)
	}
	heap := append([]byte(nil), want...)
	if n := releaseHostPages(heap); n != 0 {
		t.Errorf("released %d bytes of heap memory", n)
	}
	for i := range heap {
		if heap[i] != want[i] {
			t.Fatalf("heap byte %d changed", i)
		}
	}
}

var rssFlag = flag.Bool("rss", false, "TestHostMemory: write an 8.7 GB 8B-shaped model into the temp folder and run it")

// TestHostMemory (-rss; writes an 8.7 GB Qwen3-8B-shaped Q8_0 file with
// an untied head into the temp folder) measures the process's resident
// memory while decoding on the GPU (one sequence, as the commands run
// it), with the weights' pages kept (as before) and released after the
// upload: at most 2 GB released.
func TestHostMemory(t *testing.T) {
	requireGPU(t)
	if !*rssFlag {
		t.Skip("-rss writes and runs an 8B-shaped model")
	}
	s := shapeSpec{"8b", 36, 4096, 12288, 32, 8, 128, 151936, true}
	path := filepath.Join(t.TempDir(), "8b-q8_0.gguf")
	start := time.Now()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeShape(fh, s, 8); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	t.Logf("wrote %s: %.2f GB in %.1fs", path, float64(st.Size())/1e9, time.Since(start).Seconds())
	defer func() { keepHostPages = false }()
	for _, keep := range []bool{true, false} {
		keepHostPages = keep
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := qwen3.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		rss0 := residentBytes()
		start := time.Now()
		md, err := Load(m, Options{MaxLen: 1024})
		if err != nil {
			t.Fatal(err)
		}
		load := time.Since(start)
		br, err := md.NewBatchRunner(1024/16, 16)
		if err != nil {
			t.Fatal(err)
		}
		r := engine.NewSingle(br)
		rssLoaded := residentBytes()
		if err := r.Forward(randomPrompt(3, 32, m.Config.Vocab)); err != nil {
			t.Fatal(err)
		}
		var peak int64
		for range 64 {
			id, _ := r.Greedy()
			if err := r.Forward([]int32{id}); err != nil {
				t.Fatal(err)
			}
			peak = max(peak, residentBytes())
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		what := "released"
		if keep {
			what = "kept (before)"
		}
		t.Logf("weights' pages %s: RSS %.2f GB before the runner, %.2f GB after the upload (%.1fs, %.2f GB dropped), %.2f GB at most while decoding 64 tokens; Go heap in use %.2f GB, held from the OS %.2f GB",
			what, float64(rss0)/1e9, float64(rssLoaded)/1e9, load.Seconds(), float64(md.Stats().HostReleased)/1e9, float64(peak)/1e9,
			float64(ms.HeapInuse)/1e9, float64(ms.HeapSys-ms.HeapReleased)/1e9)
		if !keep && peak > 2e9 {
			t.Errorf("RSS %.2f GB while decoding with the pages released", float64(peak)/1e9)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := md.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		debug.FreeOSMemory()
	}
}
