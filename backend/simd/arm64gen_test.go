package simd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArm64Generated checks that the arm64 assembly is what arm64gen
// generates, where python3 and llvm-mc are at hand.
func TestArm64Generated(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, tool := range []string{"python3", "llvm-mc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("python3", filepath.Join("arm64gen", "main.py"), dir)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("arm64gen: %v\n%s", err, out)
	}
	names := strings.Fields(string(out))
	if len(names) == 0 {
		t.Fatal("arm64gen wrote nothing")
	}
	for _, name := range names {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what arm64gen generates: run python3 backend/simd/arm64gen/main.py", name)
		}
	}
}
