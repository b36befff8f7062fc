package server

import (
	"context"
	"net/http"
	"time"

	"inferno/engine"
	"inferno/parser"
	"inferno/sampling"
)

// chatRun is a chat request under way on a model: its choices, each a
// generation with its reply parser, and the tool choice that shapes how
// they end. Every protocol that chats (OpenAI's chat completions and
// Responses, Anthropic's messages, ollama's chat) translates its request
// into a chatRequest, starts it with startChat, and writes the choices'
// deltas (chatGen.drive) in its own wire format.
type chatRun struct {
	m      *Model
	req    *chatRequest
	tc     toolChoice
	prompt string
	chs    []chatGen
}

// chatGen is one choice of a chat completion: its generation and the
// parser of its reply.
type chatGen struct {
	g       *generation
	p       parser.Parser
	oneCall bool // the reply ends at its first tool call
}

// startChat checks req, renders its messages with m's chat template and
// submits each of its choices. They run until they end or ctx is
// cancelled (the handler cancels it when it returns, so a client gone
// mid-stream frees its slots).
func (s *Server) startChat(ctx context.Context, m *Model, req *chatRequest, start time.Time) (*chatRun, *apiError) {
	if e := checkModel(m, req.Model); e != nil {
		return nil, e
	}
	prompt, e := renderChat(m, req)
	if e != nil {
		return nil, e
	}
	if req.TopLogprobs != nil {
		if top := *req.TopLogprobs; top < 0 || top > 20 {
			return nil, badRequest("top_logprobs", "top_logprobs %d is outside [0, 20]", top)
		}
		if !req.Logprobs {
			return nil, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
	}
	top := 0
	if req.TopLogprobs != nil {
		top = *req.TopLogprobs
	}
	limit, e := maxTokens("max_tokens", req.MaxTokens, req.MaxCompletionTokens)
	if e != nil {
		return nil, e
	}
	tc, e := toolChoiceOf(req)
	if e != nil {
		return nil, e
	}
	if tc.spec != nil && m.format() != parser.Qwen {
		return nil, badRequest("tool_choice", "tool_choice %s is not supported for this model's reply format (%s) yet: use \"auto\"", describeChoice(tc), m.format())
	}
	cs, e := chatConstraint(req, tc)
	if e != nil {
		return nil, e
	}
	n, e := req.choices(maxChoices)
	if e != nil {
		return nil, e
	}
	gen, e := req.request(m, m.Tokenizer.Encode(prompt), limit, req.Logprobs, top)
	if e != nil {
		return nil, e
	}
	// Each choice is a generation of its own: its draws (a seed moved on
	// by its index), its constraint's state, its reply parser. Their
	// prompts are the same; the prefix cache shares their blocks once
	// the first has filled them.
	run := &chatRun{m: m, req: req, tc: tc, prompt: prompt, chs: make([]chatGen, n)}
	for i := range run.chs {
		gi := gen
		if i > 0 && gi.Sampling.HasSeed {
			gi.Sampling.Seed += uint64(i)
		}
		if cs != nil {
			c, e := constrainRequest(ctx, m, cs, thinkingOf(m, prompt))
			if e != nil {
				return nil, e
			}
			gi.Constraint = c
		}
		p, err := parser.New(m.replyOptions(prompt, tc.parse))
		if err != nil {
			return nil, &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
		}
		sctx := ctx
		if i > 0 {
			// The route's requestInfo (log and metrics) follows the first
			// choice; the others keep their own.
			sctx = context.WithValue(ctx, infoKey{}, &requestInfo{route: requestInfoOf(ctx).route})
		}
		g, e := s.submit(sctx, m, gi, start)
		if e != nil {
			return nil, e
		}
		run.chs[i] = chatGen{g: g, p: p, oneCall: tc.oneCall && tc.parse}
	}
	return run, nil
}

// usage is the usage of the run's choices: the prompt once, every
// choice's completion tokens.
func (run *chatRun) usage() *usage {
	u := run.chs[0].g.usage()
	for _, c := range run.chs[1:] {
		u.CompletionTokens += c.g.tokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// FinishToolCalls is the finish reason of a reply that ended by calling
// tools (OpenAI's "tool_calls").
const FinishToolCalls = "tool_calls"

// drive runs choice c to its end. Each event's text goes through the
// reply parser, and emit gets the parser's delta with the token the event
// carried (nil when none), and finish empty; its last call has the
// parser's last delta, no token, and the finish reason: FinishToolCalls
// when the reply called tools and stopped, else the generation's
// (engine.FinishStop, engine.FinishLength). A reply limited to one call
// (parallel_tool_calls: false) stops at its first, and passes on no
// other. drive returns gone when the client went away or emit failed, and
// the error that ended the generation; emit is not called again after
// either.
func (c chatGen) drive(emit func(d parser.Delta, tok *sampling.Token, finish string) error) (gone bool, err error) {
	g, p := c.g, c.p
	calls := 0
	// one keeps a one-call reply's deltas to its first call.
	one := func(d parser.Delta) parser.Delta {
		if c.oneCall && calls+len(d.ToolCalls) > 1 {
			d.ToolCalls = d.ToolCalls[:max(1-calls, 0)]
		}
		calls += len(d.ToolCalls)
		return d
	}
	for {
		ev, ok := g.next()
		if !ok {
			return true, nil
		}
		if ev.Err != nil {
			return false, ev.Err
		}
		var tok *sampling.Token
		if ev.HasToken {
			tok = &ev.Token
		}
		if emit(one(p.Add(ev.Text)), tok, "") != nil {
			return true, nil
		}
		if ev.Finish != "" {
			break
		}
		if c.oneCall && calls > 0 {
			g.finish = engine.FinishStop // one call asked for: the rest is not wanted
			break
		}
	}
	last := one(p.Finish())
	finish := g.finish
	if calls > 0 && finish == engine.FinishStop {
		finish = FinishToolCalls
	}
	if emit(last, nil, finish) != nil {
		return true, nil
	}
	return false, nil
}
