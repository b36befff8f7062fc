package grammar

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// stringSchema compiles minLength, maxLength, pattern and format.
func (c *schemaCompiler) stringSchema(s *object, path string) (*Expr, error) {
	minLen, err := countKeyword(s, "minLength", path, 0)
	if err != nil {
		return nil, err
	}
	maxLen, err := countKeyword(s, "maxLength", path, -1)
	if err != nil {
		return nil, err
	}
	if maxLen >= 0 && minLen > maxLen {
		return nil, schemaErr(path, "no string satisfies minLength %d and maxLength %d", minLen, maxLen)
	}
	var pe, fe *Expr // the pattern's and the format's expressions
	var f string
	if v, ok := s.get("pattern"); ok {
		p, ok := v.(string)
		if !ok {
			return nil, schemaErr(path, "pattern must be a string")
		}
		if pe, err = c.j.b.Regex(p); err != nil {
			return nil, unsupported("pattern", path, "%v", trimPrefix(err))
		}
	}
	if v, ok := s.get("format"); ok {
		if f, ok = v.(string); !ok {
			return nil, schemaErr(path, "format must be a string")
		}
		if fe = formatExpr(f); fe == nil {
			return nil, unsupported("format", path, "format %q is not supported (date, time, date-time, duration, uuid, email, hostname, ipv4, ipv6 and uri are)", f)
		}
	}
	if pe == nil && fe == nil {
		if minLen == 0 && maxLen < 0 {
			return c.j.str(), nil
		}
		return cat(Lit(`"`), rep(c.j.char(), minLen, maxLen), Lit(`"`)), nil
	}
	// The strings the pattern and the format match (zod writes its own
	// email pattern beside format "email") whose length in code points is
	// within the bounds: the expression itself where its lengths already
	// are, else an automaton.
	var e *Expr
	what, kw := "pattern", "pattern"
	switch {
	case pe != nil && fe != nil:
		what = fmt.Sprintf("pattern and format %q", f)
		e, err = bothExpr(pe, fe, minLen, maxLen)
	default:
		e = pe
		if fe != nil {
			e, what, kw = fe, fmt.Sprintf("format %q", f), "format"
		}
		if lo, hi := lengthBounds(e); lo < minLen || maxLen >= 0 && (hi < 0 || hi > maxLen) {
			e, err = boundLength(e, minLen, maxLen)
			kw = "maxLength"
		}
	}
	if err == nil && e != nil {
		// As written in JSON: quotes, backslashes and controls escaped
		// (formats have none).
		if e = jsonText(e); e.Kind == Automaton && autoSize(e) > MaxLengthSize {
			err = fmt.Errorf("an estimated %d automaton nodes, more than %d", autoSize(e), MaxLengthSize)
		}
	}
	if err != nil {
		if kw == "maxLength" && maxLen < 0 {
			kw = "minLength"
		}
		return nil, unsupported(kw, path, "the %s%s would need %v", what, lengths(minLen, maxLen), err)
	}
	if e == nil {
		return nil, schemaErr(path, "no string matches the %s%s", what, lengths(minLen, maxLen))
	}
	return cat(Lit(`"`), e, Lit(`"`)), nil
}

// lengths describes a string's length bounds, for a message.
func lengths(lo, hi int) string {
	switch {
	case lo == 0 && hi < 0:
		return ""
	case hi < 0:
		return fmt.Sprintf(" with minLength %d", lo)
	case lo == 0:
		return fmt.Sprintf(" with maxLength %d", hi)
	}
	return fmt.Sprintf(" with minLength %d and maxLength %d", lo, hi)
}

// lengthBounds returns the fewest and the most characters an expression
// without references matches (most -1: unbounded).
func lengthBounds(e *Expr) (lo, hi int) {
	const big = 1 << 40 // saturates: counts beyond it are unbounded
	sat := func(n int) int { return min(n, big) }
	switch e.Kind {
	case Literal:
		n := utf8.RuneCountInString(e.Text)
		return n, n
	case Class:
		return 1, 1
	case Seq:
		for _, s := range e.Subs {
			l, h := lengthBounds(s)
			lo = sat(lo + l)
			if hi >= 0 {
				hi = sat(hi + h)
			}
			if h < 0 {
				hi = -1
			}
		}
		return lo, hi
	case Alt:
		lo = big
		for _, s := range e.Subs {
			l, h := lengthBounds(s)
			lo = min(lo, l)
			if h < 0 || hi < 0 {
				hi = -1
			} else {
				hi = max(hi, h)
			}
		}
		return lo, hi
	case Repeat:
		l, h := lengthBounds(e.Subs[0])
		lo = sat(l * e.Min)
		switch {
		case h == 0:
			hi = 0
		case h < 0 || e.Max < 0:
			hi = -1
		default:
			hi = sat(h * e.Max)
		}
		return lo, hi
	}
	return 0, 0 // Empty (and references, which these expressions lack)
}

// jsonText turns an expression over a string's characters into one over
// the string as a JSON string literal writes it (without the quotes):
// quotes, backslashes and control characters escaped.
func jsonText(e *Expr) *Expr {
	switch e.Kind {
	case Literal:
		var b strings.Builder
		for _, r := range e.Text {
			b.WriteString(jsonEscapeRune(r))
		}
		return Lit(b.String())
	case Class:
		pos := positive(e)
		special := []Range{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}
		var alts []*Expr
		if safe := subtract(pos, normRanges(special)); len(safe) > 0 {
			alts = append(alts, Chars(safe...))
		}
		for _, sr := range special {
			for r := sr.Lo; r <= sr.Hi; r++ {
				if inRanges(r, pos) {
					alts = append(alts, Lit(jsonEscapeRune(r)))
				}
			}
		}
		return Choice(alts...)
	case Seq, Alt, Repeat:
		c := *e
		c.Subs = make([]*Expr, len(e.Subs))
		for i, s := range e.Subs {
			c.Subs[i] = jsonText(s)
		}
		return &c
	case Automaton:
		a := &Auto{Final: e.Auto.Final, Edges: make([][]AutoEdge, len(e.Auto.Edges))}
		for s, edges := range e.Auto.Edges {
			a.Edges[s] = make([]AutoEdge, len(edges))
			for i, ed := range edges {
				a.Edges[s][i] = AutoEdge{Label: jsonText(ed.Label), To: ed.To}
			}
		}
		return NewAuto(a)
	}
	return e
}

// Format grammars, each over the characters of the string (all ASCII, so
// as written in JSON too). Each is at least as strict as RFC 3339, RFC
// 4122, RFC 5321 and RFC 1123 and the checks of common validators: dates
// are real calendar dates (29 February only in leap years), seconds go to
// 59, labels and addresses stay within the length limits.
func formatExpr(f string) *Expr {
	d := func() *Expr { return Chars(Range{'0', '9'}) }
	r := func(lo, hi rune) *Expr { return Chars(Range{lo, hi}) }
	switch f {
	case "date":
		return date()
	case "time":
		return timeOfDay()
	case "date-time":
		return cat(date(), Lit("T"), timeOfDay())
	case "uuid":
		h := func(n int) *Expr { return rep(hexDigit(), n, n) }
		return cat(h(8), Lit("-"), h(4), Lit("-"), h(4), Lit("-"), h(4), Lit("-"), h(12))
	case "ipv4":
		octet := func() *Expr {
			return Choice(
				cat(Lit("25"), r('0', '5')),
				cat(Lit("2"), r('0', '4'), d()),
				cat(Lit("1"), d(), d()),
				cat(r('1', '9'), d()),
				d())
		}
		return cat(octet(), rep(cat(Lit("."), octet()), 3, 3))
	case "hostname":
		return hostname(59)
	case "uri":
		return uri()
	case "ipv6":
		return ipv6()
	case "duration":
		return duration()
	case "email":
		atext := func(n int) *Expr {
			return rep(Chars(normRanges(append(toRanges("!#$%&'*+-/=?^_`{|}~"), Range{'0', '9'}, Range{'A', 'Z'}, Range{'a', 'z'}))...), 1, n)
		}
		// One to four dot-separated atoms, each short enough that the
		// local part stays within 64 octets; with a domain of at most 187
		// the address stays within 254.
		var local []*Expr
		for atoms, n := range []int{64, 31, 20, 15} {
			local = append(local, cat(atext(n), rep(cat(Lit("."), atext(n)), atoms, atoms)))
		}
		return cat(Choice(local...), Lit("@"), hostname(44))
	}
	return nil
}

// ipv6 is an IPv6 address in hexadecimal groups: eight, or fewer around
// one "::" that stands for at least one zero group (no embedded IPv4, no
// zone).
func ipv6() *Expr {
	h16 := func() *Expr { return rep(hexDigit(), 1, 4) }
	groups := func(n int) *Expr { // exactly n groups joined by ':'
		if n == 0 {
			return Lit("")
		}
		return cat(h16(), rep(cat(Lit(":"), h16()), n-1, n-1))
	}
	alts := []*Expr{groups(8)}
	for left := 0; left <= 7; left++ {
		// left groups, "::", then up to 7-left groups.
		right := Lit("")
		if left < 7 {
			right = Opt(cat(h16(), rep(cat(Lit(":"), h16()), 0, 6-left)))
		}
		alts = append(alts, cat(groups(left), Lit("::"), right))
	}
	return Choice(alts...)
}

// duration is RFC 3339's duration (appendix A): P with years, months and
// days, or weeks, and T with hours, minutes and seconds, each unit in order
// and without gaps, at most 9 digits each.
func duration() *Expr {
	n := func() *Expr { return rep(Chars(Range{'0', '9'}), 1, 9) }
	day := func() *Expr { return cat(n(), Lit("D")) }
	month := func() *Expr { return cat(n(), Lit("M"), Opt(day())) }
	year := cat(n(), Lit("Y"), Opt(month()))
	second := func() *Expr { return cat(n(), Lit("S")) }
	minute := func() *Expr { return cat(n(), Lit("M"), Opt(second())) }
	hour := cat(n(), Lit("H"), Opt(minute()))
	timePart := func() *Expr { return cat(Lit("T"), Choice(hour, minute(), second())) }
	date := cat(Choice(day(), month(), year), Opt(timePart()))
	return cat(Lit("P"), Choice(date, timePart(), cat(n(), Lit("W"))))
}

// uri is an absolute URI with an authority: scheme "://" hostname, an
// optional port, path, query and fragment, each of RFC 3986's characters
// (unreserved, sub-delimiters, ':', '@', percent-escapes).
func uri() *Expr {
	alpha := Range{'A', 'Z'}
	lower := Range{'a', 'z'}
	digit := Range{'0', '9'}
	pchar := func(extra string) *Expr {
		return Choice(
			Chars(normRanges(append(toRanges("-._~!$&'()*+,;=:@"+extra), alpha, lower, digit))...),
			cat(Lit("%"), hexDigit(), hexDigit()))
	}
	scheme := cat(Chars(alpha, lower), rep(Chars(normRanges(append(toRanges("+-."), alpha, lower, digit))...), 0, 15))
	port := Opt(cat(Lit(":"), rep(Chars(digit), 1, 5)))
	path := Star(cat(Lit("/"), Star(pchar(""))))
	query := Opt(cat(Lit("?"), Star(pchar("/?"))))
	fragment := Opt(cat(Lit("#"), Star(pchar("/?"))))
	return cat(scheme, Lit("://"), hostname(59), port, path, query, fragment)
}

// hostname is one to four dot-separated labels of letters, digits and
// inner hyphens, each at most inner+2 characters.
func hostname(inner int) *Expr {
	alnum := func() *Expr { return Chars(Range{'0', '9'}, Range{'A', 'Z'}, Range{'a', 'z'}) }
	label := func() *Expr {
		return cat(alnum(), Opt(cat(rep(Chars(Range{'-', '-'}, Range{'0', '9'}, Range{'A', 'Z'}, Range{'a', 'z'}), 0, inner), alnum())))
	}
	return cat(label(), rep(cat(Lit("."), label()), 0, 3))
}

// date is RFC 3339's full-date with a valid day of the month.
func date() *Expr {
	d := func() *Expr { return Chars(Range{'0', '9'}) }
	r := func(lo, hi rune) *Expr { return Chars(Range{lo, hi}) }
	day28 := func() *Expr {
		return Choice(cat(Lit("0"), r('1', '9')), cat(Lit("1"), d()), cat(Lit("2"), r('0', '8')))
	}
	day30 := Choice(day28(), Lit("29"), Lit("30"))
	day31 := Choice(day28(), Lit("29"), Lit("30"), Lit("31"))
	year := rep(d(), 4, 4)
	monthDay := Choice(
		cat(Choice(cat(Lit("0"), Chars(toRanges("13578")...)), cat(Lit("1"), Chars(toRanges("02")...))), Lit("-"), day31),
		cat(Choice(cat(Lit("0"), Chars(toRanges("469")...)), Lit("11")), Lit("-"), day30),
		cat(Lit("02-"), day28()),
	)
	// Leap years: divisible by 4, and centuries divisible by 400.
	by4 := func() *Expr {
		return Choice(cat(Chars(toRanges("02468")...), Chars(toRanges("048")...)), cat(Chars(toRanges("13579")...), Chars(toRanges("26")...)))
	}
	by4not0 := Choice(cat(Chars(toRanges("02468")...), Chars(toRanges("48")...)), cat(Chars(toRanges("2468")...), Lit("0")), cat(Chars(toRanges("13579")...), Chars(toRanges("26")...)))
	leap := Choice(cat(d(), d(), by4not0), cat(by4(), Lit("00")))
	return Choice(cat(year, Lit("-"), monthDay), cat(leap, Lit("-02-29")))
}

// timeOfDay is RFC 3339's full-time without leap seconds.
func timeOfDay() *Expr {
	d := func() *Expr { return Chars(Range{'0', '9'}) }
	hour := func() *Expr { return Choice(cat(Chars(Range{'0', '1'}), d()), cat(Lit("2"), Chars(Range{'0', '3'}))) }
	min := func() *Expr { return cat(Chars(Range{'0', '5'}), d()) }
	offset := Choice(Lit("Z"), cat(Chars(Range{'+', '+'}, Range{'-', '-'}), hour(), Lit(":"), min()))
	return cat(hour(), Lit(":"), min(), Lit(":"), min(), Opt(cat(Lit("."), rep(d(), 1, 9))), offset)
}
