package simd

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestARM64Encodings checks the WORD encodings of simd_arm64.h against
// llvm-mc: each macro, given registers 1, 2, 3 (and lane 3), must give
// the bits llvm-mc assembles its comment's instruction to. It skips where
// llvm-mc is not installed.
func TestARM64Encodings(t *testing.T) {
	if _, err := exec.LookPath("llvm-mc"); err != nil {
		t.Skip("no llvm-mc")
	}
	src, err := os.ReadFile("simd_arm64.h")
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?m)^#define \w+\([a-z, ]+\) (NEON3|NEON2|NEONEL)\((0x[0-9a-f]+), [^)]*\) +// (.*)$`)
	defs := def.FindAllStringSubmatch(string(src), -1)
	if len(defs) < 40 {
		t.Fatalf("found %d instruction macros", len(defs))
	}
	// The operands d, n, m of the comments (vd, sd, wn...) and the lane.
	operand := regexp.MustCompile(`\b([vsdw])([dnm])\b`)
	regs := func(s string) string {
		s = operand.ReplaceAllStringFunc(s, func(r string) string {
			return r[:1] + map[byte]string{'d': "1", 'n': "2", 'm': "3"}[r[1]]
		})
		return strings.ReplaceAll(s, "[idx]", "[3]")
	}
	var asm strings.Builder
	var want []uint32
	for _, d := range defs {
		op, err := strconv.ParseUint(d[2], 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		w := uint32(op) | 2<<5 | 1
		switch d[1] {
		case "NEON3":
			w |= 3 << 16
		case "NEONEL":
			w |= 1<<21 | 3<<16 | 1<<11
		}
		want = append(want, w)
		inst, _, _ := strings.Cut(d[3], " (")
		fmt.Fprintln(&asm, regs(inst))
	}
	cmd := exec.Command("llvm-mc", "-triple=aarch64", "-mattr=+dotprod,+i8mm", "-show-encoding")
	cmd.Stdin = strings.NewReader(asm.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	enc := regexp.MustCompile(`(.*?)\s*// encoding: \[0x(..),0x(..),0x(..),0x(..)\]`)
	got := enc.FindAllStringSubmatch(string(out), -1)
	if len(got) != len(want) {
		t.Fatalf("llvm-mc assembled %d of %d instructions:\n%s", len(got), len(want), out)
	}
	for i, g := range got {
		b, _ := strconv.ParseUint(g[5]+g[4]+g[3]+g[2], 16, 32)
		if uint32(b) != want[i] {
			t.Errorf("%s: macro gives %#08x, llvm-mc %#08x", strings.TrimSpace(g[1]), want[i], b)
		}
	}
}
