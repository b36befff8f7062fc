package grammar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// jsonMember returns the members of an object: key, colon, value.
func (c *schemaCompiler) jsonMember(key, val *Expr) *Expr {
	return cat(key, c.j.tok(":"), val)
}

// prop is a named property of an object schema, compiled.
type prop struct {
	name string
	val  *Expr
	req  bool
}

// objectSchema compiles properties, required, additionalProperties,
// minProperties and maxProperties.
// Properties come in the schema's order, each optional one present or
// not, then any other keys (which never repeat a named property).
func (c *schemaCompiler) objectSchema(s *object, path string, depth int) (*Expr, error) {
	var required []string
	if r, ok := s.get("required"); ok {
		list, ok := r.([]any)
		if !ok {
			return nil, schemaErr(path, "required must be an array of strings")
		}
		for _, x := range list {
			name, ok := x.(string)
			if !ok {
				return nil, schemaErr(path, "required must be an array of strings")
			}
			if !slices.Contains(required, name) {
				required = append(required, name)
			}
		}
	}
	var additional any = c.j.opt.AllowAdditionalDefault
	if a, ok := s.get("additionalProperties"); ok {
		additional = a
	}
	var props []prop
	var names []string
	if p, ok := s.get("properties"); ok {
		po, ok := p.(*object)
		if !ok {
			return nil, schemaErr(path, "properties must be an object")
		}
		for _, name := range po.keys {
			val, err := c.compile(po.vals[name], path+"/properties/"+escapePointer(name), depth+1)
			if err != nil {
				return nil, err
			}
			props = append(props, prop{name, val, slices.Contains(required, name)})
			names = append(names, name)
		}
	}
	for _, name := range required {
		if slices.Contains(names, name) {
			continue
		}
		if additional == false {
			return nil, schemaErr(path, "required property %q is not in properties, and other properties are not allowed", name)
		}
		val, err := c.compile(additional, path+"/additionalProperties", depth+1)
		if err != nil {
			return nil, err
		}
		props = append(props, prop{name, val, true})
		names = append(names, name)
	}
	// minProperties and maxProperties, as a count of the other keys where
	// every named property is required, or where they hold anyway.
	xlo, xhi, err := c.propertyCounts(s, props, additional != false, path)
	if err != nil {
		return nil, err
	}
	var extra *Expr
	if additional != false && xhi != 0 {
		key, err := c.keyExcluding(names, path)
		if err != nil {
			return nil, err
		}
		val, err := c.compile(additional, path+"/additionalProperties", depth+1)
		if err != nil {
			return nil, err
		}
		c.objs++
		name := fmt.Sprintf("obj%d-key", c.objs)
		if err := c.j.b.Define(name, key); err != nil {
			return nil, err
		}
		extra = c.jsonMember(c.j.b.Ref(name), val)
	}

	comma := func() *Expr { return c.j.tok(",") }
	members := make([]*Expr, len(props))
	for i, p := range props {
		members[i] = c.jsonMember(Lit(jsonQuote(p.name)), p.val)
	}
	// tail: the other keys, after something was written.
	tail := func() *Expr {
		if extra == nil {
			return &Expr{Kind: Empty}
		}
		return rep(cat(comma(), extra), xlo, xhi)
	}
	// item i, after something was written.
	item := func(i int) *Expr {
		if props[i].req {
			return cat(comma(), members[i])
		}
		return Opt(cat(comma(), members[i]))
	}
	// suffix(i): items i..n-1 and the tail, after something was written.
	suffix := func(i int) *Expr {
		parts := []*Expr{}
		for k := i; k < len(props); k++ {
			parts = append(parts, item(k))
		}
		return cat(append(parts, tail())...)
	}
	firstReq := slices.IndexFunc(props, func(p prop) bool { return p.req })
	lastFirst := firstReq // the last property that can come first
	if firstReq < 0 {
		lastFirst = len(props) - 1
	}
	var alts []*Expr
	switch {
	case lastFirst < 0:
	case lastFirst == 0:
		alts = append(alts, cat(members[0], suffix(1)))
	default:
		// Chain rules: after[i] is suffix(i), sharing its tail with
		// after[i+1], so that optional properties cost linear size.
		c.objs++
		rule := func(i int) string { return fmt.Sprintf("obj%d-after%d", c.objs, i) }
		for i := 1; i <= lastFirst; i++ {
			if err := c.j.b.Define(rule(i), cat(item(i), c.j.b.Ref(rule(i+1)))); err != nil {
				return nil, err
			}
		}
		if err := c.j.b.Define(rule(lastFirst+1), suffix(lastFirst+1)); err != nil {
			return nil, err
		}
		for k := 0; k <= lastFirst; k++ {
			alts = append(alts, cat(members[k], c.j.b.Ref(rule(k+1))))
		}
	}
	if firstReq < 0 && extra != nil {
		alts = append(alts, cat(extra, rep(cat(comma(), extra), max0(xlo-1), decr(xhi))))
	}
	if len(alts) == 0 {
		return cat(Lit("{"), c.j.ws(), Lit("}")), nil
	}
	body := cat(Choice(alts...), c.j.ws())
	if firstReq < 0 && xlo == 0 {
		body = Opt(body)
	}
	return cat(Lit("{"), c.j.ws(), body, Lit("}")), nil
}

// propertyCounts returns how many other keys an object may have, given
// minProperties and maxProperties: any number where neither is given or
// both hold whatever is written; an exact range of the other keys where
// every named property is required. Otherwise the keywords are refused.
func (c *schemaCompiler) propertyCounts(s *object, props []prop, extras bool, path string) (int, int, error) {
	minP, err := countKeyword(s, "minProperties", path, 0)
	if err != nil {
		return 0, 0, err
	}
	maxP, err := countKeyword(s, "maxProperties", path, -1)
	if err != nil {
		return 0, 0, err
	}
	req := 0
	for _, p := range props {
		if p.req {
			req++
		}
	}
	most := len(props) // the most keys written, -1 unbounded
	if extras {
		most = -1
	}
	if minP <= req && (maxP < 0 || (most >= 0 && most <= maxP)) {
		return 0, -1, nil
	}
	kw := "minProperties"
	if minP <= req {
		kw = "maxProperties"
	}
	if req != len(props) {
		return 0, 0, unsupported(kw, path, "with optional properties")
	}
	lo, hi := max0(minP-req), -1
	if maxP >= 0 {
		hi = maxP - req
	}
	if hi >= 0 && lo > hi || hi < 0 && maxP >= 0 || !extras && lo > 0 {
		return 0, 0, schemaErr(path, "no object satisfies minProperties %d and maxProperties %d", minP, maxP)
	}
	return lo, hi, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// keyExcluding returns a JSON string that is none of names. Its
// characters are written raw or with the two-character escapes; \u
// escapes and \/ are left out so that each key has one spelling, which the
// exclusion can then compare.
func (c *schemaCompiler) keyExcluding(names []string, path string) (*Expr, error) {
	const escapes = "\"\\bfnrt"
	raw := NotChars(Range{0, 0x1F}, Range{'"', '"'}, Range{'\\', '\\'})
	unit := Choice(raw, cat(Lit(`\`), Chars(toRanges(escapes)...)))
	type node struct {
		kids  map[string]*node
		order []string
		end   bool
	}
	root := &node{kids: map[string]*node{}}
	for _, name := range names {
		if len(name) > maxKeyLen {
			return nil, unsupported("properties", path, "a property name longer than %d bytes beside additional properties", maxKeyLen)
		}
		n := root
		ok := true
		var units []string
		for _, r := range name {
			u := jsonEscapeRune(r)
			if strings.HasPrefix(u, `\u`) {
				ok = false // the key grammar cannot write it, so cannot collide
				break
			}
			units = append(units, u)
		}
		if !ok {
			continue
		}
		for _, u := range units {
			k, found := n.kids[u]
			if !found {
				k = &node{kids: map[string]*node{}}
				n.kids[u] = k
				n.order = append(n.order, u)
			}
			n = k
		}
		n.end = true
	}
	rest := cat(Star(unit), Lit(`"`))
	var build func(n *node) *Expr
	build = func(n *node) *Expr {
		var alts []*Expr
		if !n.end {
			alts = append(alts, Lit(`"`))
		}
		var rawKids []Range
		esc := escapes
		for _, u := range n.order {
			if len(u) == 2 && u[0] == '\\' {
				esc = strings.ReplaceAll(esc, u[1:], "")
			} else {
				r := []rune(u)[0]
				rawKids = append(rawKids, Range{r, r})
			}
		}
		other := []*Expr{NotChars(normRanges(append(rawKids, Range{0, 0x1F}, Range{'"', '"'}, Range{'\\', '\\'}))...)}
		if esc != "" {
			other = append(other, cat(Lit(`\`), Chars(toRanges(esc)...)))
		}
		alts = append(alts, cat(Choice(other...), rest))
		for _, u := range n.order {
			alts = append(alts, cat(Lit(u), build(n.kids[u])))
		}
		return Choice(alts...)
	}
	if len(root.order) == 0 && !root.end {
		return c.j.str(), nil
	}
	return cat(Lit(`"`), build(root)), nil
}

// toRanges returns the characters of s as single-character ranges.
func toRanges(s string) []Range {
	var rs []Range
	for _, r := range s {
		rs = append(rs, Range{r, r})
	}
	return normRanges(rs)
}

// arraySchema compiles items, prefixItems (or the older array form of
// items with additionalItems), minItems and maxItems.
func (c *schemaCompiler) arraySchema(s *object, path string, depth int) (*Expr, error) {
	var prefix []any
	var rest any = true
	if p, ok := s.get("prefixItems"); ok {
		list, ok := p.([]any)
		if !ok {
			return nil, schemaErr(path, "prefixItems must be an array")
		}
		prefix = list
	}
	if it, ok := s.get("items"); ok {
		if list, isList := it.([]any); isList {
			if prefix != nil {
				return nil, schemaErr(path, "items as an array together with prefixItems")
			}
			prefix = list
			if a, ok := s.get("additionalItems"); ok {
				rest = a
			}
		} else {
			rest = it
		}
	} else if _, ok := s.get("additionalItems"); ok {
		return nil, unsupported("additionalItems", path, "without items as an array")
	}
	if len(prefix) > maxPrefixItems {
		return nil, unsupported("prefixItems", path, "more than %d entries", maxPrefixItems)
	}
	min, err := countKeyword(s, "minItems", path, 0)
	if err != nil {
		return nil, err
	}
	max, err := countKeyword(s, "maxItems", path, -1)
	if err != nil {
		return nil, err
	}
	k := len(prefix)
	if rest == false && (max < 0 || max > k) {
		max = k
	}
	if max >= 0 && min > max {
		return nil, schemaErr(path, "no array satisfies minItems %d and at most %d items", min, max)
	}
	if max >= 0 && k > max {
		prefix, k = prefix[:max], max
	}
	elems := make([]*Expr, k)
	for i, p := range prefix {
		e, err := c.compile(p, fmt.Sprintf("%s/prefixItems/%d", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		elems[i] = e
	}
	var restElem *Expr
	if rest != false {
		if restElem, err = c.compile(rest, path+"/items", depth+1); err != nil {
			return nil, err
		}
	}
	comma := func() *Expr { return c.j.tok(",") }
	// The elements after the prefix, once something was written.
	lo, hi := max0(min-k), -1
	if max >= 0 {
		hi = max - k
	}
	var after *Expr = &Expr{Kind: Empty}
	if restElem != nil && hi != 0 {
		after = rep(cat(comma(), restElem), lo, hi)
	}
	var body *Expr // never empty
	nullable := min == 0
	switch {
	case k > 0:
		// from(i): elements i.. once i were written.
		var from func(i int) *Expr
		from = func(i int) *Expr {
			if i == k {
				return after
			}
			e := cat(comma(), elems[i], from(i+1))
			if i >= min {
				e = Opt(e)
			}
			return e
		}
		body = cat(elems[0], from(1))
	case restElem != nil && hi != 0:
		body = cat(restElem, rep(cat(comma(), restElem), max0(lo-1), decr(hi)))
	}
	if body == nil {
		return cat(Lit("["), c.j.ws(), Lit("]")), nil
	}
	body = cat(body, c.j.ws())
	if nullable {
		body = Opt(body)
	}
	return cat(Lit("["), c.j.ws(), body, Lit("]")), nil
}

func max0(n int) int { return max(n, 0) }

// decr is n-1 for a bound, -1 (unbounded) staying -1.
func decr(n int) int {
	if n < 0 {
		return -1
	}
	return n - 1
}

// countKeyword reads a non-negative integer keyword such as minItems.
func countKeyword(s *object, kw, path string, def int) (int, error) {
	v, ok := s.get(kw)
	if !ok {
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok || !isInteger(n) || strings.HasPrefix(n.String(), "-") {
		return 0, schemaErr(path, "%s must be a non-negative integer", kw)
	}
	i, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || i > MaxRepeat {
		return 0, unsupported(kw, path, "more than the limit of %d", MaxRepeat)
	}
	return int(i), nil
}
