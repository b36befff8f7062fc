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
	// Inexact keeps the cached prefix on a runner that is not
	// SplitInvariant too (the GPU), accepting that the kept keys and
	// values, computed by other passes, change the logits within rounding,
	// as a scheduler's prefix cache does there: a conversation's earlier
	// turns are not computed again.
	Inexact bool
	// Constraint, when set, restricts the generated tokens to a grammar's
	// (structured output); the sequence finishes with FinishStop once the
	// grammar is matched to its end. It serves this request alone.
	Constraint Constraint
	// Embed asks for the prompt's embedding instead of generated tokens
	// (an embedding model's request): the prompt runs with its last token
	// listed for its final hidden state (batch.Batch.AddHidden, read
	// through an Embedder), and the sequence then finishes with
	// FinishStop without picking a token. Only a batch scheduler runs it.
	Embed bool
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
	r       Runner // nil for a sequence a batch scheduler drives
	req     Request
	maxLen  int
	sampler *sampling.Sampler
	dec     *tokenizer.StreamDecoder // nil without a tokenizer
	stops   *stop.Matcher            // nil without stop strings
	greedy  bool                     // the runner's own argmax is the pick
	cons    *constraintState         // nil without a Constraint
	// onDevice: the next pick is the runner's own draw (DeviceRow)
	onDevice bool
	// hasPick: picked (and pickErr) are the next pick, made ahead by
	// PreparePick
	hasPick bool
	picked  sampling.Token
	pickErr error
	rows    []sampling.Row // Step's sampling row for a Runner that is a DeviceSampler
	devOut  deviceOutput   // Step's output of such a runner

	held   []int32 // the ids whose keys and values are stored: the prompt's run so far, then generated tokens fed back
	todo   []int32 // the ids the next forward passes run before the next pick
	step   []int32 // the generated ids not yet run (at most one), todo's storage in decode
	out    int     // tokens generated
	limit  int     // most tokens to generate
	done   bool
	start  time.Time // of the prompt (its first chunk)
	last   time.Time // of the last pick
	m      Metrics
	finish string
}

// NewSequence checks req against r's context, resets r and prepares the
// sampler. tok decodes the generated text; with a nil tok, steps carry
// tokens only and stop strings are not supported.
func NewSequence(r Runner, tok *tokenizer.Tokenizer, req Request) (*Sequence, error) {
	if req.Embed {
		return nil, errors.New("engine: an embedding request runs on a batch scheduler, not a single runner")
	}
	s, err := newSequence(r.Vocab(), r.MaxLen(), tok, req)
	if err != nil {
		return nil, err
	}
	s.r = r
	if la, ok := r.(Lookaheader); ok {
		// A constrained pick reads the logits: the runner's own argmax
		// would pick a token the grammar may not allow.
		la.SetLookahead(s.greedy && s.cons == nil)
	}
	keep := 0
	if si, ok := r.(SplitInvariant); ok && si.SplitInvariant() || req.Inexact {
		keep = min(commonPrefix(req.Cached, req.Prompt), len(req.Prompt)-1, r.Len())
	}
	if keep > 0 && r.Truncate(keep) == nil {
		s.Resume(keep)
	} else {
		r.Reset()
	}
	return s, nil
}

// NewBatchSequence returns a sequence that a batch scheduler drives: it
// runs no forward pass itself. The scheduler asks it for the tokens to run
// (Pending), runs them in a batch with other sequences' at positions
// Len().., and hands it the outputs (Advance). vocab and maxLen are the
// model's logits per position and the most positions a sequence holds.
func NewBatchSequence(vocab, maxLen int, tok *tokenizer.Tokenizer, req Request) (*Sequence, error) {
	return newSequence(vocab, maxLen, tok, req)
}

// CheckRequest reports why req cannot run on a model of vocab logits and
// maxLen positions per sequence, without preparing it (NewBatchSequence
// would give the same error): a scheduler checks a request when it
// arrives and prepares it when it starts.
func CheckRequest(vocab, maxLen int, tok *tokenizer.Tokenizer, req Request) error {
	if len(req.Prompt) == 0 {
		return errors.New("engine: empty prompt")
	}
	if len(req.Prompt) > maxLen {
		return &ContextError{Prompt: len(req.Prompt), Context: maxLen}
	}
	if len(req.Stop) > 0 && tok == nil {
		return errors.New("engine: stop strings need a tokenizer")
	}
	if err := req.Sampling.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	for id := range req.Sampling.LogitBias {
		if id < 0 || int(id) >= vocab {
			return fmt.Errorf("engine: sampling: logit_bias token %d outside the vocabulary of %d tokens", id, vocab)
		}
	}
	return nil
}

func newSequence(vocab, maxLen int, tok *tokenizer.Tokenizer, req Request) (*Sequence, error) {
	if err := CheckRequest(vocab, maxLen, tok, req); err != nil {
		return nil, err
	}
	smp, err := sampling.New(req.Sampling, vocab)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	smp.SetPrompt(req.Prompt)
	s := &Sequence{req: req, maxLen: maxLen, sampler: smp}
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
	if room := maxLen - len(req.Prompt) + 1; s.limit <= 0 || s.limit > room {
		s.limit = room
	}
	s.greedy = req.Sampling.Greedy() && !req.Sampling.Logprobs
	s.m.PromptTokens = len(req.Prompt)
	s.held = make([]int32, 0, len(req.Prompt)+min(s.limit, 4096))
	s.step = make([]int32, 0, 1)
	s.todo = req.Prompt
	if req.Constraint != nil {
		s.cons = &constraintState{c: req.Constraint, mask: make([]uint64, MaskWords(vocab))}
	}
	return s, nil
}

// Resume records that the first n ids the sequence runs are already in
// the KV cache (a cached prefix: n < the ids pending). Call it before the
// first pass, or after Preempt when the restarted sequence found a prefix
// of its ids in the cache.
func (s *Sequence) Resume(n int) {
	n = max(0, min(n, len(s.todo)-1))
	s.held = append(s.held, s.todo[:n]...)
	s.todo = s.todo[n:]
	if s.out == 0 {
		s.m.CachedTokens = len(s.held)
	}
}

// Preempt records that the sequence's keys and values were dropped (a
// scheduler reclaimed its KV blocks): the ids it held are run again, with
// the pending ones, before the next pick. It returns every id the
// sequence holds or will hold, to look up in a prefix cache; Resume then
// takes what was found.
func (s *Sequence) Preempt() []int32 {
	ids := make([]int32, 0, len(s.held)+len(s.todo))
	ids = append(append(ids, s.held...), s.todo...)
	s.held = s.held[:0]
	s.todo = ids
	return ids
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

// Prefilling reports whether the sequence has not produced its first
// token yet: its pending ids are (the rest of) its prompt.
func (s *Sequence) Prefilling() bool { return s.out == 0 }

// Last reports whether the next token the sequence picks ends it by
// length (its MaxTokens, or the context full), whatever the token.
func (s *Sequence) Last() bool { return s.out > 0 && s.out+1 >= s.limit }

// Generated returns the number of tokens generated so far.
func (s *Sequence) Generated() int { return s.out }

// Metrics returns the timing so far.
func (s *Sequence) Metrics() Metrics { return s.m }

// Len returns the positions whose keys and values the sequence holds.
func (s *Sequence) Len() int { return len(s.held) }

// MaxLen returns the most positions the sequence may hold.
func (s *Sequence) MaxLen() int { return s.maxLen }

// Pending returns the ids the next forward passes must run, at positions
// Len(), Len()+1, ..., before the next token is picked: the rest of the
// prompt, or the last generated token. A scheduler runs a prefix of them
// (a chunk of a long prompt) and calls Advance. The slice is valid until
// Advance.
func (s *Sequence) Pending() []int32 {
	if s.start.IsZero() {
		s.start = time.Now()
	}
	return s.todo
}

// An Output is where a sequence reads the result of the forward pass that
// ran its last pending id: a position's logits and their argmax. A Runner
// is one; a batch scheduler hands an output row of a BatchRunner.
type Output interface {
	Logits() ([]float32, error)
	Greedy() (int32, error)
}

// Step runs one forward pass on the sequence's runner: the next chunk of
// the prompt, or one decode step, and picks the next token once the
// prompt is done.
func (s *Sequence) Step() (Step, error) {
	if s.done {
		return Step{}, errors.New("engine: the sequence has finished")
	}
	if s.r == nil {
		return Step{}, errors.New("engine: a batch sequence has no runner to step")
	}
	ids := s.Pending()
	n := min(len(ids), PromptChunk)
	var out Output = s.r
	if ds, ok := s.r.(DeviceSampler); ok && n == len(ids) && ds.CanSample(s.req.Sampling) {
		if s.rows == nil {
			s.rows = make([]sampling.Row, 1)
		}
		if s.DeviceRow(&s.rows[0], ds.CanSample, s.Mask()) {
			if err := ds.SetSamples(s.rows); err != nil {
				return s.fail(err)
			}
			s.devOut = deviceOutput{Runner: s.r, ds: ds}
			out = &s.devOut
		}
	}
	if err := s.r.Forward(ids[:n]); err != nil {
		return s.fail(err)
	}
	return s.Advance(n, out)
}

// deviceOutput is a Runner's output whose token its runner sampled
// itself (a DeviceSampler of one output).
type deviceOutput struct {
	Runner
	ds DeviceSampler
}

func (o *deviceOutput) Sampled() (sampling.Token, error) { return o.ds.Sampled(0) }

// Advance records that the first n pending ids ran, and when they were
// the last, picks the next token from out, the output of the last of
// them; a step that only ran part of a prompt has no token (out is not
// read and may be nil). For an embedding request (Request.Embed) the
// last of the prompt finishes the sequence (FinishStop, no token, out
// not read).
func (s *Sequence) Advance(n int, out Output) (Step, error) {
	pre := s.hasPick // PreparePick made this pick
	s.hasPick = false
	if s.done {
		return Step{}, errors.New("engine: the sequence has finished")
	}
	if n <= 0 || n > len(s.todo) {
		return s.fail(fmt.Errorf("engine: %d ids ran of %d pending", n, len(s.todo)))
	}
	s.held = append(s.held, s.todo[:n]...)
	s.todo = s.todo[n:]
	if len(s.todo) > 0 {
		return Step{}, nil
	}
	if s.req.Embed {
		// The prompt ran; its embedding is the runner's hidden row.
		s.m.TimeToFirst = time.Since(s.start)
		s.m.Forward.Add(s.m.TimeToFirst)
		s.end(FinishStop)
		return Step{Finish: FinishStop}, nil
	}
	tok, err := s.picked, s.pickErr
	if !pre {
		tok, err = s.pick(out)
	}
	if err != nil {
		return s.fail(err)
	}
	now := time.Now()
	if s.out == 0 {
		s.m.TimeToFirst = now.Sub(s.start)
		s.m.Forward.Add(s.m.TimeToFirst)
	} else {
		d := now.Sub(s.last)
		s.m.Decode += d
		s.m.Forward.Add(d)
	}
	s.last = now
	id := tok.ID
	if s.cons != nil {
		if err := s.acceptConstrained(id); err != nil {
			return s.fail(err)
		}
	}
	s.sampler.Accept(id)
	s.step = append(s.step[:0], id)
	s.todo = s.step
	s.out++
	s.m.GeneratedTokens = s.out
	st := Step{HasToken: true, Token: tok}
	eog := !s.req.IgnoreEOS && s.req.EOG[id]
	if !eog && s.dec != nil {
		st.Text = s.dec.Next(id)
		if s.stops != nil {
			var stopped bool
			if st.Text, stopped = s.stops.Write(st.Text); stopped {
				s.m.Stop = s.stops.Matched()
				s.end(FinishStop)
				st.Finish = FinishStop
				return st, nil
			}
		}
	}
	switch {
	case eog, s.cons != nil && s.cons.c.Done():
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

// pick chooses the next token: the runner's own draw when it sampled on
// the device, the runner's own argmax for greedy decoding, or the
// sampler's draw from the full logits.
func (s *Sequence) pick(out Output) (sampling.Token, error) {
	if s.onDevice {
		s.onDevice = false
		so, ok := out.(SampledOutput)
		if !ok {
			return sampling.Token{}, errors.New("engine: the output of a row sampled on the device has no sampled token")
		}
		tok, err := so.Sampled()
		if !errors.Is(err, sampling.ErrNotDrawn) {
			if s.cons != nil {
				s.cons.ready = false // the runner applied the mask
			}
			return tok, err
		}
		// The runner left this draw to the sampler: the logits, below.
	}
	if s.cons != nil && s.cons.c.Active() {
		return s.pickConstrained(out)
	}
	if s.greedy {
		id, err := out.Greedy()
		return sampling.Token{ID: id}, err
	}
	logits, err := out.Logits()
	if err != nil {
		return sampling.Token{}, err
	}
	return s.sampler.Sample(logits)
}

// PreparePick makes the pick that Advance(n, out) will make, ahead of it,
// so that a scheduler can pick for many sequences at once on several
// goroutines (the host's sampling over the vocabulary, or its argmax):
// call it after the forward pass whose output out is and before that
// Advance, from any one goroutine while nothing else uses the sequence.
// It does nothing where Advance picks no token, or where the pick is the
// runner's own draw or a constrained one.
func (s *Sequence) PreparePick(n int, out Output) {
	if s.done || s.req.Embed || out == nil || n != len(s.todo) || s.onDevice || s.cons != nil && s.cons.c.Active() {
		return
	}
	s.picked, s.pickErr = s.pick(out)
	s.hasPick = true
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
		s.m.Stop = s.stops.Matched()
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

// Release ends the sequence and hands its sampler's vocabulary-sized
// buffers to the next sequence's, so that serving many requests does not
// allocate them for each. Metrics and Tokens stay readable; Step and
// Advance fail afterwards.
func (s *Sequence) Release() {
	s.done = true
	s.sampler.Release()
}

// Finish returns why the sequence ended ("" while it runs or after an
// error).
func (s *Sequence) Finish() string { return s.finish }
