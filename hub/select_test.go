package hub

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"Qwen/Qwen3-0.6B-GGUF", Ref{Repo: "Qwen/Qwen3-0.6B-GGUF"}},
		{"Qwen/Qwen3-0.6B-GGUF:Q8_0", Ref{Repo: "Qwen/Qwen3-0.6B-GGUF", Quant: "Q8_0"}},
		{"hf://Qwen/Qwen3-0.6B-GGUF:q4_k_m", Ref{Repo: "Qwen/Qwen3-0.6B-GGUF", Quant: "q4_k_m"}},
		{"hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf", Ref{Repo: "Qwen/Qwen3-0.6B-GGUF", File: "Qwen3-0.6B-Q8_0.gguf"}},
		{"hf://o/n/sub/dir/m.gguf", Ref{Repo: "o/n", File: "sub/dir/m.gguf"}},
		{"o/n:m-Q8_0.gguf", Ref{Repo: "o/n", File: "m-Q8_0.gguf"}},
		{"hf.co/o/n:Q8_0", Ref{Repo: "o/n", Quant: "Q8_0"}},
		{"huggingface.co/o/n:latest", Ref{Repo: "o/n", Quant: "latest"}},
	} {
		got, err := ParseRef(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"", "model.gguf", "o/n:", "/n:Q8_0", "o/:Q8_0", "o/n:Q8 0", "-o/n:Q8_0", "o/n.:Q8_0",
		"o--x/n:Q8_0", "o/n..m:Q8_0", "hf://o/n/../x.gguf", "hf://o/n/a//b.gguf", "hf://o/n/a/", "o/n:a/b",
		"hf://o/n/a\\b.gguf", "o/n:" + strings.Repeat("q", 65), "o/" + strings.Repeat("n", 95),
	} {
		if r, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", bad, r)
		}
	}
}

func TestLooksLikeRef(t *testing.T) {
	for in, want := range map[string]bool{
		"Qwen/Qwen3-0.6B-GGUF:Q8_0": true,
		"hf://Qwen/Qwen3-0.6B-GGUF": true,
		"hf.co/o/n":                 true,
		"models/qwen3.gguf":         false,
		"qwen3.gguf":                false,
		"C:/models/qwen3.gguf":      false,
		"a/b/c:Q8_0":                false,
		"o/n":                       false,
	} {
		if got := LooksLikeRef(in); got != want {
			t.Errorf("LooksLikeRef(%q) = %v, want %v", in, got, want)
		}
	}
}

var qwenFiles = []string{
	".gitattributes", "README.md", "params",
	"Qwen3-0.6B-Q4_K_M.gguf", "Qwen3-0.6B-Q8_0.gguf", "Qwen3-0.6B-IQ4_XS.gguf", "Qwen3-0.6B-Q4_K_S.gguf",
	"mmproj-Qwen3-0.6B-Q8_0.gguf", "imatrix-Q8_0.gguf",
	"BF16/Qwen3-0.6B-BF16-00001-of-00002.gguf", "BF16/Qwen3-0.6B-BF16-00002-of-00002.gguf",
}

func TestSelectFiles(t *testing.T) {
	for _, tc := range []struct {
		files []string
		ref   Ref
		want  string // files joined by ","
		note  string // in the note
		err   string // in the error
	}{
		{files: qwenFiles, ref: Ref{Quant: "Q8_0"}, want: "Qwen3-0.6B-Q8_0.gguf"},
		{files: qwenFiles, ref: Ref{Quant: "q8_0"}, want: "Qwen3-0.6B-Q8_0.gguf"},
		{files: qwenFiles, ref: Ref{Quant: "Q4_K_S"}, want: "Qwen3-0.6B-Q4_K_S.gguf"},
		{files: qwenFiles, ref: Ref{Quant: "iq4_xs"}, want: "Qwen3-0.6B-IQ4_XS.gguf"},
		{files: qwenFiles, ref: Ref{}, want: "Qwen3-0.6B-Q4_K_M.gguf", note: "taking Q4_K_M"},
		{files: qwenFiles, ref: Ref{Quant: "latest"}, want: "Qwen3-0.6B-Q4_K_M.gguf", note: "taking Q4_K_M"},
		{files: qwenFiles, ref: Ref{Quant: "bf16"}, want: "BF16/Qwen3-0.6B-BF16-00001-of-00002.gguf,BF16/Qwen3-0.6B-BF16-00002-of-00002.gguf"},
		{files: qwenFiles, ref: Ref{File: "BF16/Qwen3-0.6B-BF16-00002-of-00002.gguf"}, want: "BF16/Qwen3-0.6B-BF16-00001-of-00002.gguf,BF16/Qwen3-0.6B-BF16-00002-of-00002.gguf"},
		{files: qwenFiles, ref: Ref{File: "README.md"}, want: "README.md"},
		{files: qwenFiles, ref: Ref{Quant: "Q4_K"}, err: "available: BF16, IQ4_XS, Q4_K_M, Q4_K_S, Q8_0"},
		{files: qwenFiles, ref: Ref{Quant: "Q5_K_M"}, err: "no GGUF file for quantization Q5_K_M"},
		{files: qwenFiles, ref: Ref{File: "nope.gguf"}, err: `no file "nope.gguf"; its GGUF files: BF16/`},
		{files: []string{"a-Q8_0.gguf", "b-Q8_0.gguf"}, ref: Ref{Quant: "Q8_0"}, err: "matches several files (a-Q8_0.gguf, b-Q8_0.gguf)"},
		{files: []string{"m-Q8_0.gguf", "m-Q8_0-tuned.gguf"}, ref: Ref{Quant: "Q8_0"}, want: "m-Q8_0.gguf"},
		{files: []string{"m.Q8_0.gguf"}, ref: Ref{Quant: "Q8_0"}, want: "m.Q8_0.gguf"},
		{files: []string{"b-F16.gguf", "a-F32.gguf"}, ref: Ref{}, want: "a-F32.gguf", note: "no Q4_K_M or Q8_0 file, taking a-F32.gguf"},
		{files: []string{"m-Q8_0.gguf"}, ref: Ref{}, want: "m-Q8_0.gguf", note: "taking Q8_0"},
		{files: []string{"README.md", "model.safetensors"}, ref: Ref{}, err: "holds no GGUF model file (README.md, model.safetensors)"},
		{files: []string{"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf"}, ref: Ref{Quant: "Q8_0"}, err: "split into 3 parts but part 2 (m-Q8_0-00002-of-00003.gguf) is missing"},
	} {
		tc.ref.Repo = "o/n"
		got, note, err := selectFiles("o/n", tc.files, tc.ref)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: err = %v, want one saying %q", tc.ref, err, tc.err)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.ref, err)
		case strings.Join(got, ",") != tc.want || !strings.Contains(note, tc.note) || (tc.note == "") != (note == ""):
			t.Errorf("%+v = %q, note %q; want %q, note with %q", tc.ref, got, note, tc.want, tc.note)
		}
	}
}

// FuzzParseRef checks that any argument parses or is refused without a
// panic, and that what parses is safe to use as paths and prints back
// to the same reference.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen3-0.6B-GGUF:Q8_0", "hf://o/n/sub/m.gguf", "o/n", "hf.co/o/n:latest", "o/n:m.gguf", "hf://o/n:Q4_K_M", "a/b/../c", "o/n:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		LooksLikeRef(s)
		if err != nil {
			return
		}
		if err := CheckRepo(r.Repo); err != nil {
			t.Fatalf("ParseRef(%q) gave repo %q: %v", s, r.Repo, err)
		}
		if r.File != "" && checkFile(r.File) != nil {
			t.Fatalf("ParseRef(%q) gave file %q", s, r.File)
		}
		back, err := ParseRef(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRef(%q) = %+v, but its String %q reads back as %+v, %v", s, r, r.String(), back, err)
		}
		selectFiles(r.Repo, qwenFiles, r)
	})
}

// FuzzSelectFiles checks that any listing and tag choose files from the
// listing or give an error, never a panic.
func FuzzSelectFiles(f *testing.F) {
	f.Add(strings.Join(qwenFiles, "\n"), "Q8_0")
	f.Add("m-Q8_0-00001-of-00002.gguf\nm-Q8_0-00002-of-00002.gguf", "")
	f.Add("a-00000-of-00000.gguf\nb-00002-of-00001.gguf", "latest")
	f.Fuzz(func(t *testing.T, listing, tag string) {
		files := strings.Split(listing, "\n")
		got, _, err := selectFiles("o/n", files, Ref{Repo: "o/n", Quant: tag})
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatal("no files and no error")
		}
		for _, g := range got {
			found := false
			for _, f := range files {
				found = found || f == g
			}
			if !found {
				t.Fatalf("chose %q, not in the listing", g)
			}
		}
	})
}
