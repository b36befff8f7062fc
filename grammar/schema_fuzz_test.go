package grammar

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzFromJSONSchema(f *testing.F) {
	for _, tc := range schemaCases {
		f.Add(tc.schema)
	}
	files, _ := filepath.Glob("testdata/schemas/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data))
		}
	}
	f.Fuzz(func(t *testing.T, schema string) {
		for _, opt := range []SchemaOptions{{}, {MaxWhitespace: 3, AllowAdditionalDefault: true}} {
			g, err := FromJSONSchema([]byte(schema), opt)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "grammar: ") {
					t.Fatalf("error without context: %v", err)
				}
				continue
			}
			if err := g.Validate(); err != nil {
				t.Fatalf("grammar does not validate: %v", err)
			}
			gen := newGenerator(g, 3)
			gen.maxReps = 1
			gen.limit = 1 << 8
			for range 3 {
				s, ok := gen.sample()
				if !ok {
					break // too long for the oracle
				}
				if !matches(g, s) {
					t.Fatalf("sample %q not matched by its grammar", s)
				}
			}
		}
	})
}

// BenchmarkFromJSONSchema compiles each schema under testdata/schemas.
func BenchmarkFromJSONSchema(b *testing.B) {
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) == 0 {
		b.Fatal("no schemas")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FromJSONSchema(data, SchemaOptions{MaxWhitespace: DefaultMaxWhitespace}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
