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
// frame. States from which the rule cannot end are removed, so every stack
// the matcher holds can be completed.
//
// A matcher holds a set of stacks (a pushdown automaton run
// nondeterministically): each is a top frame (a state with byte
// transitions) over a chain of return frames shared between stacks. A byte
// moves each top, then expands it: calls push, rule ends pop, until every
// top can read a byte again. An empty stack means the root has ended: then
// only end of generation is allowed, and a token running past the end is
// not.
//
// # Masks
//
// The vocabulary's tokens sit in a byte trie stored in depth-first order,
// so a walk skips a rejected prefix's whole subtree in one jump. For each
// automaton state, on the first mask asked there, a walk from that state
// alone sorts the tokens into those consumed within the rule (accepted
// whatever lies below), those rejected, and the trie nodes at which the
// rule may end: only those subtrees depend on the stack below and are
// walked again per mask, from the caller's continuation. A state that
// loops on every text code point (a JSON string's interior, free text)
// accepts the text slice (the tokens made only of such code points, 97% of
// Qwen3's) at once, and its walk covers only the rest trie. A mask is then
// the union of the cached sets of the current tops plus the walks of their
// rule-end subtrees; fills do not allocate once the states are cached.
//
// Compile does only the automaton; the per-state sets are filled lazily,
// once per state, and shared by every Matcher of the Compiled. Cache keeps
// compiled grammars by their source text. docs/PERF.md has the costs.
package constrain
