package grammar

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the JSON Schema compiler, so that hostile schemas fail fast
// with a clear error rather than exhaust time or memory.
const (
	maxSchemaDepth = 64      // nesting of subschemas compiled inline
	maxSchemaNodes = 20000   // subschemas compiled in all
	maxSchemaBytes = 1 << 20 // size of the schema document
	maxPrefixItems = 1000    // prefixItems entries
	maxKeyLen      = 1000    // a property name, where other keys are allowed
)

// Keywords that only annotate; the compiler ignores them.
var annotations = map[string]bool{
	"title": true, "description": true, "examples": true, "default": true,
	"$schema": true, "$id": true, "$comment": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$defs": true, "definitions": true,
	"discriminator": true, "id": true, "$anchor": true, "example": true,
}

// isAnnotation reports whether keyword k only annotates: one of
// annotations, or an OpenAPI-style extension ("x-...").
func isAnnotation(k string) bool { return annotations[k] || strings.HasPrefix(k, "x-") }

// Keywords the compiler enforces.
var enforced = map[string]bool{
	"type": true, "enum": true, "const": true,
	"anyOf": true, "oneOf": true, "allOf": true, "$ref": true,
	"properties": true, "required": true, "additionalProperties": true,
	"minProperties": true, "maxProperties": true,
	"items": true, "prefixItems": true, "additionalItems": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"uniqueItems": true,
}

// Keywords by the type they apply to, for schemas without "type".
var typeKeywords = map[string]string{
	"properties": "object", "required": "object", "additionalProperties": "object",
	"minProperties": "object", "maxProperties": "object",
	"items": "array", "prefixItems": "array", "additionalItems": "array", "minItems": "array", "maxItems": "array",
	"minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number", "multipleOf": "number",
}

var allTypes = []string{"object", "array", "string", "number", "boolean", "null"}

// FromJSONSchema compiles a JSON Schema to a grammar for the JSON values it
// accepts, written compactly or pretty-printed (opt.MaxWhitespace: one
// space, or a newline and an indentation, between tokens); object properties come in the
// order the schema lists them. A keyword the compiler cannot enforce is
// refused with an *UnsupportedError naming it; docs/GRAMMAR.md lists the
// keywords and the ways the grammar is stricter than the schema.
func FromJSONSchema(schema []byte, opt SchemaOptions) (*Grammar, error) {
	if len(schema) > maxSchemaBytes {
		return nil, fmt.Errorf("grammar: json schema: %d bytes, more than the limit of %d", len(schema), maxSchemaBytes)
	}
	doc, err := parseJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("grammar: json schema: %w", err)
	}
	c := &schemaCompiler{j: newJSONBuilder(opt), root: doc, refs: map[string]string{}, names: map[string]bool{}}
	e, err := c.compile(doc, "#", 0)
	if err != nil {
		return nil, err
	}
	if err := c.j.b.Define("root", e); err != nil {
		return nil, err
	}
	g, err := c.j.b.Grammar("root")
	if err != nil {
		return nil, fmt.Errorf("grammar: json schema: %w", trimPrefix(err))
	}
	return g, nil
}

type schemaCompiler struct {
	j     *jsonBuilder
	root  any
	refs  map[string]string // JSON pointer → the rule compiled from it
	names map[string]bool   // rule names given to references
	nodes int
	objs  int // objects given chain rules, for unique names
}

func schemaErr(path, format string, args ...any) error {
	return fmt.Errorf("grammar: json schema: at %s: %s", path, fmt.Sprintf(format, args...))
}

func unsupported(kw, path, format string, args ...any) error {
	return &UnsupportedError{Keyword: kw, Path: path, Reason: fmt.Sprintf(format, args...)}
}

// constrains reports whether s has keywords other than annotations.
func constrains(s *object) bool {
	for _, k := range s.keys {
		if !isAnnotation(k) {
			return true
		}
	}
	return false
}

// without returns s without the keywords named.
func without(s *object, kws ...string) *object {
	o := newObject()
	for _, k := range s.keys {
		if !slices.Contains(kws, k) {
			o.set(k, s.vals[k])
		}
	}
	return o
}

// compile returns an expression for the JSON values schema s accepts.
func (c *schemaCompiler) compile(s any, path string, depth int) (*Expr, error) {
	c.nodes++
	if c.nodes > maxSchemaNodes {
		return nil, schemaErr(path, "the schema needs more than %d subschemas compiled", maxSchemaNodes)
	}
	if depth > maxSchemaDepth {
		return nil, schemaErr(path, "subschemas nested more than %d deep", maxSchemaDepth)
	}
	switch s := s.(type) {
	case bool:
		if !s {
			return nil, schemaErr(path, "the schema false accepts no value")
		}
		return c.j.b.Ref(c.j.value()), nil
	case *object:
		return c.compileObject(s, path, depth)
	}
	return nil, schemaErr(path, "a schema must be an object or a boolean, not %s", jsonType(s))
}

func (c *schemaCompiler) compileObject(s *object, path string, depth int) (*Expr, error) {
	for _, k := range s.keys {
		if !isAnnotation(k) && !enforced[k] {
			return nil, unsupported(k, path, "")
		}
	}
	if v, ok := s.get("uniqueItems"); ok && v != false {
		return nil, unsupported("uniqueItems", path, "")
	}
	if ref, ok := s.get("$ref"); ok {
		rest := without(s, "$ref")
		if constrains(rest) {
			return c.compileAllOf([]any{refOnly(ref), rest}, path, depth)
		}
		r, ok := ref.(string)
		if !ok {
			return nil, schemaErr(path, "$ref must be a string")
		}
		return c.ref(r, path, depth)
	}
	if all, ok := s.get("allOf"); ok {
		parts, ok := all.([]any)
		if !ok || len(parts) == 0 {
			return nil, schemaErr(path, "allOf must be a non-empty array")
		}
		rest := without(s, "allOf")
		return c.compileAllOf(append(slices.Clone(parts), rest), path+"/allOf", depth)
	}
	_, hasAny := s.get("anyOf")
	_, hasOne := s.get("oneOf")
	if hasAny && hasOne {
		return nil, unsupported("oneOf", path, "together with anyOf")
	}
	if hasAny || hasOne {
		kw := "anyOf"
		if hasOne {
			kw = "oneOf"
		}
		return c.compileUnion(s, kw, path, depth)
	}
	_, hasEnum := s.get("enum")
	_, hasConst := s.get("const")
	if hasEnum || hasConst {
		return c.compileEnum(s, path)
	}
	types, err := schemaTypes(s, path)
	if err != nil {
		return nil, err
	}
	alts := make([]*Expr, 0, len(types))
	for _, t := range types {
		e, err := c.compileType(s, t, path, depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	return Choice(alts...), nil
}

func refOnly(ref any) *object {
	o := newObject()
	o.set("$ref", ref)
	return o
}

// schemaTypes returns the types schema s admits: its "type", or the types its keywords apply to, or every type. A list
// holding both "integer" and "number" keeps only "number".
func schemaTypes(s *object, path string) ([]string, error) {
	var types []string
	if t, ok := s.get("type"); ok {
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				name, ok := x.(string)
				if !ok {
					return nil, schemaErr(path, "type must be a string or an array of strings")
				}
				if !slices.Contains(types, name) {
					types = append(types, name)
				}
			}
		default:
			return nil, schemaErr(path, "type must be a string or an array of strings")
		}
		if len(types) == 0 {
			return nil, schemaErr(path, "the empty type list accepts no value")
		}
		for _, t := range types {
			if t != "integer" && !slices.Contains(allTypes, t) {
				return nil, schemaErr(path, "unknown type %q", t)
			}
		}
	} else {
		for _, k := range s.keys {
			if t, ok := typeKeywords[k]; ok && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		if len(types) == 0 {
			types = slices.Clone(allTypes)
		}
	}
	if slices.Contains(types, "number") {
		types = slices.DeleteFunc(types, func(t string) bool { return t == "integer" })
	}
	return types, nil
}

func (c *schemaCompiler) compileType(s *object, t, path string, depth int) (*Expr, error) {
	switch t {
	case "null":
		return Lit("null"), nil
	case "boolean":
		return c.j.boolean(), nil
	case "string":
		return c.stringSchema(s, path)
	case "integer":
		return c.numberSchema(s, path, true)
	case "number":
		return c.numberSchema(s, path, false)
	case "object":
		return c.objectSchema(s, path, depth)
	case "array":
		return c.arraySchema(s, path, depth)
	}
	return nil, schemaErr(path, "unknown type %q", t)
}

// resolve finds the schema a local reference points to.
func (c *schemaCompiler) resolve(ref, path string) (any, string, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", unsupported("$ref", path, "only references within the schema (#...) are supported, not %q", ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, "", schemaErr(path, "bad $ref %q: %v", ref, err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, "", unsupported("$ref", path, "anchors (%q) are not supported; use a JSON pointer", ref)
	}
	v := c.root
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch x := v.(type) {
			case *object:
				next, ok := x.get(tok)
				if !ok {
					return nil, "", schemaErr(path, "$ref %q points nowhere", ref)
				}
				v = next
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(x) {
					return nil, "", schemaErr(path, "$ref %q points nowhere", ref)
				}
				v = x[i]
			default:
				return nil, "", schemaErr(path, "$ref %q points nowhere", ref)
			}
		}
	}
	return v, "#" + frag, nil
}

// ref returns a reference to the rule compiled from the schema ref points
// to, compiling it on first use (a recursive schema refers to its own rule).
func (c *schemaCompiler) ref(ref, path string, depth int) (*Expr, error) {
	target, ptr, err := c.resolve(ref, path)
	if err != nil {
		return nil, err
	}
	if name, ok := c.refs[ptr]; ok {
		return c.j.b.Ref(name), nil
	}
	name := c.ruleName(ptr)
	c.refs[ptr] = name
	e, err := c.compile(target, ptr, depth+1)
	if err != nil {
		return nil, err
	}
	if err := c.j.b.Define(name, e); err != nil {
		return nil, err
	}
	return c.j.b.Ref(name), nil
}

// ruleName makes a unique GBNF rule name for the schema at pointer ptr.
func (c *schemaCompiler) ruleName(ptr string) string {
	last := ptr[strings.LastIndexByte(ptr, '/')+1:]
	var b strings.Builder
	b.WriteString("def-")
	for _, r := range last {
		if r < 0x80 && isWordChar(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() > 40 {
			break
		}
	}
	if ptr == "#" {
		b.WriteString("root")
	}
	base, name := b.String(), b.String()
	for i := 2; c.names[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	c.names[name] = true
	return name
}

// compileUnion compiles anyOf, or oneOf where its branches cannot match
// the same value. Constraining keywords beside the union apply to every
// branch.
func (c *schemaCompiler) compileUnion(s *object, kw, path string, depth int) (*Expr, error) {
	v, _ := s.get(kw)
	branches, ok := v.([]any)
	if !ok || len(branches) == 0 {
		return nil, schemaErr(path, "%s must be a non-empty array", kw)
	}
	rest := without(s, kw)
	var merged []any
	for i, br := range branches {
		bp := fmt.Sprintf("%s/%s/%d", path, kw, i)
		if constrains(rest) {
			m, err := c.merge([]any{rest, br}, bp, depth)
			if err != nil {
				return nil, err
			}
			br = m
		}
		merged = append(merged, br)
	}
	if kw == "oneOf" {
		if err := c.checkDisjoint(merged, path, depth); err != nil {
			return nil, err
		}
	}
	alts := make([]*Expr, 0, len(merged))
	for i, br := range merged {
		e, err := c.compile(br, fmt.Sprintf("%s/%s/%d", path, kw, i), depth+1)
		if err != nil {
			return nil, err
		}
		alts = append(alts, e)
	}
	return Choice(alts...), nil
}

func (c *schemaCompiler) compileAllOf(parts []any, path string, depth int) (*Expr, error) {
	m, err := c.merge(parts, path, depth)
	if err != nil {
		return nil, err
	}
	return c.compile(m, path, depth+1)
}

// compileEnum compiles enum and const: exactly the listed values, written
// compactly, of the schema's types where it names any.
func (c *schemaCompiler) compileEnum(s *object, path string) (*Expr, error) {
	for _, k := range s.keys {
		if !isAnnotation(k) && k != "enum" && k != "const" && k != "type" {
			return nil, unsupported(k, path, "together with enum or const")
		}
	}
	values, err := enumValues(s, path)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(values))
	for i, v := range values {
		texts[i] = canonical(v)
	}
	if len(texts) == 0 {
		return nil, schemaErr(path, "no value of enum or const satisfies the schema")
	}
	return literalTrie(texts), nil
}

// literalTrie matches exactly the strings given, as a trie (alternatives
// that share a prefix share it once), so that a matcher meets each prefix
// once rather than once per string. Duplicates are dropped.
func literalTrie(strs []string) *Expr {
	strs = slices.Clone(strs)
	slices.Sort(strs)
	strs = slices.Compact(strs)
	return trieOf(strs, 0)
}

// trieOf matches the sorted, distinct strs, which share their first
// depth bytes, from byte depth on.
func trieOf(strs []string, depth int) *Expr {
	// The common prefix of all (the first and last, being sorted).
	first, last := strs[0][depth:], strs[len(strs)-1][depth:]
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	for n > 0 && n < len(first) && !utf8.RuneStart(first[n]) {
		n-- // keep a code point whole
	}
	prefix := Lit(first[:n])
	depth += n
	if len(strs) == 1 {
		return prefix
	}
	var alts []*Expr
	i := 0
	if len(strs[0]) == depth {
		alts = append(alts, Lit("")) // one string ends here
		i = 1
	}
	for i < len(strs) {
		// The strings whose next code point is the same.
		_, size := utf8.DecodeRuneInString(strs[i][depth:])
		key := strs[i][depth : depth+size]
		j := i + 1
		for j < len(strs) && strings.HasPrefix(strs[j][depth:], key) {
			j++
		}
		alts = append(alts, trieOf(strs[i:j], depth))
		i = j
	}
	return cat(prefix, Choice(alts...))
}

// enumValues returns the values enum and const allow (both where both are
// given), filtered by the schema's type.
func enumValues(s *object, path string) ([]any, error) {
	var values []any
	e, hasEnum := s.get("enum")
	if hasEnum {
		list, ok := e.([]any)
		if !ok {
			return nil, schemaErr(path, "enum must be an array")
		}
		values = list
	}
	if cv, ok := s.get("const"); ok {
		if hasEnum && !slices.ContainsFunc(values, func(v any) bool { return canonical(v) == canonical(cv) }) {
			values = nil
		} else {
			values = []any{cv}
		}
	}
	if _, ok := s.get("type"); ok {
		types, err := schemaTypes(s, path)
		if err != nil {
			return nil, err
		}
		values = slices.DeleteFunc(slices.Clone(values), func(v any) bool {
			t := jsonType(v)
			return !slices.Contains(types, t) && !(t == "integer" && slices.Contains(types, "number"))
		})
	}
	return values, nil
}
