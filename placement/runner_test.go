package placement

import (
	"math"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/engine"
	"inferno/internal/floatbits"
	"inferno/model"
	"inferno/sampling"
)

const goldenModel = "../testdata/golden/tiny-q8_0.gguf"

func openModel(t *testing.T) *model.Model {
	t.Helper()
	m, err := model.Open(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func open(t *testing.T, m *model.Model, cfg Config) *Backend {
	t.Helper()
	b, err := Open(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestOpenErrors(t *testing.T) {
	m := openModel(t)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Backend: "quantum"}, `unknown backend "quantum"`},
		{Config{Context: -1}, "must not be negative"},
		{Config{Context: 1 << 20}, "exceeds the model's context length"},
		{Config{Threads: MaxThreads + 1}, "threads"},
		{Config{Backend: "pool", NoGraph: true}, "--no-graph applies to the GPU backends"},
		{Config{KVType: "f8"}, "unknown element type"},
	} {
		if _, err := Open(m, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	b := open(t, m, Config{Backend: "scalar", Context: 128})
	if b.Name() != "scalar" || b.MaxLen() != 128 || b.KVType().String() != "f32" || b.Threads() != 1 {
		t.Errorf("scalar: %s %d %v %d", b.Name(), b.MaxLen(), b.KVType(), b.Threads())
	}
	b.Close()
	if _, err := b.NewBatchRunner(BatchConfig{}); err == nil {
		t.Error("NewBatchRunner after Close succeeded")
	}
}

// single returns one sequence on b: a batch of one on a pool holding one
// sequence of the context, contiguous (--kv basic) or in blocks.
func single(t *testing.T, b *Backend, contiguous bool) engine.Runner {
	t.Helper()
	br, err := b.NewBatchRunner(BatchConfig{Sequences: 1, Contiguous: contiguous})
	if err != nil {
		t.Fatal(err)
	}
	return engine.NewSingle(br)
}

// decode runs prompt then n greedy steps and returns the tokens and the
// logits of every step.
func decode(t *testing.T, r engine.Runner, prompt []int32, n int) ([]int32, [][]float32) {
	t.Helper()
	var ids []int32
	var logs [][]float32
	next := prompt
	for range n {
		if err := r.Forward(next); err != nil {
			t.Fatal(err)
		}
		l, _ := r.Logits()
		logs = append(logs, slices.Clone(l))
		id, _ := r.Greedy()
		ids = append(ids, id)
		next = []int32{id}
	}
	return ids, logs
}

// TestRunnersShareWorkers: two sequences on one pool backend, one
// contiguous (--kv basic) and one in blocks, their steps interleaved, give
// bitwise the logits each gives alone.
func TestRunnersShareWorkers(t *testing.T) {
	m := openModel(t)
	b := open(t, m, Config{Backend: "pool", Threads: 2, Context: 256})
	pa, pb := []int32{9707, 11, 1879, 0}, []int32{785, 3974, 13876}
	alone := func(p []int32) ([]int32, [][]float32) {
		r := single(t, b, true)
		defer r.Close()
		return decode(t, r, p, 12)
	}
	wantA, logA := alone(pa)
	wantB, logB := alone(pb)
	ra, rb := single(t, b, true), single(t, b, false)
	defer ra.Close()
	defer rb.Close()
	na, nb := pa, pb
	for i := range 12 {
		for _, s := range []struct {
			r    engine.Runner
			next *[]int32
			want []int32
			logs [][]float32
		}{{ra, &na, wantA, logA}, {rb, &nb, wantB, logB}} {
			if err := s.r.Forward(*s.next); err != nil {
				t.Fatal(err)
			}
			l, _ := s.r.Logits()
			if floatbits.FirstDiff(l, s.logs[i]) >= 0 {
				t.Fatalf("step %d: logits differ from the sequence alone", i)
			}
			id, _ := s.r.Greedy()
			if id != s.want[i] {
				t.Fatalf("step %d: token %d, alone %d", i, id, s.want[i])
			}
			*s.next = []int32{id}
		}
	}
}

// TestPrefixCacheBitwise: a sequence that keeps the prefix its runner
// holds from the previous request (contiguous) gives bitwise the logits of
// one that recomputes everything (in blocks), on every CPU backend.
func TestPrefixCacheBitwise(t *testing.T) {
	m := openModel(t)
	for _, name := range []string{"scalar", "simd", "pool"} {
		t.Run(name, func(t *testing.T) {
			b := open(t, m, Config{Backend: name, Context: 512})
			tok := m.Tokenizer
			first := tok.Encode("<|im_start|>user\nHello, who are you?<|im_end|>\n<|im_start|>assistant\n")
			logprobs := sampling.Params{Logprobs: true, TopLogprobs: 5}
			run := func(r engine.Runner, prompt, cached []int32) ([]sampling.Token, *engine.Sequence) {
				seq, err := engine.NewSequence(r, tok, engine.Request{Prompt: prompt, MaxTokens: 8, Sampling: logprobs, Cached: cached})
				if err != nil {
					t.Fatal(err)
				}
				var out []sampling.Token
				for !seq.Done() {
					st, err := seq.Step()
					if err != nil {
						t.Fatal(err)
					}
					if st.HasToken {
						st.Token.Top = slices.Clone(st.Token.Top)
						out = append(out, st.Token)
					}
				}
				return out, seq
			}
			r1 := single(t, b, true)
			defer r1.Close()
			reply, seq := run(r1, first, nil)
			second := slices.Clone(first)
			for _, tk := range reply {
				second = append(second, tk.ID)
			}
			second = append(second, tok.Encode("<|im_end|>\n<|im_start|>user\nAnd then?<|im_end|>\n<|im_start|>assistant\n")...)
			hit, hseq := run(r1, second, seq.Tokens())
			r2 := single(t, b, false)
			defer r2.Close()
			miss, mseq := run(r2, second, nil)
			if c := hseq.Metrics().CachedTokens; c != len(first)+len(reply)-1 {
				t.Errorf("cache hit kept %d tokens, want %d", c, len(first)+len(reply)-1)
			}
			if mseq.Metrics().CachedTokens != 0 {
				t.Error("a fresh runner reported cached tokens")
			}
			for i := range hit {
				if hit[i].ID != miss[i].ID || math.Float32bits(hit[i].Logprob) != math.Float32bits(miss[i].Logprob) || !slices.Equal(hit[i].Top, miss[i].Top) {
					t.Fatalf("token %d: hit %+v, miss %+v", i, hit[i], miss[i])
				}
			}
		})
	}
}

// geglu is a model whose description asks for what no backend runs: a
// mixture of experts with sigmoid gating.
type geglu struct {
	arch.Model
	c arch.Config
}

func (g *geglu) Hyper() *arch.Config { return &g.c }

// TestOpenUnsupportedOption: a model that needs an option the backend does
// not run is refused in one line naming it, on every CPU backend and in
// auto mode (the GPU refuses it too, or is absent).
func TestOpenUnsupportedOption(t *testing.T) {
	m := openModel(t)
	g := &geglu{Model: m.Arch, c: *m.Arch.Hyper()}
	g.c.MoE = arch.MoE{Experts: 4, TopK: 2, ExpertFFN: 32, Gating: arch.GateSigmoid}
	mg := *m
	mg.Arch = g
	for _, be := range []string{"scalar", "simd", "pool", "auto"} {
		_, err := Open(&mg, Config{Backend: be})
		if want := "qwen3: the CPU backend does not run mixture of experts (sigmoid gating)"; err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", be, err, want)
		}
	}
}
