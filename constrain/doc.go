// Package constrain compiles a grammar (package grammar) against a model's
// vocabulary into a token-level matcher: per step and per sequence it
// yields a bitmask of the tokens allowed next and advances on the token
// chosen.
//
// # Automaton
//
// Each rule becomes a deterministic automaton over bytes: literals are
// their UTF-8 bytes, character classes the byte-range sequences of their
// code points' UTF-8 encodings (so a code point may be split across tokens
// and a negated class never admits invalid UTF-8), and references to rules
// that are not recursive and not large are copied in place. The remaining
// references are call edges, and a bounded repetition too large to copy
// ({m,n} with large n) is a counter state whose count lives in the stack
// frame. A grammar.Automaton expression is built in place, a node per
// state and its edges' expressions between them. States from which the
// rule cannot end are removed, so every stack the matcher holds can be
// completed.
//
// A matcher holds a set of stacks (a pushdown automaton run
// nondeterministically): each is a top frame (a state with byte
// transitions) over a chain of return frames shared between stacks. A byte
// moves each top, then expands it: calls push, rule ends pop, until every
// top can read a byte again. An empty stack means the root has ended: then
// only end of generation is allowed, and a token running past the end is
// not.
//
// # Ambiguity
//
// An ambiguous grammar (root ::= x "b"; x ::= "a" x | "a" x x | "") may
// parse a text in exponentially many ways, each a stack, and a step's work
// grows with them. A Matcher holds at most 512 stacks: Accept refuses a
// token that would leave more open with ErrAmbiguous. Compiled.Probe finds
// most such grammars before a generation starts: it walks the automaton
// byte by byte from the start (256 bytes at most per walk; the lowest
// byte allowed, the highest, two seeded random ones, the one leaving the
// most stacks) and reports the first text after which a Matcher would
// hold more than 512, as an *AmbiguousError naming the text and the rule.
// Its work is bounded (2^18 frame expansions, 20 ms), and past its budget
// it reports nothing; a grammar whose explosion lies further from the
// start, or off every walk, is still stopped by Accept.
//
// # Masks
//
// The vocabulary's tokens sit in a byte trie stored in depth-first order,
// so a walk skips a rejected prefix's whole subtree in one jump. The mask
// of a top is computed once, on first use, by walking the trie from the
// top and the frame below it (two frames when that one is a counter: a
// counter's count enters the key only as how many more bodies it needs and
// allows, clamped past the longest token), the rest of the stack unknown:
// tokens consumed within those frames are accepted whatever lies below,
// the others rejected, except at the trie nodes where the frames' bottom
// rule may end, whose subtrees are walked again per mask from the actual
// continuation (rare: the caller's rule ends only at a closing bracket or
// the end of the root). A state from which every text code point leads to
// states that read every text code point again (a JSON string's interior,
// free text, the first characters of a string with a minimum length or
// whose first characters are checked), or a counter's body that every text
// code point completes with room left, accepts the text slice (the tokens
// made only of such code points, 97% of Qwen3's) as one precomputed
// bitset, and its walk covers only the rest trie; so does a state that
// reads exactly k more text code points, whatever they are, before a
// byte that is not text (a chain of states counting a short string's
// characters: its text-slice tokens are those of at most k code points,
// precomputed per k). Elsewhere a walk takes a
// trie subtree at once where one of its tops reads every byte sequence
// below it by its own transitions (a class repeated, as in a pattern or
// a format; the trie keeps each node's bytes and height below it). A
// mask keyed by the frame below the top names that frame by its state and
// count, not by where it sits in the stack, so sequences share it. A warm
// mask is then the union of a few cached sets (a copy of 19 KB at most
// each) plus those rare walks; fills do not allocate in steady state.
//
// Large expressions the grammar uses in several places are compiled once
// as rules of their own; small non-recursive rules are copied into their
// callers. Compile does only the automata (milliseconds); the per-state
// sets fill lazily, once per state and context, and are shared by every
// Matcher of the Compiled, so the first masks of a new grammar cost one
// trie walk each (0.1 to tens of milliseconds). Cache keeps compiled
// grammars by their source text. docs/PERF.md has the measured costs.
package constrain
