package grammar

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// isInteger reports whether n has no fractional part.
func isInteger(n json.Number) bool {
	r, ok := new(big.Rat).SetString(n.String())
	return ok && r.IsInt()
}

// A numeric bound: a value, whether it excludes the value itself, or no
// bound at all. Integer grammars use v; number grammars use r.
type bound struct {
	v    int64
	r    *big.Rat
	excl bool
	inf  bool
}

// The largest magnitude of a bound the digit-level grammars handle; the
// JSON number grammar writes at most maxIntDigits integer digits anyway.
const maxBound = 1_000_000_000_000_000_000

// numberSchema compiles minimum, maximum and the exclusive bounds.
func (c *schemaCompiler) numberSchema(s *object, path string, integer bool) (*Expr, error) {
	lo, hi := bound{inf: true}, bound{inf: true}
	loKw, hiKw := "", ""
	tighten := func(kw string, upper bool) error {
		v, ok := s.get(kw)
		if !ok {
			return nil
		}
		excl := strings.HasPrefix(kw, "exclusive")
		if _, isBool := v.(bool); isBool {
			// Draft 4's exclusiveMinimum: true, read with minimum.
			if !excl {
				return schemaErr(path, "%s must be a number", kw)
			}
			return nil
		}
		if !excl {
			other := "exclusiveMinimum"
			if upper {
				other = "exclusiveMaximum"
			}
			if x, ok := s.get(other); ok && x == true {
				excl = true
			}
		}
		n, ok := v.(json.Number)
		if !ok {
			return schemaErr(path, "%s must be a number", kw)
		}
		rat, ok := new(big.Rat).SetString(n.String())
		if !ok {
			return schemaErr(path, "%s must be a number", kw)
		}
		b := bound{r: rat, excl: excl}
		if upper {
			if hi.inf || rat.Cmp(hi.r) < 0 || (rat.Cmp(hi.r) == 0 && excl) {
				hi, hiKw = b, kw
			}
		} else if lo.inf || rat.Cmp(lo.r) > 0 || (rat.Cmp(lo.r) == 0 && excl) {
			lo, loKw = b, kw
		}
		return nil
	}
	for _, kw := range []struct {
		name  string
		upper bool
	}{{"minimum", false}, {"exclusiveMinimum", false}, {"maximum", true}, {"exclusiveMaximum", true}} {
		if err := tighten(kw.name, kw.upper); err != nil {
			return nil, err
		}
	}
	lim := new(big.Rat).SetInt64(maxBound)
	// limit drops a bound looser than anything the number grammar writes,
	// and refuses one too tight for it.
	limit := func(b *bound, kw string, upper bool) error {
		if b.inf || b.r.Cmp(lim) <= 0 && b.r.Cmp(new(big.Rat).Neg(lim)) >= 0 {
			return nil
		}
		if loose := (upper && b.r.Sign() > 0) || (!upper && b.r.Sign() < 0); loose {
			*b = bound{inf: true}
			return nil
		}
		return unsupported(kw, path, "a bound beyond ±%d", int64(maxBound))
	}
	places, err := decimalPlaces(s, path, integer)
	if err != nil {
		return nil, err
	}
	if err := limit(&lo, loKw, false); err != nil {
		return nil, err
	}
	if err := limit(&hi, hiKw, true); err != nil {
		return nil, err
	}
	if lo.inf && hi.inf {
		if integer {
			return c.j.integer(), nil
		}
		if places == maxFracDigits {
			return c.j.number(), nil
		}
	}
	var e *Expr
	if integer {
		// Round inward to inclusive integer bounds.
		if !lo.inf {
			v := ceilRat(lo.r)
			if lo.excl && lo.r.IsInt() {
				v.Add(v, big.NewInt(1))
			}
			lo = bound{v: v.Int64()}
		}
		if !hi.inf {
			v := floorRat(hi.r)
			if hi.excl && hi.r.IsInt() {
				v.Sub(v, big.NewInt(1))
			}
			hi = bound{v: v.Int64()}
		}
		if !lo.inf && !hi.inf && lo.v > hi.v {
			return nil, schemaErr(path, "no integer satisfies the bounds")
		}
		e = intRange(lo, hi)
	} else {
		for _, b := range []struct {
			b  bound
			kw string
		}{{lo, loKw}, {hi, hiKw}} {
			if !b.b.inf && fracDigits(b.b.r) > maxFracDigits {
				return nil, unsupported(b.kw, path, "a bound with more than %d decimal places", maxFracDigits)
			}
		}
		e = numberRange(lo, hi, places)
	}
	if e == nil {
		return nil, schemaErr(path, "no number satisfies the bounds")
	}
	return e, nil
}

// decimalPlaces reads multipleOf: a power of ten 10^-k limits a number to
// k decimal places (k = 0: integers); integers are multiples of each
// anyway. Other values are refused. Without it, numbers have
// maxFracDigits places.
func decimalPlaces(s *object, path string, integer bool) (int, error) {
	v, ok := s.get("multipleOf")
	if !ok {
		return maxFracDigits, nil
	}
	n, ok := v.(json.Number)
	r, ok2 := new(big.Rat).SetString(string(n))
	if !ok || !ok2 || r.Sign() <= 0 {
		return 0, schemaErr(path, "multipleOf must be a positive number")
	}
	p := new(big.Rat).SetInt64(1)
	for k := 0; k <= maxFracDigits; k++ {
		if r.Cmp(p) == 0 {
			return k, nil
		}
		p.Quo(p, big.NewRat(10, 1))
	}
	return 0, unsupported("multipleOf", path, "only powers of ten up to 1 (1, 0.1, 0.01, ...) are supported")
}

// fracDigits returns how many decimal places r needs (its denominator is
// 2^a 5^b for a number written in JSON, so the expansion ends); past
// maxFracDigits it returns maxFracDigits+1.
func fracDigits(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	ten := big.NewInt(10)
	for n := 0; n <= maxFracDigits; n++ {
		if new(big.Int).Mod(new(big.Int).Mul(r.Num(), new(big.Int).Exp(ten, big.NewInt(int64(n)), nil)), d).Sign() == 0 {
			return n
		}
	}
	return maxFracDigits + 1
}

// decimal splits a non-negative rational of at most maxFracDigits places
// into its integer part and its fraction's digits, trailing zeros dropped.
func decimal(r *big.Rat) (int64, string) {
	ip := floorRat(r)
	f := new(big.Rat).Sub(r, new(big.Rat).SetInt(ip)).FloatString(maxFracDigits)
	_, frac, _ := strings.Cut(f, ".")
	return ip.Int64(), strings.TrimRight(frac, "0")
}

func floorRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // Euclidean division by a positive denominator floors
}

func ceilRat(r *big.Rat) *big.Int {
	q := floorRat(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// intRange matches the integers in [lo, hi] written without leading
// zeros (inclusive bounds; nil where none match).
func intRange(lo, hi bound) *Expr {
	var alts []*Expr
	if lo.inf || lo.v < 0 {
		// Negative part: -m with m in [max(1, -hi), -lo].
		mlo := int64(1)
		if !hi.inf && hi.v < 0 {
			mlo = -hi.v
		}
		mhi := bound{inf: true}
		if !lo.inf {
			mhi = bound{v: -lo.v}
		}
		if e := natRange(mlo, mhi); e != nil {
			alts = append(alts, cat(Lit("-"), e))
		}
	}
	if hi.inf || hi.v >= 0 {
		nlo := int64(0)
		if !lo.inf && lo.v > 0 {
			nlo = lo.v
		}
		if e := natRange(nlo, hi); e != nil {
			alts = append(alts, e)
		}
	}
	if len(alts) == 0 {
		return nil
	}
	return Choice(alts...)
}

// natRange matches the natural numbers in [a, b] (b may be unbounded, up to
// maxIntDigits digits) without leading zeros; nil where none.
func natRange(a int64, b bound) *Expr {
	if !b.inf && b.v < a {
		return nil
	}
	as := strconv.FormatInt(a, 10)
	var alts []*Expr
	maxLen := maxIntDigits
	if !b.inf {
		maxLen = len(strconv.FormatInt(b.v, 10))
	}
	for l := len(as); l <= maxLen; l++ {
		lo := pow10(l - 1)
		if l == 1 {
			lo = 0
		}
		lo = max(lo, a)
		if b.inf && l > len(as) {
			// Every longer number is in range.
			alts = append(alts, cat(Chars(Range{'1', '9'}), rep(Chars(Range{'0', '9'}), l-1, maxIntDigits-1)))
			break
		}
		hiS := strings.Repeat("9", l)
		if !b.inf && l == maxLen {
			hiS = strconv.FormatInt(b.v, 10)
		}
		alts = append(alts, digitRange(strconv.FormatInt(lo, 10), hiS))
	}
	return Choice(alts...)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// digitRange matches the digit strings of x's length from x to y.
func digitRange(x, y string) *Expr {
	if x == y {
		return Lit(x)
	}
	if x[0] == y[0] {
		return cat(Lit(x[:1]), digitRange(x[1:], y[1:]))
	}
	n := len(x) - 1
	var alts []*Expr
	a, b := rune(x[0]), rune(y[0])
	if strings.Trim(x[1:], "0") != "" {
		alts = append(alts, cat(Lit(x[:1]), digitRange(x[1:], strings.Repeat("9", n))))
		a++
	}
	highAll := strings.Trim(y[1:], "9") == ""
	if !highAll {
		b--
	}
	if a <= b {
		switch n {
		case 0:
			alts = append(alts, Chars(Range{a, b}))
		case 1:
			alts = append(alts, cat(Chars(Range{a, b}), Chars(Range{'0', '9'})))
		default:
			alts = append(alts, cat(Chars(Range{a, b}), rep(Chars(Range{'0', '9'}), n, n)))
		}
	}
	if !highAll {
		alts = append(alts, cat(Lit(y[:1]), digitRange(strings.Repeat("0", n), y[1:])))
	}
	return Choice(alts...)
}

// numberRange matches decimal numbers (no exponent) between the bounds;
// nil where none.
func numberRange(lo, hi bound, places int) *Expr {
	if !lo.inf && !hi.inf {
		if c := lo.r.Cmp(hi.r); c > 0 || c == 0 && (lo.excl || hi.excl) {
			return nil
		}
	}
	zero := new(big.Rat)
	var alts []*Expr
	// Non-negative values: magnitude from max(lo, 0) to hi.
	if hi.inf || hi.r.Sign() > 0 || (hi.r.Sign() == 0 && !hi.excl) {
		a := bound{r: zero}
		if !lo.inf && lo.r.Sign() >= 0 {
			a = lo
		}
		if e := magnitude(a, hi, places); e != nil {
			alts = append(alts, e)
		}
	}
	// Negative values -m: m from max(-hi, 0) (exclusive at 0) to -lo.
	if lo.inf || lo.r.Sign() < 0 {
		a := bound{r: zero, excl: true}
		if !hi.inf && hi.r.Sign() < 0 {
			a = bound{r: new(big.Rat).Neg(hi.r), excl: hi.excl}
		}
		b := bound{inf: true}
		if !lo.inf {
			b = bound{r: new(big.Rat).Neg(lo.r), excl: lo.excl}
		}
		if e := magnitude(a, b, places); e != nil {
			alts = append(alts, cat(Lit("-"), e))
		}
	}
	if len(alts) == 0 {
		return nil
	}
	return Choice(alts...)
}

// magnitude matches non-negative decimals (integer part, optional
// fraction) from a to b; nil where none.
func magnitude(a, b bound, places int) *Expr {
	ai, af := decimal(a.r)
	as := strconv.FormatInt(ai, 10)
	if !b.inf {
		bi, bf := decimal(b.r)
		if bi == ai {
			if f := fractionBetween(&af, a.excl, &bf, b.excl, places); f != nil {
				return cat(Lit(as), f)
			}
			return nil
		}
		if bi < ai {
			return nil
		}
	}
	var alts []*Expr
	if f := fractionBetween(&af, a.excl, nil, false, places); f != nil {
		alts = append(alts, cat(Lit(as), f))
	}
	// Integer parts strictly between a's and b's: any fraction.
	inner := bound{inf: true}
	if !b.inf {
		bi, _ := decimal(b.r)
		inner = bound{v: bi - 1}
	}
	if e := natRange(ai+1, inner); e != nil {
		alts = append(alts, cat(e, optFraction(places)))
	}
	if !b.inf {
		bi, bf := decimal(b.r)
		if f := fractionBetween(nil, false, &bf, b.excl, places); f != nil {
			alts = append(alts, cat(Lit(strconv.FormatInt(bi, 10)), f))
		}
	}
	if len(alts) == 0 {
		return nil
	}
	return Choice(alts...)
}

// fractionBetween matches an optional fraction ("." and 1 to places
// digits) whose value lies between lo and hi, given as digit strings
// without trailing zeros ("" is zero; nil is no bound).
func fractionBetween(lo *string, loEx bool, hi *string, hiEx bool, places int) *Expr {
	var alts []*Expr
	if fracCanEnd(lo, loEx, hi, hiEx) {
		alts = append(alts, Lit(""))
	}
	if digits := fracDigitsBetween(lo, loEx, hi, hiEx, 0, places); digits != nil {
		alts = append(alts, cat(Lit("."), digits))
	}
	if len(alts) == 0 {
		return nil
	}
	return Choice(alts...)
}

// fracCanEnd reports whether the fraction may stop here: zero is within
// the remaining bounds.
func fracCanEnd(lo *string, loEx bool, hi *string, hiEx bool) bool {
	return (lo == nil || (*lo == "" && !loEx)) && (hi == nil || *hi != "" || !hiEx)
}

// fracDigitsBetween matches one or more fraction digits (of the at most
// places-d left) continuing a prefix equal to the bounds' so far.
func fracDigitsBetween(lo *string, loEx bool, hi *string, hiEx bool, d, places int) *Expr {
	if d >= places {
		return nil
	}
	if lo != nil && *lo == "" && !loEx {
		lo = nil // at least zero: no constraint
	}
	if lo == nil && hi == nil {
		return rep(Chars(Range{'0', '9'}), 1, places-d)
	}
	first := func(s *string, none byte) byte {
		if s == nil {
			return none
		}
		if *s == "" {
			return '0'
		}
		return (*s)[0]
	}
	rest := func(s *string) *string {
		if *s == "" {
			return s
		}
		r := (*s)[1:]
		return &r
	}
	l0, h0 := first(lo, 0), first(hi, '9'+1)
	if lo != nil && l0 > h0 {
		return nil
	}
	var alts []*Expr
	// next matches what may follow digit c, or nothing.
	next := func(nlo *string, nhi *string) *Expr {
		var a []*Expr
		if fracCanEnd(nlo, loEx, nhi, hiEx) {
			a = append(a, Lit(""))
		}
		if e := fracDigitsBetween(nlo, loEx, nhi, hiEx, d+1, places); e != nil {
			a = append(a, e)
		}
		if len(a) == 0 {
			return nil
		}
		return Choice(a...)
	}
	if lo != nil && l0 == h0 {
		if e := next(rest(lo), rest(hi)); e != nil {
			alts = append(alts, cat(Lit(string(l0)), e))
		}
		return choiceOrNil(alts)
	}
	if lo != nil {
		if e := next(rest(lo), nil); e != nil {
			alts = append(alts, cat(Lit(string(l0)), e))
		}
	}
	from, to := l0+1, h0-1
	if lo == nil {
		from = '0'
	}
	if from <= to {
		c := Chars(Range{rune(from), rune(to)})
		if d+1 < places {
			c = cat(c, rep(Chars(Range{'0', '9'}), 0, places-d-1))
		}
		alts = append(alts, c)
	}
	if hi != nil && h0 <= '9' {
		if e := next(nil, rest(hi)); e != nil {
			alts = append(alts, cat(Lit(string(h0)), e))
		}
	}
	return choiceOrNil(alts)
}

func choiceOrNil(alts []*Expr) *Expr {
	if len(alts) == 0 {
		return nil
	}
	return Choice(alts...)
}
