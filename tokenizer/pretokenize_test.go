package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// The expected splits below agree with the Qwen2 regex as evaluated by a
// backtracking engine with lookahead.
var preTokenizeTests = []struct {
	in   string
	want []string
}{
	{"", nil},
	{" ", []string{" "}},
	{"hello world", []string{"hello", " world"}},
	{"  hello", []string{" ", " hello"}},
	{"a  \n\n b", []string{"a", "  \n\n", " b"}},
	{"don't", []string{"don", "'t"}},
	{"I'LL", []string{"I", "'LL"}},
	{"'s'S'll'Ll're'VE'm'D'x", []string{"'s", "'S", "'ll", "'Ll", "'re", "'VE", "'m", "'D", "'x"}},
	{"'ſt", []string{"'ſ", "t"}}, // U+017F case-folds to 's'
	{"rock'n'roll", []string{"rock", "'n", "'roll"}},
	{"123abc", []string{"1", "2", "3", "abc"}},
	{"²³½Ⅻ", []string{"²", "³", "½", "Ⅻ"}},
	{"\r\n\r\n", []string{"\r\n\r\n"}},
	{"x\r\r\ny", []string{"x", "\r\r\n", "y"}},
	{"trailing   ", []string{"trailing", "   "}},
	{"x  ", []string{"x", "  "}},
	{"a \n", []string{"a", " \n"}},
	{"  \n  x", []string{"  \n", " ", " x"}},
	{" \n\t \r x", []string{" \n\t \r", " x"}},
	{"1 2  3", []string{"1", " ", "2", " ", " ", "3"}},
	{"emoji 😀😃 👍🏽!", []string{"emoji", " 😀😃", " 👍🏽!"}},
	{"中文，测试！", []string{"中文", "，测试", "！"}},
	{"你好世界", []string{"你好世界"}},
	{"a\tb\t\tc", []string{"a", "\tb", "\t", "\tc"}},
	{"...!!?\n", []string{"...!!?\n"}},
	{"...!!?\n\n x", []string{"...!!?\n\n", " x"}},
	{" 'hello", []string{" '", "hello"}},
	{" !x", []string{" !", "x"}},
	{"\t!x", []string{"\t", "!x"}},
	{".Println(", []string{".Println", "("}},
	{"\u00a0\u00a0x", []string{"\u00a0", "\u00a0x"}}, // NBSP is \s
	{"a\u3000b", []string{"a", "\u3000b"}},
	{"a\u200bb", []string{"a", "\u200bb"}}, // U+200B is not \s
	{"a\xffb", []string{"a", "\xffb"}},     // invalid bytes are "other"
	{"\xff\xfe \n", []string{"\xff\xfe", " \n"}},
}

// Llama 3's regex differs in \p{N}{1,3}.
var preTokenizeLlama3Tests = []struct {
	in   string
	want []string
}{
	{"123abc", []string{"123", "abc"}},
	{"1234567", []string{"123", "456", "7"}},
	{"²³½Ⅻ", []string{"²³½", "Ⅻ"}},
	{"1 2  3", []string{"1", " ", "2", " ", " ", "3"}},
	{"3.14159 x12", []string{"3", ".", "141", "59", " x", "12"}},
	{"I'LL pay $1,000,000", []string{"I", "'LL", " pay", " $", "1", ",", "000", ",", "000"}},
}

func TestPreTokenizeLlama3(t *testing.T) {
	for _, tc := range preTokenizeLlama3Tests {
		if got := preTokenize(tc.in, 3); !slices.Equal(got, tc.want) {
			t.Errorf("preTokenize(%q, 3)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// Without numbers the two regexes split alike.
	for _, tc := range preTokenizeTests {
		if strings.ContainsAny(tc.in, "0123456789²³½Ⅻ") {
			continue
		}
		if got := preTokenize(tc.in, 3); !slices.Equal(got, tc.want) {
			t.Errorf("preTokenize(%q, 3)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestPreTokenize(t *testing.T) {
	for _, tc := range preTokenizeTests {
		got := preTokenize(tc.in, 1)
		if !slices.Equal(got, tc.want) {
			t.Errorf("preTokenize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if j := strings.Join(got, ""); j != tc.in {
			t.Errorf("preTokenize(%q) pieces join to %q", tc.in, j)
		}
	}
}
