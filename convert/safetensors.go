package convert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sort"
	"strings"

	"inferno/internal/mmap"
)

// DType is the element type of a safetensors tensor, spelled as in the
// file's header ("F32", "BF16", ...).
type DType string

// The element types the converter reads. Other types of the safetensors
// format are parsed and checked but cannot be converted.
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	// U8 holds the MXFP4 blocks and scales of gpt-oss's experts, which
	// are written as they are (family.Source.MXFP4).
	U8 DType = "U8"
)

// dtypeSizes holds the element size in bytes of every fixed-width type of
// the safetensors format.
var dtypeSizes = map[DType]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// Size returns the size in bytes of one element of type d, or 0 when d is
// not a type of the safetensors format.
func (d DType) Size() int { return dtypeSizes[d] }

// maxHeaderSize bounds the JSON header of a safetensors file, as the
// reference implementation does (100 MB).
const maxHeaderSize = 100_000_000

// maxElements bounds the element count of one tensor (2^48) so that sizes
// computed from a shape cannot overflow.
const maxElements = 1 << 48

// A Tensor is one tensor of a safetensors file.
type Tensor struct {
	Name  string
	DType DType
	// Shape lists the dimensions outermost first, as PyTorch does: a
	// linear layer's weight is [out, in].
	Shape []int64
	// Data is the tensor's little-endian bytes. For a file opened with
	// OpenSafetensors it is a view of the memory-mapped file.
	Data []byte
}

// Elements returns the number of elements (the product of Shape).
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Safetensors is a parsed safetensors file.
type Safetensors struct {
	// Tensors are sorted by name.
	Tensors []Tensor
	// Metadata holds the header's "__metadata__" strings, if any.
	Metadata map[string]string

	index  map[string]int
	unmap  func() error
	mapped []byte // the memory mapping made by mmap.Map that Data views
}

// OpenSafetensors memory-maps the safetensors file at path and parses its
// header. Tensor data is not read until it is used; Close releases it.
func OpenSafetensors(path string) (*Safetensors, error) {
	return openSafetensors(path, path)
}

// openSafetensors is OpenSafetensors with errors that call the file name.
func openSafetensors(path, name string) (*Safetensors, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	size := st.Size()
	if size < 8 {
		return nil, fmt.Errorf("%s: file is %d bytes, too small for a safetensors header", name, size)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%s: file too large to map", name)
	}
	// Check the header length before mapping, so that the error for a
	// truncated file does not depend on the platform.
	var prefix [8]byte
	if _, err := io.ReadFull(fh, prefix[:]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n := binary.LittleEndian.Uint64(prefix[:]); n > uint64(size-8) {
		return nil, fmt.Errorf("%s: header length %d is larger than the file (%d bytes): truncated or not a safetensors file", name, n, size)
	}
	data, unmap, err := mmap.Map(fh, int(size), true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, err := ParseSafetensors(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.unmap = unmap
	s.mapped = data
	return s, nil
}

// ParseSafetensors parses a whole safetensors file held in data: an 8-byte
// little-endian header length, a JSON header that gives each tensor's
// dtype, shape and data_offsets, then the data. Every tensor's offsets
// must lie within the data and match its shape and dtype. Tensor data
// slices alias data.
func ParseSafetensors(data []byte) (*Safetensors, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("file is %d bytes, too small for a safetensors header", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return nil, fmt.Errorf("header length %d is larger than the file (%d bytes): truncated or not a safetensors file", n, len(data))
	}
	if n > maxHeaderSize {
		return nil, fmt.Errorf("header length %d exceeds the limit of %d bytes", n, maxHeaderSize)
	}
	header := data[8 : 8+n]
	body := data[8+n:]

	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		return nil, fmt.Errorf("bad header JSON: %s", jsonError(err))
	}
	s := &Safetensors{index: make(map[string]int, len(raw))}
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &s.Metadata); err != nil {
				return nil, fmt.Errorf("bad header JSON: __metadata__ is not an object of strings")
			}
			continue
		}
		t, err := parseEntry(name, msg, body)
		if err != nil {
			return nil, err
		}
		s.Tensors = append(s.Tensors, t)
	}
	sort.Slice(s.Tensors, func(i, j int) bool { return s.Tensors[i].Name < s.Tensors[j].Name })
	for i, t := range s.Tensors {
		s.index[t.Name] = i
	}
	return s, nil
}

// entry is one tensor's description in the JSON header.
type entry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

func parseEntry(name string, msg json.RawMessage, body []byte) (Tensor, error) {
	var e entry
	if err := json.Unmarshal(msg, &e); err != nil {
		return Tensor{}, fmt.Errorf("bad header JSON: tensor %q: %s", name, jsonError(err))
	}
	switch {
	case e.DType == nil:
		return Tensor{}, fmt.Errorf("bad header JSON: tensor %q has no dtype", name)
	case e.Shape == nil:
		return Tensor{}, fmt.Errorf("bad header JSON: tensor %q has no shape", name)
	case len(e.DataOffsets) != 2:
		return Tensor{}, fmt.Errorf("bad header JSON: tensor %q: data_offsets has %d values, want 2", name, len(e.DataOffsets))
	}
	t := Tensor{Name: name, DType: DType(*e.DType), Shape: *e.Shape}
	size := t.DType.Size()
	if size == 0 {
		return Tensor{}, fmt.Errorf("tensor %q: unknown dtype %q", name, *e.DType)
	}
	elems := uint64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return Tensor{}, fmt.Errorf("tensor %q: negative dimension in shape %v", name, t.Shape)
		}
		hi, lo := bits.Mul64(elems, uint64(d))
		if hi != 0 || lo > maxElements {
			return Tensor{}, fmt.Errorf("tensor %q: shape %v is too large", name, t.Shape)
		}
		elems = lo
	}
	begin, end := e.DataOffsets[0], e.DataOffsets[1]
	if begin > end || end > uint64(len(body)) {
		return Tensor{}, fmt.Errorf("tensor %q: data offsets [%d, %d] lie outside the %d-byte data section", name, begin, end, len(body))
	}
	if want := elems * uint64(size); end-begin != want {
		return Tensor{}, fmt.Errorf("tensor %q: %d bytes of data, shape %v of %s needs %d", name, end-begin, t.Shape, t.DType, want)
	}
	t.Data = body[begin:end:end]
	return t, nil
}

// jsonError shortens encoding/json errors to one line without Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q holds a JSON %s of the wrong kind", te.Field, te.Value)
		}
		return fmt.Sprintf("a JSON %s where another kind of value belongs", te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Tensor returns the tensor named name.
func (s *Safetensors) Tensor(name string) (*Tensor, bool) {
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return &s.Tensors[i], true
}

// release drops the resident pages of b, a part of a tensor's data, where
// the file is memory-mapped; data in ordinary memory is left alone.
func (s *Safetensors) release(b []byte) {
	if s.mapped != nil && s.unmap != nil {
		mmap.Release(s.mapped, b)
	}
}

// Close releases the memory mapping of a file opened with OpenSafetensors.
// Tensor data must not be used afterwards.
func (s *Safetensors) Close() error {
	if s.unmap == nil {
		return nil
	}
	err := s.unmap()
	s.unmap = nil
	return err
}

// WriteSafetensors writes tensors as a safetensors file to w: the header
// lists them sorted by name with contiguous data offsets, padded with
// spaces to a multiple of 8 bytes, and the data follows in the same order.
// Metadata, when not empty, is written as "__metadata__".
func WriteSafetensors(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	sorted := slices.Clone(tensors)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off uint64
	for i, t := range sorted {
		if t.Name == "__metadata__" {
			return fmt.Errorf("safetensors: a tensor cannot be named __metadata__")
		}
		if i > 0 && sorted[i-1].Name == t.Name {
			return fmt.Errorf("safetensors: tensor %q given twice", t.Name)
		}
		size := t.DType.Size()
		if size == 0 {
			return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		if want := t.Elements() * int64(size); int64(len(t.Data)) != want {
			return fmt.Errorf("safetensors: tensor %q: %d bytes of data, shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, want)
		}
		header[t.Name] = map[string]any{
			"dtype":        t.DType,
			"shape":        shape,
			"data_offsets": []uint64{off, off + uint64(len(t.Data))},
		}
		off += uint64(len(t.Data))
	}
	js, err := json.Marshal(header)
	if err != nil {
		return err
	}
	if r := len(js) % 8; r != 0 {
		js = append(js, bytes.Repeat([]byte{' '}, 8-r)...)
	}
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(js)))
	if _, err := w.Write(prefix[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	for _, t := range sorted {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}
