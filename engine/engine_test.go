package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestGeneratePromptChunks checks that a long prompt reaches the runner in
// chunks of PromptChunk tokens.
func TestGeneratePromptChunks(t *testing.T) {
	r := &chunked{scripted: scripted{script: make([]int32, 2000), max: 2000}}
	if _, _, err := Generate(context.Background(), r, make([]int32, 1100), Options{MaxTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if want := []int{512, 512, 76}; !equalInts(r.calls, want) {
		t.Errorf("forward calls of %v tokens, want %v", r.calls, want)
	}
}

type chunked struct {
	scripted
	calls []int
}

func (c *chunked) Forward(tokens []int32) error {
	c.calls = append(c.calls, len(tokens))
	return c.scripted.Forward(tokens)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// scripted is a Runner whose greedy choice after n positions is script[n-1].
type scripted struct {
	script []int32
	n      int
	max    int
}

func (s *scripted) Forward(tokens []int32) error {
	if s.n+len(tokens) > s.max {
		return errors.New("full")
	}
	s.n += len(tokens)
	return nil
}
func (s *scripted) Logits() ([]float32, error) { return nil, nil }
func (s *scripted) Greedy() (int32, error)     { return s.script[s.n-1], nil }
func (s *scripted) Len() int                   { return s.n }
func (s *scripted) Vocab() int                 { return 1000 }
func (s *scripted) MaxLen() int                { return s.max }
func (s *scripted) Reset()                     { s.n = 0 }
func (s *scripted) Truncate(n int) error       { s.n = n; return nil }
func (s *scripted) Backend() string            { return "scripted" }
func (s *scripted) Close() error               { return nil }

func TestGenerateStops(t *testing.T) {
	script := []int32{9, 9, 5, 6, 7, 2, 8, 8, 8, 8}
	tests := []struct {
		name string
		max  int
		opts Options
		want []int32
	}{
		{"stop token", 100, Options{Stop: map[int32]bool{2: true}}, []int32{5, 6, 7, 2}},
		{"max tokens", 100, Options{MaxTokens: 2, Stop: map[int32]bool{2: true}}, []int32{5, 6}},
		{"context full", 6, Options{}, []int32{5, 6, 7, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &scripted{script: script, max: tc.max}
			var streamed []int32
			tc.opts.OnToken = func(id int32) error { streamed = append(streamed, id); return nil }
			got, m, err := Generate(context.Background(), r, []int32{1, 1, 1}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, tc.want) || !equal(streamed, tc.want) {
				t.Fatalf("generated %v, streamed %v, want %v", got, streamed, tc.want)
			}
			if m.PromptTokens != 3 || m.GeneratedTokens != len(tc.want) || m.Forward.N != len(tc.want) {
				t.Errorf("metrics %+v", m)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	r := &scripted{script: make([]int32, 10), max: 4}
	if _, _, err := Generate(context.Background(), r, nil, Options{}); err == nil {
		t.Error("empty prompt accepted")
	}
	if _, _, err := Generate(context.Background(), r, make([]int32, 5), Options{}); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("oversized prompt: %v", err)
	}
	stop := errors.New("stop")
	_, _, err := Generate(context.Background(), r, []int32{1}, Options{OnToken: func(int32) error { return stop }})
	if !errors.Is(err, stop) {
		t.Errorf("OnToken error not returned: %v", err)
	}
	// A prompt that fills the context exactly still gives one token.
	got, _, err := Generate(context.Background(), &scripted{script: make([]int32, 10), max: 4}, make([]int32, 4), Options{})
	if err != nil || len(got) != 1 {
		t.Errorf("full-context prompt: got %v, %v", got, err)
	}
	// Cancellation before the prompt runs, and between decode steps.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, _, err := Generate(ctx, &scripted{script: make([]int32, 10), max: 10}, []int32{1}, Options{}); !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Errorf("cancelled before the prompt: got %v, %v", got, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	got, _, err = Generate(ctx, &scripted{script: make([]int32, 10), max: 10}, []int32{1}, Options{OnToken: func(int32) error { cancel(); return nil }})
	if !errors.Is(err, context.Canceled) || len(got) != 1 {
		t.Errorf("cancelled after the first token: got %v, %v", got, err)
	}
}

func TestFormatMetrics(t *testing.T) {
	m := Metrics{PromptTokens: 4, GeneratedTokens: 3, TimeToFirst: 12345 * time.Microsecond, Decode: 50 * time.Millisecond}
	for _, d := range []time.Duration{12345 * time.Microsecond, 20 * time.Millisecond, 30 * time.Millisecond} {
		m.Forward.Add(d)
	}
	want := "metrics:\n  time_to_first_token_ms: 12.345\n  decode_tokens_per_second: 40.000\n  per_forward_ms: min 12.345  max 30.000  mean 20.782  (n=3)\n"
	if got := FormatMetrics(&m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
