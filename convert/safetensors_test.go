package convert_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"inferno/convert"
)

func sampleTensors() []convert.Tensor {
	return []convert.Tensor{
		{Name: "b", DType: convert.F32, Shape: []int64{2, 2}, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{Name: "a", DType: convert.BF16, Shape: []int64{3}, Data: []byte{1, 2, 3, 4, 5, 6}},
		{Name: "scalar", DType: "I64", Shape: []int64{}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0}},
		{Name: "empty", DType: convert.F16, Shape: []int64{0, 4}, Data: []byte{}},
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := convert.WriteSafetensors(&buf, sampleTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(buf.Bytes()); n%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", n)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := convert.OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !reflect.DeepEqual(s.Metadata, map[string]string{"format": "pt"}) {
		t.Errorf("metadata %v", s.Metadata)
	}
	var names []string
	for _, ten := range s.Tensors {
		names = append(names, ten.Name)
	}
	if want := []string{"a", "b", "empty", "scalar"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tensors %v, want %v (sorted)", names, want)
	}
	for _, want := range sampleTensors() {
		got, ok := s.Tensor(want.Name)
		if !ok {
			t.Fatalf("%s missing", want.Name)
		}
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) || got.Elements()*int64(got.DType.Size()) != int64(len(got.Data)) {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if _, ok := s.Tensor("c"); ok {
		t.Error("Tensor(c) found")
	}
}

func TestWriteSafetensorsErrors(t *testing.T) {
	for _, tc := range []struct {
		tensors []convert.Tensor
		want    string
	}{
		{[]convert.Tensor{{Name: "a", DType: convert.F32, Shape: []int64{2}, Data: make([]byte, 4)}}, "4 bytes of data"},
		{[]convert.Tensor{{Name: "a", DType: "Q4", Shape: []int64{2}}}, "unknown dtype"},
		{[]convert.Tensor{{Name: "a", DType: "U8", Shape: []int64{1}, Data: []byte{1}}, {Name: "a", DType: "U8", Shape: []int64{1}, Data: []byte{1}}}, "twice"},
		{[]convert.Tensor{{Name: "__metadata__", DType: "U8", Shape: []int64{1}, Data: []byte{1}}}, "__metadata__"},
	} {
		if err := convert.WriteSafetensors(&bytes.Buffer{}, tc.tensors, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.tensors, err, tc.want)
		}
	}
}

// fuzzSeeds returns valid files and malformed variants of them.
func fuzzSeeds(t testing.TB) [][]byte {
	var buf bytes.Buffer
	if err := convert.WriteSafetensors(&buf, sampleTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	valid := buf.Bytes()
	seeds := [][]byte{valid, valid[:len(valid)-1], valid[:8], valid[:4], nil}
	for _, js := range []string{
		`{}`,
		`null`,
		`[]`,
		`{"__metadata__": {"a": 1}}`,
		`{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}`,
		`{"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}`,
		`{"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}`,
		`{"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}}`,
		`{"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}}`,
		`{"w": {"dtype": "X", "shape": [1], "data_offsets": [0, 4]}}`,
		`{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}`,
		`{"w": {"shape": [1], "data_offsets": [0, 4]}}`,
		`{"w": 3}`,
	} {
		seeds = append(seeds, corruptHeader(js, 4))
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<62)
	return append(seeds, append(huge, "{}"...))
}

func FuzzSafetensorsHeader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := convert.ParseSafetensors(data)
		if err != nil {
			if s != nil {
				t.Fatalf("ParseSafetensors returned a file and the error %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		n := binary.LittleEndian.Uint64(data)
		start := 8 + int(n)
		for i, ten := range s.Tensors {
			if i > 0 && s.Tensors[i-1].Name >= ten.Name {
				t.Fatalf("tensors not sorted: %q then %q", s.Tensors[i-1].Name, ten.Name)
			}
			if got, ok := s.Tensor(ten.Name); !ok || got != &s.Tensors[i] {
				t.Fatalf("Tensor(%q) does not find it", ten.Name)
			}
			size := ten.DType.Size()
			if size == 0 || ten.Elements()*int64(size) != int64(len(ten.Data)) {
				t.Fatalf("%q: %d bytes for %s %v", ten.Name, len(ten.Data), ten.DType, ten.Shape)
			}
			if len(ten.Data) > 0 {
				// The data is a view of the input's data section.
				off := -1
				for j := start; j+len(ten.Data) <= len(data); j++ {
					if &data[j] == &ten.Data[0] {
						off = j
						break
					}
				}
				if off < 0 {
					t.Fatalf("%q: data is not a view of the input's data section", ten.Name)
				}
			}
		}
		// What parses can be written again and parses the same.
		var buf bytes.Buffer
		if err := convert.WriteSafetensors(&buf, s.Tensors, s.Metadata); err != nil {
			t.Fatalf("rewriting: %v", err)
		}
		again, err := convert.ParseSafetensors(buf.Bytes())
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if len(again.Tensors) != len(s.Tensors) {
			t.Fatalf("rewritten file has %d tensors, want %d", len(again.Tensors), len(s.Tensors))
		}
		for i := range s.Tensors {
			a, b := s.Tensors[i], again.Tensors[i]
			if a.Name != b.Name || a.DType != b.DType || !reflect.DeepEqual(a.Shape, b.Shape) || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("tensor %d changed in the rewrite: %+v, want %+v", i, b, a)
			}
		}
	})
}
