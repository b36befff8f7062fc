// Package rerankfile rewrites a Qwen3 GGUF model as llama.cpp's
// convert_hf_to_gguf.py writes a Qwen3-Reranker, for tests: the same
// model with qwen3.pooling_type 4 (rank), qwen3.classifier.output_labels
// ["yes", "no"], the rerank prompt as tokenizer.chat_template.rerank
// (listed in tokenizer.chat_templates), and cls.output.weight, the output
// head's rows of the tokens "yes" and "no" in the head's encoding.
package rerankfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"inferno/gguf"
)

// Template is the rerank prompt llama.cpp's converter writes.
const Template = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. " +
	"Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n" +
	"<|im_start|>user\n<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n<Query>: {query}\n<Document>: {document}<|im_end|>\n" +
	"<|im_start|>assistant\n<think>\n\n</think>\n\n"

// Options change what Write writes.
type Options struct {
	// NoYes writes the labels, and the head's rows, in the order "no",
	// "yes".
	NoYes bool
	// Bias adds cls.output.bias (F32, in the labels' order).
	Bias []float32
}

// Write writes src, a Qwen3 model whose vocabulary has the tokens "yes"
// and "no", as a reranker to w.
func Write(w io.Writer, src *gguf.File, o Options) error {
	out := gguf.NewWriter()
	for _, kv := range src.KVs {
		if kv.Key == "qwen3.pooling_type" {
			continue
		}
		if err := out.Set(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	labels := []string{"yes", "no"}
	if o.NoYes {
		labels = []string{"no", "yes"}
	}
	for _, kv := range []struct {
		key string
		v   any
	}{
		{"qwen3.pooling_type", uint32(4)},
		{"qwen3.classifier.output_labels", labels},
		{"tokenizer.chat_template.rerank", Template},
		{"tokenizer.chat_templates", []string{"rerank"}},
	} {
		if err := out.Set(kv.key, kv.v); err != nil {
			return err
		}
	}
	head, ok := src.Tensor("output.weight")
	if !ok {
		head, _ = src.Tensor("token_embd.weight")
	}
	if head == nil || len(head.Shape) != 2 {
		return errors.New("rerankfile: no output head")
	}
	tokens, err := src.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return err
	}
	rowBytes := uint64(len(head.Data)) / head.Shape[1]
	var cls []byte
	for _, l := range labels {
		id := -1
		for i, t := range tokens {
			if t == l {
				id = i
				break
			}
		}
		if id < 0 {
			return fmt.Errorf("rerankfile: no token %q", l)
		}
		cls = append(cls, head.Data[uint64(id)*rowBytes:uint64(id+1)*rowBytes]...)
	}
	for _, t := range src.Tensors {
		if err := out.AddTensor(t.Name, t.Type, t.Shape, t.Data); err != nil {
			return err
		}
	}
	if err := out.AddTensor("cls.output.weight", head.Type, []uint64{head.Shape[0], 2}, cls); err != nil {
		return err
	}
	if o.Bias != nil {
		b := make([]byte, 4*len(o.Bias))
		for i, x := range o.Bias {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		if err := out.AddTensor("cls.output.bias", gguf.TensorF32, []uint64{uint64(len(o.Bias))}, b); err != nil {
			return err
		}
	}
	_, err = out.WriteTo(w)
	return err
}
