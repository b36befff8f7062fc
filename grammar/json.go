package grammar

import (
	"fmt"
	"unicode/utf8"
)

// DefaultMaxWhitespace is the whitespace the JSON grammars allow between
// tokens when a caller does not choose: one space or one newline, no
// indentation (compact JSON, as a model writes it when it does not pad; a
// larger bound lets a model fill replies with runs of blanks).
const DefaultMaxWhitespace = 1

// Digit limits of the JSON number grammar: a model cannot write digits
// forever, and every number it writes fits a float64's range.
const (
	maxIntDigits  = 19 // integer part
	maxFracDigits = 18 // fraction
	maxExpDigits  = 3  // exponent
)

// SchemaOptions controls the JSON a grammar accepts.
type SchemaOptions struct {
	// MaxWhitespace bounds the whitespace allowed after an opening
	// bracket, a comma or a colon and before a closing bracket: one
	// space, or a newline followed by at most MaxWhitespace-1 spaces and
	// tabs (no blank lines, no carriage returns); 0 allows none (compact
	// JSON). No whitespace is allowed before or after the whole value.
	MaxWhitespace int
	// AllowAdditionalDefault is what an object schema without
	// additionalProperties means: true follows JSON Schema (other keys are
	// allowed), false follows OpenAI's strict mode (only the listed
	// properties).
	AllowAdditionalDefault bool
}

// UnsupportedError reports a JSON Schema keyword (or keyword value) the
// compiler cannot enforce; the compiler refuses rather than ignore it.
type UnsupportedError struct {
	Keyword string // the keyword, e.g. "multipleOf"
	Path    string // JSON pointer of the schema that uses it, e.g. "#/properties/age"
	Reason  string // what about it is unsupported, if more than its presence
}

func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("grammar: json schema: keyword %q at %s is not supported", e.Keyword, e.Path)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// AnyJSON returns a grammar for any JSON value.
func AnyJSON(opt SchemaOptions) *Grammar {
	j := newJSONBuilder(opt)
	g, err := j.b.Grammar(j.value())
	if err != nil {
		panic("grammar: AnyJSON: " + err.Error()) // the rules are fixed; a failure is a bug here
	}
	return g
}

// JSONObject returns a grammar for any JSON object (OpenAI's json_object
// response format).
func JSONObject(opt SchemaOptions) *Grammar {
	j := newJSONBuilder(opt)
	j.value()
	g, err := j.b.Grammar("object")
	if err != nil {
		panic("grammar: JSONObject: " + err.Error())
	}
	return g
}

// Choices returns a grammar that matches exactly one of choices (vLLM's
// guided_choice).
func Choices(choices []string) (*Grammar, error) {
	if len(choices) == 0 {
		return nil, fmt.Errorf("grammar: no choices")
	}
	for i, c := range choices {
		if !utf8.ValidString(c) {
			return nil, fmt.Errorf("grammar: choice %d is not valid UTF-8", i)
		}
	}
	b := NewBuilder()
	if err := b.Define("root", literalTrie(choices)); err != nil {
		return nil, err
	}
	return b.Grammar("root")
}

// Include copies g's rules into b, each renamed with prefix, and returns a
// reference to the copy of g's root rule, so that grammars compose (a tool
// call's wrapper around its arguments' schema, say). A name the copy would
// define twice makes b.Grammar fail.
func (b *Builder) Include(prefix string, g *Grammar) *Expr {
	ids := make([]int, len(g.Rules))
	for i, r := range g.Rules {
		ids[i] = b.id(prefix + r.Name)
	}
	for _, r := range g.Rules {
		name := prefix + r.Name
		if b.Has(name) {
			if b.err == nil {
				b.err = fmt.Errorf("grammar: including rule %q: a rule of that name is already defined", name)
			}
			continue
		}
		b.Define(name, remap(r.Expr, ids))
	}
	if g.Root < 0 || g.Root >= len(ids) {
		if b.err == nil {
			b.err = fmt.Errorf("grammar: including a grammar whose root %d is out of range", g.Root)
		}
		return &Expr{Kind: Empty}
	}
	return RefTo(ids[g.Root])
}

// remap deep-copies e with rule references renumbered through ids.
func remap(e *Expr, ids []int) *Expr {
	if e == nil {
		return nil
	}
	c := *e
	if e.Kind == Ref && e.Rule >= 0 && e.Rule < len(ids) {
		c.Rule = ids[e.Rule]
	}
	if e.Ranges != nil {
		c.Ranges = append([]Range(nil), e.Ranges...)
	}
	if e.Subs != nil {
		c.Subs = make([]*Expr, len(e.Subs))
		for i, s := range e.Subs {
			c.Subs[i] = remap(s, ids)
		}
	}
	return &c
}

// jsonBuilder holds the shared JSON rules (whitespace, strings, numbers,
// any value) of a grammar under construction.
type jsonBuilder struct {
	b   *Builder
	opt SchemaOptions
}

func newJSONBuilder(opt SchemaOptions) *jsonBuilder {
	if opt.MaxWhitespace < 0 {
		opt.MaxWhitespace = 0
	}
	if opt.MaxWhitespace > MaxRepeat {
		opt.MaxWhitespace = MaxRepeat
	}
	return &jsonBuilder{b: NewBuilder(), opt: opt}
}

// define defines the rule name with e once and returns its name.
func (j *jsonBuilder) define(name string, e func() *Expr) string {
	if !j.b.Has(name) {
		j.b.Define(name, e())
	}
	return name
}

// ws is the whitespace allowed between tokens.
func (j *jsonBuilder) ws() *Expr {
	if j.opt.MaxWhitespace == 0 {
		return &Expr{Kind: Empty}
	}
	return j.b.Ref(j.define("ws", func() *Expr {
		// Nothing, one space, or a line break and its indentation: what
		// compact and pretty-printed JSON write (llama.cpp's JSON grammars
		// allow the same), not blank lines or runs of mixed blanks.
		indent := rep(Chars(Range{'\t', '\t'}, Range{' ', ' '}), 0, j.opt.MaxWhitespace-1)
		return Opt(Choice(Lit(" "), Sequence(Lit("\n"), indent)))
	}))
}

// tok returns s ws, for a comma or colon: whitespace may follow them (and
// an opening bracket, and precede a closing one) but not precede them, as
// pretty-printers write JSON. Fewer places for whitespace make smaller
// automata.
func (j *jsonBuilder) tok(s string) *Expr {
	return cat(Lit(s), j.ws())
}

// cat is Sequence with nested sequences flattened, empty parts dropped and
// adjacent literals joined.
func cat(subs ...*Expr) *Expr {
	var flat []*Expr
	for _, s := range subs {
		if s.Kind == Seq {
			flat = append(flat, s.Subs...)
		} else {
			flat = append(flat, s)
		}
	}
	return seqMerge(flat)
}

func hexDigit() *Expr { return Chars(Range{'0', '9'}, Range{'A', 'F'}, Range{'a', 'f'}) }

// char is one character of a JSON string as written: an unescaped
// character or an escape. \u escapes of surrogates are excluded, so that
// every escape is one character of the string's value.
func (j *jsonBuilder) char() *Expr {
	return j.b.Ref(j.define("char", func() *Expr {
		hex := hexDigit()
		nonSurrogate := Choice(
			Sequence(Chars(Range{'0', '9'}, Range{'A', 'C'}, Range{'E', 'F'}, Range{'a', 'c'}, Range{'e', 'f'}), rep(hex, 3, 3)),
			Sequence(Chars(Range{'D', 'D'}, Range{'d', 'd'}), Chars(Range{'0', '7'}), rep(hexDigit(), 2, 2)),
		)
		return Choice(
			NotChars(Range{0, 0x1F}, Range{'"', '"'}, Range{'\\', '\\'}),
			Sequence(Lit(`\`), Choice(
				Chars(Range{'"', '"'}, Range{'/', '/'}, Range{'\\', '\\'}, Range{'b', 'b'}, Range{'f', 'f'}, Range{'n', 'n'}, Range{'r', 'r'}, Range{'t', 't'}),
				Sequence(Lit("u"), nonSurrogate),
			)),
		)
	}))
}

// str is any JSON string.
func (j *jsonBuilder) str() *Expr {
	return j.b.Ref(j.define("string", func() *Expr {
		return Sequence(Lit(`"`), Star(j.char()), Lit(`"`))
	}))
}

// integerPart is 0 or a natural number without leading zeros.
func integerPart() *Expr {
	return Choice(Lit("0"), Sequence(Chars(Range{'1', '9'}), rep(Chars(Range{'0', '9'}), 0, maxIntDigits-1)))
}

// fraction is "." and 1 to places digits.
func fraction(places int) *Expr {
	return cat(Lit("."), rep(Chars(Range{'0', '9'}), 1, places))
}

// optFraction is an optional fraction of at most places digits.
func optFraction(places int) *Expr {
	if places == 0 {
		return &Expr{Kind: Empty}
	}
	return Opt(fraction(places))
}

func exponent() *Expr {
	return Sequence(Chars(Range{'E', 'E'}, Range{'e', 'e'}), Opt(Chars(Range{'+', '+'}, Range{'-', '-'})), rep(Chars(Range{'0', '9'}), 1, maxExpDigits))
}

// number is any JSON number (within the digit limits).
func (j *jsonBuilder) number() *Expr {
	return j.b.Ref(j.define("number", func() *Expr {
		return Sequence(Opt(Lit("-")), integerPart(), optFraction(maxFracDigits), Opt(exponent()))
	}))
}

// integer is any JSON integer written without fraction or exponent.
func (j *jsonBuilder) integer() *Expr {
	return j.b.Ref(j.define("integer", func() *Expr {
		return Sequence(Opt(Lit("-")), integerPart())
	}))
}

func (j *jsonBuilder) boolean() *Expr {
	return j.b.Ref(j.define("boolean", func() *Expr { return Choice(Lit("true"), Lit("false")) }))
}

// list returns open elem (sep elem)* close with whitespace around the
// structural tokens; the elements are optional.
func (j *jsonBuilder) list(open, close string, elem *Expr) *Expr {
	return cat(Lit(open), j.ws(),
		Opt(cat(elem, Star(cat(j.tok(","), elem)), j.ws())),
		Lit(close))
}

// value is any JSON value; it returns the rule's name.
func (j *jsonBuilder) value() string {
	name := j.define("value", func() *Expr {
		return Choice(j.b.Ref("object"), j.b.Ref("array"), j.str(), j.number(), j.boolean(), Lit("null"))
	})
	j.object()
	return name
}

// object is any JSON object (and defines array); value must be defined
// too. It returns the rule's name.
func (j *jsonBuilder) object() string {
	return j.define("object", func() *Expr {
		member := cat(j.str(), j.tok(":"), j.b.Ref("value"))
		j.define("array", func() *Expr { return j.list("[", "]", j.b.Ref("value")) })
		return j.list("{", "}", member)
	})
}

// rep is Rep that writes the trivial counts simply: {0,0} as empty and
// {1,1} as the expression itself.
func rep(e *Expr, min, max int) *Expr {
	switch {
	case max == 0:
		return &Expr{Kind: Empty}
	case min == 1 && max == 1:
		return e
	}
	return Rep(e, min, max)
}
