package vulkan

import (
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

// TestSampleEdges: greedy rows take the argmax (with a mask, with
// patches), top_k 1 too; rows not On are skipped; a top_p nucleus larger
// than the candidates is left to the host; +Inf and all-excluded rows.
func TestSampleEdges(t *testing.T) {
	d := testDevice(t)
	const V, R = 4096, 8
	x := samplingtest.LLMRow(3, V)
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
	dispatchOnce(t, d, pl, (n+wg-1)/wg, 1, 1, PushBytes(&push))
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
	x := samplingtest.LLMRow(17, V)
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

// TestSampleOddVocab samples vocabularies that are no multiple of 4 (the
// race's groups of 4, the masks' last word, sample_topk's chunks): the
// reference Gumbel-max's tokens.
func TestSampleOddVocab(t *testing.T) {
	d := testDevice(t)
	for _, V := range []int{1001, 4099} {
		const R = 32
		x := rampRow(uint64(V), V)
		x[V-1] = 2.5 // the last token is the most likely
		rig := newSampleRig(t, d, V, R)
		rig.load(x)
		mask := make([]uint64, (V+63)/64)
		for i := range V {
			if i%4 != 1 {
				mask[i>>6] |= 1 << (i & 63)
			}
		}
		for pi, p := range []sampling.Params{{Temperature: 1}, {Temperature: 0.8, TopK: 30}, {Temperature: 1.3, MinP: 0.05}, {}} {
			rows := make([]sampling.Row, R)
			for i := range rows {
				rows[i] = sampling.Row{On: true, Params: p, Seed: uint64(7 * i), Index: i}
				if i%2 == 1 {
					rows[i].Mask = mask
				}
			}
			agree := 0
			for i, tok := range rig.run(rows) {
				if tok.ID == gumbel.Sample(x, p, nil, rows[i].Mask, rows[i].Seed, rows[i].Index) {
					agree++
				}
			}
			if agree < R-1 || p.Argmax() && agree != R {
				t.Errorf("V=%d params %d: %d of %d tokens are the reference Gumbel-max's", V, pi, agree, R)
			}
		}
	}
}
