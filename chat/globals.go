package chat

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// Names this package gives the template. The prefix is reserved: Kwargs may
// not use it.
const (
	internalPrefix = "__inferno_"
	tojsonName     = internalPrefix + "tojson" // the filter that "| tojson" is renamed to
	stringName     = internalPrefix + "string" // the filter that "| string" is renamed to
	enterName      = internalPrefix + "enter"  // called at the start of every macro body
	exitName       = internalPrefix + "exit"   // called at the end of every macro body
	depthVar       = internalPrefix + "depth"  // the variable enter's and exit's results go to
)

// now is the clock of strftime_now; tests replace it.
var now = time.Now

// addGlobals adds to data the functions and filters that this package
// provides to templates, fresh for one render.
func addGlobals(data map[string]jinja.Value) {
	data["raise_exception"] = jinja.NewCallable("raise_exception", raiseException)
	data["strftime_now"] = jinja.NewCallable("strftime_now", strftimeNow)
	data["range"] = jinja.NewCallable("range", pyRange)
	data[tojsonName] = jinja.NewCallable("tojson", toJSON)
	data[stringName] = jinja.NewCallable("string", stringFilter)
	depth := 0
	data[enterName] = jinja.NewCallable(enterName, func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		depth++
		if depth > maxMacroDepth {
			return jinja.Value{}, fmt.Errorf("macro calls nested more than %d deep (runaway recursion?)", maxMacroDepth)
		}
		return jinja.None(), nil
	})
	data[exitName] = jinja.NewCallable(exitName, func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		depth--
		return jinja.None(), nil
	})
}

// raiseException is the raise_exception(message) global of transformers: it
// fails the render with the message.
func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	msg := "raise_exception called"
	if len(args) > 0 {
		msg = pyStr(args[0])
	}
	return jinja.Value{}, fmt.Errorf("template raised an exception: %s", msg)
}

// stringFilter is Jinja's string filter: Python's str() of the value.
func stringFilter(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 1 {
		return jinja.Value{}, errors.New("string: expects no arguments")
	}
	return jinja.NewString(pyStr(args[0])), nil
}

// pyStr is Python's str(v); an undefined value gives "", as in Jinja.
func pyStr(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	var b strings.Builder
	pyRepr(&b, v, 0)
	return b.String()
}

// pyRepr writes Python's repr(v).
func pyRepr(b *strings.Builder, v jinja.Value, level int) {
	if level > maxJSONDepth {
		b.WriteString("...")
		return
	}
	switch {
	case v.IsUndefined():
	case v.IsNone():
		b.WriteString("None")
	case v.IsBool():
		if v.AsBool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			b.WriteString("nan")
		case math.IsInf(f, 1):
			b.WriteString("inf")
		case math.IsInf(f, -1):
			b.WriteString("-inf")
		default:
			b.WriteString(pyFloatRepr(f))
		}
	case v.IsString():
		pyStrRepr(b, v.AsString())
	case v.IsList():
		b.WriteByte('[')
		for i, item := range v.AsList().Items {
			if i > 0 {
				b.WriteString(", ")
			}
			pyRepr(b, item, level+1)
		}
		b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		b.WriteByte('{')
		for i, k := range d.OrderedKeys() {
			if i > 0 {
				b.WriteString(", ")
			}
			pyStrRepr(b, k)
			b.WriteString(": ")
			val, _ := d.Get(k)
			pyRepr(b, val, level+1)
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.String())
	}
}

// pyStrRepr writes Python's repr of the string s: in single quotes unless s
// has single quotes and no double quotes, with the characters that
// str.isprintable rejects escaped.
func pyStrRepr(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			n, prefix := 2, `\x`
			if r >= 0x10000 {
				n, prefix = 8, `\U`
			} else if r >= 0x100 {
				n, prefix = 4, `\u`
			}
			b.WriteString(prefix)
			for shift := 4 * (n - 1); shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>shift)&0xf])
			}
		}
	}
	b.WriteByte(quote)
}

// pyRange is Python's range(), limited as in Jinja's sandbox to 100,000
// items.
func pyRange(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	n := make([]int64, len(args))
	for i, a := range args {
		switch {
		case a.IsInt():
			n[i] = a.AsInt()
		case a.IsBool():
			if a.AsBool() {
				n[i] = 1
			}
		default:
			return jinja.Value{}, fmt.Errorf("range: %s object cannot be interpreted as an integer", kindName(a))
		}
	}
	var start, stop, step int64 = 0, 0, 1
	switch len(n) {
	case 1:
		stop = n[0]
	case 2:
		start, stop = n[0], n[1]
	case 3:
		start, stop, step = n[0], n[1], n[2]
	default:
		return jinja.Value{}, fmt.Errorf("range expected 1 to 3 arguments, got %d", len(n))
	}
	if step == 0 {
		return jinja.Value{}, errors.New("range: arg 3 must not be zero")
	}
	// The length in float64 cannot overflow; it only has to be compared.
	length := 0.0
	if step > 0 && start < stop {
		length = math.Ceil((float64(stop) - float64(start)) / float64(step))
	} else if step < 0 && start > stop {
		length = math.Ceil((float64(start) - float64(stop)) / -float64(step))
	}
	if length > maxRange {
		return jinja.Value{}, fmt.Errorf("range too big: more than %d items", maxRange)
	}
	items := make([]jinja.Value, 0, int(length))
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		items = append(items, jinja.NewInt(i))
		if len(items) == int(length) {
			break // i += step could overflow
		}
	}
	return jinja.NewList(items), nil
}

func kindName(v jinja.Value) string {
	switch {
	case v.IsUndefined():
		return "Undefined"
	case v.IsNone():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInt():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	}
	return "function"
}

// toJSON is the tojson filter of transformers:
//
//	json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
//
// Its parameters after the value are ensure_ascii, indent, separators and
// sort_keys, by position or by name.
func toJSON(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Value{}, errors.New("tojson: missing value")
	}
	params := []string{"ensure_ascii", "indent", "separators", "sort_keys"}
	if len(args)-1 > len(params) {
		return jinja.Value{}, fmt.Errorf("tojson: takes at most %d arguments after the value", len(params))
	}
	opt := map[string]jinja.Value{}
	for i, a := range args[1:] {
		opt[params[i]] = a
	}
	for k, v := range kwargs {
		if !slices.Contains(params, k) {
			return jinja.Value{}, fmt.Errorf("tojson: unexpected keyword argument %q", k)
		}
		if _, dup := opt[k]; dup {
			return jinja.Value{}, fmt.Errorf("tojson: got multiple values for argument %q", k)
		}
		opt[k] = v
	}
	var e jsonEncoder
	if v, ok := opt["ensure_ascii"]; ok {
		e.ascii = v.IsTruthy()
	}
	if v, ok := opt["sort_keys"]; ok {
		e.sortKeys = v.IsTruthy()
	}
	if v, ok := opt["indent"]; ok && !v.IsNone() && !v.IsUndefined() {
		switch {
		case v.IsString():
			e.indent = v.AsString()
		case v.IsInt():
			e.indent = strings.Repeat(" ", int(max(0, min(v.AsInt(), 1000))))
		case v.IsBool():
			if v.AsBool() {
				e.indent = " "
			}
		default:
			return jinja.Value{}, fmt.Errorf("tojson: indent must be an int or a string, not %s", kindName(v))
		}
		e.indented = true
	}
	e.itemSep, e.keySep = ", ", ": "
	if e.indented {
		e.itemSep = ","
	}
	if v, ok := opt["separators"]; ok && !v.IsNone() && !v.IsUndefined() {
		if !v.IsList() || v.AsList().Len() != 2 || !v.AsList().Get(0).IsString() || !v.AsList().Get(1).IsString() {
			return jinja.Value{}, errors.New("tojson: separators must be a pair of strings")
		}
		e.itemSep, e.keySep = v.AsList().Get(0).AsString(), v.AsList().Get(1).AsString()
	}
	if err := e.encode(args[0], 0); err != nil {
		return jinja.Value{}, fmt.Errorf("tojson: %w", err)
	}
	return jinja.NewString(e.b.String()), nil
}

// jsonEncoder writes values as Python's json.dumps does.
type jsonEncoder struct {
	b        strings.Builder
	ascii    bool   // ensure_ascii
	sortKeys bool   // sort_keys
	indented bool   // indent is not None
	indent   string // one level of indentation
	itemSep  string
	keySep   string
}

// maxJSONDepth bounds the nesting that encode follows, as Python's recursion
// limit does.
const maxJSONDepth = 10000

func (e *jsonEncoder) newline(level int) {
	if e.indented {
		e.b.WriteByte('\n')
		for range level {
			e.b.WriteString(e.indent)
		}
	}
}

func (e *jsonEncoder) encode(v jinja.Value, level int) error {
	if level > maxJSONDepth {
		return errors.New("value nested too deeply")
	}
	switch {
	case v.IsNone():
		e.b.WriteString("null")
	case v.IsBool():
		if v.AsBool() {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case v.IsInt():
		e.b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		e.b.WriteString(pyFloatJSON(v.AsFloat()))
	case v.IsString():
		e.str(v.AsString())
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				e.b.WriteString(e.itemSep)
			}
			e.newline(level + 1)
			if err := e.encode(item, level+1); err != nil {
				return err
			}
		}
		e.newline(level)
		e.b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if len(keys) == 0 {
			e.b.WriteString("{}")
			return nil
		}
		if e.sortKeys {
			keys = slices.Sorted(slices.Values(keys))
		}
		e.b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				e.b.WriteString(e.itemSep)
			}
			e.newline(level + 1)
			e.str(k)
			e.b.WriteString(e.keySep)
			val, _ := d.Get(k)
			if err := e.encode(val, level+1); err != nil {
				return err
			}
		}
		e.newline(level)
		e.b.WriteByte('}')
	default:
		return fmt.Errorf("Object of type %s is not JSON serializable", kindName(v))
	}
	return nil
}

// str writes s as a JSON string the way Python's json module does.
func (e *jsonEncoder) str(s string) {
	const hex = "0123456789abcdef"
	e.b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				e.b.WriteString(`\"`)
			case '\\':
				e.b.WriteString(`\\`)
			case '\n':
				e.b.WriteString(`\n`)
			case '\r':
				e.b.WriteString(`\r`)
			case '\t':
				e.b.WriteString(`\t`)
			case '\b':
				e.b.WriteString(`\b`)
			case '\f':
				e.b.WriteString(`\f`)
			default:
				if c < 0x20 || (e.ascii && c == 0x7f) {
					e.b.WriteString(`\u00`)
					e.b.WriteByte(hex[c>>4])
					e.b.WriteByte(hex[c&0xf])
				} else {
					e.b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !e.ascii {
			e.b.WriteString(s[i : i+size])
		} else {
			writeU := func(u rune) {
				e.b.WriteString(`\u`)
				for shift := 12; shift >= 0; shift -= 4 {
					e.b.WriteByte(hex[(u>>shift)&0xf])
				}
			}
			if r >= 0x10000 {
				r -= 0x10000
				writeU(0xd800 + (r>>10)&0x3ff)
				writeU(0xdc00 + r&0x3ff)
			} else {
				writeU(r)
			}
		}
		i += size
	}
	e.b.WriteByte('"')
}

// pyFloatJSON formats f as Python's json.dumps does: repr(f), with NaN and
// the infinities spelled as JavaScript does.
func pyFloatJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyFloatRepr(f)
}

// pyFloatRepr is Python's repr of a finite float: the shortest digits that
// round-trip, in positional notation when the decimal exponent is from -4
// to 15, else in scientific notation with a two-digit exponent at least.
func pyFloatRepr(f float64) string {
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±dd
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	decpt := exp + 1 // the value is 0.digits × 10^decpt
	switch {
	case decpt > -4 && decpt <= 16:
		switch {
		case decpt <= 0:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -decpt))
			b.WriteString(digits)
		case decpt >= len(digits):
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-len(digits)))
			b.WriteString(".0")
		default:
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		}
	default:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	}
	return b.String()
}

// strftimeNow is the strftime_now(format) global of transformers: the local
// time formatted as Python's datetime.strftime does in the C locale,
// including the glibc flags "-" (no padding), "_" (pad with spaces) and "0".
func strftimeNow(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 1 || !args[0].IsString() {
		return jinja.Value{}, errors.New("strftime_now: expects one format string")
	}
	return jinja.NewString(strftime(now(), args[0].AsString())), nil
}

// strftime formats t by the C strftime format f.
func strftime(t time.Time, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		start := i
		i++
		pad := byte(0) // 0: the directive's own padding
		if c := f[i]; (c == '-' || c == '_' || c == '0') && i+1 < len(f) {
			pad = c
			i++
		}
		num := func(n, width int, padc byte) {
			s := strconv.Itoa(n)
			switch pad {
			case '-':
				width = 0
			case '_':
				padc = ' '
			case '0':
				padc = '0'
			}
			for j := len(s); j < width; j++ {
				b.WriteByte(padc)
			}
			b.WriteString(s)
		}
		hour12 := t.Hour() % 12
		if hour12 == 0 {
			hour12 = 12
		}
		switch f[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'c':
			b.WriteString(strftime(t, "%a %b %e %H:%M:%S %Y"))
		case 'C':
			num(t.Year()/100, 2, '0')
		case 'd':
			num(t.Day(), 2, '0')
		case 'D', 'x':
			b.WriteString(strftime(t, "%m/%d/%y"))
		case 'e':
			num(t.Day(), 2, ' ')
		case 'f':
			num(t.Nanosecond()/1000, 6, '0')
		case 'F':
			b.WriteString(strftime(t, "%Y-%m-%d"))
		case 'H':
			num(t.Hour(), 2, '0')
		case 'I':
			num(hour12, 2, '0')
		case 'j':
			num(t.YearDay(), 3, '0')
		case 'k':
			num(t.Hour(), 2, ' ')
		case 'l':
			num(hour12, 2, ' ')
		case 'm':
			num(int(t.Month()), 2, '0')
		case 'M':
			num(t.Minute(), 2, '0')
		case 'n':
			b.WriteByte('\n')
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'R':
			b.WriteString(strftime(t, "%H:%M"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'S':
			num(t.Second(), 2, '0')
		case 't':
			b.WriteByte('\t')
		case 'T', 'X':
			b.WriteString(strftime(t, "%H:%M:%S"))
		case 'u':
			num((int(t.Weekday())+6)%7+1, 1, '0')
		case 'U':
			num((t.YearDay()+6-int(t.Weekday()))/7, 2, '0')
		case 'w':
			num(int(t.Weekday()), 1, '0')
		case 'W':
			num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, '0')
		case 'y':
			num(t.Year()%100, 2, '0')
		case 'Y':
			num(t.Year(), 1, '0')
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(f[start : i+1])
		}
	}
	return b.String()
}
