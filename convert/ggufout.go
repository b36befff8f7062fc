package convert

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

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

// encodeHeader encodes the part of a GGUF version 3 file that precedes the
// tensor data: magic, version, counts, the metadata pairs, the tensor infos
// (with offsets set by layout), and zero padding up to the data section.
// It lays out the file exactly as gguf.Writer does, so that tensor data
// can be streamed after it rather than held in memory.
func encodeHeader(kvs []kv, tensors []outTensor) ([]byte, error) {
	e := &headerEncoder{}
	e.raw([]byte(gguf.Magic))
	e.u32(3)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	seen := map[string]bool{}
	for _, p := range kvs {
		if seen[p.key] {
			return nil, fmt.Errorf("gguf: metadata key %q set twice", p.key)
		}
		seen[p.key] = true
		v, err := gguf.MakeValue(p.val)
		if err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", p.key, err)
		}
		e.str(p.key)
		e.u32(uint32(v.Type))
		if err := e.value(v.Any()); err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", p.key, err)
		}
	}
	for _, t := range tensors {
		if len(t.shape) == 0 || len(t.shape) > gguf.MaxDims {
			return nil, fmt.Errorf("gguf: tensor %q: %d dimensions, want 1 to %d", t.name, len(t.shape), gguf.MaxDims)
		}
		e.str(t.name)
		e.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(t.offset)
	}
	if r := uint64(e.buf.Len()) % gguf.DefaultAlignment; r != 0 {
		e.raw(make([]byte, gguf.DefaultAlignment-r))
	}
	return e.buf.Bytes(), nil
}

// headerEncoder appends little-endian values to a buffer.
type headerEncoder struct {
	buf     bytes.Buffer
	scratch [8]byte
}

func (e *headerEncoder) raw(b []byte) { e.buf.Write(b) }
func (e *headerEncoder) u8(v uint8)   { e.buf.WriteByte(v) }
func (e *headerEncoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.scratch[:], v)
	e.buf.Write(e.scratch[:2])
}
func (e *headerEncoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.scratch[:], v)
	e.buf.Write(e.scratch[:4])
}
func (e *headerEncoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.scratch[:], v)
	e.buf.Write(e.scratch[:8])
}
func (e *headerEncoder) str(s string) { e.u64(uint64(len(s))); e.buf.WriteString(s) }

func (e *headerEncoder) value(x any) error {
	switch x := x.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case gguf.Array:
		e.u32(uint32(x.Elem))
		e.u64(uint64(x.Len()))
		switch s := x.Values.(type) {
		case []uint8:
			e.raw(s)
		case []int8:
			return each(e, s)
		case []uint16:
			return each(e, s)
		case []int16:
			return each(e, s)
		case []uint32:
			return each(e, s)
		case []int32:
			return each(e, s)
		case []float32:
			return each(e, s)
		case []bool:
			return each(e, s)
		case []string:
			return each(e, s)
		case []uint64:
			return each(e, s)
		case []int64:
			return each(e, s)
		case []float64:
			return each(e, s)
		case []gguf.Array:
			return each(e, s)
		default:
			return fmt.Errorf("unsupported array %T", x.Values)
		}
	default:
		return fmt.Errorf("unsupported value %T", x)
	}
	return nil
}

func each[T any](e *headerEncoder, s []T) error {
	for _, x := range s {
		if err := e.value(x); err != nil {
			return err
		}
	}
	return nil
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
