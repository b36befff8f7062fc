package chat

import (
	"fmt"
	"strings"
	"unicode"
)

// prepare checks src against the limits on templates and rewrites it for the
// engine:
//
//   - every application of the filters tojson and string ("x | tojson") is
//     renamed to the Python-compatible filter that Render provides, since
//     the engine's own filters cannot be replaced;
//   - every macro body is bracketed with statements that count the depth of
//     macro calls, so that runaway recursion ends in an error rather than in
//     a Go stack overflow.
//
// The added statements carry the whitespace-control flags of the tags they
// stand next to and add no newlines, so the output and the line numbers in
// the engine's errors are unchanged.
//
// The scan mirrors the engine's: a tag opens at "{{", "{%" or "{#", and
// closes at the first "}}", "%}" or "#}" outside a quoted string
// (comments have no strings); "{% raw %}" blocks are copied untouched.
func prepare(src string) (string, error) {
	if len(src) > maxSourceLen {
		return "", fmt.Errorf("template is %d bytes, more than the %d allowed", len(src), maxSourceLen)
	}
	var b strings.Builder
	b.Grow(len(src) + len(src)/8)
	var blocks []string // keywords of the open block statements
	inRaw := false
	line := 1
	i := 0
	for i < len(src) {
		j := nextTag(src, i)
		if j < 0 {
			b.WriteString(src[i:])
			break
		}
		b.WriteString(src[i:j])
		line += strings.Count(src[i:j], "\n")
		kind := src[j+1]
		t, ok := scanTag(src, j)
		if !ok {
			b.WriteString(src[j:]) // unclosed: the engine reports it
			break
		}
		i = t.end
		tagLine := line
		line += strings.Count(src[j:t.end], "\n")
		if kind == '#' || inRaw {
			if inRaw && kind == '%' && stmtKeyword(t.content) == "endraw" {
				inRaw = false
			}
			b.WriteString(src[j:t.end])
			continue
		}
		content, err := rewriteExpr(t.content)
		if err != nil {
			return "", fmt.Errorf("line %d: %w", tagLine, err)
		}
		if kind == '{' {
			t.write(&b, "{{", content, "}}")
			continue
		}
		kw := stmtKeyword(content)
		switch kw {
		case "raw":
			inRaw = true
		case "if", "for", "macro", "call", "filter", "generation", "block":
			blocks = append(blocks, kw)
		case "set":
			if !strings.Contains(content, "=") { // {% set x %}...{% endset %}
				blocks = append(blocks, kw)
			}
		default:
			if strings.HasPrefix(kw, "end") && len(blocks) > 0 {
				blocks = blocks[:len(blocks)-1]
			}
		}
		if len(blocks) > maxNesting {
			return "", fmt.Errorf("line %d: blocks nested more than %d deep", tagLine, maxNesting)
		}
		if kw == "endmacro" {
			exit := tag{trimLeft: t.trimLeft}
			exit.write(&b, "{%", " set "+depthVar+" = "+exitName+"() ", "%}")
		}
		t.write(&b, "{%", content, "%}")
		if kw == "macro" {
			enter := tag{trimRight: t.trimRight}
			enter.write(&b, "{%", " set "+depthVar+" = "+enterName+"() ", "%}")
		}
	}
	return b.String(), nil
}

// tag is one scanned tag.
type tag struct {
	content   string // the text between the delimiters and trim flags
	trimLeft  bool   // opened with "{{-", "{%-" or "{#-"
	trimRight bool   // closed with "-}}", "-%}" or "-#}"
	end       int    // the offset just past the tag
}

// write writes the tag with the given delimiters and content.
func (t tag) write(b *strings.Builder, open, content, close string) {
	b.WriteString(open)
	if t.trimLeft {
		b.WriteByte('-')
	}
	b.WriteString(content)
	if t.trimRight {
		b.WriteByte('-')
	}
	b.WriteString(close)
}

// nextTag returns the offset of the next tag opener at or after i, or -1.
func nextTag(src string, i int) int {
	for {
		k := strings.IndexByte(src[i:], '{')
		if k < 0 {
			return -1
		}
		i += k
		if i+1 >= len(src) {
			return -1
		}
		switch src[i+1] {
		case '{', '%', '#':
			return i
		}
		i++
	}
}

// scanTag scans the tag that opens at src[j], as the engine does. It reports
// false if the tag is not closed.
func scanTag(src string, j int) (tag, bool) {
	kind := src[j+1]
	closer := "}}"
	switch kind {
	case '%':
		closer = "%}"
	case '#':
		closer = "#}"
	}
	var t tag
	i := j + 2
	if i < len(src) && src[i] == '-' {
		t.trimLeft = true
		i++
	}
	start := i
	for i < len(src) {
		c := src[i]
		if kind != '#' && (c == '\'' || c == '"') {
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				i++
			}
			if i < len(src) {
				i++
			}
			continue
		}
		if c == '-' && i+2 < len(src) && src[i+1] == closer[0] && src[i+2] == closer[1] {
			t.content, t.trimRight, t.end = src[start:i], true, i+3
			return t, true
		}
		if i+1 < len(src) && c == closer[0] && src[i+1] == closer[1] {
			t.content, t.end = src[start:i], i+2
			return t, true
		}
		i++
	}
	return tag{}, false
}

// stmtKeyword returns the statement keyword that starts s, as the engine
// reads it.
func stmtKeyword(s string) string {
	s = strings.TrimSpace(s)
	for i, r := range s {
		if !unicode.IsLetter(r) && r != '_' {
			return s[:i]
		}
	}
	return s
}

// replacedFilters maps the engine's filters that Render replaces to the
// names of their replacements.
var replacedFilters = map[string]string{
	"tojson": tojsonName,
	"string": stringName,
}

// rewriteExpr renames the replaced filters in the tag content s and checks
// that its brackets do not nest too deeply.
func rewriteExpr(s string) (string, error) {
	var b strings.Builder
	depth := 0
	var last byte // the last byte outside strings that is not a space
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			k := i + 1
			for k < len(s) && s[k] != c {
				if s[k] == '\\' && k+1 < len(s) {
					k++
				}
				k++
			}
			if k < len(s) {
				k++
			}
			b.WriteString(s[i:k])
			i, last = k, c
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
			if depth > maxNesting {
				return "", fmt.Errorf("brackets nested more than %d deep", maxNesting)
			}
		case c == ')' || c == ']' || c == '}':
			depth--
		case isIdentStart(c):
			k := i + 1
			for k < len(s) && isIdentByte(s[k]) {
				k++
			}
			word := s[i:k]
			if name, ok := replacedFilters[word]; ok && last == '|' {
				word = name
			}
			b.WriteString(word)
			i, last = k, 'a'
			continue
		}
		b.WriteByte(c)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			last = c
		}
		i++
	}
	return b.String(), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}
