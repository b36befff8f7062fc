package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"

	"inferno/backend"
	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/engine"
	"inferno/gguf"
	"inferno/kvcache"
	"inferno/model/qwen3"
	"inferno/numfmt"
	"inferno/synth"
)

const goldenDir = "../../testdata/golden"

// requireGPU skips the test where CUDA is unavailable.
func requireGPU(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no CUDA GPU: %v", err)
	}
}

// testDevice opens GPU 0 with the kernels loaded, on the test's goroutine
// locked to its thread; it is closed when the test ends.
func testDevice(t *testing.T) *device {
	t.Helper()
	requireGPU(t)
	runtime.LockOSThread()
	g, err := newDevice(0)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.close()
		runtime.UnlockOSThread()
	})
	return g
}

// use makes g's context current on a subtest's goroutine (t.Run runs
// each subtest on a goroutine of its own) until the subtest ends.
func use(t *testing.T, g *device) {
	t.Helper()
	if err := g.enter(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.exit)
}

// devBytes allocates device memory holding b.
func devBytes(t *testing.T, g *device, b []byte) uint64 {
	t.Helper()
	p, err := g.alloc(uint64(max(len(b), 16)), "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.upload(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

func devF32(t *testing.T, g *device, v []float32) uint64 { return devBytes(t, g, f32Bytes(v)) }

func devZeros(t *testing.T, g *device, n int) uint64 { return devBytes(t, g, make([]byte, n)) }

// waitStream waits for the kernels queued on g's stream: download copies on
// the legacy stream, which does not wait for g's non-blocking stream.
func waitStream(t *testing.T, g *device) {
	t.Helper()
	if err := g.sync("test read-back"); err != nil {
		t.Fatal(err)
	}
}

func getF32(t *testing.T, g *device, p uint64, n int) []float32 {
	t.Helper()
	waitStream(t, g)
	v := make([]float32, n)
	if err := g.download(f32Bytes(v), p); err != nil {
		t.Fatal(err)
	}
	return v
}

func getI32(t *testing.T, g *device, p uint64, n int) []int32 {
	t.Helper()
	waitStream(t, g)
	v := make([]int32, n)
	if err := g.download(i32Bytes(v), p); err != nil {
		t.Fatal(err)
	}
	return v
}

func getF16(t *testing.T, g *device, p uint64, n int) []float32 {
	t.Helper()
	waitStream(t, g)
	b := make([]byte, 2*n)
	if err := g.download(b, p); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = numfmt.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return v
}

func f16Bytes(v []float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], numfmt.F32ToF16(x))
	}
	return b
}

// roundF16 rounds v to f16 precision, as the KV cache stores it.
func roundF16(v []float32) []float32 {
	o := make([]float32, len(v))
	for i, x := range v {
		o[i] = numfmt.F16ToF32(numfmt.F32ToF16(x))
	}
	return o
}

func randVec(rng *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*rng.Float32() - 1) * scale
	}
	return v
}

// randQ8 returns a random Q8_0 weight of rows x cols.
func randQ8(rng *rand.Rand, name string, rows, cols int) *backend.Weight {
	nb := cols / 32
	data := make([]byte, rows*nb*34)
	for b := 0; b < rows*nb; b++ {
		d := numfmt.F32ToF16(0.002 + 0.02*rng.Float32())
		binary.LittleEndian.PutUint16(data[b*34:], d)
		for j := range 32 {
			data[b*34+2+j] = byte(int8(rng.IntN(255) - 127))
		}
	}
	return &backend.Weight{Name: name, Type: gguf.TensorQ8_0, Rows: rows, Cols: cols, Data: data}
}

// relL2 returns ||got - want|| / ||want||.
func relL2(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// top2 returns the largest value's index and its margin over the second.
func top2(v []float32) (int, float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] > v[idx[b]] })
	return idx[0], float64(v[idx[0]] - v[idx[1]])
}

func openGGUF(t testing.TB, path string) *qwen3.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tinyModel(t testing.TB) *qwen3.Model {
	return openGGUF(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
}

var (
	synthMu    sync.Mutex
	synthCache = map[string]*qwen3.Model{}
)

// synthModel builds synth's preset ("tiny", "0.6b") as Q8_0 with seed 1, in
// memory, once per test binary.
func synthModel(t testing.TB, preset string) *qwen3.Model {
	t.Helper()
	synthMu.Lock()
	defer synthMu.Unlock()
	if m := synthCache[preset]; m != nil {
		return m
	}
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Preset: preset, Type: gguf.TensorQ8_0, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	synthCache[preset] = m
	return m
}

// parScalar is the scalar backend with matrix products split by rows over
// goroutines: each output is the same sequential float32 dot product, so
// results are bit-identical to scalar.Scalar's, only sooner.
type parScalar struct {
	*scalar.Scalar
	workers []*scalar.Scalar
}

func newParScalar() *parScalar {
	p := &parScalar{Scalar: scalar.NewScalar()}
	for range runtime.GOMAXPROCS(0) {
		p.workers = append(p.workers, scalar.NewScalar())
	}
	return p
}

func (p *parScalar) MatMul(y []float32, w *backend.Weight, x []float32, n int) {
	rb := w.RowBytes()
	yt := make([]float32, 0)
	for t := range n {
		xt := x[t*w.Cols : (t+1)*w.Cols]
		var wg sync.WaitGroup
		per := (w.Rows + len(p.workers) - 1) / len(p.workers)
		if n > 1 {
			yt = append(yt[:0], make([]float32, w.Rows)...)
		}
		out := y[t*w.Rows : (t+1)*w.Rows]
		if n > 1 {
			out = yt
		}
		for i, s := range p.workers {
			lo, hi := i*per, min(w.Rows, (i+1)*per)
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sub := &backend.Weight{Name: w.Name, Type: w.Type, Rows: hi - lo, Cols: w.Cols, Data: w.Data[lo*rb : hi*rb]}
				s.MatMul(out[lo:hi], sub, xt, 1)
			}()
		}
		wg.Wait()
		if n > 1 {
			copy(y[t*w.Rows:], yt)
		}
	}
}

// cpuRunner returns the CPU reference of m (scalar math, rows in
// parallel): one sequence of up to maxLen positions with a float32 KV
// cache, a batch of one in one block.
// lockstep runs prompt on the GPU sequence r and the CPU sequence c, then
// steps-1 decode steps of the CPU's greedy token on both, and calls each
// after every step with the two sequences' logits (the GPU's a copy).
func lockstep(t *testing.T, r, c *engine.Single, prompt []int32, steps int, each func(step int, gl, cl []float32)) {
	t.Helper()
	next := prompt
	for step := range steps {
		if err := c.Forward(next); err != nil {
			t.Fatal(err)
		}
		if err := r.Forward(next); err != nil {
			t.Fatal(err)
		}
		cl, err := c.Logits()
		if err != nil {
			t.Fatal(err)
		}
		each(step, logits(t, r), cl)
		ct, err := c.Greedy()
		if err != nil {
			t.Fatal(err)
		}
		next = []int32{ct}
	}
}

func cpuRunner(t testing.TB, m *qwen3.Model, maxLen int) *engine.Single {
	t.Helper()
	br, err := forward.NewBatched(m, newParScalar(), maxLen, 1, maxLen, kvcache.F32)
	if err != nil {
		t.Fatal(err)
	}
	r := engine.NewSingle(br)
	t.Cleanup(func() { r.Close() })
	return r
}
