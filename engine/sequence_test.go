package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"inferno/engine"
	"inferno/engine/enginetest"
	"inferno/gguf"
	"inferno/sampling"
	"inferno/tokenizer"
)

func goldenTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	f, err := gguf.Open("../testdata/golden/tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// generate runs req to the end and returns the text and the finish reason.
func generate(t *testing.T, r engine.Runner, tok *tokenizer.Tokenizer, req engine.Request) (string, string, int) {
	t.Helper()
	seq, err := engine.NewSequence(r, tok, req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for !seq.Done() {
		st, err := seq.Step()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(st.Text)
		if st.Finish != "" && st.Finish != seq.Finish() {
			t.Errorf("step finish %q, sequence %q", st.Finish, seq.Finish())
		}
	}
	return b.String(), seq.Finish(), seq.Generated()
}

func TestSequenceText(t *testing.T) {
	tok := goldenTokenizer(t)
	imEnd, _ := tok.TokenID("<|im_end|>")
	script := append(tok.Encode("Hello world, this is the end."), imEnd)
	eog := map[int32]bool{imEnd: true}
	prompt := tok.Encode("Say something.")
	tests := []struct {
		name   string
		req    engine.Request
		text   string
		finish string
	}{
		{"to the end", engine.Request{EOG: eog}, "Hello world, this is the end.", "stop"},
		{"max tokens", engine.Request{EOG: eog, MaxTokens: 2}, "Hello world", "length"},
		{"stop across tokens", engine.Request{EOG: eog, Stop: []string{"o w"}}, "Hell", "stop"},
		{"stop in one token", engine.Request{EOG: eog, Stop: []string{"this"}}, "Hello world, ", "stop"},
		{"earliest stop wins", engine.Request{EOG: eog, Stop: []string{"end", "world"}}, "Hello ", "stop"},
		{"stop at the start", engine.Request{EOG: eog, Stop: []string{"Hello"}}, "", "stop"},
		{"held-back text flushed", engine.Request{EOG: eog, Stop: []string{"end!"}}, "Hello world, this is the end.", "stop"},
		{"ignore eos", engine.Request{EOG: eog, IgnoreEOS: true, MaxTokens: 10}, "Hello world, this is the end.<|im_end|><|im_end|>", "length"},
		{"held back, then released at max tokens", engine.Request{EOG: eog, MaxTokens: 3, Stop: []string{", thi"}}, "Hello world,", "length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := enginetest.New(script, tok.VocabSize(), 128)
			r.Fill = imEnd
			tc.req.Prompt = prompt
			text, finish, _ := generate(t, r, tok, tc.req)
			if text != tc.text || finish != tc.finish {
				t.Errorf("got %q (%s), want %q (%s)", text, finish, tc.text, tc.finish)
			}
		})
	}
	// The context's end: the last generated token is never fed back, so a
	// context of N holds a prompt of P and N-P+1 generated tokens.
	r := enginetest.New(script, tok.VocabSize(), len(prompt)+2)
	_, finish, n := generate(t, r, tok, engine.Request{Prompt: prompt, EOG: eog})
	if finish != "length" || n != 3 {
		t.Errorf("context end: %s after %d tokens", finish, n)
	}
	if _, err := engine.NewSequence(r, tok, engine.Request{Prompt: make([]int32, len(prompt)+3)}); err == nil || !strings.Contains(err.Error(), "do not fit the context") {
		t.Errorf("long prompt: %v", err)
	}
	if _, err := engine.NewSequence(r, tok, engine.Request{Prompt: prompt, Sampling: sampling.Params{Temperature: 3}}); err == nil {
		t.Error("temperature 3 accepted")
	}
	if _, err := engine.NewSequence(r, nil, engine.Request{Prompt: prompt, Stop: []string{"x"}}); err == nil {
		t.Error("stop strings without a tokenizer accepted")
	}
}

// TestSequenceStopString checks that the metrics name the stop string
// that ended a generation, and none when another end came first.
func TestSequenceStopString(t *testing.T) {
	tok := goldenTokenizer(t)
	imEnd, _ := tok.TokenID("<|im_end|>")
	script := append(tok.Encode("Hello world, this is the end."), imEnd)
	eog := map[int32]bool{imEnd: true}
	for _, tc := range []struct {
		stops     []string
		maxTokens int
		want      string
	}{
		{[]string{"end", "world"}, 0, "world"},
		{[]string{"zz", "s is"}, 0, "s is"},
		{[]string{"end!"}, 0, ""},  // the end of generation came first
		{[]string{", thi"}, 3, ""}, // max_tokens came first
		{nil, 0, ""},
	} {
		r := enginetest.New(script, tok.VocabSize(), 128)
		r.Fill = imEnd
		seq, err := engine.NewSequence(r, tok, engine.Request{Prompt: tok.Encode("Say something."), EOG: eog, Stop: tc.stops, MaxTokens: tc.maxTokens})
		if err != nil {
			t.Fatal(err)
		}
		for !seq.Done() {
			if _, err := seq.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if got := seq.Metrics().Stop; got != tc.want {
			t.Errorf("stops %q: Metrics().Stop = %q, want %q", tc.stops, got, tc.want)
		}
	}
}

// capable is a scripted runner with a device sampler (of requests with
// top_k at most 64) and a lookahead switch.
type capable struct {
	*enginetest.Runner
	sampled   int
	on        bool // the next Forward's output is sampled
	lookahead []bool
}

func (c *capable) CanSample(p sampling.Params) bool { return p.TopK > 0 && p.TopK <= 64 }

func (c *capable) SetSamples(rows []sampling.Row) error {
	if len(rows) != 1 || !rows[0].On || !c.CanSample(rows[0].Params) {
		return fmt.Errorf("rows %+v", rows)
	}
	c.on = true
	return nil
}

func (c *capable) Sampled(i int) (sampling.Token, error) {
	if !c.on || i != 0 {
		return sampling.Token{}, fmt.Errorf("output %d not sampled", i)
	}
	c.on = false
	c.sampled++
	id, err := c.Greedy()
	return sampling.Token{ID: id}, err
}

func (c *capable) SetLookahead(on bool) { c.lookahead = append(c.lookahead, on) }

// TestSequencePick: greedy requests use the runner's argmax and turn its
// lookahead on; sampled ones turn it off, and are sampled on the device
// when the runner samples under their parameters.
func TestSequencePick(t *testing.T) {
	tests := []struct {
		name      string
		params    sampling.Params
		device    bool
		lookahead bool
	}{
		{"greedy", sampling.Params{}, false, true},
		{"greedy with logprobs", sampling.Params{Logprobs: true}, false, false},
		{"top_k", sampling.Params{Temperature: 0.7, TopK: 20, TopP: 0.9}, true, false},
		{"top_k with penalty", sampling.Params{Temperature: 0.7, TopK: 20, PresencePenalty: 1}, true, false},
		{"top_k too large", sampling.Params{Temperature: 0.7, TopK: 100}, false, false},
		{"no top_k", sampling.Params{Temperature: 0.7}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &capable{Runner: enginetest.New([]int32{5, 6, 7}, 200, 64)}
			seq, err := engine.NewSequence(c, nil, engine.Request{Prompt: []int32{1, 2}, MaxTokens: 3, Sampling: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int32
			for !seq.Done() {
				st, err := seq.Step()
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, st.Token.ID)
			}
			if len(ids) != 3 || ids[0] != 5 || ids[1] != 6 || ids[2] != 7 {
				t.Errorf("tokens %v", ids)
			}
			if want := map[bool]int{true: 3}[tc.device]; c.sampled != want {
				t.Errorf("%d tokens sampled on the device, want %d", c.sampled, want)
			}
			if len(c.lookahead) != 1 || c.lookahead[0] != tc.lookahead {
				t.Errorf("lookahead set to %v", c.lookahead)
			}
		})
	}
}

// variant hides the scripted runner's SplitInvariant, as the GPU runner
// lacks it.
type variant struct{ engine.Runner }

// TestCachedPrefixNeedsSplitInvariance: only a split-invariant runner
// keeps a cached prefix, unless the request accepts an inexact one.
func TestCachedPrefixNeedsSplitInvariance(t *testing.T) {
	for _, tc := range []struct {
		r       engine.Runner
		inexact bool
		want    int
	}{
		{enginetest.New([]int32{5, 6}, 100, 64), false, 4},
		{variant{enginetest.New([]int32{5, 6}, 100, 64)}, false, 0},
		{variant{enginetest.New([]int32{5, 6}, 100, 64)}, true, 4},
	} {
		first, err := engine.NewSequence(tc.r, nil, engine.Request{Prompt: []int32{1, 2, 3}, MaxTokens: 2})
		if err != nil {
			t.Fatal(err)
		}
		for !first.Done() {
			if _, err := first.Step(); err != nil {
				t.Fatal(err)
			}
		}
		second, err := engine.NewSequence(tc.r, nil, engine.Request{Prompt: []int32{1, 2, 3, 5, 9}, MaxTokens: 1, Cached: first.Tokens(), Inexact: tc.inexact})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := second.Step(); err != nil {
			t.Fatal(err)
		}
		if got := second.Metrics().CachedTokens; got != tc.want {
			t.Errorf("%T, inexact %v: %d cached tokens, want %d", tc.r, tc.inexact, got, tc.want)
		}
	}
}
