// Command kubeschema writes strict JSON schemas for kubeconform, offline:
// one per kind and version of the Kubernetes API, from the OpenAPI v2
// document in the Kubernetes source (api/openapi-spec/swagger.json), and
// one per version of each CustomResourceDefinition given (the Gateway API
// Inference Extension's InferencePool, the Prometheus Operator's
// ServiceMonitor, ...). It is what kubeconform's openapi2jsonschema.py does,
// without Python or a download.
//
//	kubeschema -swagger swagger.json -crd pools.yaml -crd monitors.yaml -out schemas
//	kubeconform -strict -schema-location 'schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json' rendered.yaml
//
// The schemas are strict: every object that lists its properties rejects
// others (additionalProperties: false) unless it preserves unknown fields;
// int-or-string values take a string or an integer and quantities a string
// or a number, as the API server accepts them.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	var (
		swagger string
		crds    []string
		out     string
	)
	flag.StringVar(&swagger, "swagger", "", "Kubernetes OpenAPI v2 document (api/openapi-spec/swagger.json)")
	flag.Func("crd", "CustomResourceDefinition YAML file (repeat for more)", func(s string) error {
		crds = append(crds, s)
		return nil
	})
	flag.StringVar(&out, "out", "", "directory to write GROUP/KIND_VERSION.json into (required)")
	flag.Parse()
	if err := run(swagger, crds, out); err != nil {
		fmt.Fprintln(os.Stderr, "kubeschema:", err)
		os.Exit(1)
	}
}

func run(swagger string, crds []string, out string) error {
	if out == "" || swagger == "" && len(crds) == 0 {
		return errors.New("want -out and at least one of -swagger and -crd")
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	all := map[string][]byte{}
	add := func(source string, schemas map[string][]byte) error {
		for p, s := range schemas {
			if _, dup := all[p]; dup {
				return fmt.Errorf("%s: %s is defined twice", source, p)
			}
			all[p] = s
		}
		return nil
	}
	if swagger != "" {
		data, err := os.ReadFile(swagger)
		if err != nil {
			return err
		}
		schemas, err := kubernetesSchemas(data)
		if err != nil {
			return fmt.Errorf("%s: %w", swagger, err)
		}
		if err := add(swagger, schemas); err != nil {
			return err
		}
	}
	for _, c := range crds {
		data, err := os.ReadFile(c)
		if err != nil {
			return err
		}
		schemas, err := crdSchemas(data)
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		if err := add(c, schemas); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(all)) {
		path := filepath.Join(out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, all[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// schemaPath is where kubeconform's location template
// {{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json looks for
// a kind: group "" (the core API) is spelled as the version, as kubeconform
// splits apiVersion.
func schemaPath(group, version, kind string) string {
	dir := group
	if dir == "" {
		dir = version
	}
	return dir + "/" + strings.ToLower(kind) + "_" + version + ".json"
}

// gvk is an OpenAPI definition's x-kubernetes-group-version-kind entry.
type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// kubernetesSchemas turns an OpenAPI v2 document into one standalone schema
// per kind and version: the kind's definition with every definition it
// refers to, directly or not, under "definitions".
func kubernetesSchemas(swagger []byte) (map[string][]byte, error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &doc); err != nil {
		return nil, fmt.Errorf("OpenAPI document: %w", err)
	}
	if len(doc.Definitions) == 0 {
		return nil, errors.New("OpenAPI document: no definitions")
	}
	defs := map[string]any{}
	for name, d := range doc.Definitions {
		defs[name] = strictify(d, strings.HasSuffix(name, ".api.resource.Quantity"))
	}
	out := map[string][]byte{}
	for _, name := range slices.Sorted(maps.Keys(doc.Definitions)) {
		raw, ok := doc.Definitions[name]["x-kubernetes-group-version-kind"]
		if !ok {
			continue
		}
		var kinds []gvk
		if err := remarshal(raw, &kinds); err != nil {
			return nil, fmt.Errorf("%s: x-kubernetes-group-version-kind: %w", name, err)
		}
		refs := map[string]bool{}
		if err := collectRefs(defs[name], defs, refs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		schema := maps.Clone(defs[name].(map[string]any))
		if len(refs) > 0 {
			used := map[string]any{}
			for r := range refs {
				used[r] = defs[r]
			}
			schema["definitions"] = used
		}
		data, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, k := range kinds {
			if k.Kind == "" || k.Version == "" {
				return nil, fmt.Errorf("%s: group-version-kind %+v lacks a kind or version", name, k)
			}
			p := schemaPath(k.Group, k.Version, k.Kind)
			// A kind can appear under more than one definition (the
			// same type re-exported); the first, in name order, wins.
			if _, dup := out[p]; !dup {
				out[p] = data
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("OpenAPI document: no definition names a kind (x-kubernetes-group-version-kind)")
	}
	return out, nil
}

const refPrefix = "#/definitions/"

// collectRefs adds to seen the definitions that node refers to, and those
// they refer to in turn.
func collectRefs(node any, defs map[string]any, seen map[string]bool) error {
	switch n := node.(type) {
	case map[string]any:
		if r, ok := n["$ref"].(string); ok {
			name, found := strings.CutPrefix(r, refPrefix)
			if !found {
				return fmt.Errorf("$ref %q: only local definitions are supported", r)
			}
			d, ok := defs[name]
			if !ok {
				return fmt.Errorf("$ref %q: no such definition", r)
			}
			if !seen[name] {
				seen[name] = true
				if err := collectRefs(d, defs, seen); err != nil {
					return err
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if err := collectRefs(n[k], defs, seen); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := collectRefs(v, defs, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// crd is the part of a CustomResourceDefinition that schemas come from.
type crd struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema *struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// crdSchemas turns each version of a CustomResourceDefinition (one YAML
// document, or several separated by "---") into a strict schema.
func crdSchemas(data []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, docText := range splitYAML(data) {
		var c crd
		if err := yaml.Unmarshal([]byte(docText), &c); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if c.Kind == "" {
			continue // an empty document
		}
		if c.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("document %d: kind %q, want CustomResourceDefinition", i+1, c.Kind)
		}
		if c.Spec.Group == "" || c.Spec.Names.Kind == "" {
			return nil, fmt.Errorf("document %d: no spec.group or spec.names.kind", i+1)
		}
		for _, v := range c.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("%s %s: no openAPIV3Schema", c.Spec.Names.Kind, v.Name)
			}
			s, err := json.Marshal(strictify(v.Schema.OpenAPIV3Schema, false))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", c.Spec.Names.Kind, v.Name, err)
			}
			out[schemaPath(c.Spec.Group, v.Name, c.Spec.Names.Kind)] = s
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no CustomResourceDefinition in it")
	}
	return out, nil
}

// splitYAML splits a YAML stream at its "---" document separators.
func splitYAML(data []byte) []string {
	var docs []string
	var cur strings.Builder
	for line := range strings.Lines(string(data)) {
		if t := strings.TrimRight(line, " \t\r\n"); t == "---" || strings.HasPrefix(t, "--- ") {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.String())
}

// strictify returns a copy of the schema node in which objects that list
// their properties allow no others (unless they preserve unknown fields),
// nullable values
// allow null, int-or-string values take either, and a quantity (the node
// is the Quantity definition) takes a string or a number.
func strictify(node any, quantity bool) any {
	switch n := node.(type) {
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = strictify(v, false)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(n)+1)
		for k, v := range n {
			switch k {
			case "properties", "patternProperties", "definitions":
				// Maps of names to schemas: each schema on its own.
				m, ok := v.(map[string]any)
				if !ok {
					out[k] = v
					continue
				}
				sub := make(map[string]any, len(m))
				for name, s := range m {
					sub[name] = strictify(s, false)
				}
				out[k] = sub
			case "enum", "required", "default", "example", "x-kubernetes-validations", "x-kubernetes-list-map-keys":
				out[k] = v // data, not schemas
			default:
				out[k] = strictify(v, false)
			}
		}
		preserve, _ := n["x-kubernetes-preserve-unknown-fields"].(bool)
		if _, has := n["properties"]; has && !preserve {
			if _, set := n["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		intOrString, _ := n["x-kubernetes-int-or-string"].(bool)
		if n["format"] == "int-or-string" {
			intOrString = true
		}
		switch {
		case intOrString:
			delete(out, "type")
			delete(out, "format")
			out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		case quantity:
			delete(out, "type")
			out["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
		}
		if b, _ := n["nullable"].(bool); b {
			if t, ok := out["type"].(string); ok {
				out["type"] = []any{t, "null"}
			}
		}
		return out
	}
	return node
}

// remarshal converts v, decoded from JSON, into out.
func remarshal(v, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
