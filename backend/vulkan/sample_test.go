package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"inferno/internal/gumbel"
	"inferno/sampling"
	"inferno/sampling/samplingtest"
)

// sampleRig samples rows of logits uploaded by the test: R rows of V,
// through one command buffer recorded once and replayed for every set of
// rows (the push constants depend only on R and V).
type sampleRig struct {
	t      *testing.T
	d      *Device
	s      *devSampler
	V, R   int
	logits *Buffer
	x      []float32 // what the logits hold
	rec    *Recorder
}

func newSampleRig(t *testing.T, d *Device, V, R int) *sampleRig {
	return newSampleRigWG(t, d, V, R, sampWorkgroup(d))
}

// newSampleRigWG is newSampleRig with the shaders' workgroup size wg.
func newSampleRigWG(t *testing.T, d *Device, V, R int, wg uint32) *sampleRig {
	t.Helper()
	s, err := newDevSamplerWG(d, V, R, wg)
	if err != nil {
		t.Fatal(err)
	}
	logits, err := d.NewBuffer(int64(4 * V * R))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := d.Record()
	if err != nil {
		t.Fatal(err)
	}
	s.record(rec, logits.Addr(), R)
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}
	r := &sampleRig{t: t, d: d, s: s, V: V, R: R, logits: logits, rec: rec}
	t.Cleanup(func() {
		rec.Release()
		logits.Free()
		s.close()
	})
	return r
}

// load writes x to every row of the logits.
func (r *sampleRig) load(x []float32) {
	r.t.Helper()
	big := make([]float32, 0, r.R*r.V)
	for range r.R {
		big = append(big, x...)
	}
	if err := r.d.Write(r.logits, 0, F32Bytes(big)); err != nil {
		r.t.Fatal(err)
	}
	r.x = big
}

// loadRows writes rows of logits (V apart) from the first row on.
func (r *sampleRig) loadRows(x []float32) {
	r.t.Helper()
	if err := r.d.Write(r.logits, 0, F32Bytes(x)); err != nil {
		r.t.Fatal(err)
	}
	r.x = slices.Clone(x)
}

// run samples rows (at most R; the rest skipped) and returns their tokens;
// rows left to the host have ID -2, rows not On -3.
func (r *sampleRig) run(rows []sampling.Row) []sampling.Token {
	t := r.t
	t.Helper()
	if err := r.s.set(rows); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Replay(r.rec); err != nil {
		t.Fatal(err)
	}
	out := make([]sampling.Token, len(rows))
	for i := range rows {
		tok, err := r.s.sampled(i)
		switch {
		case errors.Is(err, sampling.ErrNotDrawn):
			tok.ID = -2
		case !rows[i].On:
			if err == nil {
				t.Fatalf("row %d (not On): no error", i)
			}
			tok.ID = -3
		case err != nil:
			t.Fatal(err)
		}
		tok.Top = slices.Clone(tok.Top)
		out[i] = tok
	}
	return out
}

// checkLogits fails unless the logits are what was loaded (the patched
// ones put back).
func (r *sampleRig) checkLogits() {
	r.t.Helper()
	got := make([]float32, len(r.x))
	if err := r.d.Read(r.logits, 0, F32Bytes(got)); err != nil {
		r.t.Fatal(err)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(r.x[i]) {
			r.t.Fatalf("logit %d (row %d) is %g after sampling, was %g", i, i/r.V, got[i], r.x[i])
		}
	}
}

// rampRow returns logits whose softmax spreads over about a hundred
// tokens: in a random order, 2, 1.95, 1.9, ... (many tokens of
// moderate probability, so that the chi-squared tests have many bins).
func rampRow(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := make([]float32, n)
	for i, id := range rng.Perm(n) {
		x[id] = 2 - 0.05*float32(i)
	}
	return x
}

// testPatches returns the patches of a sampler under p that saw a prompt
// and generated tokens, the six most likely tokens of x among them.
func testPatches(t *testing.T, p sampling.Params, x []float32) []sampling.Patch {
	t.Helper()
	smp, err := sampling.New(p, len(x))
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Release()
	smp.SetPrompt([]int32{3, 5, 8, 13, 21})
	for _, id := range []int32{5, 5, 34, 55, 89, 144} {
		smp.Accept(id)
	}
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case x[a] > x[b]:
			return -1
		case x[a] < x[b]:
			return 1
		}
		return 0
	})
	for j, id := range order[:6] {
		for range j%3 + 1 {
			smp.Accept(int32(id))
		}
	}
	return smp.Patches(nil)
}

func TestSampleLayout(t *testing.T) {
	if sampRowBytes != 72 || sampPatchBytes != 20 {
		t.Errorf("sampRow %d bytes, sampPatch %d; the shaders' SampRow is 72, SampPatch 20", sampRowBytes, sampPatchBytes)
	}
	if n := unsafe.Sizeof(pushSampFinal{}); n != 96 {
		t.Errorf("pushSampFinal is %d bytes, want 96", n)
	}
}

// TestSampleDistribution draws from fixed rows of logits under every
// setting the device samples (rows alike but for their index and seed,
// many per submit) and tests the counts against sampling.Distribution;
// and that the test tells a temperature 10% off.
func TestSampleDistribution(t *testing.T) {
	d := testDevice(t)
	bias := map[int32]float32{}
	for id := range int32(10) {
		bias[id*7] = float32(id%5) - 2
	}
	type tcase struct {
		name   string
		p      sampling.Params
		masked bool
		llm    bool // samplingtest.LLMRow's logits, else rampRow's
	}
	// V 1024 and 4100 (two chunks of sample_topk: the merge).
	for _, V := range []int{1024, 4100} {
		const R = 256
		rig := newSampleRig(t, d, V, R)
		mask := make([]uint64, (V+63)/64)
		for i := 0; i < V; i++ {
			if i%3 != 1 {
				mask[i>>6] |= 1 << (i & 63)
			}
		}
		cases := []tcase{
			{name: "top_k 50, min_p 0.02", p: sampling.Params{Temperature: 1.2, TopK: 50, MinP: 0.02}},
			{name: "top_p 0.8 alone, min_p, mask", p: sampling.Params{Temperature: 0.9, TopP: 0.8, MinP: 0.01}, masked: true},
			{name: "penalties, bias, top_k 40", p: sampling.Params{Temperature: 0.9, TopK: 40, RepetitionPenalty: 1.3, PresencePenalty: 0.4, FrequencyPenalty: 0.3, LogitBias: bias}},
		}
		launches := 12
		if V == 1024 {
			launches = 48
			cases = append(cases,
				tcase{name: "temperature 1", p: sampling.Params{Temperature: 1}},
				tcase{name: "temperature 1, llm row", p: sampling.Params{Temperature: 1}, llm: true},
				tcase{name: "temperature 0.6", p: sampling.Params{Temperature: 0.6}},
				tcase{name: "qwen3 0.6/0.95/20", p: sampling.Params{Temperature: 0.6, TopP: 0.95, TopK: 20}},
				tcase{name: "min_p 0.05", p: sampling.Params{Temperature: 1.5, MinP: 0.05}},
				tcase{name: "top_p 0.9 alone, llm row", p: sampling.Params{Temperature: 0.8, TopP: 0.9}, llm: true},
				tcase{name: "mask, temperature 1", p: sampling.Params{Temperature: 1}, masked: true},
				tcase{name: "penalties, bias, min_p, mask", p: sampling.Params{Temperature: 1, MinP: 0.01, RepetitionPenalty: 0.8, FrequencyPenalty: -0.5, LogitBias: bias}, masked: true},
			)
		}
		for ci, c := range cases {
			x := rampRow(uint64(V+ci), V)
			if c.llm {
				x = samplingtest.LLMRow(uint64(V+ci), V)
			}
			rig.load(x)
			var pat []sampling.Patch
			if c.p.Patched() {
				pat = testPatches(t, c.p, x)
			}
			var m []uint64
			if c.masked {
				m = mask
			}
			want := sampling.Distribution(x, c.p, pat, m)
			counts := make([]int, V)
			N, undrawn := 0, 0
			for l := range launches {
				rows := make([]sampling.Row, R)
				for i := range rows {
					rows[i] = sampling.Row{On: true, Params: c.p, Seed: uint64(1000*ci + l), Index: i, Patches: pat, Mask: m}
				}
				for _, tok := range rig.run(rows) {
					if tok.ID < 0 {
						undrawn++
						continue
					}
					counts[tok.ID]++
					N++
				}
			}
			if undrawn > 0 {
				t.Errorf("V=%d %s: %d rows left to the host", V, c.name, undrawn)
			}
			what := fmt.Sprintf("V=%d %s", V, c.name)
			samplingtest.CheckChi(t, what, counts, want, N)
			if pat != nil {
				rig.checkLogits()
			}
			if c.name == "temperature 1" {
				// The test's power: the same draws against temperature 1.1.
				off := c.p
				off.Temperature = 1.1
				chi, df, _ := samplingtest.ChiSquared(counts, sampling.Distribution(x, off, nil, nil), N)
				if crit := samplingtest.ChiCrit(df); chi <= crit {
					t.Errorf("%s: the draws pass against temperature 1.1 too (chi-squared %.1f, critical %.1f)", what, chi, crit)
				}
			}
		}
	}
}

// TestSampleSeedBatch checks that a row's token depends only on its seed,
// index and logits: alone, at any row of a batch with other settings, and
// replay after replay; and that the tokens are the reference Gumbel-max's
// (package gumbel: the noise in float64, so a near tie may go the other
// way).
func TestSampleSeedBatch(t *testing.T) {
	d := testDevice(t)
	for _, wg := range []uint32{sampWorkgroup(d), 32, 256} {
		t.Run(fmt.Sprintf("workgroup %d", wg), func(t *testing.T) { seedBatch(t, d, wg) })
	}
}

// seedBatch is TestSampleSeedBatch with the shaders' workgroup size wg.
func seedBatch(t *testing.T, d *Device, wg uint32) {
	const V, R = 2048, 64
	x := samplingtest.LLMRow(9, V)
	rig := newSampleRigWG(t, d, V, R, wg)
	rig.load(x)
	params := []sampling.Params{
		{Temperature: 1},
		{Temperature: 0.6, TopP: 0.95, TopK: 20},
		{Temperature: 0.8, MinP: 0.05, Logprobs: true, TopLogprobs: 5},
		{Temperature: 1.1, TopP: 0.7},
		{},
	}
	type key struct {
		pi   int
		seed uint64
		idx  int
	}
	alone := map[key]int32{}
	for pi, p := range params {
		for seed := uint64(1); seed <= 3; seed++ {
			for idx := range 3 {
				alone[key{pi, seed, idx}] = rig.run([]sampling.Row{{On: true, Params: p, Seed: seed, Index: idx}})[0].ID
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 6 {
		rows := make([]sampling.Row, R)
		keys := make([]key, R)
		for i := range rows {
			k := key{rng.IntN(len(params)), uint64(1 + rng.IntN(3)), rng.IntN(3)}
			keys[i] = k
			rows[i] = sampling.Row{On: rng.IntN(8) != 0, Params: params[k.pi], Seed: k.seed, Index: k.idx}
		}
		for i, tok := range rig.run(rows) {
			if rows[i].On && tok.ID != alone[keys[i]] {
				t.Errorf("trial %d row %d %+v: token %d in the batch, %d alone", trial, i, keys[i], tok.ID, alone[keys[i]])
			}
		}
	}
	// With patches and a mask too.
	mask := make([]uint64, V/64)
	for i := range V {
		if i%7 != 3 {
			mask[i>>6] |= 1 << (i & 63)
		}
	}
	pp := sampling.Params{Temperature: 0.9, RepetitionPenalty: 1.2, FrequencyPenalty: 0.5, LogitBias: map[int32]float32{1: 5, 2: -3}}
	pat := testPatches(t, pp, x)
	ppk := pp
	ppk.TopK = 64
	for pi, p := range append(params, pp, ppk) {
		rows := make([]sampling.Row, R)
		for i := range rows {
			rows[i] = sampling.Row{On: true, Params: p, Seed: uint64(1000+i) | uint64(i)<<40, Index: 3 * i}
			if p.Patched() {
				rows[i].Patches, rows[i].Mask = pat, mask
			}
		}
		agree := 0
		for i, tok := range rig.run(rows) {
			if tok.ID == gumbel.Sample(x, p, rows[i].Patches, rows[i].Mask, rows[i].Seed, rows[i].Index) {
				agree++
			}
		}
		t.Logf("params %d: %d of %d tokens are the reference's", pi, agree, R)
		if agree < R-2 || p.Argmax() && agree != R {
			t.Errorf("params %d: only %d of %d tokens are the reference Gumbel-max's", pi, agree, R)
		}
	}
	// Different seeds agree about as often as the distribution says.
	differ := 0
	a := alone[key{0, 1, 0}]
	rows := make([]sampling.Row, 30)
	for i := range rows {
		rows[i] = sampling.Row{On: true, Params: params[0], Seed: uint64(10 + i)}
	}
	for _, tok := range rig.run(rows) {
		if tok.ID != a {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("30 other seeds all gave the same token")
	}
}

// TestSampleLogprobs checks the log-probabilities against the CPU
// sampler's (raw logits; the top 20 by rank), with patches and a mask
// that change the draw but not the raw log-probabilities.
func TestSampleLogprobs(t *testing.T) {
	d := testDevice(t)
	const V, R = 3000, 8
	x := samplingtest.LLMRow(21, V)
	x[10] = x[11] // a tie among the top log-probabilities? only if they are near the top
	rig := newSampleRig(t, d, V, R)
	rig.load(x)
	mask := make([]uint64, (V+63)/64)
	for i := range V {
		if i%5 != 0 {
			mask[i>>6] |= 1 << (i & 63)
		}
	}
	ps := []sampling.Params{
		{Temperature: 0.7, TopK: 30, Logprobs: true, TopLogprobs: 20, LogitBias: map[int32]float32{11: 3}},
		{Temperature: 1, Logprobs: true, TopLogprobs: 7, PresencePenalty: 1},
		{Logprobs: true, TopLogprobs: 1},
		{Temperature: 0.5, TopP: 0.9, Logprobs: true},
	}
	var rows []sampling.Row
	var cpus []*sampling.Sampler
	for i, p := range ps {
		smp, err := sampling.New(p, V)
		if err != nil {
			t.Fatal(err)
		}
		defer smp.Release()
		smp.Accept(11)
		smp.Accept(int32(slices.Index(x, slices.Max(x))))
		rows = append(rows, sampling.Row{On: true, Params: p, Seed: uint64(i), Index: i, Patches: smp.Patches(nil)})
		cpus = append(cpus, smp)
	}
	rows[1].Mask = mask
	raw := samplingtest.LogSoftmax(x)
	for i, tok := range rig.run(rows) {
		cpu, err := cpus[i].Sample(slices.Clone(x))
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(float64(tok.Logprob) - raw[tok.ID]); d > 1e-4 {
			t.Errorf("row %d: logprob of %d %.6f, want %.6f", i, tok.ID, tok.Logprob, raw[tok.ID])
		}
		if len(tok.Top) != len(cpu.Top) {
			t.Fatalf("row %d: %d top logprobs, the CPU's %d", i, len(tok.Top), len(cpu.Top))
		}
		for j, e := range tok.Top {
			if c := cpu.Top[j]; e.ID != c.ID || math.Abs(float64(e.Logprob-c.Logprob)) > 1e-4 {
				t.Errorf("row %d: top %d is %d (%.6f), the CPU's %d (%.6f)", i, j, e.ID, e.Logprob, c.ID, c.Logprob)
			}
		}
	}
	rig.checkLogits()
}
