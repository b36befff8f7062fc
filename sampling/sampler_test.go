package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"inferno/sampling/samplingtest"
)

const qwenVocab = 151936

// gaussian returns n logits drawn from N(mean, sd), seeded.
func gaussian(seed uint64, n int, mean, sd float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(mean + float64(sd*r.NormFloat64())) // no fused multiply-add: the same vectors everywhere
	}
	return x
}

// llmLike returns logits shaped like a language model's: a broad bulk and
// a few tokens well above it.
func llmLike(seed uint64, n int) []float32 {
	x := gaussian(seed, n, 0, 2)
	r := rand.New(rand.NewPCG(seed, 2))
	for range 30 {
		x[r.IntN(n)] = float32(8 + float64(6*r.Float64()))
	}
	return x
}

func mustNew(t testing.TB, p Params, vocab int) *Sampler {
	t.Helper()
	s, err := New(p, vocab)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sample(t testing.TB, s *Sampler, logits []float32) Token {
	t.Helper()
	tok, err := s.Sample(slices.Clone(logits))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestValidate(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		p    Params
		want string // "" for valid
	}{
		{Params{}, ""},
		{Params{Temperature: 2, TopK: 5, TopP: 1, MinP: 1, RepetitionPenalty: 2, PresencePenalty: -2,
			FrequencyPenalty: 2, Logprobs: true, TopLogprobs: 20, LogitBias: map[int32]float32{0: -100, 5: 100}}, ""},
		{Params{TopP: 0.5, RepetitionPenalty: 1}, ""},
		{Params{Temperature: -0.1}, "sampling: temperature -0.1 outside [0, 2]"},
		{Params{Temperature: 2.5}, "sampling: temperature 2.5 outside [0, 2]"},
		{Params{Temperature: nan}, "sampling: temperature NaN outside [0, 2]"},
		{Params{TopK: -1}, "sampling: top_k -1 is negative (0 turns it off)"},
		{Params{TopP: 1.5}, "sampling: top_p 1.5 outside (0, 1]"},
		{Params{TopP: -0.5}, "sampling: top_p -0.5 outside (0, 1]"},
		{Params{MinP: 1.1}, "sampling: min_p 1.1 outside [0, 1]"},
		{Params{MinP: -1}, "sampling: min_p -1 outside [0, 1]"},
		{Params{RepetitionPenalty: -1}, "sampling: repetition_penalty -1 outside (0, 2]"},
		{Params{RepetitionPenalty: 3}, "sampling: repetition_penalty 3 outside (0, 2]"},
		{Params{PresencePenalty: 2.5}, "sampling: presence_penalty 2.5 outside [-2, 2]"},
		{Params{FrequencyPenalty: -3}, "sampling: frequency_penalty -3 outside [-2, 2]"},
		{Params{Logprobs: true, TopLogprobs: 21}, "sampling: top_logprobs 21 outside [0, 20]"},
		{Params{TopLogprobs: -1}, "sampling: top_logprobs -1 outside [0, 20]"},
		{Params{TopLogprobs: 5}, "sampling: top_logprobs 5 needs logprobs"},
		{Params{LogitBias: map[int32]float32{3: 1, 7: 101, 9: -200}}, "sampling: logit_bias 101 for token 7 outside [-100, 100]"},
		{Params{LogitBias: map[int32]float32{3: 1, -2: 1}}, "sampling: logit_bias token -2 is negative"},
		{Params{LogitBias: map[int32]float32{4: nan}}, "sampling: logit_bias NaN for token 4 outside [-100, 100]"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v.Validate() = %q, want %q", tc.p, got, tc.want)
		}
		if _, err := New(tc.p, 100); (err != nil) != (tc.want != "") {
			t.Errorf("New(%+v) error %v, want %q", tc.p, err, tc.want)
		}
	}
	if _, err := New(Params{LogitBias: map[int32]float32{100: 1}}, 100); err == nil ||
		err.Error() != "sampling: logit_bias token 100 outside the vocabulary of 100 tokens" {
		t.Errorf("New with a bias beyond the vocabulary: %v", err)
	}
	if _, err := New(Params{}, 0); err == nil {
		t.Error("New with an empty vocabulary: no error")
	}
}

func TestGreedy(t *testing.T) {
	tests := []struct {
		p    Params
		want bool
	}{
		{Params{}, true},
		{Params{Temperature: 0.7, TopK: 1}, true},
		{Params{Temperature: 0, TopP: 0.5, MinP: 0.2, RepetitionPenalty: 1, Logprobs: true}, true},
		{Params{LogitBias: map[int32]float32{3: 0}}, true},
		{Params{Temperature: 0.7}, false},
		{Params{Temperature: 0.7, TopK: 2}, false},
		{Params{LogitBias: map[int32]float32{3: 0, 4: -1}}, false},
		{Params{RepetitionPenalty: 1.1}, false},
		{Params{PresencePenalty: 0.5}, false},
		{Params{FrequencyPenalty: -0.5}, false},
	}
	for _, tc := range tests {
		if got := tc.p.Greedy(); got != tc.want {
			t.Errorf("%+v.Greedy() = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestExpNeg(t *testing.T) {
	worst := 0.0
	lastK := int32(-1)
	for d := float32(cutoff); d <= 0; d += 0.000037 {
		want := math.Exp(float64(d))
		e, k := expNeg(d)
		if r := math.Abs(float64(e)-want) / want; r > worst {
			worst = r
		}
		if want := int32(math.Floor(float64(-d) * expSteps)); k != want || lastK >= 0 && k > lastK {
			t.Fatalf("expNeg(%v): k = %d, want %d (after %d)", d, k, want, lastK)
		}
		lastK = k
	}
	if e, k := expNeg(0); e != 1 || k != 0 {
		t.Errorf("expNeg(0) = %v, %d", e, k)
	}
	if e, k := expNeg(cutoff); k != -cutoff*expSteps || math.Abs(float64(e)/math.Exp(cutoff)-1) > 2e-7 {
		t.Errorf("expNeg(%v) = %v, %d", cutoff, e, k)
	}
	if worst > 2e-7 {
		t.Errorf("expNeg: relative error %g", worst)
	}
}

func TestLn(t *testing.T) {
	for _, x := range []float64{1, 0.5, 0.1, 0.05, 1e-9, 0.3, 0.999, math.Sqrt2 / 2, 1e-300, 7.5, 1234.5} {
		if got, want := ln(x), math.Log(x); math.Abs(got-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Errorf("ln(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestSeed(t *testing.T) {
	logits := []float32{1, 1.2, 0.9, 1.1, 1, 0.8, 1.05, 0.95}
	p := Params{Temperature: 1, Seed: 42, HasSeed: true}
	run := func(p Params) []int32 {
		s := mustNew(t, p, len(logits))
		var ids []int32
		for range 64 {
			ids = append(ids, sample(t, s, logits).ID)
		}
		return ids
	}
	a, b := run(p), run(p)
	if !slices.Equal(a, b) {
		t.Errorf("seed 42 gave\n%v\nthen\n%v", a, b)
	}
	p.Seed = 43
	if c := run(p); slices.Equal(a, c) {
		t.Errorf("seeds 42 and 43 both gave %v", a)
	}
	p.HasSeed = false
	if c, d := run(p), run(p); slices.Equal(c, d) {
		t.Errorf("two samplers without a seed both gave %v", c)
	}
	// Reset repeats a seeded sampler.
	p.HasSeed, p.Seed = true, 42
	s := mustNew(t, p, len(logits))
	for range 10 {
		sample(t, s, logits)
	}
	s.Reset()
	for i := range a {
		if id := sample(t, s, logits).ID; id != a[i] {
			t.Fatalf("after Reset, draw %d is %d, want %d", i, id, a[i])
		}
	}
}

// TestPinned pins the tokens a seed gives, so that a change to the random
// numbers or the arithmetic shows: they are part of the reproducibility
// promised to users.
func TestPinned(t *testing.T) {
	x := llmLike(7, 2000)
	for _, tc := range []struct {
		p    Params
		want string
	}{
		{Params{Temperature: 1}, "144 180 1349 1004 1252 1520 1520 180"},
		{Params{Temperature: 0.7, TopP: 0.8, TopK: 20}, "180 1520 144 1252 144 144 826 1520"},
		{Params{Temperature: 1, TopP: 0.9}, "144 180 1520 1004 1252 1520 1520 180"},
		{Params{Temperature: 1.3, MinP: 0.05}, "144 192 1349 1004 1252 1349 1520 192"},
	} {
		tc.p.Seed, tc.p.HasSeed = 1, true
		s := mustNew(t, tc.p, len(x))
		var ids []string
		for range 8 {
			ids = append(ids, fmt.Sprint(sample(t, s, x).ID))
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestPinnedLong pins a hash of long runs through every path: penalties
// and bias, top_k by heap and by sorting, top_p by buckets, min_p, and the
// candidate path. The hashes were the same on amd64 (with and without FMA
// instructions allowed, GOAMD64=v3) and 386.
func TestPinnedLong(t *testing.T) {
	base := llmLike(11, 5000)
	for _, tc := range []struct {
		p    Params
		want uint64
	}{
		{Params{Temperature: 1}, 0x111d4b923d69c2e9},
		{Params{Temperature: 0.7, TopP: 0.8, TopK: 20, MinP: 0.01}, 0x3fca5be37e082f36},
		{Params{Temperature: 1.1, TopP: 0.95, RepetitionPenalty: 1.1, PresencePenalty: 0.5, FrequencyPenalty: 0.2}, 0x906b969d30fba727},
		{Params{Temperature: 0.8, TopK: 2000, TopP: 0.9, LogitBias: map[int32]float32{7: 5, 99: -3}}, 0x10b470c0020d3fba},
		{Params{Temperature: 1.5, MinP: 0.02, RepetitionPenalty: 1.3}, 0xe6c83576dee638db},
	} {
		tc.p.Seed, tc.p.HasSeed = 2024, true
		full, cands := mustNew(t, tc.p, len(base)), mustNew(t, tc.p, len(base))
		r := rand.New(rand.NewPCG(5, 5))
		ids := make([]int32, len(base))
		for i := range ids {
			ids[i] = int32(len(base) - 1 - i)
		}
		h := uint64(14695981039346656037) // FNV-1a
		for range 300 {
			x := slices.Clone(base)
			for range 200 {
				x[r.IntN(len(x))] += float32(r.IntN(9) - 4)
			}
			a := sample(t, full, x)
			rev := slices.Clone(x)
			slices.Reverse(rev)
			if b, err := cands.SampleCandidates(ids, rev); err != nil || b.ID != a.ID {
				t.Fatalf("%+v: SampleCandidates %d, %v; Sample %d", tc.p, b.ID, err, a.ID)
			}
			full.Accept(a.ID)
			cands.Accept(a.ID)
			h = (h ^ uint64(a.ID)) * 1099511628211
		}
		if h != tc.want {
			t.Errorf("%+v: hash %#x, want %#x", tc.p, h, tc.want)
		}
	}
}

func TestArgmaxPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	k1 := mustNew(t, Params{Temperature: 1, TopK: 1, HasSeed: true}, 1000)
	t0 := mustNew(t, Params{}, 1000)
	t0p := mustNew(t, Params{TopP: 0.5, MinP: 0.1}, 1000)
	for i := range 500 {
		x := make([]float32, 1000)
		for j := range x {
			x[j] = float32(r.NormFloat64() * 3)
			if i%2 == 1 {
				x[j] = float32(math.Round(float64(x[j]))) // many ties
			}
		}
		want := Argmax(x)
		for _, s := range []*Sampler{k1, t0, t0p} {
			if got := sample(t, s, x).ID; got != want {
				t.Fatalf("vector %d: %d, want the argmax %d", i, got, want)
			}
		}
	}
}

func softmax(x []float32, temp float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, float64(v))
	}
	p := make([]float64, len(x))
	var z float64
	for i, v := range x {
		p[i] = math.Exp((float64(v) - m) / temp)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return p
}

// chiCritical holds the chi-squared critical values at p = 0.001 by
// degrees of freedom.
var chiCritical = []float64{1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 6: 22.458, 7: 24.322}

// chiSquared draws n tokens and tests them against want (0 for tokens that
// must never come).
func chiSquared(t *testing.T, s *Sampler, logits []float32, want []float64, n int) {
	t.Helper()
	counts := make([]int, len(logits))
	for range n {
		counts[sample(t, s, logits).ID]++
	}
	var chi float64
	df := -1
	for i, p := range want {
		if p == 0 {
			if counts[i] != 0 {
				t.Errorf("token %d drawn %d times, want never", i, counts[i])
			}
			continue
		}
		e := p * float64(n)
		chi += (float64(counts[i]) - e) * (float64(counts[i]) - e) / e
		df++
	}
	if df > 0 && chi > chiCritical[df] {
		t.Errorf("chi-squared %.2f > %.3f (df %d): counts %v, want %v", chi, chiCritical[df], df, counts, want)
	}
	t.Logf("chi-squared %.2f (df %d, critical %.3f)", chi, df, chiCritical[max(df, 0)])
}

var smallLogits = []float32{1.0, 0.5, 0.2, -0.3, 2.0, -1.0, 0.0, 1.5}

func TestChiSquaredSoftmax(t *testing.T) {
	s := mustNew(t, Params{Temperature: 1, Seed: 1, HasSeed: true}, 8)
	chiSquared(t, s, smallLogits, softmax(smallLogits, 1), 100000)
	s = mustNew(t, Params{Temperature: 0.5, Seed: 2, HasSeed: true}, 8)
	chiSquared(t, s, smallLogits, softmax(smallLogits, 0.5), 100000)
}

// keepRef is the reference for the tokens kept: a full sort and the
// definitions, with the weights computed as the sampler does. It returns
// them by position.
func keepRef(x []float32, p Params) []cand {
	var l []cand
	for i, v := range x {
		if v > negInf {
			l = append(l, cand{pos: int32(i), x: v})
		}
	}
	slices.SortFunc(l, byRank)
	if p.TopK > 0 {
		l = l[:min(p.TopK, len(l))]
	}
	m, invT := l[0].x, float32(1/float64(p.Temperature))
	var z float64
	for i := range l {
		d := (l[i].x - m) * invT
		if d < cutoff {
			l = l[:i]
			break
		}
		l[i].w, _ = expNeg(d)
		z += float64(l[i].w)
	}
	n := len(l)
	if p.TopP > 0 && p.TopP < 1 {
		var cum float64
		for i := range l {
			if cum += float64(l[i].w); cum >= float64(p.TopP)*z {
				n = i + 1
				break
			}
		}
	}
	if p.MinP > 0 {
		for i := range n {
			if (l[i].x-m)*invT < float32(math.Log(float64(p.MinP))) {
				n = i
				break
			}
		}
	}
	l = l[:n]
	slices.SortFunc(l, byPos)
	return l
}

func byPos(a, b cand) int { return int(a.pos - b.pos) }

// kept returns the tokens the sampler keeps from x, with their weights, by
// position.
func kept(s *Sampler, x []float32) []cand {
	var l []cand
	dense := false
	if s.p.TopK > 0 {
		l = s.keepTopK(x, s.p.TopK)
	} else {
		l, dense = s.keepAll(x)
	}
	l = slices.Clone(l)
	if dense {
		for i, w := range s.w[:len(x)] {
			if w > 0 {
				l = append(l, cand{pos: int32(i), x: x[i], w: w})
			}
		}
	}
	slices.SortFunc(l, byPos)
	return l
}

func TestChiSquaredFilters(t *testing.T) {
	for i, p := range []Params{
		{Temperature: 1, TopK: 4},
		{Temperature: 1, TopP: 0.7},
		{Temperature: 1, MinP: 0.3},
		{Temperature: 0.7, TopK: 6, TopP: 0.9, MinP: 0.1},
		{Temperature: 1.5, TopP: 0.95, MinP: 0.2},
	} {
		p.Seed, p.HasSeed = uint64(i), true
		keep := keepRef(smallLogits, p)
		if len(keep) < 2 || len(keep) == len(smallLogits) {
			t.Fatalf("%+v keeps %d tokens: not a test", p, len(keep))
		}
		want := softmax(smallLogits, float64(p.Temperature))
		var z float64
		for i := range want {
			if !slices.ContainsFunc(keep, func(c cand) bool { return c.pos == int32(i) }) {
				want[i] = 0
			}
			z += want[i]
		}
		for i := range want {
			want[i] /= z
		}
		t.Run(fmt.Sprintf("%+v", p), func(t *testing.T) {
			chiSquared(t, mustNew(t, p, 8), smallLogits, want, 100000)
		})
	}
}

// TestKeep checks the tokens kept and their weights against keepRef over
// a large vocabulary, where top_p works by buckets and large top_k sorts.
// Every combination of parameters meets every vector; with -short, every
// third (each vector still meets every value of each parameter).
func TestKeep(t *testing.T) {
	var params []Params
	for _, temp := range []float32{0.3, 0.7, 1.8} {
		for _, topP := range []float32{0, 0.5, 0.9, 0.999} {
			for _, minP := range []float32{0, 1e-9, 0.02, 0.3} {
				for _, topK := range []int{0, 20, 500, 2000} {
					params = append(params, Params{Temperature: temp, TopP: topP, MinP: minP, TopK: topK})
				}
			}
		}
	}
	vectors := [][]float32{
		gaussian(1, 20000, 0, 2.5),
		llmLike(2, 20000),
		gaussian(3, 20000, 5, 0.3), // flat: most in few buckets
	}
	// Many ties, and non-finite values.
	ties := gaussian(4, 20000, 0, 2)
	for i := range ties {
		ties[i] = float32(math.Round(float64(ties[i]) * 4))
	}
	ties[17], ties[99], ties[5000] = float32(math.NaN()), negInf, float32(math.NaN())
	// Three values only: ties at every top_k boundary.
	coarse := make([]float32, 20000)
	for i := range coarse {
		coarse[i] = float32(i * 7 % 3)
	}
	// Ties with the top-20 heap's last entry, next to a larger value.
	heapTies := make([]float32, 20000)
	for i := range 20 {
		heapTies[i] = 5
	}
	copy(heapTies[20:], []float32{5, 9, 5})
	vectors = append(vectors, ties, coarse, heapTies)
	for pi, p := range params {
		s := mustNew(t, p, 20000)
		for vi, x := range vectors {
			if testing.Short() && (pi+vi)%3 != 0 {
				continue
			}
			got, want := kept(s, x), keepRef(x, p)
			if !slices.Equal(got, want) {
				t.Errorf("vector %d %+v: kept %d tokens, want %d", vi, p, len(got), len(want))
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("first difference: %+v, want %+v", got[i], want[i])
						break
					}
				}
			}
		}
	}
}

// TestKeepEdgeBucket checks the case where min_p cuts inside the bucket
// where top_p's sum crosses its threshold.
func TestKeepEdgeBucket(t *testing.T) {
	for _, minP := range []float32{0.1, 0.01, 0.5} {
		ln := float32(math.Log(float64(minP)))
		b := bucketOf(ln)
		// A clump of tokens inside ln's bucket, around ln.
		var lo, hi float32 = ln - 0.01, ln + 0.01
		for bucketOf(lo) > b {
			lo += 0.001
		}
		for bucketOf(hi) < b {
			hi -= 0.001
		}
		x := make([]float32, 20000)
		r := rand.New(rand.NewPCG(1, 1))
		for i := 1; i < len(x); i++ {
			x[i] = lo + float32((hi-lo)*r.Float32())
		}
		for _, topP := range []float32{0.3, 0.9, 0.999} {
			p := Params{Temperature: 1, TopP: topP, MinP: minP}
			got, want := kept(mustNew(t, p, len(x)), x), keepRef(x, p)
			if !slices.Equal(got, want) {
				t.Errorf("%+v: kept %d tokens, want %d", p, len(got), len(want))
			}
		}
	}
}

func TestPenalties(t *testing.T) {
	p := Params{
		RepetitionPenalty: 1.5, PresencePenalty: 0.5, FrequencyPenalty: 0.25,
		LogitBias: map[int32]float32{5: -1.5, 3: 2, 4: -3},
	}
	s := mustNew(t, p, 7)
	s.SetPrompt([]int32{0, 1, 4, 4, 99, -1})
	for _, id := range []int32{1, 2, 2, 6, -5, 7} {
		s.Accept(id)
	}
	logits := []float32{2, -2, 3, 1, 0, 4, 0.5}
	got := slices.Clone(logits)
	tok, err := s.Sample(got)
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float32) float32 { return v }
	want := []float32{
		f(2) / 1.5,                    // prompt: positive, divided
		f(-2)*1.5 - 0.25 - 0.5,        // prompt and once generated
		f(3)/1.5 - f(0.25*2) - 0.5,    // twice generated
		f(1) + 2,                      // biased only
		(f(0) - 3) * 1.5,              // bias first, then the penalty on the now negative logit
		f(4) - 1.5,                    // biased only
		f(0.5)/1.5 - f(0.25) - f(0.5), // once generated
	}
	if !slices.Equal(got, want) {
		t.Errorf("penalized logits %v, want %v", got, want)
	}
	if tok.ID != 3 {
		t.Errorf("greedy chose %d, want 3", tok.ID)
	}
	// The candidate path agrees and leaves its arguments alone.
	ids := []int32{6, 2, 0, 4, 3, 1, 5}
	vals := make([]float32, len(ids))
	for i, id := range ids {
		vals[i] = logits[id]
	}
	vals0 := slices.Clone(vals)
	if tok, err := s.SampleCandidates(ids, vals); err != nil || tok.ID != 3 || !slices.Equal(vals, vals0) {
		t.Errorf("SampleCandidates: %v, %v; logits %v, were %v", tok, err, vals, vals0)
	}
	// A new prompt replaces the old one; Reset forgets everything.
	s.SetPrompt([]int32{3})
	got = slices.Clone(logits)
	s.Sample(got)
	if got[0] != 2 || got[3] != 3/f(1.5) || got[1] != f(-2)*1.5-0.25-0.5 {
		t.Errorf("after SetPrompt: %v", got)
	}
	s.Reset()
	got = slices.Clone(logits)
	s.Sample(got)
	want = []float32{2, -2, 3, 3, -3, 2.5, 0.5}
	if !slices.Equal(got, want) {
		t.Errorf("after Reset: %v, want %v", got, want)
	}
}

func TestLogitBias(t *testing.T) {
	x := llmLike(5, 5000)
	low := slices.Index(x, slices.Min(x))
	top := Argmax(x)
	s := mustNew(t, Params{Temperature: 1, LogitBias: map[int32]float32{int32(low): 100, top: -100}}, len(x))
	for range 1000 {
		if id := sample(t, s, x).ID; id != int32(low) {
			t.Fatalf("bias +100 on token %d: drew %d", low, id)
		}
	}
	s = mustNew(t, Params{Temperature: 1.5, LogitBias: map[int32]float32{top: -100}}, len(x))
	for range 1000 {
		if id := sample(t, s, x).ID; id == top {
			t.Fatalf("bias -100 on token %d: drew it", top)
		}
	}
}

// TestBiasMovesMax checks that the sampling measures weights from the
// largest logit after the bias, also when logprobs know the raw one.
func TestBiasMovesMax(t *testing.T) {
	x := []float32{100, 60, 60, 60, 60}
	for _, p := range []Params{
		{Temperature: 1, Logprobs: true},
		{Temperature: 1, TopP: 0.9, Logprobs: true},
		{Temperature: 1, TopK: 2000, Logprobs: true},
	} {
		p.LogitBias = map[int32]float32{0: -100}
		s := mustNew(t, p, len(x))
		seen := map[int32]bool{}
		for range 200 {
			seen[sample(t, s, x).ID] = true
		}
		if len(seen) != 4 || seen[0] {
			t.Errorf("%+v: drew %v, want tokens 1 to 4", p, seen)
		}
	}
}

func TestLogprobs(t *testing.T) {
	x := llmLike(6, 3000)
	for i := 100; i < 130; i++ {
		x[i] = 11 // ties among the top
	}
	want := samplingtest.LogSoftmax(x)
	order := make([]int32, len(x))
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
		return 0
	})
	p := Params{Temperature: 0.9, TopP: 0.95, Logprobs: true, TopLogprobs: 20, Seed: 9, HasSeed: true,
		RepetitionPenalty: 1.3, PresencePenalty: 1, LogitBias: map[int32]float32{order[0]: -5, order[40]: 3}}
	s := mustNew(t, p, len(x))
	s.SetPrompt(order[:10])
	for range 200 {
		tok := sample(t, s, x)
		s.Accept(tok.ID)
		if d := math.Abs(float64(tok.Logprob) - want[tok.ID]); d > 1e-5 {
			t.Fatalf("token %d: logprob %v, want %v", tok.ID, tok.Logprob, want[tok.ID])
		}
		if len(tok.Top) != 20 {
			t.Fatalf("%d top logprobs, want 20", len(tok.Top))
		}
		for i, tl := range tok.Top {
			if tl.ID != order[i] || math.Abs(float64(tl.Logprob)-want[tl.ID]) > 1e-5 {
				t.Fatalf("top %d: %+v, want {%d %v}", i, tl, order[i], want[order[i]])
			}
		}
	}
	// At temperature 1 the sampling's normalizer serves the logprobs too,
	// unless min_p or a bias changes it.
	for _, tc := range []struct {
		p      Params
		shared bool
	}{
		{Params{Temperature: 1}, true},
		{Params{Temperature: 1, TopP: 0.9}, true},
		{Params{Temperature: 1, TopP: 0.9, MinP: 0.1}, true},
		{Params{Temperature: 1, MinP: 0.1}, false},
		{Params{Temperature: 1, TopP: 0.9, LogitBias: map[int32]float32{3: 1}}, false},
		{Params{Temperature: 1, PresencePenalty: 1}, true}, // nothing generated yet
	} {
		tc.p.Logprobs, tc.p.TopLogprobs = true, 3
		s := mustNew(t, tc.p, len(x))
		want := samplingtest.LogSoftmax(x)
		for range 20 {
			tok := sample(t, s, x)
			if s.raw.shared != tc.shared {
				t.Errorf("%+v: shared %v, want %v", tc.p, s.raw.shared, tc.shared)
			}
			if math.Abs(float64(tok.Logprob)-want[tok.ID]) > 1e-5 || len(tok.Top) != 3 ||
				math.Abs(float64(tok.Top[0].Logprob)-want[tok.Top[0].ID]) > 1e-5 {
				t.Fatalf("%+v: token %+v, want logprob %v", tc.p, tok, want[tok.ID])
			}
		}
	}
	// Greedy, and the logprob of a token some bias picks.
	s = mustNew(t, Params{Logprobs: true, LogitBias: map[int32]float32{order[2000]: 100}}, len(x))
	tok := sample(t, s, x)
	if tok.ID != order[2000] || math.Abs(float64(tok.Logprob)-want[tok.ID]) > 1e-5 || tok.Top != nil {
		t.Errorf("biased greedy token: %+v, want %d with logprob %v", tok, order[2000], want[order[2000]])
	}
}

func TestCandidatesMatchSample(t *testing.T) {
	x := llmLike(8, 20000)
	r := rand.New(rand.NewPCG(8, 8))
	for _, p := range []Params{
		{Temperature: 1},
		{Temperature: 0.7, TopP: 0.8, TopK: 20},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1.2, MinP: 0.05, TopP: 0.97},
		{Temperature: 0.8, TopK: 3000, TopP: 0.95},
		{Temperature: 1, RepetitionPenalty: 1.2, PresencePenalty: 0.5, FrequencyPenalty: 0.3,
			LogitBias: map[int32]float32{3: 5, 100: -5}, Logprobs: true, TopLogprobs: 5},
	} {
		p.Seed, p.HasSeed = 11, true
		full, cands := mustNew(t, p, len(x)), mustNew(t, p, len(x))
		ids := make([]int32, len(x))
		for i := range ids {
			ids[i] = int32(i)
		}
		for range 50 {
			step := slices.Clone(x)
			for range 100 {
				step[r.IntN(len(step))] += float32(r.NormFloat64())
			}
			a := sample(t, full, step)
			b, err := cands.SampleCandidates(ids, step)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != b.ID || a.Logprob != b.Logprob || !slices.Equal(a.Top, b.Top) {
				t.Fatalf("%+v: Sample %+v, SampleCandidates %+v", p, a, b)
			}
			full.Accept(a.ID)
			cands.Accept(b.ID)
		}
	}
}

// TestTopKCandidates checks the case of a backend that computes the top k:
// SampleCandidates with the top k, in any order, agrees with Sample.
func TestTopKCandidates(t *testing.T) {
	for _, k := range []int{1, 2, 20, 40, 1500} {
		p := Params{Temperature: 0.7, TopK: k, TopP: 0.9, MinP: 0.01, Seed: 5, HasSeed: true}
		full, cands := mustNew(t, p, qwenVocab), mustNew(t, p, qwenVocab)
		r := rand.New(rand.NewPCG(uint64(k), 0))
		for i := range 30 {
			x := llmLike(uint64(i), qwenVocab)
			top := selectTop(x, k, nil)
			r.Shuffle(len(top), func(i, j int) { top[i], top[j] = top[j], top[i] })
			ids, vals := make([]int32, k), make([]float32, k)
			for j, c := range top {
				ids[j], vals[j] = c.pos, c.x
			}
			a := sample(t, full, x)
			b, err := cands.SampleCandidates(ids, vals)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != b.ID {
				t.Fatalf("top_k %d, vector %d: Sample %d, SampleCandidates %d", k, i, a.ID, b.ID)
			}
		}
	}
}

func TestCandidateErrors(t *testing.T) {
	s := mustNew(t, Params{Temperature: 1}, 10)
	for _, tc := range []struct {
		ids  []int32
		vals []float32
		want string
	}{
		{[]int32{1, 2}, []float32{1}, "sampling: 2 candidate ids with 1 logits"},
		{nil, nil, "sampling: no candidates"},
		{[]int32{1, 10}, []float32{1, 2}, "sampling: candidate token 10 outside the vocabulary of 10 tokens"},
		{[]int32{-1}, []float32{1}, "sampling: candidate token -1 outside the vocabulary of 10 tokens"},
		{[]int32{4, 2, 4}, []float32{1, 2, 3}, "sampling: candidate token 4 given twice"},
		{make([]int32, 11), make([]float32, 11), "sampling: 11 candidates for a vocabulary of 10 tokens"},
	} {
		if _, err := s.SampleCandidates(tc.ids, tc.vals); err == nil || err.Error() != tc.want {
			t.Errorf("SampleCandidates(%v, %v): %v, want %q", tc.ids, tc.vals, err, tc.want)
		}
	}
	if _, err := s.Sample(make([]float32, 9)); err == nil || err.Error() != "sampling: 9 logits for a vocabulary of 10 tokens" {
		t.Errorf("Sample with 9 logits: %v", err)
	}
}

func TestNonFinite(t *testing.T) {
	nan, inf := float32(math.NaN()), posInf
	params := []Params{
		{Temperature: 1},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1, TopK: 3},
		{Temperature: 1, TopK: 3, MinP: 0.5},
		{Temperature: 1, MinP: 0.5, Logprobs: true, TopLogprobs: 3},
		{Temperature: 1, TopK: 2000, TopP: 0.5},
		{Temperature: 1e-30, TopP: 0.5},
		{Temperature: 1e-37},
		{Temperature: 1e-37, TopP: 0.5},
		{Temperature: 1e-37, TopK: 3},
		{Temperature: 2e-45},
	}
	tests := []struct {
		x    []float32
		want []int32 // the tokens that may come
	}{
		{[]float32{nan, 1, nan, 1}, []int32{1, 3}},
		{[]float32{negInf, 0, negInf, negInf}, []int32{1}},
		{[]float32{negInf, negInf, negInf}, []int32{0}},
		{[]float32{nan, nan}, []int32{0}},
		{[]float32{nan, negInf, nan}, []int32{1}},
		{[]float32{1, inf, 3, inf, nan}, []int32{1}},
		{[]float32{-3e38, 3e38, nan}, []int32{1}},
	}
	for _, p := range params {
		for _, tc := range tests {
			s := mustNew(t, p, len(tc.x))
			for range 50 {
				if tok := sample(t, s, tc.x); !slices.Contains(tc.want, tok.ID) {
					t.Errorf("%+v on %v: %d, want one of %v", p, tc.x, tok.ID, tc.want)
					break
				}
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	x := llmLike(1, qwenVocab)
	for _, p := range []Params{
		{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05, RepetitionPenalty: 1.1, PresencePenalty: 0.5,
			FrequencyPenalty: 0.5, LogitBias: map[int32]float32{7: 2}, Logprobs: true, TopLogprobs: 20},
		{Temperature: 0.8, TopP: 0.95, MinP: 0.05, RepetitionPenalty: 1.1, PresencePenalty: 0.5,
			Logprobs: true, TopLogprobs: 20},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1},
		{Logprobs: true, TopLogprobs: 20},
	} {
		s := mustNew(t, p, qwenVocab)
		s.SetPrompt([]int32{1, 2, 3, 500, 9000})
		buf := make([]float32, qwenVocab)
		n := int32(0)
		allocs := testing.AllocsPerRun(20, func() {
			copy(buf, x)
			tok, err := s.Sample(buf)
			if err != nil {
				t.Fatal(err)
			}
			s.Accept(tok.ID)
			s.Accept(n)
			n++
		})
		if allocs != 0 {
			t.Errorf("%+v: %v allocations per token", p, allocs)
		}
		ids := []int32{5, 3, 9, 1000, 7}
		vals := []float32{1, 2, 3, 4, 5}
		if allocs := testing.AllocsPerRun(20, func() { s.SampleCandidates(ids, vals) }); allocs != 0 {
			t.Errorf("%+v: SampleCandidates: %v allocations per token", p, allocs)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    Params
	}{
		{"greedy", Params{}},
		{"qwen3", Params{Temperature: 0.7, TopP: 0.8, TopK: 20}},
		{"qwen3+minp+penalties", Params{Temperature: 0.7, TopP: 0.8, TopK: 20, MinP: 0.05, RepetitionPenalty: 1.1, PresencePenalty: 1.5}},
		{"temp1", Params{Temperature: 1}},
		{"temp1+topp0.9", Params{Temperature: 1, TopP: 0.9}},
		{"temp0.6+topp0.95+minp", Params{Temperature: 0.6, TopP: 0.95, MinP: 0.05}},
		{"greedy+logprobs20", Params{Logprobs: true, TopLogprobs: 20}},
		{"qwen3+logprobs20", Params{Temperature: 0.7, TopP: 0.8, TopK: 20, Logprobs: true, TopLogprobs: 20}},
		{"temp1+topp0.9+logprobs20", Params{Temperature: 1, TopP: 0.9, Logprobs: true, TopLogprobs: 20}},
	} {
		for _, lc := range []struct {
			name string
			x    []float32
		}{
			{"llm", llmLike(1, qwenVocab)},
			{"flat", gaussian(1, qwenVocab, 0, 2.5)},
		} {
			b.Run(bc.name+"/"+lc.name, func(b *testing.B) {
				s := mustNew(b, bc.p, qwenVocab)
				s.SetPrompt([]int32{1, 2, 3, 500, 9000})
				// Sample changes only the logits of those five tokens.
				buf := slices.Clone(lc.x)
				for b.Loop() {
					s.Sample(buf)
				}
			})
		}
	}
}

// FuzzSample feeds arbitrary float32 bit patterns (NaN, ±Inf, subnormals,
// huge values) and parameters to the sampler.
func FuzzSample(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 192, 127, 0, 0, 128, 255}, uint8(100), uint8(200), uint8(10), uint8(0), uint64(1))
	f.Add([]byte{0, 0, 128, 127, 0, 0, 128, 127, 1, 0, 0, 0}, uint8(255), uint8(0), uint8(0), uint8(2), uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, temp, topP, minP, topK uint8, seed uint64) {
		n := min(len(data)/4, 4096)
		if n == 0 {
			return
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		p := Params{
			Temperature: float32(temp) / 127.5,
			TopP:        float32(topP) / 255,
			MinP:        float32(minP) / 255,
			TopK:        int(topK) % (n + 2),
			Seed:        seed,
			HasSeed:     true,
		}
		a, b := mustNew(t, p, n), mustNew(t, p, n)
		tok := sample(t, a, x)
		if tok.ID < 0 || int(tok.ID) >= n {
			t.Fatalf("token %d of %d", tok.ID, n)
		}
		m := maxOf(x)
		switch v := x[tok.ID]; {
		case m == posInf || a.argmax || !(m > negInf):
			if want := Argmax(x); tok.ID != want {
				t.Fatalf("%+v: %d, want the argmax %d", p, tok.ID, want)
			}
		case v != v || v == negInf:
			t.Fatalf("%+v: chose %v", p, v)
		default:
			got, want := kept(a, x), keepRef(x, p)
			if !slices.Equal(got, want) {
				t.Fatalf("%+v: kept %v, want %v", p, got, want)
			}
		}
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(n - 1 - i)
		}
		rev := slices.Clone(x)
		slices.Reverse(rev)
		if c, err := b.SampleCandidates(ids, rev); err != nil || c.ID != tok.ID {
			t.Fatalf("%+v: SampleCandidates %d, %v; Sample %d", p, c.ID, err, tok.ID)
		}
	})
}

// TestReleaseReuses: a Sampler made after another's Release reuses its
// buffers and behaves as a fresh one (no penalties or counts carried over).
func TestReleaseReuses(t *testing.T) {
	const vocab = 1000
	p := Params{Temperature: 0.8, RepetitionPenalty: 1.5, FrequencyPenalty: 0.5, Seed: 3, HasSeed: true}
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = float32(i%17) / 4
	}
	run := func(s *Sampler) []int32 {
		s.SetPrompt([]int32{1, 2, 3, 16, 33})
		var ids []int32
		x := make([]float32, vocab)
		for range 20 {
			copy(x, logits) // Sample applies the penalties in place
			tok, err := s.Sample(x)
			if err != nil {
				t.Fatal(err)
			}
			s.Accept(tok.ID)
			ids = append(ids, tok.ID)
		}
		return ids
	}
	a, err := New(p, vocab)
	if err != nil {
		t.Fatal(err)
	}
	want := run(a)
	a.Release()
	a.Release() // a no-op
	for range 3 {
		b, err := New(p, vocab)
		if err != nil {
			t.Fatal(err)
		}
		if got := run(b); !slices.Equal(got, want) {
			t.Fatalf("after a Release: %v, fresh %v", got, want)
		}
		b.Release()
	}
	// Another vocabulary size gets buffers of its own size.
	c, err := New(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.count) != 10 {
		t.Errorf("vocabulary 10: buffers of %d", len(c.count))
	}
}

// TestDistribution checks Distribution against the tokens the Sampler
// keeps and their weights (keepRef), with penalties and a logit bias.
func TestDistribution(t *testing.T) {
	x := llmLike(3, 300)
	for i, p := range []Params{
		{Temperature: 1},
		{Temperature: 0.7, TopK: 20, TopP: 0.9},
		{Temperature: 1.3, TopP: 0.5, MinP: 0.05},
		{Temperature: 0.6, TopK: 20, TopP: 0.95, RepetitionPenalty: 1.3, PresencePenalty: 0.5, FrequencyPenalty: 0.2, LogitBias: map[int32]float32{7: 5, 9: -100}},
	} {
		s := mustNew(t, p, len(x))
		s.SetPrompt([]int32{1, 2, 3})
		s.Accept(2)
		s.Accept(5)
		patches := s.Patches(nil)
		got := Distribution(x, p, patches, nil)
		y := slices.Clone(x)
		for _, pt := range patches {
			y[pt.ID] = pt.Apply(y[pt.ID], p)
		}
		pp := p
		pp.LogitBias, pp.RepetitionPenalty, pp.PresencePenalty, pp.FrequencyPenalty = nil, 0, 0, 0
		var z float64
		ref := keepRef(y, pp)
		for _, c := range ref {
			z += float64(c.w)
		}
		want := make([]float64, len(x))
		for _, c := range ref {
			want[c.pos] = float64(c.w) / z
		}
		for id := range want {
			if math.Abs(got[id]-want[id]) > 1e-12 {
				t.Errorf("case %d: token %d: probability %g, want %g", i, id, got[id], want[id])
				break
			}
		}
		// The Sampler's own modification agrees with the patches.
		z2 := slices.Clone(x)
		s.modify(z2, nil)
		if !slices.Equal(z2, y) {
			t.Errorf("case %d: Patch.Apply differs from the Sampler's bias and penalties", i)
		}
	}
	// A mask leaves out the disallowed tokens; greedy picks the best allowed.
	mask := make([]uint64, (len(x)+63)/64)
	for i := 0; i < len(x); i += 3 {
		mask[i>>6] |= 1 << (i & 63)
	}
	d := Distribution(x, Params{}, nil, mask)
	best := int32(-1)
	for i := 0; i < len(x); i += 3 {
		if best < 0 || x[i] > x[best] {
			best = int32(i)
		}
	}
	if d[best] != 1 {
		t.Errorf("greedy with a mask: token %d has probability %g, want 1", best, d[best])
	}
}

// TestUnpenalizedRecordsNothing: without a penalty a Sampler keeps no
// counts of the prompt or of the generated tokens (nothing reads them),
// with one it keeps each token once.
func TestUnpenalizedRecordsNothing(t *testing.T) {
	for _, p := range []Params{{Temperature: 1}, {Temperature: 1, PresencePenalty: 0.5}} {
		s, err := New(p, 100)
		if err != nil {
			t.Fatal(err)
		}
		s.SetPrompt([]int32{1, 2, 3, 2})
		s.Accept(4)
		s.Accept(1)
		want := 0
		if p.penalized() {
			want = 4
		}
		if len(s.touched) != want {
			t.Errorf("%+v: %d tokens recorded, want %d", p, len(s.touched), want)
		}
		s.Release()
	}
}
