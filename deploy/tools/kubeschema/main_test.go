package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// swagger is a small OpenAPI v2 document shaped like Kubernetes' own.
const swagger = `{"definitions": {
 "io.k8s.api.core.v1.Widget": {
  "type": "object",
  "properties": {
   "apiVersion": {"type": "string"}, "kind": {"type": "string"},
   "spec": {"$ref": "#/definitions/io.k8s.api.core.v1.WidgetSpec"}
  },
  "x-kubernetes-group-version-kind": [{"group": "", "kind": "Widget", "version": "v1"}]
 },
 "io.k8s.api.core.v1.WidgetSpec": {
  "type": "object",
  "properties": {
   "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
   "memory": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},
   "labels": {"type": "object", "additionalProperties": {"type": "string"}}
  }
 },
 "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
 "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
 "io.k8s.api.apps.v1.Unused": {"type": "object", "properties": {"x": {"type": "string"}}}
}}`

// crdYAML is a CustomResourceDefinition with two versions, after an empty document.
const crdYAML = `---
# nothing
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [port]
            properties:
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
  - name: v1alpha1
    schema:
      openAPIV3Schema: {type: object}
`

func compile(t *testing.T, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compiling the generated schema: %v", err)
	}
	return s
}

func check(t *testing.T, s *jsonschema.Schema, doc string, valid bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	err := s.Validate(v)
	if valid && err != nil {
		t.Errorf("%s: rejected: %v", doc, err)
	}
	if !valid && err == nil {
		t.Errorf("%s: accepted, want rejected", doc)
	}
}

func TestKubernetesSchemas(t *testing.T) {
	out, err := kubernetesSchemas([]byte(swagger))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out["v1/widget_v1.json"] == nil {
		t.Fatalf("schemas %v, want only v1/widget_v1.json", keys(out))
	}
	if bytes.Contains(out["v1/widget_v1.json"], []byte("Unused")) {
		t.Error("the schema carries a definition it does not refer to")
	}
	s := compile(t, out["v1/widget_v1.json"])
	check(t, s, `{"apiVersion": "v1", "kind": "Widget", "spec": {"port": 8080, "memory": "1Gi", "labels": {"a": "b"}}}`, true)
	check(t, s, `{"spec": {"port": "http", "memory": 2}}`, true)
	check(t, s, `{"spec": {"port": 1.5}}`, false)
	check(t, s, `{"spec": {"port": true}}`, false)
	check(t, s, `{"spec": {"prot": 8080}}`, false)
	check(t, s, `{"spec": {"labels": {"a": 1}}}`, false)
	check(t, s, `{"spec": null}`, false)
	check(t, s, `{"status": {}}`, false)
}

func TestCRDSchemas(t *testing.T) {
	out, err := crdSchemas([]byte(crdYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out["example.com/gadget_v1.json"] == nil || out["example.com/gadget_v1alpha1.json"] == nil {
		t.Fatalf("schemas %v, want example.com/gadget_v1.json and _v1alpha1.json", keys(out))
	}
	s := compile(t, out["example.com/gadget_v1.json"])
	check(t, s, `{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"port": 80, "note": null}}`, true)
	check(t, s, `{"spec": {"port": "http", "extra": {"known": "k", "anything": [1, 2]}}}`, true)
	check(t, s, `{"spec": {}}`, false)
	check(t, s, `{"spec": {"port": 80, "bogus": 1}}`, false)
	check(t, s, `{"spec": {"port": 80}, "bogus": 1}`, false)
	check(t, s, `{"spec": {"port": 80, "extra": {"known": 3}}}`, false)
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		crd            bool
	}{
		{"not JSON", `{`, "OpenAPI document", false},
		{"no definitions", `{"definitions": {}}`, "no definitions", false},
		{"no kinds", `{"definitions": {"a": {"type": "object"}}}`, "no definition names a kind", false},
		{"dangling ref", `{"definitions": {"a": {"properties": {"b": {"$ref": "#/definitions/zz"}},
			"x-kubernetes-group-version-kind": [{"group": "", "kind": "A", "version": "v1"}]}}}`, "no such definition", false},
		{"remote ref", `{"definitions": {"a": {"properties": {"b": {"$ref": "http://x/y"}},
			"x-kubernetes-group-version-kind": [{"group": "", "kind": "A", "version": "v1"}]}}}`, "only local definitions", false},
		{"bad gvk", `{"definitions": {"a": {"x-kubernetes-group-version-kind": "x"}}}`, "x-kubernetes-group-version-kind", false},
		{"not a CRD", "kind: Deployment\n", "want CustomResourceDefinition", true},
		{"no CRD", "---\n---\n", "no CustomResourceDefinition", true},
		{"no schema", "kind: CustomResourceDefinition\nspec: {group: g, names: {kind: K}, versions: [{name: v1}]}\n", "no openAPIV3Schema", true},
		{"no group", "kind: CustomResourceDefinition\nspec: {names: {kind: K}}\n", "no spec.group", true},
		{"bad YAML", "kind: [\n", "document 1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.crd {
				_, err = crdSchemas([]byte(c.in))
			} else {
				_, err = kubernetesSchemas([]byte(c.in))
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestSchemaPath(t *testing.T) {
	for _, c := range []struct{ group, version, kind, want string }{
		{"", "v1", "Service", "v1/service_v1.json"},
		{"apps", "v1", "Deployment", "apps/deployment_v1.json"},
		{"inference.networking.k8s.io", "v1", "InferencePool", "inference.networking.k8s.io/inferencepool_v1.json"},
	} {
		if got := schemaPath(c.group, c.version, c.kind); got != c.want {
			t.Errorf("schemaPath(%q, %q, %q) = %q, want %q", c.group, c.version, c.kind, got, c.want)
		}
	}
}

// FuzzCRDSchemas feeds arbitrary YAML to the CRD reader: an error or
// schemas that compile, never a panic.
func FuzzCRDSchemas(f *testing.F) {
	f.Add([]byte(crdYAML))
	f.Add([]byte("kind: CustomResourceDefinition\nspec: {group: g, names: {kind: K}, versions: [{name: v1, schema: {openAPIV3Schema: {type: object, properties: {a: {type: string, nullable: true}}}}}]}\n"))
	f.Add([]byte("---\n--- x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := crdSchemas(data)
		if err != nil {
			return
		}
		for p, s := range out {
			if !json.Valid(s) {
				t.Fatalf("%s: invalid JSON", p)
			}
		}
	})
}

// FuzzKubernetesSchemas feeds arbitrary JSON to the OpenAPI reader.
func FuzzKubernetesSchemas(f *testing.F) {
	f.Add([]byte(swagger))
	f.Add([]byte(`{"definitions": {"a": {"$ref": "#/definitions/a", "x-kubernetes-group-version-kind": [{"kind": "A", "version": "v1"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := kubernetesSchemas(data)
		if err != nil {
			return
		}
		for p, s := range out {
			if !json.Valid(s) {
				t.Fatalf("%s: invalid JSON", p)
			}
		}
	})
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
