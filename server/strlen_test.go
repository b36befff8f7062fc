package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestClientStringBounds sends the schemas zod and pydantic write for a
// string with a format or a pattern and length bounds (z.string().email()
// .max(40); EmailStr with max_length; HttpUrl; constr(pattern=...,
// min_length=..., max_length=...); UUID with lengths) and checks that each
// is served and that the replies that stop validate, formats asserted.
func TestClientStringBounds(t *testing.T) {
	ts := modelServer(t)
	c := noThinkClient(ts)
	for _, tc := range []struct{ name, schema string }{
		// zod 4's z.toJSONSchema: its own email pattern beside the format.
		{"zod_email_max", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"email":{"type":"string","maxLength":40,"format":"email","pattern":"^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}},"required":["email"],"additionalProperties":false}`},
		{"email_max", `{"type":"object","properties":{"email":{"type":"string","format":"email","maxLength":40}},"required":["email"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`},
		{"pydantic_email_max", `{"properties":{"email":{"format":"email","maxLength":64,"title":"Email","type":"string"}},"required":["email"],"title":"User","type":"object"}`},
		{"pydantic_httpurl", `{"properties":{"url":{"format":"uri","maxLength":2083,"minLength":1,"title":"Url","type":"string"}},"required":["url"],"title":"Link","type":"object"}`},
		{"pattern_bounds", `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2}-[0-9a-z]+$","minLength":5,"maxLength":8}},"required":["code"],"additionalProperties":false}`},
		{"uuid_length", `{"type":"object","properties":{"id":{"type":"string","format":"uuid","minLength":36,"maxLength":36}},"required":["id"],"additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			jc := jsonschema.NewCompiler()
			jc.AssertFormat()
			if err := jc.AddResource("schema.json", doc); err != nil {
				t.Fatal(err)
			}
			schema, err := jc.Compile("schema.json")
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := json.Unmarshal([]byte(tc.schema), &raw); err != nil {
				t.Fatal(err)
			}
			const n = 4
			resps, errs := replies(n, func(i int) (*openai.ChatCompletion, error) {
				p := userTurn("Reply with JSON.")
				p.Temperature = openai.Float(1)
				p.Seed = openai.Int(int64(i))
				p.MaxTokens = openai.Int(replyTokens)
				p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: tc.name, Schema: raw, Strict: openai.Bool(true)}}}
				return c.Chat.Completions.New(context.Background(), p)
			})
			stopped := 0
			for i, r := range resps {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				ch := r.Choices[0]
				if ch.FinishReason != "stop" {
					continue
				}
				stopped++
				if err := validate(schema, ch.Message.Content); err != nil {
					t.Errorf("reply %d %q: %v", i, ch.Message.Content, err)
				}
			}
			checkStops(t, tc.name, stopped, n)
		})
	}
}
