package convert

import (
	"bytes"
	"fmt"
	"io"

	"inferno/gguf"
)

// kv is one metadata pair; val is any type gguf.MakeValue accepts.
type kv struct {
	key string
	val any
}

// outTensor describes one tensor of the output file.
type outTensor struct {
	name   string
	typ    gguf.TensorType
	shape  []uint64 // ggml order: shape[0] varies fastest
	size   uint64   // bytes of data
	offset uint64   // from the start of the data section
}

// layout assigns each tensor its offset in the data section, each aligned
// to gguf.DefaultAlignment, and returns the section's size.
func layout(tensors []outTensor) uint64 {
	var off uint64
	for i := range tensors {
		tensors[i].offset = off
		off = alignUp(off+tensors[i].size, gguf.DefaultAlignment)
	}
	return off
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// encodeHeader encodes the part of the GGUF file that precedes the tensor
// data (metadata, tensor infos with the offsets layout gave them, padding)
// with gguf.Writer, so that the data can be streamed after it rather than
// held in memory.
func encodeHeader(kvs []kv, tensors []outTensor) ([]byte, error) {
	w := gguf.NewWriter()
	for _, p := range kvs {
		if err := w.Set(p.key, p.val); err != nil {
			return nil, err
		}
	}
	for _, t := range tensors {
		size, err := w.AddTensorInfo(t.name, t.typ, t.shape)
		if err != nil {
			return nil, err
		}
		if size != t.size {
			return nil, fmt.Errorf("gguf: tensor %q: %d bytes planned, its type and shape need %d", t.name, t.size, size)
		}
	}
	var b bytes.Buffer
	if _, err := w.WriteHeader(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// padWriter writes to w and counts the bytes, so that padding can be added
// to reach an alignment.
type padWriter struct {
	w io.Writer
	n uint64
}

func (p *padWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += uint64(n)
	return n, err
}

var zeros [gguf.DefaultAlignment]byte

// pad writes zero bytes up to the next multiple of gguf.DefaultAlignment.
func (p *padWriter) pad() error {
	if r := p.n % gguf.DefaultAlignment; r != 0 {
		_, err := p.Write(zeros[:gguf.DefaultAlignment-r])
		return err
	}
	return nil
}
