package vulkan

import (
	"io/fs"
	"os/exec"
	"strings"
	"testing"
)

// TestSPIRVUpToDate compiles the shaders with glslc, where glslc and
// spirv-val exist (CI installs them), and fails when the committed SPIR-V
// differs from what the sources give, or a variant is missing or extra.
func TestSPIRVUpToDate(t *testing.T) {
	for _, tool := range []string{"glslc", "spirv-val"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the committed SPIR-V is not checked against the sources", tool)
		}
	}
	out, err := exec.Command("shaders/build.sh", "--check").CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("shaders/build.sh --check: %v", err)
	}
}

// TestEmbeddedShaders checks that every shader the backend names is
// embedded: each weight type's products (mul_mv, mul_mm) and lookups,
// and the operations.
func TestEmbeddedShaders(t *testing.T) {
	have := map[string]bool{}
	err := fs.WalkDir(spvFS, "spv", func(path string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(path, ".spv") {
			have[strings.TrimSuffix(strings.TrimPrefix(path, "spv/"), ".spv")] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for typ := range weightTypes {
		m, _ := mulMVShader(typ)
		g, _ := getRowsShader(typ)
		mm, _ := mulMMShader(typ)
		want = append(want, m, g, mm)
	}
	want = append(want, "rms_norm", "rope_store", "attn", "attn_combine", "swiglu", "geglu", "swiglu_oai", "add", "add_bias", "argmax",
		"sample_stats", "sample_prep", "sample_topk", "sample_race", "sample_final")
	for _, n := range want {
		if !have[n] {
			t.Errorf("shader %s is not embedded", n)
		}
	}
}
