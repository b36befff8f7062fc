// Package sampling chooses the next token from a position's logits.
//
// A Sampler turns logits into a token under one request's Params, shared by
// the command line and the OpenAI-compatible server. It is kept apart from
// the forward pass: a backend hands over either all the logits of a
// position (Sampler.Sample) or a subset of candidates it computed itself,
// such as its top k (Sampler.SampleCandidates).
//
// # Order of operations
//
// The steps follow vLLM:
//
//  1. log-probabilities, when asked for, are those of the logits as the
//     model gave them: the log-softmax of the raw logits, before any of
//     the steps below (vLLM's default, "raw_logprobs");
//  2. the logit bias is added;
//  3. the repetition penalty (prompt and generated tokens), then the
//     frequency and presence penalties (generated tokens) are applied;
//  4. with temperature 0, or top_k 1, the largest logit is chosen (the
//     lowest id among ties) and no random number is drawn;
//  5. otherwise the logits are divided by the temperature, and top_k,
//     top_p and min_p keep the most likely tokens, in that order, as Hugging
//     Face transformers and vLLM's first engine do: top_p is measured over
//     the tokens top_k kept, and min_p relative to the most likely token
//     (vLLM's V1 engine applies min_p first, which differs only when both
//     top_p and min_p are set);
//  6. the token is drawn from the softmax over the tokens kept, with one
//     random number.
//
// Ranks are always by logit, ties going to the lower id, so every filter
// keeps a prefix of the same order. Tokens whose probability is below
// e**-30 (about 1e-13) times that of the most likely token are treated as
// impossible: together they weigh less than the rounding error of a float32
// sum over the vocabulary. NaN logits are never chosen and -Inf logits are
// excluded; when some logit is +Inf the first such token is chosen, and when
// nothing is left (every logit NaN or -Inf) the choice falls back to Argmax.
//
// # Reproducibility
//
// The random numbers come from math/rand/v2's PCG, seeded from
// Params.Seed. Every step uses IEEE arithmetic written so that the compiler
// cannot fuse it into multiply-adds, and no result depends on map order, so
// the same seed and the same logits give the same token on every platform
// and backend. Sample with all the logits and SampleCandidates with the
// top-k candidates give the same token when TopK is k (and no penalty or
// bias needs the other tokens).
package sampling

// Argmax returns the index of the largest value, the lowest index among
// ties. NaN values are never chosen unless all values are NaN.
func Argmax(logits []float32) int32 {
	m := maxOf(logits) // -Inf if all are NaN
	for i, v := range logits {
		if v == m {
			return int32(i)
		}
	}
	return 0
}
