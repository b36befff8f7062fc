// Package gguf reads and writes GGUF files, the container format llama.cpp
// uses for model weights and metadata.
//
// A GGUF file is a header (magic, version, counts), a list of typed
// key/value metadata pairs, a table of tensor descriptions, and the tensor
// data, aligned to general.alignment bytes. Open memory-maps the file so
// tensor data is never copied into the Go heap; Parse does the same work on a
// byte slice already in memory.
package gguf

import "fmt"

// Magic is the four bytes every GGUF file starts with ("GGUF").
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// Metadata value types, numbered as in the GGUF specification.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// size is the encoded size of a fixed-size scalar type, or 0 for string and array.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// TensorType is the ggml element type of a tensor.
type TensorType uint32

// Tensor types, numbered as in ggml. Package quant encodes and decodes
// those it lists (quant.Formats); the others are named so that errors can
// say what a file contains.
const (
	TensorF32     TensorType = 0
	TensorF16     TensorType = 1
	TensorQ4_0    TensorType = 2
	TensorQ4_1    TensorType = 3
	TensorQ5_0    TensorType = 6
	TensorQ5_1    TensorType = 7
	TensorQ8_0    TensorType = 8
	TensorQ8_1    TensorType = 9
	TensorQ2_K    TensorType = 10
	TensorQ3_K    TensorType = 11
	TensorQ4_K    TensorType = 12
	TensorQ5_K    TensorType = 13
	TensorQ6_K    TensorType = 14
	TensorQ8_K    TensorType = 15
	TensorIQ2_XXS TensorType = 16
	TensorIQ2_XS  TensorType = 17
	TensorIQ3_XXS TensorType = 18
	TensorIQ1_S   TensorType = 19
	TensorIQ4_NL  TensorType = 20
	TensorIQ3_S   TensorType = 21
	TensorIQ2_S   TensorType = 22
	TensorIQ4_XS  TensorType = 23
	TensorI8      TensorType = 24
	TensorI16     TensorType = 25
	TensorI32     TensorType = 26
	TensorI64     TensorType = 27
	TensorF64     TensorType = 28
	TensorIQ1_M   TensorType = 29
	TensorBF16    TensorType = 30
	TensorTQ1_0   TensorType = 34
	TensorTQ2_0   TensorType = 35
	TensorMXFP4   TensorType = 39
)

type typeInfo struct {
	name       string
	blockSize  int // elements per block
	blockBytes int // bytes per block
}

// typeInfos lists every type whose layout is known, so that sizes can be
// checked even for tensors inferno cannot compute with.
var typeInfos = map[TensorType]typeInfo{
	TensorF32:     {"F32", 1, 4},
	TensorF16:     {"F16", 1, 2},
	TensorQ4_0:    {"Q4_0", 32, 18},
	TensorQ4_1:    {"Q4_1", 32, 20},
	TensorQ5_0:    {"Q5_0", 32, 22},
	TensorQ5_1:    {"Q5_1", 32, 24},
	TensorQ8_0:    {"Q8_0", 32, 34},
	TensorQ8_1:    {"Q8_1", 32, 36},
	TensorQ2_K:    {"Q2_K", 256, 84},
	TensorQ3_K:    {"Q3_K", 256, 110},
	TensorQ4_K:    {"Q4_K", 256, 144},
	TensorQ5_K:    {"Q5_K", 256, 176},
	TensorQ6_K:    {"Q6_K", 256, 210},
	TensorQ8_K:    {"Q8_K", 256, 292},
	TensorIQ2_XXS: {"IQ2_XXS", 256, 66},
	TensorIQ2_XS:  {"IQ2_XS", 256, 74},
	TensorIQ3_XXS: {"IQ3_XXS", 256, 98},
	TensorIQ1_S:   {"IQ1_S", 256, 50},
	TensorIQ4_NL:  {"IQ4_NL", 32, 18},
	TensorIQ3_S:   {"IQ3_S", 256, 110},
	TensorIQ2_S:   {"IQ2_S", 256, 82},
	TensorIQ4_XS:  {"IQ4_XS", 256, 136},
	TensorI8:      {"I8", 1, 1},
	TensorI16:     {"I16", 1, 2},
	TensorI32:     {"I32", 1, 4},
	TensorI64:     {"I64", 1, 8},
	TensorF64:     {"F64", 1, 8},
	TensorIQ1_M:   {"IQ1_M", 256, 56},
	TensorBF16:    {"BF16", 1, 2},
	TensorTQ1_0:   {"TQ1_0", 256, 54},
	TensorTQ2_0:   {"TQ2_0", 256, 66},
	TensorMXFP4:   {"MXFP4", 32, 17},
}

func (t TensorType) String() string {
	if ti, ok := typeInfos[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("TensorType(%d)", uint32(t))
}

// Known reports whether the layout of t is known.
func (t TensorType) Known() bool { _, ok := typeInfos[t]; return ok }

// BlockSize returns the number of elements in one block of t (1 for plain
// float and integer types), or 0 if t is unknown.
func (t TensorType) BlockSize() int { return typeInfos[t].blockSize }

// BlockBytes returns the encoded size in bytes of one block of t, or 0 if t
// is unknown.
func (t TensorType) BlockBytes() int { return typeInfos[t].blockBytes }

// RowBytes returns the encoded size of n elements of type t. n must be a
// multiple of the block size; ok is false otherwise or for unknown types.
func (t TensorType) RowBytes(n uint64) (size uint64, ok bool) {
	ti, known := typeInfos[t]
	if !known || n%uint64(ti.blockSize) != 0 {
		return 0, false
	}
	return n / uint64(ti.blockSize) * uint64(ti.blockBytes), true
}
