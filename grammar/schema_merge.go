package grammar

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
)

// merge combines schemas that must all hold (allOf, or the keywords beside
// anyOf with one of its branches) into one schema: types intersected,
// properties and required joined (a property in several parts must satisfy
// each), bounds tightened, enums intersected. References and nested allOf
// are expanded first. What cannot be combined is refused naming allOf.
func (c *schemaCompiler) merge(parts []any, path string, depth int) (*object, error) {
	var flat []*object
	var add func(p any, d int) error
	add = func(p any, d int) error {
		if d > maxSchemaDepth {
			return schemaErr(path, "allOf and $ref nested more than %d deep", maxSchemaDepth)
		}
		switch p := p.(type) {
		case bool:
			if p {
				return nil
			}
			return schemaErr(path, "allOf holds the schema false, which accepts no value")
		case *object:
			for _, k := range p.keys {
				if !isAnnotation(k) && !enforced[k] {
					return unsupported(k, path, "")
				}
			}
			if ref, ok := p.get("$ref"); ok {
				r, ok := ref.(string)
				if !ok {
					return schemaErr(path, "$ref must be a string")
				}
				target, _, err := c.resolve(r, path)
				if err != nil {
					return err
				}
				if err := add(target, d+1); err != nil {
					return err
				}
				return add(without(p, "$ref"), d+1)
			}
			if all, ok := p.get("allOf"); ok {
				list, ok := all.([]any)
				if !ok || len(list) == 0 {
					return schemaErr(path, "allOf must be a non-empty array")
				}
				for _, q := range list {
					if err := add(q, d+1); err != nil {
						return err
					}
				}
				return add(without(p, "allOf"), d+1)
			}
			flat = append(flat, p)
			return nil
		}
		return schemaErr(path, "a schema must be an object or a boolean, not %s", jsonType(p))
	}
	for _, p := range parts {
		if err := add(p, depth); err != nil {
			return nil, err
		}
	}

	out := newObject()
	var types []string
	hasTypes := false
	var enum []any
	hasEnum := false
	var items []any
	var propOrder []string
	required := []any{}
	for _, p := range flat {
		if _, ok := p.get("type"); ok {
			ts, err := schemaTypes(p, path)
			if err != nil {
				return nil, err
			}
			if hasTypes {
				types = intersectTypes(types, ts)
			} else {
				types, hasTypes = ts, true
			}
		}
		_, e := p.get("enum")
		_, cst := p.get("const")
		if e || cst {
			vs, err := enumValues(without(p, "type"), path)
			if err != nil {
				return nil, err
			}
			if hasEnum {
				enum = slices.DeleteFunc(enum, func(v any) bool {
					return !slices.ContainsFunc(vs, func(w any) bool { return canonical(v) == canonical(w) })
				})
			} else {
				enum, hasEnum = slices.Clone(vs), true
			}
		}
		for _, k := range p.keys {
			v := p.vals[k]
			switch k {
			case "type", "enum", "const", "uniqueItems":
			case "properties":
				po, ok := v.(*object)
				if !ok {
					return nil, schemaErr(path, "properties must be an object")
				}
				for _, name := range po.keys {
					if !slices.Contains(propOrder, name) {
						propOrder = append(propOrder, name)
					}
				}
			case "required":
				list, ok := v.([]any)
				if !ok {
					return nil, schemaErr(path, "required must be an array of strings")
				}
				for _, r := range list {
					if !slices.ContainsFunc(required, func(x any) bool { return x == r }) {
						required = append(required, r)
					}
				}
			case "additionalProperties":
			case "items":
				if _, isList := v.([]any); isList {
					if err := mergeOnce(out, k, v, path); err != nil {
						return nil, err
					}
				} else {
					items = append(items, v)
				}
			case "anyOf", "oneOf", "prefixItems", "additionalItems", "pattern", "format", "multipleOf":
				if err := mergeOnce(out, k, v, path); err != nil {
					return nil, err
				}
			case "minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum":
				if err := mergeBound(out, k, v, path, false); err != nil {
					return nil, err
				}
			case "maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum":
				if err := mergeBound(out, k, v, path, true); err != nil {
					return nil, err
				}
			default:
				if !isAnnotation(k) {
					return nil, unsupported(k, path, "inside allOf")
				}
			}
		}
	}
	_, hasAny := out.get("anyOf")
	_, hasOne := out.get("oneOf")
	if hasAny && hasOne {
		return nil, unsupported("allOf", path, "combining anyOf and oneOf")
	}
	if hasTypes {
		if len(types) == 0 {
			return nil, schemaErr(path, "the types of allOf's parts have nothing in common")
		}
		tv := make([]any, len(types))
		for i, t := range types {
			tv[i] = t
		}
		out.set("type", tv)
	}
	if hasEnum {
		out.set("enum", enum)
	}
	if len(items) == 1 {
		out.set("items", items[0])
	} else if len(items) > 1 {
		out.set("items", allOfSchema(items))
	}
	if err := c.mergeObject(flat, out, propOrder, required, path); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeObject combines properties and additionalProperties: a name must
// satisfy every part's schema for it (its property schema, or else its
// additionalProperties), and is dropped where a part forbids it.
func (c *schemaCompiler) mergeObject(flat []*object, out *object, propOrder []string, required []any, path string) error {
	props := newObject()
	for _, name := range propOrder {
		var schemas []any
		forbidden := false
		for _, p := range flat {
			if pv, ok := p.get("properties"); ok {
				if s, ok := pv.(*object).get(name); ok {
					schemas = append(schemas, s)
					continue
				}
			}
			if _, ok := p.get("properties"); !ok {
				if _, ok := p.get("additionalProperties"); !ok {
					continue // not an object constraint
				}
			}
			a, ok := p.get("additionalProperties")
			switch {
			case !ok || a == true:
			case a == false:
				forbidden = true
			default:
				schemas = append(schemas, a)
			}
		}
		if forbidden {
			if slices.ContainsFunc(required, func(x any) bool { return x == name }) {
				return schemaErr(path, "property %q is required but a part of allOf forbids it", name)
			}
			continue
		}
		if len(schemas) == 1 {
			props.set(name, schemas[0])
		} else {
			props.set(name, allOfSchema(schemas))
		}
	}
	if len(propOrder) > 0 {
		out.set("properties", props)
	}
	if len(required) > 0 {
		out.set("required", required)
	}
	var addl []any
	explicit := false
	for _, p := range flat {
		a, ok := p.get("additionalProperties")
		if !ok {
			continue
		}
		explicit = true
		if a == false {
			out.set("additionalProperties", false)
			return nil
		}
		if a != true {
			addl = append(addl, a)
		}
	}
	switch {
	case len(addl) == 1:
		out.set("additionalProperties", addl[0])
	case len(addl) > 1:
		out.set("additionalProperties", allOfSchema(addl))
	case explicit:
		out.set("additionalProperties", true)
	}
	return nil
}

func allOfSchema(parts []any) *object {
	o := newObject()
	o.set("allOf", parts)
	return o
}

// mergeOnce sets a keyword that parts of allOf may give only once (or
// identically).
func mergeOnce(out *object, k string, v any, path string) error {
	if old, ok := out.get(k); ok && canonical(old) != canonical(v) {
		return unsupported("allOf", path, "%s given differently by two parts", k)
	}
	out.set(k, v)
	return nil
}

// mergeBound keeps the tighter of two numeric bounds.
func mergeBound(out *object, k string, v any, path string, upper bool) error {
	n, ok := v.(json.Number)
	if !ok {
		return unsupported(k, path, "a non-numeric %s inside allOf", k)
	}
	old, ok := out.get(k)
	if !ok {
		out.set(k, v)
		return nil
	}
	a, _ := new(big.Rat).SetString(old.(json.Number).String())
	b, ok := new(big.Rat).SetString(n.String())
	if !ok || a == nil {
		return schemaErr(path, "%s must be a number", k)
	}
	if (upper && b.Cmp(a) < 0) || (!upper && b.Cmp(a) > 0) {
		out.set(k, v)
	}
	return nil
}

func intersectTypes(a, b []string) []string {
	var out []string
	for _, t := range a {
		switch {
		case slices.Contains(b, t):
			out = append(out, t)
		case t == "integer" && slices.Contains(b, "number"):
			out = append(out, t)
		case t == "number" && slices.Contains(b, "integer"):
			out = append(out, "integer")
		}
	}
	return slices.Compact(out)
}

// branchSummary is what checkDisjoint knows of a oneOf branch.
type branchSummary struct {
	types    []string // the JSON types it admits ("integer" within "number")
	values   []string // canonical enum/const values; nil if not an enum
	required []string
	known    []string            // property names
	closed   bool                // no other property names
	consts   map[string][]string // required property → its enum/const values
}

// summarize describes branch s for the disjointness check.
func (c *schemaCompiler) summarize(s any, path string, depth int) (*branchSummary, error) {
	var o *object
	switch s := s.(type) {
	case bool:
		return &branchSummary{types: allTypes}, nil
	case *object:
		o = s
	default:
		return nil, schemaErr(path, "a schema must be an object or a boolean")
	}
	if _, ok := o.get("$ref"); ok {
		m, err := c.merge([]any{o}, path, depth)
		if err != nil {
			return nil, err
		}
		o = m
	} else if _, ok := o.get("allOf"); ok {
		m, err := c.merge([]any{o}, path, depth)
		if err != nil {
			return nil, err
		}
		o = m
	}
	sum := &branchSummary{}
	_, hasAny := o.get("anyOf")
	_, hasOne := o.get("oneOf")
	_, hasEnum := o.get("enum")
	_, hasConst := o.get("const")
	switch {
	case hasAny || hasOne:
		sum.types = allTypes
		return sum, nil
	case hasEnum || hasConst:
		vs, err := enumValues(o, path)
		if err != nil {
			return nil, err
		}
		sum.values = []string{}
		for _, v := range vs {
			sum.values = append(sum.values, canonical(v))
			t := jsonType(v)
			if t == "integer" {
				t = "number"
			}
			if !slices.Contains(sum.types, t) {
				sum.types = append(sum.types, t)
			}
		}
		return sum, nil
	}
	ts, err := schemaTypes(o, path)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t == "integer" {
			t = "number"
		}
		if !slices.Contains(sum.types, t) {
			sum.types = append(sum.types, t)
		}
	}
	if r, ok := o.get("required"); ok {
		list, _ := r.([]any)
		for _, x := range list {
			if name, ok := x.(string); ok {
				sum.required = append(sum.required, name)
			}
		}
	}
	a, hasA := o.get("additionalProperties")
	sum.closed = a == false || (!hasA && !c.j.opt.AllowAdditionalDefault)
	sum.consts = map[string][]string{}
	if p, ok := o.get("properties"); ok {
		if po, ok := p.(*object); ok {
			sum.known = po.keys
			for _, name := range po.keys {
				if !slices.Contains(sum.required, name) {
					continue
				}
				ps, err := c.summarize(po.vals[name], path+"/properties/"+escapePointer(name), depth+1)
				if err != nil {
					return nil, err
				}
				if ps.values != nil {
					sum.consts[name] = ps.values
				}
			}
		}
	}
	return sum, nil
}

// checkDisjoint accepts oneOf only where no value can match two branches:
// their types differ, their enum values differ, or (objects) a required
// property's constant differs (a discriminator) or one requires a property
// the other cannot have.
func (c *schemaCompiler) checkDisjoint(branches []any, path string, depth int) error {
	sums := make([]*branchSummary, len(branches))
	for i, b := range branches {
		s, err := c.summarize(b, fmt.Sprintf("%s/oneOf/%d", path, i), depth+1)
		if err != nil {
			return err
		}
		sums[i] = s
	}
	for i := range sums {
		for j := i + 1; j < len(sums); j++ {
			if !disjoint(sums[i], sums[j]) {
				return unsupported("oneOf", path, "branches %d and %d may match the same value; use anyOf, or distinguish them by type, const or a required property", i, j)
			}
		}
	}
	return nil
}

func disjoint(a, b *branchSummary) bool {
	var common []string
	for _, t := range a.types {
		if slices.Contains(b.types, t) {
			common = append(common, t)
		}
	}
	if len(common) == 0 {
		return true
	}
	if a.values != nil && b.values != nil {
		for _, v := range a.values {
			if slices.Contains(b.values, v) {
				return false
			}
		}
		return true
	}
	if len(common) != 1 || common[0] != "object" || a.values != nil || b.values != nil {
		return false
	}
	for name, av := range a.consts {
		bv, ok := b.consts[name]
		if !ok {
			continue
		}
		if !slices.ContainsFunc(av, func(v string) bool { return slices.Contains(bv, v) }) {
			return true
		}
	}
	lacks := func(x, y *branchSummary) bool { // y's values cannot have a property x requires
		if !y.closed {
			return false
		}
		for _, r := range x.required {
			if !slices.Contains(y.known, r) {
				return true
			}
		}
		return false
	}
	return lacks(a, b) || lacks(b, a)
}
