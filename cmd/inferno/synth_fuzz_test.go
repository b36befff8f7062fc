package main

import (
	"strings"
	"testing"

	"inferno/quantize"
	"inferno/synth"
)

// FuzzSynthType checks that synthType accepts exactly the mixtures and
// the block types Q3_K, Q4_K and Q5_K, and that what it accepts is a type
// synth can write (or refuses in one line, for shapes the type does not
// fit).
func FuzzSynthType(f *testing.F) {
	for _, s := range []string{"q8_0", "Q4_K", "q4_k_m", "15", "f32", "Q9_9", "", "q5_k", "iq4_xs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typ string) {
		opts := synth.Options{Preset: "tiny"}
		err := synthType(&opts, typ)
		_, perr := quantize.ParseMixture(typ)
		switch up := strings.ToUpper(typ); {
		case up == "Q3_K" || up == "Q4_K" || up == "Q5_K":
			if err != nil || opts.Mixture != "" || opts.Type.String() != up {
				t.Fatalf("%q: %v, options %+v", typ, err, opts)
			}
		case (err == nil) != (perr == nil):
			t.Fatalf("%q: synthType %v, ParseMixture %v", typ, err, perr)
		case err != nil:
			if !strings.HasPrefix(err.Error(), "--type ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q", typ, err)
			}
			return
		}
		if _, _, err := synth.Types(opts); err != nil && (!strings.Contains(err.Error(), "block size") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("%q: %v", typ, err)
		}
	})
}
