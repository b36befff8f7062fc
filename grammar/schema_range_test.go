package grammar

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// TestIntegerRanges checks the digit-level integer grammars against every
// integer near the bounds.
func TestIntegerRanges(t *testing.T) {
	bounds := []string{"", "-1000", "-101", "-99", "-10", "-1", "0", "1", "9", "10", "99", "100", "101", "999", "1000", "1234"}
	for _, lo := range bounds {
		for _, hi := range bounds {
			schema := `{"type":"integer"`
			if lo != "" {
				schema += `,"minimum":` + lo
			}
			if hi != "" {
				schema += `,"maximum":` + hi
			}
			schema += "}"
			l, _ := strconv.Atoi(lo)
			h, _ := strconv.Atoi(hi)
			if lo != "" && hi != "" && l > h {
				continue
			}
			g, err := FromJSONSchema([]byte(schema), SchemaOptions{})
			if err != nil {
				t.Fatalf("%s: %v", schema, err)
			}
			for n := -1300; n <= 1300; n++ {
				want := (lo == "" || n >= l) && (hi == "" || n <= h)
				if got := matches(g, strconv.Itoa(n)); got != want {
					t.Fatalf("%s on %d: %v, want %v", schema, n, got, want)
				}
			}
			if matches(g, "01") || matches(g, "-0"+"1") {
				t.Errorf("%s accepts a leading zero", schema)
			}
		}
	}
}

// TestNumberRanges checks the decimal grammars against numbers on a grid
// around fractional and integer bounds, exclusive and not, with and
// without multipleOf 0.1.
func TestNumberRanges(t *testing.T) {
	bounds := []string{"", "-2.5", "-1", "-0.25", "0", "0.1", "0.15", "1", "2.5", "10"}
	var values []string
	for _, ip := range []string{"0", "1", "2", "3", "9", "10", "11"} {
		for _, fp := range []string{"", ".0", ".00", ".05", ".1", ".10", ".15", ".150", ".1501", ".2", ".25", ".2499", ".5", ".99"} {
			values = append(values, ip+fp, "-"+ip+fp)
		}
	}
	for _, lo := range bounds {
		for _, hi := range bounds {
			for _, ex := range [][3]bool{{false, false}, {true, false}, {false, true}, {true, true}, {false, false, true}, {true, true, true}} {
				schema := `{"type":"number"`
				if ex[2] {
					schema += `,"multipleOf":0.1`
				}
				if lo != "" {
					kw := "minimum"
					if ex[0] {
						kw = "exclusiveMinimum"
					}
					schema += fmt.Sprintf(`,%q:%s`, kw, lo)
				}
				if hi != "" {
					kw := "maximum"
					if ex[1] {
						kw = "exclusiveMaximum"
					}
					schema += fmt.Sprintf(`,%q:%s`, kw, hi)
				}
				schema += "}"
				l, _ := new(big.Rat).SetString(lo + "0")
				if lo != "" {
					l, _ = new(big.Rat).SetString(lo)
				}
				h, _ := new(big.Rat).SetString(hi + "0")
				if hi != "" {
					h, _ = new(big.Rat).SetString(hi)
				}
				g, err := FromJSONSchema([]byte(schema), SchemaOptions{})
				empty := lo != "" && hi != "" && (l.Cmp(h) > 0 || l.Cmp(h) == 0 && (ex[0] || ex[1]))
				if ex[2] && lo != "" && hi != "" {
					// The least multiple of 0.1 above the lower bound.
					l10 := new(big.Rat).Mul(l, big.NewRat(10, 1))
					m := ceilRat(l10)
					if ex[0] && l10.IsInt() {
						m.Add(m, big.NewInt(1))
					}
					c := new(big.Rat).SetFrac(m, big.NewInt(10)).Cmp(h)
					empty = c > 0 || c == 0 && ex[1]
				}
				if err != nil {
					if empty {
						continue
					}
					t.Fatalf("%s: %v", schema, err)
				}
				for _, v := range values {
					x, _ := new(big.Rat).SetString(v)
					if x.Sign() == 0 && v[0] == '-' {
						continue // -0 is written as 0
					}
					want := true
					if lo != "" {
						c := x.Cmp(l)
						want = want && (c > 0 || c == 0 && !ex[0])
					}
					if hi != "" {
						c := x.Cmp(h)
						want = want && (c < 0 || c == 0 && !ex[1])
					}
					if ex[2] {
						// A multiple of 0.1, written with at most one place
						// (0.50 is a multiple, but written longer than the
						// grammar writes it).
						_, frac, _ := strings.Cut(v, ".")
						want = want && len(frac) <= 1
					}
					if got := matches(g, v); got != want {
						t.Fatalf("%s on %s: %v, want %v\n%s", schema, v, got, want, g)
					}
				}
			}
		}
	}
}
