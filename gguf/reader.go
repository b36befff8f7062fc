package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"

	"inferno/internal/mmap"
)

// MaxDims is the largest number of dimensions a tensor may have (ggml's GGML_MAX_DIMS).
const MaxDims = 4

// maxArrayDepth bounds nested metadata arrays so corrupt input cannot recurse without end.
const maxArrayDepth = 8

// maxAlignment is the largest general.alignment accepted.
const maxAlignment = 1 << 20

// maxElements bounds the element count of one tensor (2^48), so that sizes
// computed from a shape cannot overflow.
const maxElements = 1 << 48

// maxPrealloc caps slice capacities taken from counts in the file: a corrupt
// count must not make a large allocation before the data runs out.
const maxPrealloc = 1 << 12

// ErrTruncated is wrapped by errors about input that ends too soon.
var ErrTruncated = errors.New("unexpected end of data")

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor: its name, element type, shape and where
// its data lies.
type TensorInfo struct {
	Name string
	Type TensorType
	// Shape lists the dimensions as ggml does: Shape[0] (ne0) varies
	// fastest. A 2-D weight of Shape {in, out} is out rows of in values.
	Shape []uint64
	// Offset is the position of the data relative to the data section.
	Offset uint64
	// Data is the tensor's encoded bytes, a view into the mapped file.
	Data []byte
}

// Elements returns the number of elements (the product of Shape).
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is a parsed GGUF file. Tensor data slices point into the memory
// mapping (Open) or the caller's buffer (Parse); they stay valid until Close.
type File struct {
	Version    uint32
	KVs        []KV
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // absolute file offset of the data section

	kv      map[string]int
	tensors map[string]int
	unmap   func() error
}

// Open memory-maps the GGUF file at path and parses it. The weights are not
// copied: tensor data refers to the mapping until Close.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s: not a regular file", path)
	}
	size := st.Size()
	if size < 24 {
		return nil, fmt.Errorf("gguf: %s: file is %d bytes, too small for a GGUF header: %w", path, size, ErrTruncated)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("gguf: %s: file too large to map", path)
	}
	data, unmap, err := mmap.Map(fh, int(size), false)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	f.unmap = unmap
	return f, nil
}

// Close releases the memory mapping. Tensor data must not be used afterwards.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	return err
}

// Parse parses a whole GGUF file held in data. Tensor data slices alias data.
func Parse(data []byte) (*File, error) {
	d := decoder{buf: data}
	magic := d.bytes(4)
	if d.err != nil {
		return nil, fmt.Errorf("gguf: reading magic: %w", d.err)
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("gguf: bad magic %q, want %q: not a GGUF file", magic, Magic)
	}
	f := &File{Version: d.u32(), Alignment: DefaultAlignment}
	if d.err != nil {
		return nil, fmt.Errorf("gguf: reading version: %w", d.err)
	}
	switch {
	case f.Version == 2 || f.Version == 3:
	case f.Version == 1:
		return nil, fmt.Errorf("gguf: version 1 files are not supported (re-convert the model)")
	case f.Version != 0 && bits.ReverseBytes32(f.Version) <= 3:
		return nil, fmt.Errorf("gguf: big-endian files are not supported")
	default:
		return nil, fmt.Errorf("gguf: unsupported version %d", f.Version)
	}
	nTensors, nKV := d.u64(), d.u64()
	if d.err != nil {
		return nil, fmt.Errorf("gguf: reading header counts: %w", d.err)
	}
	// Each KV takes at least 8+0+4+1 bytes, each tensor info 8+4+4+8.
	if nKV > uint64(d.remaining())/13 {
		return nil, fmt.Errorf("gguf: header claims %d metadata pairs, more than the file can hold: %w", nKV, ErrTruncated)
	}
	if nTensors > uint64(d.remaining())/24 {
		return nil, fmt.Errorf("gguf: header claims %d tensors, more than the file can hold: %w", nTensors, ErrTruncated)
	}

	f.KVs = make([]KV, 0, min(nKV, maxPrealloc))
	f.kv = make(map[string]int, min(nKV, maxPrealloc))
	for i := uint64(0); i < nKV; i++ {
		key := d.str()
		if d.err != nil {
			return nil, fmt.Errorf("gguf: metadata pair %d: key: %w", i, d.err)
		}
		typ := ValueType(d.u32())
		v := d.value(typ, 0)
		if d.err != nil {
			return nil, fmt.Errorf("gguf: metadata %q: %w", key, d.err)
		}
		if _, dup := f.kv[key]; dup {
			return nil, fmt.Errorf("gguf: metadata key %q appears twice", key)
		}
		f.kv[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{key, v})
	}
	if v, ok := f.Value("general.alignment"); ok {
		a, ok := v.AsInt()
		if !ok || a <= 0 || a&(a-1) != 0 || a > maxAlignment {
			return nil, fmt.Errorf("gguf: general.alignment %v is not a power of two", v.Any())
		}
		f.Alignment = uint64(a)
	}

	f.Tensors = make([]TensorInfo, 0, min(nTensors, maxPrealloc))
	f.tensors = make(map[string]int, min(nTensors, maxPrealloc))
	for i := uint64(0); i < nTensors; i++ {
		t, err := d.tensorInfo()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %d: %w", i, err)
		}
		if _, dup := f.tensors[t.Name]; dup {
			return nil, fmt.Errorf("gguf: tensor %q appears twice", t.Name)
		}
		f.tensors[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}

	f.DataOffset = alignUp(uint64(d.off), f.Alignment)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size, _ := t.Type.RowBytes(t.Elements()) // checked in tensorInfo
		if t.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
		start := f.DataOffset + t.Offset
		if start < f.DataOffset || start > uint64(len(data)) || size > uint64(len(data))-start {
			return nil, fmt.Errorf("gguf: tensor %q: data [%d, %d+%d) lies past the end of the file (%d bytes): %w",
				t.Name, start, start, size, len(data), ErrTruncated)
		}
		t.Data = data[start : start+size : start+size]
	}
	return f, nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// Value returns the metadata value for key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.kv[key]
	if !ok {
		return Value{}, false
	}
	return f.KVs[i].Value, true
}

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// String returns the string value of key.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	s, ok := v.AsString()
	if !ok {
		return "", typeErr(key, v, "a string")
	}
	return s, nil
}

// Int returns the integer value of key, whatever its width.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	n, ok := v.AsInt()
	if !ok {
		return 0, typeErr(key, v, "an integer")
	}
	return n, nil
}

// Float returns the floating-point value of key.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	x, ok := v.AsFloat()
	if !ok {
		return 0, typeErr(key, v, "a float")
	}
	return x, nil
}

// Bool returns the boolean value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	b, ok := v.AsBool()
	if !ok {
		return false, typeErr(key, v, "a bool")
	}
	return b, nil
}

// Strings returns the string array value of key.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsArray(); ok {
		if s, ok := a.Values.([]string); ok {
			return s, nil
		}
	}
	return nil, typeErr(key, v, "an array of strings")
}

// Int32s returns the int32 array value of key.
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.AsArray(); ok {
		if s, ok := a.Values.([]int32); ok {
			return s, nil
		}
	}
	return nil, typeErr(key, v, "an array of int32")
}

// ErrMissingKey is wrapped by errors about a metadata key that is absent.
var ErrMissingKey = errors.New("missing metadata key")

func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Value(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: %w %q", ErrMissingKey, key)
	}
	return v, nil
}

func typeErr(key string, v Value, want string) error {
	if a, ok := v.AsArray(); ok {
		return fmt.Errorf("gguf: metadata %q is an array of %s, want %s", key, a.Elem, want)
	}
	return fmt.Errorf("gguf: metadata %q is a %s, want %s", key, v.Type, want)
}

// decoder reads little-endian values from buf, remembering the first error.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) remaining() int { return len(d.buf) - d.off }

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(d.remaining()) {
		d.err = fmt.Errorf("need %d bytes at offset %d, have %d: %w", n, d.off, d.remaining(), ErrTruncated)
		return nil
	}
	b := d.buf[d.off : d.off+int(n)]
	d.off += int(n)
	return b
}

func (d *decoder) u8() uint8 {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) str() string {
	n := d.u64()
	return string(d.bytes(n))
}

func (d *decoder) value(t ValueType, depth int) Value {
	var x any
	switch t {
	case TypeUint8:
		x = d.u8()
	case TypeInt8:
		x = int8(d.u8())
	case TypeUint16:
		x = d.u16()
	case TypeInt16:
		x = int16(d.u16())
	case TypeUint32:
		x = d.u32()
	case TypeInt32:
		x = int32(d.u32())
	case TypeFloat32:
		x = math.Float32frombits(d.u32())
	case TypeBool:
		b := d.u8()
		if d.err == nil && b > 1 {
			d.err = fmt.Errorf("bool value %d is neither 0 nor 1", b)
		}
		x = b == 1
	case TypeString:
		x = d.str()
	case TypeUint64:
		x = d.u64()
	case TypeInt64:
		x = int64(d.u64())
	case TypeFloat64:
		x = math.Float64frombits(d.u64())
	case TypeArray:
		x = d.array(depth + 1)
	default:
		if d.err == nil {
			d.err = fmt.Errorf("unknown value type %d", uint32(t))
		}
	}
	return Value{t, x}
}

func (d *decoder) array(depth int) Array {
	elem := ValueType(d.u32())
	n := d.u64()
	if d.err != nil {
		return Array{}
	}
	if depth > maxArrayDepth {
		d.err = fmt.Errorf("arrays nested deeper than %d", maxArrayDepth)
		return Array{}
	}
	minSize := uint64(elem.size())
	switch elem {
	case TypeString:
		minSize = 8
	case TypeArray:
		minSize = 12
	}
	if minSize == 0 {
		d.err = fmt.Errorf("unknown array element type %d", uint32(elem))
		return Array{}
	}
	if n > uint64(d.remaining())/minSize {
		d.err = fmt.Errorf("array of %d %s elements does not fit in the remaining %d bytes: %w", n, elem, d.remaining(), ErrTruncated)
		return Array{}
	}
	switch elem {
	case TypeUint8:
		return Array{elem, fill(d, n, d.u8)}
	case TypeInt8:
		return Array{elem, fill(d, n, func() int8 { return int8(d.u8()) })}
	case TypeUint16:
		return Array{elem, fill(d, n, d.u16)}
	case TypeInt16:
		return Array{elem, fill(d, n, func() int16 { return int16(d.u16()) })}
	case TypeUint32:
		return Array{elem, fill(d, n, d.u32)}
	case TypeInt32:
		return Array{elem, fill(d, n, func() int32 { return int32(d.u32()) })}
	case TypeFloat32:
		return Array{elem, fill(d, n, func() float32 { return math.Float32frombits(d.u32()) })}
	case TypeBool:
		return Array{elem, fill(d, n, func() bool { b, _ := d.value(TypeBool, depth).AsBool(); return b })}
	case TypeString:
		return Array{elem, fill(d, n, d.str)}
	case TypeUint64:
		return Array{elem, fill(d, n, d.u64)}
	case TypeInt64:
		return Array{elem, fill(d, n, func() int64 { return int64(d.u64()) })}
	case TypeFloat64:
		return Array{elem, fill(d, n, func() float64 { return math.Float64frombits(d.u64()) })}
	default: // TypeArray
		return Array{elem, fill(d, n, func() Array { return d.array(depth + 1) })}
	}
}

// fill reads n values with next, stopping at the first error.
func fill[T any](d *decoder, n uint64, next func() T) []T {
	s := make([]T, 0, min(n, maxPrealloc))
	for i := uint64(0); i < n && d.err == nil; i++ {
		s = append(s, next())
	}
	return s
}

func (d *decoder) tensorInfo() (TensorInfo, error) {
	var t TensorInfo
	t.Name = d.str()
	if d.err != nil {
		return t, fmt.Errorf("name: %w", d.err)
	}
	nDims := d.u32()
	if d.err == nil && (nDims == 0 || nDims > MaxDims) {
		return t, fmt.Errorf("%q: %d dimensions, want 1 to %d", t.Name, nDims, MaxDims)
	}
	t.Shape = make([]uint64, 0, MaxDims)
	for i := uint32(0); i < nDims && d.err == nil; i++ {
		t.Shape = append(t.Shape, d.u64())
	}
	t.Type = TensorType(d.u32())
	t.Offset = d.u64()
	if d.err != nil {
		return t, fmt.Errorf("%q: %w", t.Name, d.err)
	}
	if !t.Type.Known() {
		return t, fmt.Errorf("%q: unknown tensor type %d", t.Name, uint32(t.Type))
	}
	if _, ok := shapeElements(t.Shape); !ok {
		return t, fmt.Errorf("%q: shape %v is too large", t.Name, t.Shape)
	}
	if bs := uint64(t.Type.BlockSize()); t.Shape[0]%bs != 0 {
		return t, fmt.Errorf("%q: first dimension %d is not a multiple of the %s block size %d", t.Name, t.Shape[0], t.Type, bs)
	}
	return t, nil
}

// shapeElements returns the product of shape; ok is false when it exceeds
// maxElements.
func shapeElements(shape []uint64) (n uint64, ok bool) {
	n = 1
	for _, dim := range shape {
		hi, lo := bits.Mul64(n, dim)
		if hi != 0 || lo > maxElements {
			return 0, false
		}
		n = lo
	}
	return n, true
}
