package gguf

import (
	"fmt"
	"math"
	"reflect"
)

// A Value is one metadata value. Scalars hold the Go type that matches their
// ValueType (uint8, int8, uint16, int16, uint32, int32, float32, bool,
// string, uint64, int64, float64); arrays hold an Array.
type Value struct {
	Type ValueType
	v    any
}

// Any returns the value as a Go value: a scalar, or an Array.
func (v Value) Any() any { return v.v }

// Array is a metadata array. Values is a slice of the element's Go type
// ([]uint8, []int8, []uint16, []int16, []uint32, []int32, []float32, []bool,
// []string, []uint64, []int64, []float64), or []Array for nested arrays.
type Array struct {
	Elem   ValueType
	Values any
}

// Len returns the number of elements.
func (a Array) Len() int {
	switch s := a.Values.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	case []Array:
		return len(s)
	}
	return 0
}

// MakeValue wraps a Go value as a metadata Value. It accepts the scalar types
// listed on Value, Array, and slices of the scalar element types (wrapped as
// an Array).
func MakeValue(x any) (Value, error) {
	switch x := x.(type) {
	case uint8:
		return Value{TypeUint8, x}, nil
	case int8:
		return Value{TypeInt8, x}, nil
	case uint16:
		return Value{TypeUint16, x}, nil
	case int16:
		return Value{TypeInt16, x}, nil
	case uint32:
		return Value{TypeUint32, x}, nil
	case int32:
		return Value{TypeInt32, x}, nil
	case float32:
		return Value{TypeFloat32, x}, nil
	case bool:
		return Value{TypeBool, x}, nil
	case string:
		return Value{TypeString, x}, nil
	case uint64:
		return Value{TypeUint64, x}, nil
	case int64:
		return Value{TypeInt64, x}, nil
	case float64:
		return Value{TypeFloat64, x}, nil
	case Array:
		if err := checkArray(x, 1); err != nil {
			return Value{}, err
		}
		return Value{TypeArray, x}, nil
	case []uint8:
		return Value{TypeArray, Array{TypeUint8, x}}, nil
	case []int8:
		return Value{TypeArray, Array{TypeInt8, x}}, nil
	case []uint16:
		return Value{TypeArray, Array{TypeUint16, x}}, nil
	case []int16:
		return Value{TypeArray, Array{TypeInt16, x}}, nil
	case []uint32:
		return Value{TypeArray, Array{TypeUint32, x}}, nil
	case []int32:
		return Value{TypeArray, Array{TypeInt32, x}}, nil
	case []float32:
		return Value{TypeArray, Array{TypeFloat32, x}}, nil
	case []bool:
		return Value{TypeArray, Array{TypeBool, x}}, nil
	case []string:
		return Value{TypeArray, Array{TypeString, x}}, nil
	case []uint64:
		return Value{TypeArray, Array{TypeUint64, x}}, nil
	case []int64:
		return Value{TypeArray, Array{TypeInt64, x}}, nil
	case []float64:
		return Value{TypeArray, Array{TypeFloat64, x}}, nil
	case []Array:
		a := Array{TypeArray, x}
		if err := checkArray(a, 1); err != nil {
			return Value{}, err
		}
		return Value{TypeArray, a}, nil
	}
	return Value{}, fmt.Errorf("gguf: unsupported metadata value type %T", x)
}

// checkArray reports whether a.Values is the slice type that a.Elem names,
// at every level of nesting, and whether the nesting is shallow enough for
// the reader. Otherwise the encoded element tag would not describe the
// encoded elements.
func checkArray(a Array, depth int) error {
	if depth > maxArrayDepth {
		return fmt.Errorf("gguf: arrays nested deeper than %d", maxArrayDepth)
	}
	if a.Elem == TypeArray {
		inner, ok := a.Values.([]Array)
		if !ok {
			return fmt.Errorf("gguf: array of arrays holds %T, want []gguf.Array", a.Values)
		}
		for _, x := range inner {
			if err := checkArray(x, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	z := zeroOf(a.Elem)
	if z == nil {
		return fmt.Errorf("gguf: unsupported array element type %s", a.Elem)
	}
	if want := reflect.SliceOf(reflect.TypeOf(z)); reflect.TypeOf(a.Values) != want {
		return fmt.Errorf("gguf: array of %s holds %T, want %v", a.Elem, a.Values, want)
	}
	return nil
}

func zeroOf(t ValueType) any {
	switch t {
	case TypeUint8:
		return uint8(0)
	case TypeInt8:
		return int8(0)
	case TypeUint16:
		return uint16(0)
	case TypeInt16:
		return int16(0)
	case TypeUint32:
		return uint32(0)
	case TypeInt32:
		return int32(0)
	case TypeFloat32:
		return float32(0)
	case TypeBool:
		return false
	case TypeString:
		return ""
	case TypeUint64:
		return uint64(0)
	case TypeInt64:
		return int64(0)
	case TypeFloat64:
		return float64(0)
	}
	return nil
}

// AsInt returns an integer value of any width as int64. ok is false for
// non-integers and for uint64 values that do not fit.
func (v Value) AsInt() (n int64, ok bool) {
	switch x := v.v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// AsFloat returns a float32 or float64 value as float64.
func (v Value) AsFloat() (f float64, ok bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// AsString returns a string value; ok is false for other types.
func (v Value) AsString() (s string, ok bool) {
	s, ok = v.v.(string)
	return s, ok
}

// AsBool returns a bool value.
func (v Value) AsBool() (b, ok bool) {
	b, ok = v.v.(bool)
	return b, ok
}

// AsArray returns an array value.
func (v Value) AsArray() (a Array, ok bool) {
	a, ok = v.v.(Array)
	return a, ok
}
