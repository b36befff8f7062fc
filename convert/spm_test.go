package convert

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

// SPMPiece is a piece of a SentencePiece model for tests.
type SPMPiece struct {
	Piece string
	Score float32
	Type  int32 // 0: none written (NORMAL)
}

// SPMModel serializes a SentencePiece ModelProto with pieces, a
// trainer_spec (model_type BPE, vocab_size, a string) and a
// normalizer_spec before and after them, as the real files have fields
// the parser skips.
func SPMModel(pieces []SPMPiece) []byte {
	tag := func(b []byte, field, wire int) []byte { return binary.AppendUvarint(b, uint64(field<<3|wire)) }
	bytesField := func(b []byte, field int, v []byte) []byte {
		b = tag(b, field, 2)
		b = binary.AppendUvarint(b, uint64(len(v)))
		return append(b, v...)
	}
	var trainer []byte
	trainer = tag(trainer, 3, 0)
	trainer = binary.AppendUvarint(trainer, 2) // model_type: BPE
	trainer = tag(trainer, 4, 0)
	trainer = binary.AppendUvarint(trainer, uint64(len(pieces)))
	trainer = bytesField(trainer, 2, []byte("model_prefix"))
	trainer = tag(trainer, 11, 1)
	trainer = binary.LittleEndian.AppendUint64(trainer, math.Float64bits(0.5))
	var out []byte
	out = bytesField(out, 2, trainer)
	for _, p := range pieces {
		var m []byte
		m = bytesField(m, 1, []byte(p.Piece))
		m = tag(m, 2, 5)
		m = binary.LittleEndian.AppendUint32(m, math.Float32bits(p.Score))
		if p.Type != 0 {
			m = tag(m, 3, 0)
			m = binary.AppendUvarint(m, uint64(p.Type))
		}
		out = bytesField(out, 1, m)
	}
	out = bytesField(out, 3, bytesField(nil, 1, []byte("identity")))
	return out
}

func TestParseSentencePiece(t *testing.T) {
	in := []SPMPiece{{"<unk>", 0, spmUnknown}, {"<s>", 0, spmControl}, {"<0x41>", 0, spmByte}, {"▁a", -1.5, 0},
		{"<custom>", 0, spmUserDefined}, {"x", -2, spmUnused}}
	got, err := parseSentencePiece(SPMModel(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []spmPiece{{"<unk>", 0, 2}, {"<s>", 0, 3}, {"<0x41>", 0, 6}, {"▁a", -1.5, 1}, {"<custom>", 0, 4}, {"x", -2, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pieces %v, want %v", got, want)
	}

	good := SPMModel(in)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"no pieces", SPMModel(nil), "no pieces"},
		{"empty piece", SPMModel([]SPMPiece{{"", 0, 0}}), "piece 0 is empty"},
		{"twice", SPMModel([]SPMPiece{{"a", 0, 0}, {"b", 0, 0}, {"a", 0, 0}}), `piece 2, "a", is defined twice`},
		{"bad type", SPMModel([]SPMPiece{{"a", 0, 7}}), "type 7 is not a SentencePiece type"},
		{"not UTF-8", SPMModel([]SPMPiece{{"a\xff", 0, 0}}), "is not UTF-8"},
		{"truncated", good[:len(good)-3], "past the end"},
		{"group", append(bytes.Clone(good), 0x0b), "wire type 3"},
		{"piece not a message", []byte{0x08, 0x01}, "piece 0: wire type 0"},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "malformed field key"},
		{"field 0", []byte{0x02, 0x00}, "field number 0"},
	} {
		if _, err := parseSentencePiece(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// FuzzParseSentencePiece checks that no input makes the parser panic and
// that what it accepts is a model of unique, non-empty UTF-8 pieces.
func FuzzParseSentencePiece(f *testing.F) {
	f.Add(SPMModel([]SPMPiece{{"<unk>", 0, spmUnknown}, {"▁the", -3, 0}, {"<0x0A>", 0, spmByte}}))
	f.Add(SPMModel([]SPMPiece{{"a", 0, 0}}))
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 0x61})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		pieces, err := parseSentencePiece(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range pieces {
			if p.piece == "" || seen[p.piece] || p.typ < spmNormal || p.typ > spmByte {
				t.Fatalf("accepted piece %+v", p)
			}
			seen[p.piece] = true
		}
	})
}

// TestRepackMXFP4 checks the repacking of one block against bytes worked
// out by hand from llama.cpp's GptOssModel.transform_nibble_layout (swap
// each byte's nibbles, split the 16 bytes in halves a and b, spread a's
// nibbles to the high halves and b's to the low halves of alternate
// bytes, swap the nibbles again).
func TestRepackMXFP4(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		// Byte j holds j: values 2j = j and 2j+1 = 0. Python: after the
		// first swap byte j is j<<4; a's bytes k<<4 give the high
		// nibbles k (even bytes) and 0 (odd ones), b's bytes (8+k)<<4
		// the low nibbles 8+k and 0; swapped: even byte 2k is k | (8+k)<<4.
		{[]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			[]byte{0x80, 0, 0x91, 0, 0xa2, 0, 0xb3, 0, 0xc4, 0, 0xd5, 0, 0xe6, 0, 0xf7, 0}},
		// Values i%16 (byte j = 2j%16 | (2j+1)%16<<4): output byte j
		// holds values j and j+16, both j.
		{[]byte{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe},
			[]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
	} {
		if got := repackMXFP4(nil, c.in); !bytes.Equal(got, c.want) {
			t.Errorf("repack % x\n = % x\nwant % x", c.in, got, c.want)
		}
	}
}
