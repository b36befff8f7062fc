package qwen3_test

import (
	"encoding/binary"
	"encoding/json"
	"inferno/kvcache"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"inferno/backend/scalar"
	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/sampling"
)

const goldenDir = "../../testdata/golden"

// golden is tiny-q8_0.json: reference outputs of Hugging Face transformers
// in float64 on tiny-q8_0.gguf.
type golden struct {
	Prompts map[string]struct {
		IDs            []int32     `json:"ids"`
		LastLogitsFile string      `json:"last_logits_file"`
		ArgmaxPerPos   []int32     `json:"argmax_per_position"`
		Top10Last      [][]float64 `json:"top10_last"`
		Greedy16       []int32     `json:"greedy16"`
	} `json:"prompts"`
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, "tiny-q8_0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func readLogits(t testing.TB, name string) []float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func openModel(t testing.TB, path string) *qwen3.Model {
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

// relL2 returns ||got - want|| / ||want||.
func relL2(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}

// margin returns the gap between the largest and second largest logit.
func margin(v []float32) float64 {
	s := append([]float32(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] > s[j] })
	return float64(s[0] - s[1])
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestGoldenLogitsScalar(t *testing.T) {
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	r := newSingle(t, m, scalar.NewScalar(), 0, kvcache.F32)
	for _, name := range sortedKeys(g.Prompts) {
		p := g.Prompts[name]
		t.Run(name, func(t *testing.T) {
			r.Reset()
			if err := r.Forward(p.IDs); err != nil {
				t.Fatal(err)
			}
			got, _ := r.Logits()
			want := readLogits(t, p.LastLogitsFile)
			if len(got) != len(want) {
				t.Fatalf("got %d logits, want %d", len(got), len(want))
			}
			e := relL2(got, want)
			t.Logf("%d tokens: relative L2 error %.3g, top-1 margin %.3f", len(p.IDs), e, margin(want))
			if e > 1e-4 {
				t.Errorf("relative L2 error %.3g > 1e-4", e)
			}
			if a, b := sampling.Argmax(got), sampling.Argmax(want); a != b {
				t.Errorf("top-1 %d, want %d", a, b)
			}
		})
	}
}

func TestGoldenGreedyScalar(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	r := newSingle(t, m, scalar.NewScalar(), 0, kvcache.F32)
	for _, name := range sortedKeys(g.Prompts) {
		p := g.Prompts[name]
		if len(p.Greedy16) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r.Reset()
			var got []int32
			next := p.IDs
			for range p.Greedy16 {
				if err := r.Forward(next); err != nil {
					t.Fatal(err)
				}
				id, _ := r.Greedy()
				got = append(got, id)
				next = []int32{id}
			}
			for i := range got {
				if got[i] != p.Greedy16[i] {
					t.Fatalf("greedy token %d: got %v, want %v", i, got, p.Greedy16)
				}
			}
		})
	}
}

// TestDecodeAllocs checks that a decode step allocates nothing once the
// runner's buffers exist.
func TestDecodeAllocs(t *testing.T) {
	m := openModel(t, filepath.Join(goldenDir, "tiny-q8_0.gguf"))
	checkDecodeAllocs(t, "scalar", newSingle(t, m, scalar.NewScalar(), 256, kvcache.F32))
}

// checkDecodeAllocs runs a short prompt on r, then checks that decode
// steps allocate nothing, and closes r.
func checkDecodeAllocs(t *testing.T, name string, r *single) {
	t.Helper()
	defer r.Close()
	if err := r.Forward([]int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	step := []int32{4}
	allocs := testing.AllocsPerRun(20, func() {
		if err := r.Forward(step); err != nil {
			t.Fatal(err)
		}
		step[0], _ = r.Greedy()
	})
	if allocs != 0 {
		t.Errorf("%s: decode step allocates %.1f times", name, allocs)
	}
}
