package hub

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// defaultQuants are tried in order when a reference names no quantization,
// as llama.cpp does.
var defaultQuants = []string{"Q4_K_M", "Q8_0"}

// shardRE matches one part of a split GGUF file: PREFIX-00001-of-00003.gguf.
var shardRE = regexp.MustCompile(`(?i)^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// shardOf returns the prefix, the part number and the part count of a
// split GGUF file's name, and ok false for a file in one piece.
func shardOf(path string) (prefix string, part, count int, ok bool) {
	m := shardRE.FindStringSubmatch(path)
	if m == nil {
		return "", 0, 0, false
	}
	part, _ = strconv.Atoi(m[2])
	count, _ = strconv.Atoi(m[3])
	if part < 1 || count < 1 || part > count {
		return "", 0, 0, false
	}
	return m[1], part, count, true
}

// isModelGGUF reports whether path is a GGUF file holding a model (or
// the first part of one): not a multimodal projector, an importance
// matrix or a later part of a split file.
func isModelGGUF(path string) bool {
	low := strings.ToLower(path)
	if !strings.HasSuffix(low, ".gguf") {
		return false
	}
	base := low[strings.LastIndexByte(low, '/')+1:]
	if strings.Contains(base, "mmproj") || strings.Contains(base, "imatrix") {
		return false
	}
	if _, part, _, ok := shardOf(path); ok && part != 1 {
		return false
	}
	return true
}

// stem is a GGUF path without ".gguf" and without a split suffix.
func stem(path string) string {
	if prefix, _, _, ok := shardOf(path); ok {
		return prefix
	}
	return path[:len(path)-len(".gguf")]
}

// quantOf guesses the quantization tag of a GGUF file from its name: the
// stem's last part after '-' or '.' ("Qwen3-0.6B-Q8_0.gguf" is Q8_0).
func quantOf(path string) string {
	s := stem(path)
	return s[strings.LastIndexAny(s, "-./")+1:]
}

func isSep(c byte) bool { return c == '-' || c == '_' || c == '.' || c == '/' }

// matchesQuant reports whether a GGUF path carries tag as a word of its
// name (case-insensitive, bounded by '-', '_', '.' or '/' before and
// '-', '.' or '/' after).
func matchesQuant(path, tag string) bool {
	low, t := strings.ToLower(path), strings.ToLower(tag)
	if t == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(low[i:], t)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(t)
		if (j == 0 || isSep(low[j-1])) && end < len(low) && strings.IndexByte("-./", low[end]) >= 0 {
			return true
		}
		i = j + 1
	}
}

// exactQuant reports whether tag is the last word of the path's stem.
func exactQuant(path, tag string) bool {
	s, t := strings.ToLower(stem(path)), strings.ToLower(tag)
	return s == t || strings.HasSuffix(s, t) && isSep(s[len(s)-len(t)-1])
}

// selectFiles chooses the files a reference means among a repository's
// files: the named file, or the GGUF file of the quantization, with all
// the parts of a split file. note says which default was taken, if any.
func selectFiles(repo string, files []string, ref Ref) (picked []string, note string, err error) {
	if ref.File != "" {
		if !slices.Contains(files, ref.File) {
			return nil, "", fmt.Errorf("%s has no file %q%s", repo, ref.File, listGGUF(files))
		}
		picked, err := withShards(repo, files, ref.File)
		return picked, "", err
	}
	var models []string
	for _, f := range files {
		if isModelGGUF(f) {
			models = append(models, f)
		}
	}
	slices.Sort(models)
	if len(models) == 0 {
		return nil, "", fmt.Errorf("%s holds no GGUF model file (%s)", repo, listSome(files))
	}
	tag := ref.Quant
	if tag == "" || strings.EqualFold(tag, "latest") {
		for _, q := range defaultQuants {
			if f, err := pickQuant(repo, models, q); err == nil {
				picked, err := withShards(repo, files, f)
				return picked, fmt.Sprintf("%s: no quantization given, taking %s (%s)", repo, q, f), err
			}
		}
		picked, err := withShards(repo, files, models[0])
		return picked, fmt.Sprintf("%s: no quantization given and no Q4_K_M or Q8_0 file, taking %s", repo, models[0]), err
	}
	f, err := pickQuant(repo, models, tag)
	if err != nil {
		return nil, "", err
	}
	picked, err = withShards(repo, files, f)
	return picked, "", err
}

// pickQuant returns the one model file of a quantization, preferring a
// name that ends in the tag when several carry it.
func pickQuant(repo string, models []string, tag string) (string, error) {
	var match, exact []string
	for _, f := range models {
		if matchesQuant(f, tag) {
			match = append(match, f)
			if exactQuant(f, tag) {
				exact = append(exact, f)
			}
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(exact) == 1:
		return exact[0], nil
	case len(match) == 0:
		var quants []string
		for _, f := range models {
			if q := quantOf(f); !slices.Contains(quants, q) {
				quants = append(quants, q)
			}
		}
		slices.Sort(quants)
		return "", fmt.Errorf("%s has no GGUF file for quantization %s; available: %s", repo, tag, strings.Join(quants, ", "))
	}
	if len(exact) > 1 {
		match = exact
	}
	return "", fmt.Errorf("%s: quantization %s matches several files (%s); name one: inferno pull %s FILE", repo, tag, strings.Join(match, ", "), repo)
}

// withShards returns file, or all parts of the split file it belongs to.
func withShards(repo string, files []string, file string) ([]string, error) {
	prefix, _, count, ok := shardOf(file)
	if !ok {
		return []string{file}, nil
	}
	parts := make([]string, 0, count)
	for i := 1; i <= count; i++ {
		want := fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, i, count)
		found := ""
		for _, f := range files {
			if strings.EqualFold(f, want) {
				found = f
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s: %s is split into %d parts but part %d (%s) is missing", repo, file, count, i, want)
		}
		parts = append(parts, found)
	}
	return parts, nil
}

// listGGUF names a repository's GGUF files for an error message.
func listGGUF(files []string) string {
	var g []string
	for _, f := range files {
		if strings.HasSuffix(strings.ToLower(f), ".gguf") {
			g = append(g, f)
		}
	}
	if len(g) == 0 {
		return " (it holds no GGUF file)"
	}
	slices.Sort(g)
	return "; its GGUF files: " + listSome(g)
}

// listSome joins at most 20 names.
func listSome(names []string) string {
	if len(names) == 0 {
		return "no files"
	}
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(" and %d more", len(names)-20)
	}
	return strings.Join(names, ", ")
}
