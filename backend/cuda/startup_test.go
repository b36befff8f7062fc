package cuda

import (
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"inferno/engine"
	"inferno/gguf"
	"inferno/model/qwen3"
)

// startupModel opens the GGUF file INFERNO_CUDA_MODEL names (mapped, as
// the command line opens models), or skips.
func startupModel(t *testing.T) *qwen3.Model { return envModel(t, qwen3.Load) }

// envModel opens INFERNO_CUDA_MODEL (skipping the test when it is not
// set) and loads it with load; the file closes with the test.
func envModel[M any](t *testing.T, load func(*gguf.File) (M, error)) M {
	t.Helper()
	path := os.Getenv("INFERNO_CUDA_MODEL")
	if path == "" {
		t.Skip("set INFERNO_CUDA_MODEL to a GGUF file")
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStartup (INFERNO_CUDA_MODEL=file.gguf) opens the model on the GPU and
// runs a first token, as `inferno generate -n 1` does, and logs where the
// time went; devrun.sh's startup stage times the whole process (with
// CUDA_CACHE_DISABLE=1: the driver's JIT cache neither read nor written).
func TestStartup(t *testing.T) {
	requireGPU(t)
	start := time.Now()
	m := startupModel(t)
	opened := time.Since(start)
	md, err := Load(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	uploaded := time.Since(start)
	br, err := md.NewBatchRunner((md.MaxLen()+15)/16, 16)
	if err != nil {
		t.Fatal(err)
	}
	r := engine.NewSingle(br)
	defer r.Close()
	ready := time.Since(start)
	if err := r.Forward([]int32{9707, 11, 1879, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Greedy(); err != nil {
		t.Fatal(err)
	}
	s := md.Stats()
	t.Logf("kernels: %s; model opened in %.3fs, weights on the GPU at %.3fs (upload %.3fs), runner ready at %.3fs, first token at %.3fs",
		s.PTX, opened.Seconds(), uploaded.Seconds(), s.Upload.Seconds(), ready.Seconds(), time.Since(start).Seconds())
}

// TestQuickBench (INFERNO_CUDA_BENCH=quick, INFERNO_CUDA_MODEL=file.gguf):
// tg128 and pp512 of one sequence as the commands run it (engine.Single)
// and the BatchRunner's one-sequence decode after a 128-token prompt (the
// cluster attention's range), measured as `inferno bench` measures them (a
// warm-up, then 5 repetitions); with
// INFERNO_CUDA_QB_JIT=1 again with the kernels JIT-compiled from the PTX,
// and with INFERNO_CUDA_QB_CUBIN=file with that cubin, alternating with
// the embedded one.
func TestQuickBench(t *testing.T) {
	if os.Getenv("INFERNO_CUDA_BENCH") != "quick" {
		t.Skip("set INFERNO_CUDA_BENCH=quick")
	}
	requireGPU(t)
	m := startupModel(t)
	variants := []string{"cubin"}
	if os.Getenv("INFERNO_CUDA_QB_JIT") == "1" {
		variants = append(variants, "jit")
	}
	cubin := os.Getenv("INFERNO_CUDA_QB_CUBIN")
	if cubin != "" {
		variants = append(variants, "file", "cubin", "file")
	}
	for _, v := range variants {
		t.Setenv("INFERNO_CUDA_JIT", "")
		t.Setenv("INFERNO_CUDA_PTX", "")
		switch v {
		case "jit":
			t.Setenv("INFERNO_CUDA_JIT", "1")
		case "file":
			t.Setenv("INFERNO_CUDA_PTX", cubin)
		}
		start := time.Now()
		md, err := Load(m, Options{MaxLen: 4096})
		if err != nil {
			t.Fatal(err)
		}
		load := time.Since(start)
		one, err := md.NewBatchRunner(4096/16, 16)
		if err != nil {
			t.Fatal(err)
		}
		r := engine.NewSingle(one)
		tg(t, r, 0, 16, 1)
		var tgs, pps []float64
		for range 5 {
			tgs = append(tgs, 1/tg(t, r, 0, 128, 1).Seconds())
			pps = append(pps, 512/pp(t, r, 512, 1).Seconds())
		}
		br, err := md.NewBatchRunner(64, 16)
		if err != nil {
			t.Fatal(err)
		}
		batchDecode(t, br, 1, 128, 16)
		var b1 []float64
		for range 5 {
			tok, _ := batchDecode(t, br, 1, 128, 128)
			b1 = append(b1, tok)
		}
		t.Logf("%s (%s, loaded in %.2fs): tg128 %s tok/s; pp512 %s tok/s; BatchRunner B=1 after 128 tokens %s tok/s",
			v, md.Stats().PTX, load.Seconds(), stat(tgs), stat(pps), stat(b1))
		br.Close()
		r.Close()
		md.Close()
	}
}

// stat formats samples as "median (mean ± spread)".
func stat(v []float64) string {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	var mean float64
	for _, x := range s {
		mean += x
	}
	mean /= float64(len(s))
	return fmt.Sprintf("%.1f (mean %.1f, %.1f..%.1f)", s[len(s)/2], mean, s[0], s[len(s)-1])
}
