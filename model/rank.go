package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"inferno/arch"
	"inferno/gguf"
	"inferno/numfmt"
)

// Qwen3-Reranker's prompt, from its model card: a fixed system message,
// the user turn "<Instruct>: {instruction}\n<Query>: {query}\n<Document>:
// {document}" and the assistant's turn opened after an empty think block,
// where the model answers "yes" or "no". llama.cpp's convert_hf_to_gguf.py
// writes the same text, with DefaultRerankInstruction in place of
// {instruction}, as tokenizer.chat_template.rerank.
const (
	rerankPrefix = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. " +
		"Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"
	rerankUser   = "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}"
	rerankSuffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
)

// DefaultRerankInstruction is the instruction a rerank prompt carries when
// the request names none (Qwen3-Reranker's model card's default).
const DefaultRerankInstruction = "Given a web search query, retrieve relevant passages that answer the query"

// GGUF keys of a reranker, as llama.cpp's converter writes them.
const (
	// rerankTemplateKey is the prompt with {query} and {document} to fill
	// in (llama-server's format_prompt_rerank).
	rerankTemplateKey = "tokenizer.chat_template.rerank"
	// rerankInstructKey is the same with {instruction} too, which
	// llama.cpp's proposed instruction support writes beside it.
	rerankInstructKey = "tokenizer.chat_template.rerank_instruct"
	// clsOutput is the classifier head: the rows of the output head for
	// the tokens of the labels (name.classifier.output_labels).
	clsOutput     = "cls.output.weight"
	clsOutputBias = "cls.output.bias"
)

// Rank reports whether the model is a reranker (rank pooling, as its
// file's pooling_type or --pooling says): it scores query and document
// pairs (RerankTokens, RankHead) instead of generating or embedding.
func (m *Model) Rank() bool { return m.Arch.Hyper().Pooling == arch.PoolRank }

// RerankTokens returns the ids a reranker scores for document against
// query under instruction ("": DefaultRerankInstruction): the file's
// rerank template (tokenizer.chat_template.rerank) with the texts in
// place of {query} and {document}, or where the file has none
// Qwen3-Reranker's prompt. The whole prompt is tokenized as one text,
// special-token text included, as llama-server and the model card's
// transformers code do. A template that cannot take an instruction (one
// without {instruction} nor the default instruction's text to replace)
// refuses one.
func (m *Model) RerankTokens(query, document, instruction string) ([]int32, error) {
	tmpl, err := m.rerankTemplate(instruction != "")
	if err != nil {
		return nil, err
	}
	if instruction == "" {
		instruction = DefaultRerankInstruction
	}
	// One pass: text a client sends is never read as a placeholder.
	r := strings.NewReplacer("{instruction}", instruction, "{query}", query, "{document}", document)
	return m.Tokenizer.Encode(r.Replace(tmpl)), nil
}

// rerankTemplate returns the model's rerank prompt with {query},
// {document} and, when instructed is set, {instruction} to fill in.
func (m *Model) rerankTemplate(instructed bool) (string, error) {
	if t, err := m.File.String(rerankInstructKey); err == nil && instructed {
		return t, nil
	}
	t, err := m.File.String(rerankTemplateKey)
	if err != nil {
		return rerankPrefix + rerankUser + rerankSuffix, nil
	}
	if strings.Contains(t, "{instruction}") || !instructed {
		return t, nil
	}
	if !strings.Contains(t, DefaultRerankInstruction) {
		return "", fmt.Errorf("model: the file's rerank template (%s) has no instruction to replace", rerankTemplateKey)
	}
	return strings.Replace(t, DefaultRerankInstruction, "{instruction}", 1), nil
}

// RankHead is a reranker's classifier head: the output head's rows of the
// tokens "yes" and "no". A sequence's score is the softmax of the two
// logits at its last position, the probability of "yes":
// sigmoid(l_yes - l_no), in [0, 1].
type RankHead struct {
	yes, no []float32 // the rows, dequantized
	bias    [2]float32
}

// RankHead reads the model's classifier head: cls.output.weight, the
// two rows (labels "yes" and "no", in the order
// name.classifier.output_labels gives) llama.cpp's converter takes from a
// Qwen3-Reranker's lm_head, with cls.output.bias if the file has one; or,
// in a file without it (a Qwen3-Reranker converted as a language model and
// run with --pooling rank), the output head's rows of the tokens "yes"
// and "no".
func (m *Model) RankHead() (*RankHead, error) {
	c := m.Arch.Hyper()
	t, ok := m.File.Tensor(clsOutput)
	if !ok {
		return m.lmRankHead()
	}
	labels := []string{"yes", "no"}
	if key := c.Arch + ".classifier.output_labels"; hasKey(m.File, key) {
		var err error
		if labels, err = m.File.Strings(key); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	yes, no := 0, 1
	switch {
	case len(labels) == 2 && labels[0] == "yes" && labels[1] == "no":
	case len(labels) == 2 && labels[0] == "no" && labels[1] == "yes":
		yes, no = 1, 0
	default:
		return nil, fmt.Errorf("model: classifier labels %q: inferno runs yes/no rerankers (labels \"yes\" and \"no\")", labels)
	}
	w, err := arch.NewWeight(t, 2, c.Hidden)
	if err != nil {
		return nil, fmt.Errorf("model: the classifier head: %w", err)
	}
	h := &RankHead{}
	if h.yes, err = dequantize(w, yes); err == nil {
		h.no, err = dequantize(w, no)
	}
	if err != nil {
		return nil, err
	}
	if b, ok := m.File.Tensor(clsOutputBias); ok {
		if len(b.Shape) != 1 || b.Shape[0] != 2 || b.Type != gguf.TensorF32 {
			return nil, fmt.Errorf("model: %s: shape %v of %s, want [2] of F32", clsOutputBias, b.Shape, b.Type)
		}
		var v [2]float32
		if err := numfmt.DequantizeRow(v[:], b.Data, b.Type, 2); err != nil {
			return nil, fmt.Errorf("model: %s: %w", clsOutputBias, err)
		}
		h.bias = [2]float32{v[yes], v[no]}
	}
	return h, nil
}

// lmRankHead is the head of a reranker without cls.output: the rows of
// "yes" and "no" of the output head.
func (m *Model) lmRankHead() (*RankHead, error) {
	out := m.Arch.Tensors().Output
	h := &RankHead{}
	for _, r := range []struct {
		tok string
		dst *[]float32
	}{{"yes", &h.yes}, {"no", &h.no}} {
		id, ok := m.Tokenizer.TokenID(r.tok)
		if !ok || int(id) >= out.Rows {
			return nil, fmt.Errorf("model: a reranker without %s scores the tokens \"yes\" and \"no\"; the vocabulary has no token %q", clsOutput, r.tok)
		}
		v, err := dequantize(out, int(id))
		if err != nil {
			return nil, err
		}
		*r.dst = v
	}
	return h, nil
}

// dequantize returns row r of w as float32.
func dequantize(w *arch.Weight, r int) ([]float32, error) {
	v := make([]float32, w.Cols)
	if err := numfmt.DequantizeRow(v, w.Row(r), w.Type, w.Cols); err != nil {
		return nil, fmt.Errorf("model: row %d of %s: %w", r, w.Name, err)
	}
	return v, nil
}

// Logits returns the head's two logits, "yes" and "no", for the final
// normed hidden state hidden, computed in float64.
func (h *RankHead) Logits(hidden []float32) (yes, no float64, err error) {
	if len(hidden) != len(h.yes) {
		return 0, 0, fmt.Errorf("model: a hidden state of %d values for a classifier head of %d", len(hidden), len(h.yes))
	}
	yes, no = float64(h.bias[0]), float64(h.bias[1])
	for i, x := range hidden {
		yes += float64(x) * float64(h.yes[i])
		no += float64(x) * float64(h.no[i])
	}
	return yes, no, nil
}

// Score returns the reranker's output for the final normed hidden state
// of a sequence's last position: two values, the probability of "yes",
// sigmoid(l_yes - l_no), and the logits' difference l_yes - l_no itself
// (which orders documents whose probabilities round to the same float32).
// It is the pooling of a rank model's embedding requests
// (scheduler.Config.Pool).
func (h *RankHead) Score(hidden []float32) ([]float32, error) {
	yes, no, err := h.Logits(hidden)
	if err != nil {
		return nil, err
	}
	d := yes - no
	if math.IsNaN(d) || math.IsInf(float64(float32(d)), 0) {
		return nil, errors.New("model: the reranker's logits are not finite")
	}
	return []float32{float32(Sigmoid(d)), float32(d)}, nil
}

// Sigmoid returns 1/(1+e^-x), the softmax of (x, 0)'s first value.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func hasKey(f *gguf.File, key string) bool {
	_, ok := f.Value(key)
	return ok
}
