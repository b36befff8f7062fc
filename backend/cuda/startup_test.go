package cuda

import (
	"testing"
	"time"

	"inferno/engine"
)

// TestStartup (-model file.gguf) opens the model on the GPU and
// runs a first token, as `inferno generate -n 1` does, and logs where the
// time went; devrun.sh's startup stage times the whole process (with
// CUDA_CACHE_DISABLE=1: the driver's JIT cache neither read nor written).
func TestStartup(t *testing.T) {
	requireGPU(t)
	start := time.Now()
	m := fileModel(t)
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
