package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// A Writer builds a GGUF version 3 file: add metadata and tensors, then
// call WriteTo. Tensors are written in the order they were added.
//
// A file too large to hold in memory is written in two parts: tensors
// added with AddTensorInfo have no data, WriteHeader writes everything
// before the data section, and the caller then writes each tensor's bytes,
// in order, each padded with zeros to the alignment.
type Writer struct {
	// Alignment of the tensor data; DefaultAlignment when zero. When it is
	// not the default, general.alignment is written too. A general.alignment
	// set with Set is used instead when Alignment is zero, and must equal it
	// otherwise.
	Alignment uint64

	kvs     []KV
	keys    map[string]bool
	tensors []TensorInfo
	sizes   []uint64 // encoded bytes of each tensor
	names   map[string]bool
	nodata  bool // a tensor was added with AddTensorInfo
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{keys: map[string]bool{}, names: map[string]bool{}}
}

// Set adds the metadata pair key = x; x is any type MakeValue accepts.
func (w *Writer) Set(key string, x any) error {
	v, ok := x.(Value)
	if !ok {
		var err error
		if v, err = MakeValue(x); err != nil {
			return fmt.Errorf("gguf: metadata %q: %w", key, err)
		}
	}
	if w.keys[key] {
		return fmt.Errorf("gguf: metadata key %q set twice", key)
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, KV{key, v})
	return nil
}

// AddTensor adds a tensor of type typ and shape (ne0 first) whose encoded
// bytes are data. The size of data must match the type and shape.
func (w *Writer) AddTensor(name string, typ TensorType, shape []uint64, data []byte) error {
	size, err := w.tensorSize(name, typ, shape)
	if err != nil {
		return err
	}
	if uint64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, shape %v of %s needs %d", name, len(data), shape, typ, size)
	}
	w.add(TensorInfo{Name: name, Type: typ, Shape: append([]uint64(nil), shape...), Data: data}, size)
	return nil
}

// AddTensorInfo adds a tensor of type typ and shape whose data the caller
// writes after WriteHeader. It returns the tensor's size in bytes.
func (w *Writer) AddTensorInfo(name string, typ TensorType, shape []uint64) (uint64, error) {
	size, err := w.tensorSize(name, typ, shape)
	if err != nil {
		return 0, err
	}
	w.add(TensorInfo{Name: name, Type: typ, Shape: append([]uint64(nil), shape...)}, size)
	w.nodata = true
	return size, nil
}

// tensorSize checks a new tensor's name and shape and returns its size.
func (w *Writer) tensorSize(name string, typ TensorType, shape []uint64) (uint64, error) {
	if w.names[name] {
		return 0, fmt.Errorf("gguf: tensor %q added twice", name)
	}
	if len(shape) == 0 || len(shape) > MaxDims {
		return 0, fmt.Errorf("gguf: tensor %q: %d dimensions, want 1 to %d", name, len(shape), MaxDims)
	}
	n, ok := shapeElements(shape)
	if !ok {
		return 0, fmt.Errorf("gguf: tensor %q: shape %v is too large", name, shape)
	}
	size, ok := typ.RowBytes(n)
	if !ok || shape[0]%uint64(typ.BlockSize()) != 0 {
		return 0, fmt.Errorf("gguf: tensor %q: shape %v does not fit type %s", name, shape, typ)
	}
	return size, nil
}

func (w *Writer) add(t TensorInfo, size uint64) {
	w.names[t.Name] = true
	w.tensors = append(w.tensors, t)
	w.sizes = append(w.sizes, size)
}

// WriteTo writes the file to out. It fails if a tensor was added with
// AddTensorInfo (use WriteHeader).
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.nodata {
		return 0, fmt.Errorf("gguf: WriteTo with tensors added by AddTensorInfo: use WriteHeader and write their data")
	}
	e := encoder{w: bufio.NewWriterSize(out, 1<<20)}
	align, err := w.header(&e)
	if err != nil {
		return e.n, err
	}
	for _, t := range w.tensors {
		e.raw(t.Data)
		e.pad(align)
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// WriteHeader writes everything before the data section, padded to the
// alignment; the tensors' data follows, as the Writer's doc says.
func (w *Writer) WriteHeader(out io.Writer) (int64, error) {
	e := encoder{w: bufio.NewWriterSize(out, 1<<20)}
	if _, err := w.header(&e); err != nil {
		return e.n, err
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// header encodes the header into e and returns the alignment.
func (w *Writer) header(e *encoder) (uint64, error) {
	align := w.Alignment
	if w.keys["general.alignment"] {
		// The reader pads by this value, so the writer must too.
		var v Value
		for _, kv := range w.kvs {
			if kv.Key == "general.alignment" {
				v = kv.Value
			}
		}
		a, ok := v.AsInt()
		if !ok || a <= 0 {
			return 0, fmt.Errorf("gguf: metadata general.alignment %v is not a positive integer", v.Any())
		}
		if align != 0 && uint64(a) != align {
			return 0, fmt.Errorf("gguf: metadata general.alignment %d differs from the Writer's alignment %d", a, align)
		}
		align = uint64(a)
	}
	if align == 0 {
		align = DefaultAlignment
	}
	if align&(align-1) != 0 || align > maxAlignment {
		return 0, fmt.Errorf("gguf: alignment %d is not a power of two up to %d", align, maxAlignment)
	}
	kvs := w.kvs
	if align != DefaultAlignment && !w.keys["general.alignment"] {
		kvs = append(kvs[:len(kvs):len(kvs)], KV{"general.alignment", Value{TypeUint32, uint32(align)}})
	}
	e.raw([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		if err := e.value(kv.Value); err != nil {
			return 0, fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	var off uint64
	for i, t := range w.tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(off)
		off = alignUp(off+w.sizes[i], align)
	}
	e.pad(align)
	return align, e.err
}

type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(b)
	e.n += int64(n)
}

func (e *encoder) pad(align uint64) {
	if r := uint64(e.n) % align; r != 0 {
		e.raw(make([]byte, align-r))
	}
}

func (e *encoder) u8(v uint8)   { e.raw([]byte{v}) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.raw(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.raw(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.raw(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

func (e *encoder) value(v Value) error {
	switch x := v.v.(type) {
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
	case Array:
		return e.array(x)
	default:
		return fmt.Errorf("unsupported value %T", x)
	}
	return nil
}

func (e *encoder) array(a Array) error {
	e.u32(uint32(a.Elem))
	e.u64(uint64(a.Len()))
	switch s := a.Values.(type) {
	case []uint8:
		e.raw(s)
	case []int8:
		for _, x := range s {
			e.u8(uint8(x))
		}
	case []uint16:
		for _, x := range s {
			e.u16(x)
		}
	case []int16:
		for _, x := range s {
			e.u16(uint16(x))
		}
	case []uint32:
		for _, x := range s {
			e.u32(x)
		}
	case []int32:
		for _, x := range s {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range s {
			e.u32(math.Float32bits(x))
		}
	case []bool:
		for _, x := range s {
			e.value(Value{TypeBool, x})
		}
	case []string:
		for _, x := range s {
			e.str(x)
		}
	case []uint64:
		for _, x := range s {
			e.u64(x)
		}
	case []int64:
		for _, x := range s {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range s {
			e.u64(math.Float64bits(x))
		}
	case []Array:
		for _, x := range s {
			if err := e.array(x); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported array %T", a.Values)
	}
	return nil
}
