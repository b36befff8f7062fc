package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"inferno/batch"
	"inferno/engine"
	"inferno/internal/gumbel"
	"inferno/model/qwen3"
	"inferno/sampling"
	"inferno/sampling/samplingtest"
)

// The BatchRunner samples on the GPU for the engine's scheduler.
var _ engine.DeviceSampler = (*BatchRunner)(nil)

// sampleRig runs the GPU sampler on rows of logits uploaded by the test.
type sampleRig struct {
	t     *testing.T
	g     *device
	s     *devSampler
	V     int
	dres  uint64
	hres  uintptr
	hresD uint64
	step  int32
	// undrawn counts the rows left to the host
	undrawn int
}

func newSampleRig(t *testing.T, g *device, V int) *sampleRig {
	r := &sampleRig{t: t, g: g, s: newDevSampler(g, V), V: V, dres: devZeros(t, g, 4*(MaxBatch+4))}
	r.s.have = true
	var err error
	if r.hres, r.hresD, err = g.allocHost(4 * (MaxBatch + 4)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.s.close()
		g.freeHost(r.hres)
	})
	return r
}

// run samples the rows of logits (device, V apart) under rows; rows left
// to the host (sampling.ErrNotDrawn) are counted in r.undrawn.
func (r *sampleRig) run(logits uint64, rows []sampling.Row) []sampling.Token {
	t := r.t
	t.Helper()
	s := r.s
	if err := s.set(rows); err != nil {
		t.Fatal(err)
	}
	if err := s.prepare(func() error { return r.g.sync("test") }); err != nil {
		t.Fatal(err)
	}
	s.active = false
	s.fill(0, 0)
	r.step++
	l := &launcher{g: r.g}
	if s.launch(l, 0, 0, logits, len(rows), r.dres, r.hresD, r.step, 0); l.err != nil {
		t.Fatal(l.err)
	}
	waitStream(t, r.g)
	h := hostInts(r.hres, MaxBatch+4)
	if h[sampFlag] != r.step {
		t.Fatalf("sampling step %d: the flag reads %d", r.step, h[sampFlag])
	}
	ids := getI32(t, r.g, r.dres, len(rows))
	out := make([]sampling.Token, len(rows))
	for i := range rows {
		if ids[i] != h[i] {
			t.Fatalf("row %d: id %d on the device, %d on the host", i, ids[i], h[i])
		}
		if ids[i] < 0 || int(ids[i]) >= r.V {
			t.Fatalf("row %d: id %d outside the vocabulary of %d", i, ids[i], r.V)
		}
		if s.undrawn(0, i) {
			r.undrawn++
		}
		tok := s.token(0, i, ids[i])
		tok.Top = slices.Clone(tok.Top)
		out[i] = tok
	}
	return out
}

// TestSampleDistribution draws from fixed rows of logits under every
// setting the GPU samples (rows alike but for their index and seed, many
// per launch) and tests the counts against sampling.Distribution.
func TestSampleDistribution(t *testing.T) {
	g := testDevice(t)
	for _, V := range []int{1000, 151936} {
		x := samplingtest.LLMRow(uint64(V), V)
		rig := newSampleRig(t, g, V)
		rowsPer := MaxBatch
		if V > 100000 {
			rowsPer = 128
		}
		big := make([]float32, 0, rowsPer*V)
		for range rowsPer {
			big = append(big, x...)
		}
		logits := devF32(t, g, big)
		mask := make([]uint64, (V+63)/64)
		for i := 0; i < V; i++ {
			if i%3 != 1 {
				mask[i>>6] |= 1 << (i & 63)
			}
		}
		bias := map[int32]float32{}
		for id := range int32(10) {
			bias[id*7] = float32(id%5) - 2
		}
		cases := []struct {
			name string
			p    sampling.Params
			pat  []sampling.Patch
			mask []uint64
		}{
			{name: "temperature 1", p: sampling.Params{Temperature: 1}},
			{name: "temperature 0.6", p: sampling.Params{Temperature: 0.6}},
			{name: "qwen3 0.6/0.95/20", p: sampling.Params{Temperature: 0.6, TopP: 0.95, TopK: 20}},
			{name: "top_k 50, min_p 0.02", p: sampling.Params{Temperature: 1.2, TopK: 50, MinP: 0.02}},
			{name: "min_p 0.05", p: sampling.Params{Temperature: 1.5, MinP: 0.05}},
			{name: "top_p 0.9 alone, peaked", p: sampling.Params{Temperature: 0.35, TopP: 0.9}},
			{name: "top_p 0.8 alone, min_p, mask", p: sampling.Params{Temperature: 0.3, TopP: 0.8, MinP: 0.001}, mask: mask},
			{name: "mask, temperature 1", p: sampling.Params{Temperature: 1}, mask: mask},
			{name: "penalties, bias, top_k 40", p: sampling.Params{Temperature: 0.9, TopK: 40, RepetitionPenalty: 1.3, PresencePenalty: 0.4, FrequencyPenalty: 0.3, LogitBias: bias}},
			{name: "penalties, bias, min_p, mask", p: sampling.Params{Temperature: 1, MinP: 0.01, RepetitionPenalty: 0.8, FrequencyPenalty: -0.5, LogitBias: bias}, mask: mask},
		}
		for ci, c := range cases {
			if c.p.LogitBias != nil || c.p.RepetitionPenalty != 0 {
				smp, err := sampling.New(c.p, V)
				if err != nil {
					t.Fatal(err)
				}
				smp.SetPrompt([]int32{3, 5, 8, 13, 21})
				for _, id := range []int32{5, 5, 34, 55, 89, 144} {
					smp.Accept(id)
				}
				// the most likely tokens too
				for id := range x {
					if x[id] > 8 {
						smp.Accept(int32(id))
					}
				}
				c.pat = smp.Patches(nil)
				smp.Release()
			}
			want := sampling.Distribution(x, c.p, c.pat, c.mask)
			counts := make([]int, V)
			launches := 64
			if V > 100000 {
				launches = 160
			}
			N := 0
			for l := range launches {
				rows := make([]sampling.Row, rowsPer)
				for i := range rows {
					rows[i] = sampling.Row{On: true, Params: c.p, Seed: uint64(1000*ci + l), Index: i, Patches: c.pat, Mask: c.mask}
				}
				if len(c.pat) > 0 && l > 0 {
					// samp_prep patches the logits in place: fresh copies.
					if err := g.upload(logits, f32Bytes(big)); err != nil {
						t.Fatal(err)
					}
				}
				for _, tok := range rig.run(logits, rows) {
					counts[tok.ID]++
					N++
				}
			}
			if len(c.pat) > 0 {
				if err := g.upload(logits, f32Bytes(big)); err != nil {
					t.Fatal(err)
				}
			}
			if rig.undrawn > 0 {
				t.Errorf("V=%d %s: %d rows left to the host", V, c.name, rig.undrawn)
				rig.undrawn = 0
			}
			samplingtest.CheckChi(t, fmt.Sprintf("V=%d %s", V, c.name), counts, want, N)
		}
		// top_p alone over a flat row of Qwen3's vocabulary: the nucleus
		// is larger than the candidates; every row is left to the host.
		{
			rows := make([]sampling.Row, 16)
			for i := range rows {
				rows[i] = sampling.Row{On: true, Params: sampling.Params{Temperature: 1.5, TopP: 0.95}, Seed: 5, Index: i}
			}
			rig.undrawn = 0
			rig.run(logits, rows)
			if V > 100000 && rig.undrawn != 16 { // V = 1000: the nucleus may end among the 128 candidates
				t.Errorf("V=%d top_p 0.95 over a flat row: %d of 16 rows left to the host", V, rig.undrawn)
			}
			rig.undrawn = 0
		}
		// Greedy with a mask: the largest allowed logit, every row.
		rows := make([]sampling.Row, 4)
		for i := range rows {
			rows[i] = sampling.Row{On: true, Mask: mask, Index: i}
		}
		want := sampling.Distribution(x, sampling.Params{}, nil, mask)
		for i, tok := range rig.run(logits, rows) {
			if want[tok.ID] != 1 {
				t.Errorf("V=%d greedy with a mask: row %d chose %d", V, i, tok.ID)
			}
		}
	}
}

// TestSampleSeedBatch checks that a row's token depends only on its seed,
// index and logits: alone, at any row of a batch of 64 with other
// settings, and launch after launch; and that logprobs match the CPU's.
func TestSampleSeedBatch(t *testing.T) {
	g := testDevice(t)
	const V = 151936
	x := samplingtest.LLMRow(9, V)
	rig := newSampleRig(t, g, V)
	big := make([]float32, 0, 64*V)
	for range 64 {
		big = append(big, x...)
	}
	logits := devF32(t, g, big)
	params := []sampling.Params{
		{Temperature: 1},
		{Temperature: 0.6, TopP: 0.95, TopK: 20},
		{Temperature: 0.8, MinP: 0.05, Logprobs: true, TopLogprobs: 5},
		{},
	}
	rng := rand.New(rand.NewPCG(5, 5))
	type key struct {
		pi   int
		seed uint64
		idx  int
	}
	alone := map[key]int32{}
	for pi, p := range params {
		for seed := uint64(1); seed <= 4; seed++ {
			for idx := range 3 {
				k := key{pi, seed, idx}
				tok := rig.run(logits, []sampling.Row{{On: true, Params: p, Seed: seed, Index: idx}})[0]
				alone[k] = tok.ID
			}
		}
	}
	same, differ := 0, 0
	for trial := range 8 {
		rows := make([]sampling.Row, 64)
		keys := make([]key, 64)
		for i := range rows {
			k := key{rng.IntN(len(params)), uint64(1 + rng.IntN(4)), rng.IntN(3)}
			keys[i] = k
			rows[i] = sampling.Row{On: true, Params: params[k.pi], Seed: k.seed, Index: k.idx}
		}
		for i, tok := range rig.run(logits, rows) {
			if tok.ID != alone[keys[i]] {
				t.Errorf("trial %d row %d %+v: token %d in the batch, %d alone", trial, i, keys[i], tok.ID, alone[keys[i]])
			}
		}
	}
	// The tokens are the Gumbel-max the design defines (gumbel.Sample, the
	// noise in float64: a near tie may go the other way).
	for pi, p := range params[:3] {
		rows := make([]sampling.Row, 64)
		for i := range rows {
			rows[i] = sampling.Row{On: true, Params: p, Seed: uint64(1000 + i), Index: 3 * i}
		}
		agree := 0
		for i, tok := range rig.run(logits, rows) {
			if tok.ID == gumbel.Sample(x, p, nil, nil, uint64(1000+i), 3*i) {
				agree++
			}
		}
		t.Logf("params %d: %d of 64 tokens are the reference's", pi, agree)
		if agree < 60 {
			t.Errorf("params %d: only %d of 64 tokens are the reference Gumbel-max's", pi, agree)
		}
	}
	// Different seeds agree about as often as the distribution says.
	for seed := uint64(10); seed < 40; seed++ {
		a := alone[key{0, 1, 0}]
		tok := rig.run(logits, []sampling.Row{{On: true, Params: params[0], Seed: seed}})[0]
		if tok.ID == a {
			same++
		} else {
			differ++
		}
	}
	t.Logf("temperature 1, other seeds: %d agree, %d differ", same, differ)
	if differ == 0 {
		t.Errorf("30 other seeds all gave the same token")
	}
	// Log-probabilities against the CPU sampler's (raw logits).
	p := sampling.Params{Temperature: 0.7, TopK: 30, Logprobs: true, TopLogprobs: 20, LogitBias: map[int32]float32{11: 3}}
	smp, err := sampling.New(p, V)
	if err != nil {
		t.Fatal(err)
	}
	smp.Accept(11)
	pat := smp.Patches(nil)
	for trial := range 4 {
		tok := rig.run(logits, []sampling.Row{{On: true, Params: p, Seed: uint64(trial), Patches: pat}})[0]
		if err := g.upload(logits, f32Bytes(big[:V])); err != nil {
			t.Fatal(err)
		}
		cpu := samplingtest.LogSoftmax(x)
		if d := math.Abs(float64(tok.Logprob) - cpu[tok.ID]); d > 1e-4 {
			t.Errorf("trial %d: logprob of %d %.6f, CPU %.6f", trial, tok.ID, tok.Logprob, cpu[tok.ID])
		}
		if len(tok.Top) != 20 {
			t.Fatalf("trial %d: %d top logprobs, want 20", trial, len(tok.Top))
		}
		order := make([]int32, V)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			switch {
			case x[a] > x[b]:
				return -1
			case x[a] < x[b]:
				return 1
			}
			return int(a - b)
		})
		for j, e := range tok.Top {
			if e.ID != order[j] || math.Abs(float64(e.Logprob)-cpu[e.ID]) > 1e-4 {
				t.Errorf("trial %d: top %d is %d (%.6f), want %d (%.6f)", trial, j, e.ID, e.Logprob, order[j], cpu[order[j]])
				break
			}
		}
	}
}

// TestBatchSampledLookahead decodes sequences sampled on the GPU on two
// batch runners, with the lookahead and without: the same tokens, each
// the Gumbel-max the design defines over the logits of the runner without
// (gumbel.Sample; the greedy row's exactly, the sampled rows' but for a near
// tie or two), and the lookahead steps taken.
func TestBatchSampledLookahead(t *testing.T) {
	requireGPU(t)
	sampledLookahead(t, tinyModel(t), 7, 24)
}

// sampledLookahead is TestBatchSampledLookahead's run on model m: four
// sequences (prompts of prompt, prompt+3, ... tokens) sampled for steps
// steps, with four sets of parameters (one greedy).
func sampledLookahead(t *testing.T, m *qwen3.Model, prompt, steps int) {
	t.Helper()
	r := newModel(t, m, Options{MaxLen: 512})
	const bs, blocks = 16, 128
	la := newBatchRunner(t, r, blocks, bs)
	ref := newBatchRunner(t, r, blocks, bs)
	ref.SetLookahead(false)
	V := m.Config.Vocab
	rng := rand.New(rand.NewPCG(31, 31))
	alloc := newBlockAlloc(rng, blocks)
	params := []sampling.Params{{Temperature: 1}, {Temperature: 0.6, TopP: 0.95, TopK: 20}, {Temperature: 0.9, MinP: 0.05}, {}}
	n := len(params)
	tabs := make([][]int32, n)
	lens := make([]int, n)
	next := make([][]int32, n)
	for i := range n {
		next[i] = randomPrompt(uint64(300+i), prompt+3*i, V)
	}
	off := 0 // sampled tokens other than the reference's (near ties)
	for step := range steps {
		var b batch.Batch
		rows := make([]sampling.Row, n)
		for i := range n {
			tabs[i] = alloc.grow(tabs[i], lens[i]+len(next[i])+40, bs)
			b.Add(b.AddSeq(tabs[i]), next[i], lens[i], true)
			rows[i] = sampling.Row{On: true, Params: params[i], Seed: uint64(77 + i), Index: step}
		}
		var got [2][]int32
		want := make([]int32, n)
		for k, br := range []*BatchRunner{la, ref} {
			if err := br.SetSamples(rows); err != nil {
				t.Fatal(err)
			}
			if err := br.Forward(&b); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for i := range n {
				tok, err := br.Sampled(i)
				if err != nil {
					t.Fatal(err)
				}
				got[k] = append(got[k], tok.ID)
			}
			if br != ref {
				continue
			}
			// The runner without the lookahead reads its logits (its next
			// Forward queues none either way).
			for i := range n {
				x, err := br.Logits(i)
				if err != nil {
					t.Fatal(err)
				}
				want[i] = gumbel.Sample(x, params[i], nil, nil, rows[i].Seed, rows[i].Index)
			}
		}
		for i := range n {
			if got[1][i] == want[i] {
				continue
			}
			if params[i].Argmax() {
				t.Fatalf("step %d, row %d (greedy): token %d without the lookahead, the logits' argmax is %d", step, i, got[1][i], want[i])
			}
			off++
			t.Logf("step %d, row %d: token %d without the lookahead, the reference draw %d", step, i, got[1][i], want[i])
		}
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("step %d: tokens %v with the lookahead, %v without (the reference draws %v)", step, got[0], got[1], want)
		}
		for i := range n {
			lens[i] += len(next[i])
			next[i] = []int32{got[0][i]}
		}
	}
	if off > 3 {
		t.Errorf("%d of %d sampled tokens are not the reference Gumbel-max's", off, steps*(n-1))
	}
	st := la.Stats()
	t.Logf("lookahead: %d taken, %d discarded", st.LookaheadHits, st.LookaheadMisses)
	if st.LookaheadHits < int64(steps*5/8) {
		t.Errorf("lookahead steps taken %d, want at least %d", st.LookaheadHits, steps*5/8)
	}
}
