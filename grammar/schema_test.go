package grammar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validator compiles schema with formats asserted.
func validator(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("validator cannot compile the schema: %v", err)
	}
	return s
}

// validates reports whether the JSON text inst satisfies s.
func validates(t testing.TB, s *jsonschema.Schema, inst string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(inst))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return s.Validate(v)
}

// checkSound generates n instances from the schema's grammar and checks
// that each is JSON the validator accepts.
func checkSound(t *testing.T, schema string, opt SchemaOptions, n int) {
	t.Helper()
	g, err := FromJSONSchema([]byte(schema), opt)
	if err != nil {
		t.Fatalf("FromJSONSchema: %v", err)
	}
	v := validator(t, schema)
	for i, s := range samples(t, g, n, uint64(len(schema))) {
		if err := validates(t, v, s); err != nil {
			t.Fatalf("sample %d %q does not validate: %v\ngrammar:\n%s", i, s, err, g)
		}
		if !matches(g, s) {
			t.Fatalf("sample %q is not matched by its own grammar", s)
		}
	}
}

type schemaCase struct {
	name    string
	schema  string
	opt     *SchemaOptions
	valid   []string // the grammar and the validator accept
	invalid []string // the grammar and the validator reject
	strict  []string // the validator accepts but the grammar rejects (formatting, order, limits)
}

var compact = SchemaOptions{AllowAdditionalDefault: true}

// options returns the case's options, compact by default.
func (tc *schemaCase) options() SchemaOptions {
	if tc.opt != nil {
		return *tc.opt
	}
	return compact
}

// build returns the case's grammar and a validator of its schema.
func (tc *schemaCase) build(t testing.TB) (*Grammar, *jsonschema.Schema) {
	t.Helper()
	g, err := FromJSONSchema([]byte(tc.schema), tc.options())
	if err != nil {
		t.Fatal(err)
	}
	return g, validator(t, tc.schema)
}

var schemaCases = []schemaCase{
	{name: "true", schema: `true`, valid: []string{`1`, `"x"`, `{"a":[1,null]}`}},
	{name: "type null", schema: `{"type":"null"}`, valid: []string{`null`}, invalid: []string{`0`, `""`}},
	{name: "type boolean", schema: `{"type":"boolean"}`, valid: []string{`true`, `false`}, invalid: []string{`null`, `1`}},
	{name: "type list", schema: `{"type":["string","null"],"maxLength":2}`, valid: []string{`null`, `"ab"`}, invalid: []string{`"abc"`, `1`}},
	{name: "string", schema: `{"type":"string"}`, valid: []string{`""`, `"a\"b\\c\n\u00e9\/"`, `"日本"`}, invalid: []string{`1`, "\"a\x01\""}, strict: []string{`"\ud83d\ude00"`}},
	{name: "lengths", schema: `{"type":"string","minLength":2,"maxLength":3}`, valid: []string{`"ab"`, `"a\nc"`, `"日本語"`, `"\u00e9\u00e9"`}, invalid: []string{`"a"`, `"abcd"`, `"日本語x"`}},
	{name: "integer", schema: `{"type":"integer"}`, valid: []string{`0`, `-12`, `1234567890`, `-0`}, invalid: []string{`1.5`, `"1"`}, strict: []string{`1.0`, `1e3`}},
	{name: "number", schema: `{"type":"number"}`, valid: []string{`0`, `-1.5`, `2e10`, `3.25E-2`}, invalid: []string{`"1"`, `null`, `01`}, strict: []string{`1e1234`}},
	{name: "integer range", schema: `{"type":"integer","minimum":-15,"maximum":1234}`, valid: []string{`-15`, `-1`, `0`, `9`, `10`, `999`, `1000`, `1234`}, invalid: []string{`-16`, `1235`, `2000`, `-100`}},
	{name: "integer exclusive", schema: `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":100}`, valid: []string{`1`, `99`}, invalid: []string{`0`, `100`, `-5`}},
	{name: "integer fractional bounds", schema: `{"type":"integer","minimum":1.5,"maximum":3.5}`, valid: []string{`2`, `3`}, invalid: []string{`1`, `4`}},
	{name: "integer lower bound", schema: `{"type":"integer","minimum":95}`, valid: []string{`95`, `100`, `123456789`}, invalid: []string{`94`, `-95`, `9`}},
	{name: "integer upper bound", schema: `{"type":"integer","maximum":-7}`, valid: []string{`-7`, `-8`, `-100000`}, invalid: []string{`-6`, `0`, `7`}},
	{name: "draft4 exclusive", schema: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":5,"exclusiveMinimum":true}`, valid: []string{`6`}, invalid: []string{`5`}},
	{name: "number range", schema: `{"type":"number","minimum":0,"maximum":1}`, valid: []string{`0`, `0.5`, `1`, `1.000`, `0.0`}, invalid: []string{`1.01`, `-0.5`, `2`}},
	{name: "number exclusive", schema: `{"type":"number","exclusiveMinimum":-2,"exclusiveMaximum":3}`, valid: []string{`-1.99`, `-1`, `0`, `2.999`, `-0.5`}, invalid: []string{`-2`, `3`, `3.5`, `-2.0`}},
	{name: "number fractional bounds", schema: `{"type":"number","minimum":-1.25,"exclusiveMaximum":2.5}`, valid: []string{`-1.25`, `-1.2`, `-1.249`, `0`, `2.49`, `2.4999`, `1`, `-0.5`}, invalid: []string{`-1.26`, `-1.3`, `2.5`, `2.50`, `3`, `-2`}},
	{name: "number narrow", schema: `{"type":"number","exclusiveMinimum":0.1,"maximum":0.15}`, valid: []string{`0.11`, `0.15`, `0.150`, `0.1000001`, `0.12345`}, invalid: []string{`0.1`, `0.10`, `0.16`, `0.151`, `0`, `1`}},
	{name: "number negative fractional", schema: `{"type":"number","minimum":-0.75,"maximum":-0.5}`, valid: []string{`-0.75`, `-0.5`, `-0.6`, `-0.500`}, invalid: []string{`-0.76`, `-0.49`, `0`, `-1`}},
	{name: "number exponent bound", schema: `{"type":"number","minimum":1e-3,"maximum":1E2}`, valid: []string{`0.001`, `0.5`, `100`, `99.99`}, invalid: []string{`0.0009`, `100.01`, `0`}},
	{name: "multipleOf cents", schema: `{"type":"number","multipleOf":0.01,"minimum":0}`, valid: []string{`0`, `12.5`, `12.34`, `0.07`, `100`}, invalid: []string{`-1`, `1.234`, `0.001`}, strict: []string{`1e2`}},
	{name: "multipleOf one", schema: `{"type":"number","multipleOf":1}`, valid: []string{`3`, `-4`, `0`}, invalid: []string{`1.5`}, strict: []string{`1.0`}},
	{name: "multipleOf on integer", schema: `{"type":"integer","multipleOf":0.1,"maximum":5}`, valid: []string{`5`, `-3`}, invalid: []string{`6`}},
	{name: "enum", schema: `{"enum":["red","green",3,null,{"a":[1]}]}`, valid: []string{`"red"`, `3`, `null`, `{"a":[1]}`}, invalid: []string{`"blue"`, `4`}},
	{name: "enum with type", schema: `{"type":"string","enum":["a","b",1]}`, valid: []string{`"a"`}, invalid: []string{`1`, `"c"`}},
	{name: "const", schema: `{"const":"x\"y"}`, valid: []string{`"x\"y"`}, invalid: []string{`"xy"`}},
	{name: "object", schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},"required":["b"],"additionalProperties":false}`,
		valid:   []string{`{"b":"x"}`, `{"a":1,"b":"x"}`, `{"a":1,"b":"x","c":true}`, `{"b":"x","c":false}`},
		invalid: []string{`{}`, `{"a":1}`, `{"b":"x","d":1}`, `{"b":1}`},
		strict:  []string{`{"b":"x","a":1}`}},
	{name: "object all optional", schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},"additionalProperties":false}`,
		valid: []string{`{}`, `{"a":1}`, `{"b":1}`, `{"c":1}`, `{"a":1,"c":2}`, `{"a":1,"b":2,"c":3}`}, invalid: []string{`{"d":1}`, `{"a":"x"}`}},
	{name: "additional default open", schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`,
		valid: []string{`{}`, `{"a":1}`, `{"a":1,"b":[true]}`, `{"x":null}`}, invalid: []string{`{"a":"s"}`}},
	{name: "additional default closed", schema: `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, opt: &SchemaOptions{},
		valid: []string{`{"a":1}`}, invalid: []string{`{}`}, strict: []string{`{"a":1,"b":2}`}},
	{name: "additional schema", schema: `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":{"type":"integer"}}`,
		valid: []string{`{"id":"x","n":1,"m":2}`, `{"n":1}`, `{"i":3}`, `{"idx":3}`, `{"":1}`}, invalid: []string{`{"n":"x"}`, `{"id":1}`}, strict: []string{`{"n":1,"id":"x"}`}},
	{name: "required beyond properties", schema: `{"type":"object","required":["k"],"additionalProperties":{"type":"boolean"}}`,
		valid: []string{`{"k":true}`, `{"k":false,"z":true}`}, invalid: []string{`{}`, `{"k":1}`}},
	{name: "property counts", schema: `{"type":"object","additionalProperties":{"type":"integer"},"minProperties":1,"maxProperties":2}`,
		valid: []string{`{"a":1}`, `{"a":1,"b":2}`}, invalid: []string{`{}`, `{"a":1,"b":2,"c":3}`}},
	{name: "property counts required", schema: `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"minProperties":2,"maxProperties":3}`,
		valid: []string{`{"id":"x","k":1}`, `{"id":"x","k":1,"j":null}`}, invalid: []string{`{"id":"x"}`, `{"id":"x","a":1,"b":2,"c":3}`}},
	{name: "property counts that hold", schema: `{"type":"object","properties":{"a":{},"b":{}},"additionalProperties":false,"maxProperties":2}`,
		valid: []string{`{}`, `{"a":1,"b":2}`}, invalid: []string{`{"c":1}`}},
	{name: "array items", schema: `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`,
		valid: []string{`[1]`, `[1,2,3]`}, invalid: []string{`[]`, `[1,2,3,4]`, `["a"]`}},
	{name: "array any", schema: `{"type":"array"}`, valid: []string{`[]`, `[1,"a",null,[{}]]`}, invalid: []string{`{}`}},
	{name: "prefixItems", schema: `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
		valid: []string{`[]`, `["a"]`, `["a",1]`}, invalid: []string{`[1]`, `["a",1,2]`}},
	{name: "prefixItems rest", schema: `{"type":"array","prefixItems":[{"const":"x"}],"items":{"type":"integer"},"minItems":2,"maxItems":4}`,
		valid: []string{`["x",1]`, `["x",1,2,3]`}, invalid: []string{`["x"]`, `["x",1,2,3,4]`, `[1,2]`}},
	{name: "big maxItems", schema: `{"type":"array","items":{"type":"integer"},"maxItems":10000}`, valid: []string{`[]`, `[1,2]`}},
	{name: "anyOf", schema: `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]}`, valid: []string{`1`, `"a"`}, invalid: []string{`"ab"`, `null`}},
	{name: "anyOf with siblings", schema: `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false,"anyOf":[{"properties":{"a":{"minimum":10}}},{"properties":{"a":{"maximum":-10}}}]}`,
		valid: []string{`{"a":10}`, `{"a":-10}`}, invalid: []string{`{"a":0}`}},
	{name: "oneOf types", schema: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, valid: []string{`"a"`, `1`}, invalid: []string{`null`}},
	{name: "oneOf discriminator", schema: `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"]},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"string"}},"required":["kind","y"]}]}`,
		valid: []string{`{"kind":"a","x":1}`, `{"kind":"b","y":"s"}`}, invalid: []string{`{"kind":"a","y":"s"}`, `{"kind":"c","x":1}`}},
	{name: "allOf", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]},{"properties":{"a":{"minimum":0}}}]}`,
		valid: []string{`{"a":1,"b":"x"}`}, invalid: []string{`{"a":-1,"b":"x"}`, `{"a":1}`}},
	{name: "allOf closed", schema: `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false},{"properties":{"b":{"type":"integer"},"c":{"type":"integer"}}}]}`,
		valid: []string{`{"a":1}`, `{"a":1,"b":2}`}, invalid: []string{`{"c":1}`}},
	{name: "ref defs", schema: `{"$defs":{"pos":{"type":"integer","minimum":1}},"type":"object","properties":{"x":{"$ref":"#/$defs/pos"},"y":{"$ref":"#/$defs/pos"}},"required":["x","y"],"additionalProperties":false}`,
		valid: []string{`{"x":1,"y":2}`}, invalid: []string{`{"x":0,"y":2}`}},
	{name: "ref definitions", schema: `{"definitions":{"s":{"type":"string","maxLength":1}},"type":"array","items":{"$ref":"#/definitions/s"}}`,
		valid: []string{`[]`, `["a","b"]`}, invalid: []string{`["ab"]`}},
	{name: "recursive", schema: `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"}`,
		valid: []string{`{"v":1}`, `{"v":1,"kids":[{"v":2,"kids":[]},{"v":3,"kids":[{"v":4}]}]}`}, invalid: []string{`{"v":1,"kids":[{}]}`}},
	{name: "recursive root", schema: `{"type":"object","properties":{"next":{"$ref":"#"},"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`,
		valid: []string{`{"n":1}`, `{"next":{"n":2},"n":1}`}, invalid: []string{`{"next":{},"n":1}`}},
	{name: "ref with siblings", schema: `{"$defs":{"o":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}},"$ref":"#/$defs/o","properties":{"b":{"type":"string"}},"required":["b"]}`,
		valid: []string{`{"a":1,"b":"x"}`}, invalid: []string{`{"a":1}`, `{"b":"x"}`}},
	{name: "pattern", schema: `{"type":"string","pattern":"^[A-Z]{2}-\\d{3,4}$"}`, valid: []string{`"AB-123"`, `"XY-1234"`}, invalid: []string{`"ab-123"`, `"AB-12"`}},
	{name: "pattern with lengths that hold", schema: `{"type":"string","pattern":"^[0-9]{5}(-[0-9]{4})?$","minLength":5,"maxLength":10}`, valid: []string{`"12345"`, `"12345-6789"`}, invalid: []string{`"1234"`}},
	{name: "format with lengths that hold", schema: `{"type":"string","format":"uuid","maxLength":36}`, valid: []string{`"123e4567-e89b-12d3-a456-426614174000"`}},
	{name: "pattern escapes", schema: `{"type":"string","pattern":"^a\"b\\\\c\\.(x|y)?$"}`, valid: []string{`"a\"b\\c.x"`, `"a\"b\\c."`}, invalid: []string{`"a\"b\\cXx"`}},
	{name: "pattern unanchored", schema: `{"type":"string","pattern":"[0-9]+"}`, valid: []string{`"123"`}, strict: []string{`"a1"`}},
	{name: "format date", schema: `{"type":"string","format":"date"}`, valid: []string{`"2024-02-29"`, `"2000-02-29"`, `"2023-12-31"`, `"1999-04-30"`}, invalid: []string{`"2023-02-29"`, `"1900-02-29"`, `"2023-04-31"`, `"2023-13-01"`, `"2023-1-01"`}},
	{name: "format time", schema: `{"type":"string","format":"time"}`, valid: []string{`"12:34:56Z"`, `"23:59:59.123+05:30"`, `"00:00:00-08:00"`}, invalid: []string{`"24:00:00Z"`, `"12:60:00Z"`, `"12:00:00"`}},
	{name: "format date-time", schema: `{"type":"string","format":"date-time"}`, valid: []string{`"2024-01-15T10:20:30Z"`, `"2024-01-15T10:20:30.5+01:00"`}, invalid: []string{`"2024-01-15 10:20:30Z"`, `"2024-01-15T10:20Z"`}},
	{name: "format uuid", schema: `{"type":"string","format":"uuid"}`, valid: []string{`"123e4567-e89b-12d3-a456-426614174000"`, `"123E4567-E89B-12D3-A456-426614174000"`}, invalid: []string{`"123e4567e89b12d3a456426614174000"`, `"123e4567-e89b-12d3-a456-42661417400g"`}},
	{name: "format email", schema: `{"type":"string","format":"email"}`, valid: []string{`"a.b+c@example.com"`, `"x@y"`, `"customerservice123@mail.example.co.uk"`}, invalid: []string{`"a..b@example.com"`, `"a b@example.com"`, `"a@-x.com"`}},
	{name: "format ipv4", schema: `{"type":"string","format":"ipv4"}`, valid: []string{`"192.168.0.1"`, `"255.255.255.255"`, `"0.0.0.0"`}, invalid: []string{`"256.1.1.1"`, `"01.1.1.1"`, `"1.1.1"`}},
	{name: "format uri", schema: `{"type":"string","format":"uri"}`, valid: []string{`"https://example.com"`, `"http://a.b:8080/x/y%20z?q=1&r=(2)#frag/x"`, `"git+ssh://host/"`}, invalid: []string{`"example.com/x"`, `"/relative"`}, strict: []string{`"mailto:a@b.c"`}},
	{name: "format ipv6", schema: `{"type":"string","format":"ipv6"}`, valid: []string{`"::"`, `"::1"`, `"fe80::1:2"`, `"1:2:3:4:5:6:7:8"`, `"1:2:3:4:5:6:7::"`, `"ABCD::ef01"`}, invalid: []string{`"1:2:3:4:5:6:7:8::"`, `"1:2:3"`, `"12345::"`, `"1::2::3"`}, strict: []string{`"::ffff:1.2.3.4"`}},
	{name: "format duration", schema: `{"type":"string","format":"duration"}`, valid: []string{`"P1Y"`, `"P1Y2M3DT4H5M6S"`, `"PT1S"`, `"P3W"`, `"P2MT30M"`}, invalid: []string{`"P"`, `"PT"`, `"P1S"`, `"1Y"`, `"P1M1Y"`}, strict: []string{`"P1Y3D"`}},
	{name: "enum shared prefixes", schema: `{"enum":["application/json","application/xml","app","日本","日曜",""]}`, valid: []string{`"application/json"`, `"app"`, `"日曜"`, `""`}, invalid: []string{`"application/"`, `"ap"`, `"日"`, `"application/jsonx"`}},
	{name: "format hostname", schema: `{"type":"string","format":"hostname"}`, valid: []string{`"example.com"`, `"a-b.c"`}, invalid: []string{`"-a.com"`, `"a_b.com"`}},
	{name: "whitespace", schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]}`, opt: &SchemaOptions{MaxWhitespace: 4, AllowAdditionalDefault: true},
		valid: []string{"{ \"a\": [ 1, 2 ] }", "{\n  \"a\": [1, 2]\n}", `{"a":[]}`, "{\"a\":[\n]}"}, strict: []string{"{\"a\":[1,     2]}", " {\"a\":[]}", "{\"a\" :[]}", "{\"a\":[1 ,2]}"}},
	{name: "annotations", schema: `{"title":"T","description":"d","examples":[1],"example":1,"default":1,"$comment":"c","deprecated":false,"readOnly":true,"x-order":3,"type":"integer"}`, valid: []string{`1`}},
}

func TestFromJSONSchemaCases(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			g, v := tc.build(t)
			for _, s := range tc.valid {
				if err := validates(t, v, s); err != nil {
					t.Errorf("test case wrong: %s does not validate: %v", s, err)
				}
				if !matches(g, s) {
					t.Errorf("grammar rejects valid %s", s)
				}
			}
			for _, s := range tc.invalid {
				if validates(t, v, s) == nil {
					t.Errorf("test case wrong: %s validates", s)
				}
				if matches(g, s) {
					t.Errorf("grammar accepts invalid %s", s)
				}
			}
			for _, s := range tc.strict {
				if err := validates(t, v, s); err != nil {
					t.Errorf("test case wrong: %s does not validate: %v", s, err)
				}
				if matches(g, s) {
					t.Errorf("grammar accepts %s, which it should write differently", s)
				}
			}
			if t.Failed() {
				t.Logf("grammar:\n%s", g)
			}
			checkSound(t, tc.schema, tc.options(), 200)
		})
	}
}

func TestFromJSONSchemaRefused(t *testing.T) {
	for _, tc := range []struct{ schema, keyword string }{
		{`{"type":"integer","multipleOf":3}`, "multipleOf"},
		{`{"type":"number","multipleOf":0.25}`, "multipleOf"},
		{`{"type":"object","patternProperties":{"^a":{}}}`, "patternProperties"},
		{`{"not":{"type":"string"}}`, "not"},
		{`{"if":{},"then":{}}`, "if"},
		{`{"type":"array","contains":{"type":"integer"}}`, "contains"},
		{`{"type":"array","uniqueItems":true}`, "uniqueItems"},
		{`{"type":"object","properties":{"a":{}},"minProperties":1}`, "minProperties"},
		{`{"type":"object","properties":{"a":{}},"maxProperties":3}`, "maxProperties"},
		{`{"type":"string","format":"uri-reference"}`, "format"},
		{`{"type":"string","pattern":"^(?=a)"}`, "pattern"},
		{`{"type":"string","pattern":"(a)\\1"}`, "pattern"},
		{`{"type":"string","pattern":"\\bword"}`, "pattern"},
		{`{"type":"number","minimum":1e-30}`, "minimum"},
		{`{"type":"number","exclusiveMaximum":1e30,"minimum":2e20}`, "minimum"},
		{`{"type":"string","pattern":"(ab|c)*","maxLength":100000}`, "maxLength"},
		{`{"type":"string","pattern":"[a-z]+(-[a-z]+)*","minLength":100000}`, "minLength"},
		{`{"type":"string","pattern":"([^x]|x[^x])*","maxLength":1000}`, "maxLength"},
		{`{"oneOf":[{"type":"integer"},{"type":"number"}]}`, "oneOf"},
		{`{"oneOf":[{"type":"object","properties":{"a":{}}},{"type":"object"}]}`, "oneOf"},
		{`{"$ref":"http://example.com/s.json"}`, "$ref"},
		{`{"properties":{"a":{"type":"string","contentEncoding":"base64"}}}`, "contentEncoding"},
		{`{"enum":["a","bb"],"maxLength":1}`, "maxLength"},
		{`{"type":"integer","nullable":true}`, "nullable"},
	} {
		_, err := FromJSONSchema([]byte(tc.schema), compact)
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("%s: want an UnsupportedError, got %v", tc.schema, err)
			continue
		}
		if ue.Keyword != tc.keyword || !strings.Contains(err.Error(), `"`+tc.keyword+`"`) {
			t.Errorf("%s: error %q names %q, want %q", tc.schema, err, ue.Keyword, tc.keyword)
		}
	}
}

func TestFromJSONSchemaErrors(t *testing.T) {
	for _, schema := range []string{
		``, `{`, `[1]`, `"x"`, `false`, `{"type":"strin"}`, `{"type":[]}`,
		`{"$ref":"#/$defs/missing"}`, `{"$ref":"#"}`, `{"anyOf":[{"$ref":"#"}]}`,
		`{"type":"string","minLength":3,"maxLength":2}`, `{"type":"integer","minimum":5,"maximum":4}`,
		`{"type":"number","minimum":5.5,"maximum":5.25}`, `{"type":"number","exclusiveMinimum":5.5,"maximum":5.5}`, `{"type":"integer","minimum":5.5,"maximum":5.75}`,
		`{"type":"object","required":["a"],"additionalProperties":false}`,
		`{"type":"array","minItems":3,"items":false,"prefixItems":[{}]}`,
		`{"type":"array","maxItems":1000001}`, `{"a":1,"a":2}`,
		`{"type":"object","additionalProperties":false,"minProperties":1}`, `{"type":"object","properties":{"a":{}},"required":["a"],"maxProperties":0}`,
		`{"allOf":[{"type":"string"},{"type":"integer"}]}`,
		`{"enum":[1,2],"type":"string"}`,
		strings.Repeat(`{"items":`, 300) + `{}` + strings.Repeat(`}`, 300),
	} {
		if g, err := FromJSONSchema([]byte(schema), compact); err == nil {
			t.Errorf("%.60s: no error; grammar:\n%s", schema, g)
		}
	}
}

// TestSchemaFiles checks the benchmark schemas: each compiles, and
// instances generated from it validate.
func TestSchemaFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("want at least 10 schemas under testdata/schemas, have %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []SchemaOptions{{MaxWhitespace: 2, AllowAdditionalDefault: true}, {}} {
				checkSound(t, string(data), opt, 100)
			}
			// The grammar printed as GBNF reads back to the same language.
			g, err := FromJSONSchema(data, SchemaOptions{MaxWhitespace: 1})
			if err != nil {
				t.Fatal(err)
			}
			g2, err := ParseGBNF(strings.Replace(g.String(), g.Rules[g.Root].Name+" ::=", "root ::=", 1))
			if err != nil {
				t.Fatalf("printed grammar does not parse: %v", err)
			}
			for _, s := range samples(t, g, 50, 9) {
				if !matches(g2, s) {
					t.Fatalf("printed grammar rejects %q", s)
				}
			}
		})
	}
}

func TestAnyJSON(t *testing.T) {
	g := AnyJSON(SchemaOptions{MaxWhitespace: 2})
	for _, s := range []string{`1`, `"a"`, `{ "a": [ 1, { } ] }`, `[]`, `null`, `-0.5e3`} {
		if !matches(g, s) {
			t.Errorf("AnyJSON rejects %s", s)
		}
	}
	for _, s := range []string{``, `{`, `[1,]`, `{"a"}`, `nul`, ` 1`, "[1,\n\n\n2]", `{"a" :1}`, `[1 ,2]`} {
		if matches(g, s) {
			t.Errorf("AnyJSON accepts %q", s)
		}
	}
	checkSoundGrammar(t, g, `true`)
	o := JSONObject(SchemaOptions{})
	if !matches(o, `{"a":[1]}`) || matches(o, `[1]`) || matches(o, `1`) {
		t.Errorf("JSONObject accepts the wrong values")
	}
	checkSoundGrammar(t, o, `{"type":"object"}`)
}

// checkSoundGrammar checks that instances generated from g validate.
func checkSoundGrammar(t *testing.T, g *Grammar, schema string) {
	t.Helper()
	v := validator(t, schema)
	for _, s := range samples(t, g, 200, 7) {
		if err := validates(t, v, s); err != nil {
			t.Fatalf("sample %q: %v", s, err)
		}
	}
}

func TestChoices(t *testing.T) {
	g, err := Choices([]string{"yes", "no", "", "yes", "yesterday", "y", "日本", "日曜"})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"yes": true, "no": true, "": true, "ye": false, "yesno": false,
		"yesterday": true, "y": true, "yest": false, "日本": true, "日曜": true, "日": false} {
		if matches(g, s) != want {
			t.Errorf("Choices matches %q: %v, want %v", s, !want, want)
		}
	}
	if _, err := Choices(nil); err == nil {
		t.Error("no choices: no error")
	}
	if _, err := Choices([]string{"\xff"}); err == nil {
		t.Error("invalid UTF-8: no error")
	}
}

func TestInclude(t *testing.T) {
	args, err := FromJSONSchema([]byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`), SchemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder()
	b.Define("root", Sequence(Lit(`<tool_call>{"name":"weather","arguments":`), b.Include("args-", args), Lit("}</tool_call>")))
	g, err := b.Grammar("root")
	if err != nil {
		t.Fatal(err)
	}
	if !matches(g, `<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>`) {
		t.Errorf("composed grammar rejects a call:\n%s", g)
	}
	if matches(g, `<tool_call>{"name":"weather","arguments":{}}</tool_call>`) {
		t.Errorf("composed grammar accepts a call without its required argument")
	}
	b2 := NewBuilder()
	b2.Define("x-root", Lit("a"))
	b2.Define("root", b2.Include("x-", args))
	if _, err := b2.Grammar("root"); err == nil {
		t.Error("Include over an existing rule: no error")
	}
}

// TestSchemaMutants checks soundness on inputs the generator would not
// write: every single-character mutation of generated instances that the
// grammar still accepts must validate.
func TestSchemaMutants(t *testing.T) {
	const alphabet = "{}[]\",:0123456789.-+eE ntrufalsx\\é"
	for _, tc := range schemaCases {
		g, v := tc.build(t)
		gen := newGenerator(g, 11)
		rng := gen.rng
		for range 40 {
			s, ok := gen.sample()
			if !ok {
				continue
			}
			rs := []rune(s)
			for range 10 {
				m := slices.Clone(rs)
				i := rng.IntN(len(m) + 1)
				c := []rune(alphabet)[rng.IntN(len([]rune(alphabet)))]
				switch rng.IntN(3) {
				case 0:
					m = slices.Insert(m, i, c)
				case 1:
					if i < len(m) {
						m = slices.Delete(m, i, i+1)
					}
				default:
					if i < len(m) {
						m[i] = c
					}
				}
				if matches(g, string(m)) {
					if err := validates(t, v, string(m)); err != nil {
						t.Errorf("%s: grammar accepts %q, which does not validate: %v", tc.name, string(m), err)
					}
				}
			}
		}
	}
}
