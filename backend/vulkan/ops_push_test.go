package vulkan

import (
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"testing"
)

// TestOpsPushBlocks checks, without a device, that each operation
// shader's push block, and the weight shaders' (one variant each), read
// from its compiled SPIR-V in spv/, has the members of the Go struct that
// mirrors it: the same number, at the same offsets, of the same kinds (an
// address or a 64-bit unsigned integer for each uint64, a 32-bit unsigned
// or signed integer or float for uint32, int32, float32), and that the
// struct covers the block.
func TestOpsPushBlocks(t *testing.T) {
	for _, c := range []struct {
		shader string
		push   any
	}{
		{"rms_norm", pushRMSNorm{}},
		{"rope_store", pushRopeStore{}},
		{"attn", pushAttn{}},
		{"attn_combine", pushAttnCombine{}},
		{"swiglu", pushGLU{}},
		{"geglu", pushGLU{}},
		{"swiglu_oai", pushGLU{}},
		{"add", pushAdd{}},
		{"add_bias", pushAddBias{}},
		{"argmax", pushArgmax{}},
		{"mul_mv_f32", pushMulMV{}},
		{"get_rows_f32", pushGetRows{}},
		{"quant_act", pushQuantAct{}},
		{"mul_mvq_q8_0", pushMulMVQ{}},
	} {
		checkPushBlock(t, c.shader, c.push)
	}
}

// checkPushBlock checks the push block of shader's SPIR-V in spv/
// against push, the Go struct that mirrors it (TestOpsPushBlocks).
func checkPushBlock(t *testing.T, shader string, push any) {
	t.Helper()
	code, err := os.ReadFile("spv/" + shader + ".spv")
	if err != nil {
		t.Fatal(err)
	}
	members, err := spirvPushBlock(code)
	if err != nil {
		t.Fatalf("%s: %v", shader, err)
	}
	typ := reflect.TypeOf(push)
	var fields []reflect.StructField
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Name != "_" {
			fields = append(fields, f)
		}
	}
	if len(fields) != len(members) {
		t.Errorf("%s: push block of %d members, %s has %d fields", shader, len(members), typ.Name(), len(fields))
		return
	}
	for i, f := range fields {
		m := members[i]
		if uint32(f.Offset) != m.offset || f.Type.Kind() != m.kind {
			t.Errorf("%s: member %d at %d of kind %v; %s.%s at %d of kind %v", shader, i, m.offset, m.kind, typ.Name(), f.Name, f.Offset, f.Type.Kind())
		}
	}
	last := members[len(members)-1]
	if end := last.offset + last.size; uint32(typ.Size()) < end || typ.Size()%8 != 0 || typ.Size() > 128 {
		t.Errorf("%s: push block of %d bytes; %s has %d (want a multiple of 8 covering it, at most 128)", shader, end, typ.Name(), typ.Size())
	}
}

// spirvMember is a member of a push-constant block: its byte offset, its
// size and the Go kind that mirrors it.
type spirvMember struct {
	offset, size uint32
	kind         reflect.Kind
}

// spirvPushBlock returns the members of the push-constant block of the
// SPIR-V module code.
func spirvPushBlock(code []byte) ([]spirvMember, error) {
	const (
		opTypeInt       = 21
		opTypeFloat     = 22
		opTypeStruct    = 30
		opTypePointer   = 32
		opVariable      = 59
		opMemberDecor   = 72
		scPushConstant  = 9
		scPhysicalStore = 5349
		decorOffset     = 35
	)
	if len(code)%4 != 0 || len(code) < 20 || binary.LittleEndian.Uint32(code) != 0x07230203 {
		return nil, fmt.Errorf("not a little-endian SPIR-V module")
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	kinds := map[uint32]spirvMember{} // scalar and pointer types: size and kind
	structs := map[uint32][]uint32{}  // struct id: member type ids
	pointee := map[uint32]uint32{}    // push-constant pointer type: pointee
	offsets := map[[2]uint32]uint32{} // (struct, member): offset
	var blockPtr uint32
	for i := 5; i < len(words); {
		n, op := int(words[i]>>16), words[i]&0xffff
		if n == 0 || i+n > len(words) {
			return nil, fmt.Errorf("truncated instruction at word %d", i)
		}
		w := words[i : i+n]
		switch {
		case op == opTypeInt && n == 4:
			k := reflect.Uint32
			switch {
			case w[2] == 64 && w[3] == 1:
				k = reflect.Int64
			case w[2] == 64:
				k = reflect.Uint64 // an address passed as uint64_t
			case w[3] == 1:
				k = reflect.Int32
			}
			kinds[w[1]] = spirvMember{size: w[2] / 8, kind: k}
		case op == opTypeFloat && n >= 3:
			kinds[w[1]] = spirvMember{size: w[2] / 8, kind: reflect.Float32}
		case op == opTypePointer && n == 4 && w[2] == scPhysicalStore:
			kinds[w[1]] = spirvMember{size: 8, kind: reflect.Uint64}
		case op == opTypePointer && n == 4 && w[2] == scPushConstant:
			pointee[w[1]] = w[3]
		case op == opTypeStruct:
			structs[w[1]] = append([]uint32(nil), w[2:]...)
		case op == opMemberDecor && n == 5 && w[3] == decorOffset:
			offsets[[2]uint32{w[1], w[2]}] = w[4]
		case op == opVariable && n >= 4 && w[3] == scPushConstant:
			blockPtr = w[1]
		}
		i += n
	}
	st, ok := pointee[blockPtr]
	if blockPtr == 0 || !ok {
		return nil, fmt.Errorf("no push-constant block")
	}
	var out []spirvMember
	for j, ty := range structs[st] {
		m, ok := kinds[ty]
		if !ok {
			return nil, fmt.Errorf("member %d of the push block is of an unexpected type", j)
		}
		m.offset = offsets[[2]uint32{st, uint32(j)}]
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty push block")
	}
	return out, nil
}
