package synth

import (
	"bytes"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/model/qwen3"
	"inferno/quantize"
)

// FuzzShape writes models of any shape and mixture: Write must not panic,
// and every model it writes must load as a Qwen3 model of that shape.
func FuzzShape(f *testing.F) {
	f.Add(uint8(2), uint16(64), uint16(192), uint8(4), uint8(2), uint8(32), uint16(300), uint8(15), false, false)
	f.Add(uint8(1), uint16(256), uint16(256), uint8(2), uint8(1), uint8(128), uint16(259), uint8(10), true, true)
	f.Add(uint8(0), uint16(1), uint16(0), uint8(3), uint8(0), uint8(2), uint16(1), uint8(0), false, true)
	mixtures := quantize.Mixtures()
	f.Fuzz(func(t *testing.T, layers uint8, hidden, ffn uint16, heads, kvHeads, headDim uint8, vocab uint16, which uint8, pure, untied bool) {
		opts := Options{Preset: "tiny", Mixture: mixtures[int(which)%len(mixtures)].Name, Pure: pure, Seed: 3,
			Shape: Shape{Layers: int(layers % 4), Hidden: int(hidden % 1024), FFN: int(ffn % 1024), Heads: int(heads % 16),
				KVHeads: int(kvHeads % 16), HeadDim: int(headDim), Vocab: int(vocab % 2048), Untied: untied}}
		r, err := Resolve(opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "synth: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		p := &r.Config
		weights := p.Vocab*p.Hidden*2 + p.Layers*(2*p.Heads*p.HeadDim*p.Hidden+2*p.KVHeads*p.HeadDim*p.Hidden+3*p.Hidden*p.FFN)
		if weights > 1<<21 {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, opts); err != nil {
			if !strings.HasPrefix(err.Error(), "synth: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		gf, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%+v: the file does not parse: %v", p, err)
		}
		m, err := qwen3.Load(gf)
		if err != nil {
			t.Fatalf("%+v: the model does not load: %v", p, err)
		}
		c := m.Config
		if c.Layers != p.Layers || c.Hidden != p.Hidden || c.FFN != p.FFN || c.Heads != p.Heads ||
			c.KVHeads != p.KVHeads || c.HeadDim != p.HeadDim || c.Vocab != p.Vocab {
			t.Fatalf("loads as %+v, want %+v", c, p)
		}
	})
}
