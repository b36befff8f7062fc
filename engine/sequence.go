package engine

import (
	"errors"
	"fmt"
	"time"

	"inferno/sampling"
	"inferno/stop"
	"inferno/tokenizer"
)

// Request describes one generation: the prompt's ids, how to choose tokens
// and when to stop.
type Request struct {
	Prompt []int32
	// MaxTokens is the most tokens to generate; <= 0 means until the
	// context is full.
	MaxTokens int
	Sampling  sampling.Params
	// Stop holds stop strings: generation ends where the text first
	// contains one of them, and neither it nor anything after it is
	// emitted.
	Stop []string
	// EOG holds the ids that end generation (the model's end-of-generation
	// tokens); their text is not emitted. IgnoreEOS generates through them
	// as ordinary tokens.
	EOG       map[int32]bool
	IgnoreEOS bool
	// Cached holds the ids the runner holds from its previous sequence
	// (that sequence's Tokens). On a SplitInvariant runner the longest
	// prefix it shares with Prompt stays in the KV cache instead of being
	// computed again (the next turn of a conversation, the same system
	// prompt); at least the last prompt token always runs.
	Cached []int32
}

// Finish reasons, as OpenAI's API spells them.
const (
	FinishStop   = "stop"   // an end-of-generation token or a stop string
	FinishLength = "length" // MaxTokens, or the context is full
)

// A Step is what one call of Sequence.Step produced.
type Step struct {
	// HasToken reports that the step generated a token; a step that only
	// ran a chunk of the prompt has none.
	HasToken bool
	// Token is the generated token with its log-probabilities when they
	// were asked for. Token.Top is reused by the next Step.
	Token sampling.Token
	// Text is the text that became safe to emit with this step: decoded
	// characters that cannot be part of a stop string. It may be empty
	// even when a token was generated (an incomplete UTF-8 character, or
	// text held back as the possible start of a stop string).
	Text string
	// Finish is set on the last step: FinishStop or FinishLength.
	Finish string
}

// Sequence generates one request on a Runner, one step at a time: a
// scheduler interleaves the steps of many sequences, and Generate runs one
// to the end. Each Step is one forward pass: a chunk of at most
// PromptChunk prompt tokens, or one decode step.
type Sequence struct {
	r       Runner
	req     Request
	sampler *sampling.Sampler
	dec     *tokenizer.StreamDecoder // nil without a tokenizer
	stops   *stop.Matcher            // nil without stop strings
	greedy  bool                     // the runner's own argmax is the pick
	topK    TopKer                   // the runner's top-k, when the request allows it

	fed    int      // prompt tokens run (or kept from the cache)
	held   []int32  // the ids the runner holds: the prompt's run so far, then generated tokens fed back
	step   [1]int32 // the token the next decode step feeds
	out    int      // tokens generated
	limit  int      // most tokens to generate
	done   bool
	start  time.Time // of the prompt (its first chunk)
	m      Metrics
	finish string
}

// NewSequence checks req against r's context, resets r and prepares the
// sampler. tok decodes the generated text; with a nil tok, steps carry
// tokens only and stop strings are not supported.
func NewSequence(r Runner, tok *tokenizer.Tokenizer, req Request) (*Sequence, error) {
	if len(req.Prompt) == 0 {
		return nil, errors.New("engine: empty prompt")
	}
	if len(req.Prompt) > r.MaxLen() {
		return nil, &ContextError{Prompt: len(req.Prompt), Context: r.MaxLen()}
	}
	if len(req.Stop) > 0 && tok == nil {
		return nil, errors.New("engine: stop strings need a tokenizer")
	}
	vocab := r.Vocab()
	smp, err := sampling.New(req.Sampling, vocab)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	smp.SetPrompt(req.Prompt)
	s := &Sequence{r: r, req: req, sampler: smp}
	if tok != nil {
		s.dec = tok.NewStreamDecoder()
	}
	if len(req.Stop) > 0 {
		if s.stops, err = stop.New(req.Stop); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	// The last token generated is never fed back, so the context holds
	// one more token than it has positions for.
	s.limit = req.MaxTokens
	if room := r.MaxLen() - len(req.Prompt) + 1; s.limit <= 0 || s.limit > room {
		s.limit = room
	}
	p := req.Sampling
	s.greedy = p.Greedy() && !p.Logprobs
	if tk, ok := r.(TopKer); ok && !s.greedy && p.TopK > 0 && p.TopK <= tk.MaxTopK() && candidatesSuffice(p) {
		s.topK = tk
	}
	if la, ok := r.(Lookaheader); ok {
		la.SetLookahead(s.greedy)
	}
	s.m.PromptTokens = len(req.Prompt)
	keep := 0
	if si, ok := r.(SplitInvariant); ok && si.SplitInvariant() {
		keep = min(commonPrefix(req.Cached, req.Prompt), len(req.Prompt)-1, r.Len())
	}
	if keep > 0 && r.Truncate(keep) == nil {
		s.fed = keep
		s.m.CachedTokens = keep
	} else {
		r.Reset()
	}
	s.held = append(make([]int32, 0, len(req.Prompt)+min(s.limit, 4096)), req.Prompt[:s.fed]...)
	return s, nil
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// CommonPrefix returns how many leading ids of prompt a runner holding
// cached could keep (see Request.Cached).
func CommonPrefix(cached, prompt []int32) int { return commonPrefix(cached, prompt) }

// Tokens returns the ids the runner holds for the sequence, for the next
// request's Request.Cached. The slice is shared: do not modify it.
func (s *Sequence) Tokens() []int32 { return s.held }

// ContextError reports a prompt longer than the context.
type ContextError struct{ Prompt, Context int }

func (e *ContextError) Error() string {
	return fmt.Sprintf("the prompt's %d tokens do not fit the context of %d tokens", e.Prompt, e.Context)
}

// Done reports whether the sequence has finished.
func (s *Sequence) Done() bool { return s.done }

// Prefilling reports whether prompt tokens remain to be run.
func (s *Sequence) Prefilling() bool { return s.fed < len(s.req.Prompt) }

// Generated returns the number of tokens generated so far.
func (s *Sequence) Generated() int { return s.out }

// Metrics returns the timing so far.
func (s *Sequence) Metrics() Metrics { return s.m }

// Len returns the positions the runner holds for the sequence.
func (s *Sequence) Len() int { return s.r.Len() }

// Step runs one forward pass: the next chunk of the prompt, or one decode
// step, and picks the next token once the prompt is done.
func (s *Sequence) Step() (Step, error) {
	if s.done {
		return Step{}, errors.New("engine: the sequence has finished")
	}
	t0 := time.Now()
	if s.start.IsZero() {
		s.start = t0
	}
	if s.Prefilling() {
		n := min(len(s.req.Prompt)-s.fed, PromptChunk)
		if err := s.r.Forward(s.req.Prompt[s.fed : s.fed+n]); err != nil {
			return s.fail(err)
		}
		s.held = append(s.held, s.req.Prompt[s.fed:s.fed+n]...)
		s.fed += n
		if s.Prefilling() {
			return Step{}, nil
		}
	} else {
		if err := s.r.Forward(s.step[:]); err != nil {
			return s.fail(err)
		}
		s.held = append(s.held, s.step[0])
	}
	tok, err := s.pick()
	if err != nil {
		return s.fail(err)
	}
	now := time.Now()
	if s.out == 0 {
		s.m.TimeToFirst = now.Sub(s.start)
		s.m.Forward.Add(s.m.TimeToFirst)
	} else {
		d := now.Sub(t0)
		s.m.Decode += d
		s.m.Forward.Add(d)
	}
	id := tok.ID
	s.sampler.Accept(id)
	s.step[0] = id
	s.out++
	s.m.GeneratedTokens = s.out
	st := Step{HasToken: true, Token: tok}
	eog := !s.req.IgnoreEOS && s.req.EOG[id]
	if !eog && s.dec != nil {
		st.Text = s.dec.Next(id)
		if s.stops != nil {
			var stopped bool
			if st.Text, stopped = s.stops.Write(st.Text); stopped {
				s.end(FinishStop)
				st.Finish = FinishStop
				return st, nil
			}
		}
	}
	switch {
	case eog:
		st.Finish = FinishStop
	case s.out >= s.limit:
		st.Finish = FinishLength
	default:
		return st, nil
	}
	st.Text += s.flush()
	s.end(st.Finish)
	return st, nil
}

// pick chooses the next token: the runner's own argmax for greedy
// decoding, the runner's top-k candidates when the request lets the
// sampler work on those alone, or the full logits.
func (s *Sequence) pick() (sampling.Token, error) {
	if s.greedy {
		id, err := s.r.Greedy()
		return sampling.Token{ID: id}, err
	}
	if s.topK != nil {
		ids, vals, err := s.topK.TopK(s.req.Sampling.TopK)
		if err != nil {
			return sampling.Token{}, err
		}
		return s.sampler.SampleCandidates(ids, vals)
	}
	logits, err := s.r.Logits()
	if err != nil {
		return sampling.Token{}, err
	}
	return s.sampler.Sample(logits)
}

// flush returns the text held back by the decoder and the stop-string
// matcher at the end of generation.
func (s *Sequence) flush() string {
	if s.dec == nil {
		return ""
	}
	text := s.dec.Flush()
	if s.stops == nil {
		return text
	}
	out, stopped := s.stops.Write(text)
	if stopped {
		return out
	}
	return out + s.stops.Flush()
}

func (s *Sequence) end(reason string) {
	s.done = true
	s.finish = reason
}

func (s *Sequence) fail(err error) (Step, error) {
	s.done = true
	s.held = s.held[:0] // what the runner holds is unknown
	return Step{}, err
}

// Finish returns why the sequence ended ("" while it runs or after an
// error).
func (s *Sequence) Finish() string { return s.finish }

// candidatesSuffice reports whether the top-k candidates alone determine
// the sampled token under p: top_p and min_p apply after top_k, so only
// what looks at other tokens' logits (penalties over earlier tokens, logit
// bias, log-probabilities over the whole vocabulary) needs them all.
func candidatesSuffice(p sampling.Params) bool {
	return (p.RepetitionPenalty == 0 || p.RepetitionPenalty == 1) && p.PresencePenalty == 0 &&
		p.FrequencyPenalty == 0 && len(p.LogitBias) == 0 && !p.Logprobs
}
