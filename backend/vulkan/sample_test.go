package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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

// llmRow returns logits shaped like a language model's: a few large
// values over a Gaussian bulk.
func llmRow(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 2)
	}
	for range 12 {
		x[rng.IntN(n)] += float32(6 + 6*rng.Float64())
	}
	return x
}

// chiTest compares counts with the probabilities want (N draws) at
// p < 1e-6; tokens of probability 0 must never appear.
func chiTest(t *testing.T, what string, counts []int, want []float64, N int) {
	t.Helper()
	chi, df, bad := samplingtest.ChiSquared(counts, want, N)
	if bad >= 0 {
		t.Errorf("%s: token %d drawn %d times, probability 0", what, bad, counts[bad])
	}
	if df < 1 {
		t.Logf("%s: one token, %d draws", what, N)
		return
	}
	if c := samplingtest.ChiCrit(df); chi > c {
		t.Errorf("%s: chi-squared %.1f > %.1f (df %d, p < 1e-6)", what, chi, c, df)
	} else {
		t.Logf("%s: chi-squared %.1f (df %d, critical %.1f)", what, chi, df, c)
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
		llm    bool // llmRow's logits, else rampRow's
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
				x = llmRow(uint64(V+ci), V)
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
			chiTest(t, what, counts, want, N)
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

// TestSampleEdges: greedy rows take the argmax (with a mask, with
// patches), top_k 1 too; rows not On are skipped; a top_p nucleus larger
// than the candidates is left to the host; +Inf and all-excluded rows.
func TestSampleEdges(t *testing.T) {
	d := testDevice(t)
	const V, R = 4096, 8
	x := llmRow(3, V)
	x[77] = x[slices.Index(x, slices.Max(x))] // a tie at the top: the lower id wins
	rig := newSampleRig(t, d, V, R)
	rig.load(x)
	mask := make([]uint64, V/64)
	for i := range V {
		if i%2 == 1 {
			mask[i>>6] |= 1 << (i & 63)
		}
	}
	bias := map[int32]float32{5: 40}
	pat := testPatches(t, sampling.Params{LogitBias: bias}, x)
	rows := []sampling.Row{
		{On: true},
		{On: true, Mask: mask, Index: 1},
		{On: true, Params: sampling.Params{Temperature: 1, TopK: 1}, Seed: 9},
		{On: true, Params: sampling.Params{LogitBias: bias}, Patches: pat},
		{},
		{On: true, Params: sampling.Params{Temperature: 2, TopP: 0.999}, Seed: 4},
		{On: true, Params: sampling.Params{Temperature: 0.7, Logprobs: true, TopLogprobs: 3}, Seed: 4},
	}
	got := rig.run(rows)
	for i, r := range rows {
		if !r.On {
			if got[i].ID != -3 {
				t.Errorf("row %d (not On): %d", i, got[i].ID)
			}
			continue
		}
		if r.Params.TopPOn() > 0 {
			if got[i].ID != -2 {
				t.Errorf("row %d: top_p 0.999 at temperature 2 over %d tokens drawn on the device (%d), not left to the host", i, V, got[i].ID)
			}
			continue
		}
		want := sampling.Distribution(x, r.Params, r.Patches, r.Mask)
		if r.Params.Argmax() && want[got[i].ID] != 1 {
			t.Errorf("row %d (greedy): token %d, not the argmax", i, got[i].ID)
		}
		if want[got[i].ID] == 0 {
			t.Errorf("row %d: token %d of probability 0", i, got[i].ID)
		}
	}
	if got[0].ID != int32(min(77, slices.Index(x, slices.Max(x)))) {
		t.Errorf("greedy among a tie: %d", got[0].ID)
	}
	rig.checkLogits()

	// +Inf wins (the lowest id of several); NaN never does; a row with
	// nothing allowed but NaN and -Inf falls back to a valid id.
	y := slices.Clone(x)
	y[1000], y[3000], y[200] = float32(math.Inf(1)), float32(math.Inf(1)), float32(math.NaN())
	z := make([]float32, V)
	for i := range z {
		z[i] = float32(math.Inf(-1))
	}
	z[9] = float32(math.NaN())
	all := append(append(slices.Clone(y), y...), z...)
	rig.loadRows(append(all, make([]float32, (R-3)*V)...))
	rows = []sampling.Row{
		{On: true, Params: sampling.Params{Temperature: 1}, Seed: 1},
		{On: true, Params: sampling.Params{Temperature: 1, TopK: 10, MinP: 0.1}, Seed: 1},
		{On: true, Params: sampling.Params{Temperature: 1}, Seed: 1},
	}
	got = rig.run(rows)
	if got[0].ID != 1000 || got[1].ID != 1000 {
		t.Errorf("+Inf logits at 1000 and 3000: tokens %d and %d", got[0].ID, got[1].ID)
	}
	if got[2].ID < 0 || got[2].ID >= V {
		t.Errorf("a row of NaN and -Inf: token %d", got[2].ID)
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
	x := llmRow(9, V)
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
	x := llmRow(21, V)
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

// TestSampleNoise checks the shaders' noise (sample.glsl's samp_gumbel
// and samp_noise, in float32) against package gumbel's in float64: the
// 32-bit words at both ends and in between, and Philox's words for
// (seed, position, id).
func TestSampleNoise(t *testing.T) {
	d := testDevice(t)
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		t.Skip("no glslc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "t.comp")
	if err := os.WriteFile(src, []byte(`#version 450
#include "sample.glsl"
layout(push_constant, std430) uniform Push { U32s words; F32s out_; uint n; uint seed_lo; uint seed_hi; } p;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i >= p.n) return;
	p.out_.v[2 * i] = samp_gumbel(p.words.v[i]);
	SampRow r;
	r.seed_lo = p.seed_lo;
	r.seed_hi = p.seed_hi;
	p.out_.v[2 * i + 1] = samp_noise(r, int(i / 7), int(i));
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.spv")
	if b, err := exec.Command(glslc, "--target-env=vulkan1.2", "-O", "-I", "shaders", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("glslc: %v\n%s", err, b)
	}
	code, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wg := sampWorkgroup(d)
	key, _ := newPipelineKey("test_sample_noise", []uint32{wg})
	pl, err := d.makePipeline(key, code)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4096
	words := []uint32{0, 1, 2, 3, 1 << 20, 1<<24 + 1, 0x7ffffffe, 0x7fffffff, 0x80000000, 0x80000001, 0xff000000, 0xfffffff0, 0xfffffffd, 0xfffffffe, 0xffffffff}
	rng := rand.New(rand.NewPCG(1, 1))
	for len(words) < n {
		words = append(words, rng.Uint32())
	}
	in, err := d.NewHostBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	res, err := d.NewHostBuffer(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Free()
	copy(in.Host(), unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 4*n))
	seed := uint64(0x123456789abcdef)
	push := struct {
		words, out        uint64
		n, seedLo, seedHi uint32
		_                 uint32
	}{in.Addr(), res.Addr(), n, uint32(seed), uint32(seed >> 32), 0}
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	r.Dispatch(pl, (n+wg-1)/wg, 1, 1, PushBytes(&push))
	if err := d.Submit(r); err != nil {
		t.Fatal(err)
	}
	got := unsafe.Slice((*float32)(unsafe.Pointer(&res.Host()[0])), 2*n)
	worst := 0.0
	for i, w := range words {
		for j, want := range []float64{gumbel.Gumbel(w), gumbel.Noise(seed, i/7, i)} {
			e := math.Abs(float64(got[2*i+j]) - want)
			worst = max(worst, e)
			if e > 4e-6*max(1, math.Abs(want)) {
				t.Errorf("word %#x (%d of kind %d): noise %.9g, want %.9g", w, i, j, got[2*i+j], want)
			}
		}
	}
	t.Logf("largest difference from the float64 noise: %.3g", worst)
}

// TestSampleRows checks what set writes for the shaders and what it
// refuses.
func TestSampleRows(t *testing.T) {
	d := testDevice(t)
	const V = 151936
	s, err := newDevSampler(d, V, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.kmax != 107 || s.g != 38 || s.c != 64 {
		t.Fatalf("kmax %d, chunks %d and %d; want 107, 38 and 64 for Qwen3's vocabulary (CUDA's kmax)", s.kmax, s.g, s.c)
	}
	mask := make([]uint64, (V+63)/64)
	rows := []sampling.Row{
		{},
		{On: true, Params: sampling.Params{Temperature: 1}, Seed: 1<<40 | 7, Index: 9},
		{On: true, Params: sampling.Params{Temperature: 0.6, TopK: 20, TopP: 0.95, Logprobs: true, TopLogprobs: 3}},
		{On: true, Params: sampling.Params{Temperature: 2, MinP: 0.1, PresencePenalty: 1}, Patches: []sampling.Patch{{ID: 5, Count: 2}, {ID: 9, InPrompt: true}}, Mask: mask},
		{On: true, Params: sampling.Params{Temperature: 1, TopK: 1}},
	}
	if err := s.set(rows); err != nil {
		t.Fatal(err)
	}
	r := unsafe.Slice((*sampRow)(unsafe.Pointer(&s.rows.Host()[0])), 8)
	if r[0].flags != sampSkip || r[5].flags != sampSkip || r[7].flags != sampSkip {
		t.Errorf("rows not On and past the rows set are not skipped: %+v %+v", r[0], r[5])
	}
	if r[1].invT != 1 || r[1].seedLo != 7 || r[1].seedHi != 1<<8 || r[1].pos != 9 || r[1].topk != 0 || !math.IsInf(float64(r[1].lnMinP), -1) || r[1].patches != 0 || r[1].mask != 0 {
		t.Errorf("row 1: %+v", r[1])
	}
	if r[2].topk != 20 || r[2].topp != 0.95 || r[2].flags != sampLogprobs || r[2].ntop != 3 {
		t.Errorf("row 2: %+v", r[2])
	}
	if r[3].nprep != 2 || r[3].patches != s.patches.Addr() || r[3].mask != s.masks.Addr() || r[3].pres != 1 || r[3].rep != 1 || r[3].lnMinP != float32(math.Log(0.1)) {
		t.Errorf("row 3: %+v", r[3])
	}
	if pe := unsafe.Slice((*sampPatch)(unsafe.Pointer(&s.patches.Host()[0])), 2); pe[0] != (sampPatch{id: 5, count: 2}) || pe[1] != (sampPatch{id: 9, prmpt: 1}) {
		t.Errorf("patches %+v", pe)
	}
	if r[4].invT != 0 || r[4].topk != 0 {
		t.Errorf("row 4 (top_k 1: the argmax): %+v", r[4])
	}
	for _, bad := range [][]sampling.Row{
		{{On: true, Params: sampling.Params{Temperature: 1, TopP: 0.9, PresencePenalty: 1}}},
		{{On: true, Params: sampling.Params{Temperature: 1, TopK: 108}}},
		{{On: true, Params: sampling.Params{Temperature: 3}}},
		{{On: true, Params: sampling.Params{Temperature: 1}, Mask: mask[1:]}},
		{{On: true, Params: sampling.Params{Temperature: 1}, Patches: []sampling.Patch{{ID: V}}}},
		{{On: true, Params: sampling.Params{Temperature: 1}, Patches: []sampling.Patch{{ID: 4}, {ID: 4}}}},
		make([]sampling.Row, 9),
	} {
		if err := s.set(bad); err == nil {
			t.Errorf("%+v: no error", bad[0])
		}
	}
	if !s.canSample(sampling.Params{Temperature: 1, TopP: 0.5}) || !s.canSample(sampling.Params{TopP: 0.5, PresencePenalty: 1}) ||
		s.canSample(sampling.Params{Temperature: 1, TopP: 0.5, LogitBias: map[int32]float32{1: 1}}) {
		t.Errorf("canSample: top_p alone or greedy refused, or top_p alone with a bias sampled")
	}
}

// TestSampleLargeVocab samples rows of Qwen3's vocabulary (38 chunks of
// top_k partials merged, 64 of the race): the reference Gumbel-max's
// tokens, the raw log-probabilities, and a flat row's top_p nucleus left
// to the host.
func TestSampleLargeVocab(t *testing.T) {
	d := testDevice(t)
	const V, R = 151936, 16
	x := llmRow(17, V)
	rig := newSampleRig(t, d, V, R)
	rig.load(x)
	ps := []sampling.Params{
		{Temperature: 1, Logprobs: true, TopLogprobs: 20},
		{Temperature: 0.6, TopP: 0.95, TopK: 20},
		{Temperature: 1.2, TopK: 100, MinP: 0.001},
		{Temperature: 0.7, TopP: 0.9},
		{Temperature: 0.9, MinP: 0.05},
		{},
	}
	rows := make([]sampling.Row, R)
	for i := range rows {
		rows[i] = sampling.Row{On: true, Params: ps[i%len(ps)], Seed: uint64(50 + i), Index: i}
	}
	raw := samplingtest.LogSoftmax(x)
	agree := 0
	for i, tok := range rig.run(rows) {
		if tok.ID == gumbel.Sample(x, rows[i].Params, nil, nil, rows[i].Seed, rows[i].Index) {
			agree++
		}
		if rows[i].Params.Logprobs {
			if math.Abs(float64(tok.Logprob)-raw[tok.ID]) > 1e-4 || len(tok.Top) != 20 || math.Abs(float64(tok.Top[0].Logprob)-slices.Max(raw)) > 1e-4 {
				t.Errorf("row %d: logprob %.6f of %d (want %.6f), top %v", i, tok.Logprob, tok.ID, raw[tok.ID], tok.Top[:min(3, len(tok.Top))])
			}
		}
	}
	if agree < R-1 {
		t.Errorf("%d of %d tokens are the reference Gumbel-max's", agree, R)
	}
	flat := rampRow(3, V)
	for i := range flat {
		flat[i] *= 0.01
	}
	rig.load(flat)
	for i := range rows {
		rows[i] = sampling.Row{On: true, Params: sampling.Params{Temperature: 1, TopP: 0.9}, Seed: uint64(i)}
	}
	for i, tok := range rig.run(rows[:4]) {
		if tok.ID != -2 {
			t.Errorf("row %d: top_p 0.9 over a flat row drawn on the device (%d), not left to the host", i, tok.ID)
		}
	}
}
