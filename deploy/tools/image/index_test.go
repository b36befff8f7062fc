package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The test's own table of each architecture's ELF machine, Debian triple
// and loader, written out here rather than taken from readELF, so that a
// swap there shows.
var archs = map[string]struct {
	machine elf.Machine
	triple  string
	loader  string
}{
	"amd64": {elf.EM_X86_64, "x86_64-linux-gnu", "ld-linux-x86-64.so.2"},
	"arm64": {elf.EM_AARCH64, "aarch64-linux-gnu", "ld-linux-aarch64.so.1"},
}

// dynamicBinary builds, without cgo, a program for goarch that names the
// ELF interpreter and libc.so.6 as inferno does (purego's way: a
// cgo_import_dynamic directive) and prints "image-test GOARCH".
func dynamicBinary(t *testing.T, goarch string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	prog := "package main\n\nimport (\n\t\"runtime\"\n\t_ \"unsafe\"\n)\n\n" +
		"//go:cgo_import_dynamic libc_puts puts \"libc.so.6\"\n" +
		"//go:cgo_import_dynamic _ _ \"libc.so.6\"\n\n" +
		"func main() { println(\"image-test\", runtime.GOARCH) }\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "inferno-"+goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	info, err := readELF(data)
	if err != nil || info.interp != "/lib64/ld-linux-x86-64.so.2" && info.interp != "/lib/ld-linux-aarch64.so.1" ||
		!slices.Contains(info.needed, "libc.so.6") {
		t.Fatalf("the %s test binary is not linked as inferno is: %+v, %v", goarch, info, err)
	}
	return bin
}

// requireLibc skips the test where no C library of goarch is installed,
// except in CI (CI=true), where .ci/deploy-check installs the arm64 one
// (Debian's libc6-arm64-cross) and its absence is a failure.
func requireLibc(t *testing.T, goarch string) {
	t.Helper()
	a := archs[goarch]
	info := binaryInfo{machine: a.machine, triple: a.triple}
	if _, _, err := findLibrary("libc.so.6", options{}.libDirs(info), a.machine); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// layerFiles reads the image's one layer: each entry's header and data.
func layerFiles(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want 1", len(layers), err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	headers, data := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers, data
		}
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name] = h
		if data[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// unpack writes the layer's entries under root.
func unpack(t *testing.T, root string, headers map[string]*tar.Header, data map[string][]byte) {
	t.Helper()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range headers {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		h, p := headers[n], filepath.Join(root, n)
		var err error
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		default:
			err = os.WriteFile(p, data[n], os.FileMode(h.Mode)&0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexHoldsBothPlatforms builds the two-platform OCI layout and checks
// each image against the binary given for its platform: the index's
// platform, the config's, the binary's bytes and ELF machine, and the
// loader and libraries for that machine; then runs each binary in its
// unpacked layer (through the layer's own loader for the host's
// architecture, qemu-aarch64-static -L for arm64 on another host).
func TestIndexHoldsBothPlatforms(t *testing.T) {
	requireLibc(t, "amd64")
	requireLibc(t, "arm64")
	bins := map[string]string{"amd64": dynamicBinary(t, "amd64"), "arm64": dynamicBinary(t, "arm64")}
	var targets binFlag
	// arm64 first: the index lists platforms in a fixed order all the same.
	for _, s := range []string{"linux/arm64=" + bins["arm64"], "linux/amd64=" + bins["amd64"]} {
		if err := targets.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Unix(1700000000, 0).UTC()
	o := options{certs: writeCerts(t), version: "v9", extraLibs: []string{"libm.so.6", "librt.so.1"}}
	dir := filepath.Join(t.TempDir(), "oci")
	if err := run(o, targets, "", dir, "inferno:test", created.Unix()); err != nil {
		t.Fatal(err)
	}

	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].MediaType != types.OCIImageIndex ||
		tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "test" ||
		tm.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/inferno:test" {
		t.Fatalf("index.json: %+v; want one image index named test", tm.Manifests)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		platforms = append(platforms, platformString(*d.Platform))
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64/v8"}) {
		t.Fatalf("index platforms %q, want linux/amd64 and linux/arm64/v8", platforms)
	}

	for _, d := range im.Manifests {
		arch := d.Platform.Architecture
		t.Run(arch, func(t *testing.T) {
			want, a := bins[arch], archs[arch]
			if d.MediaType != types.OCIManifestSchema1 {
				t.Errorf("manifest media type %s", d.MediaType)
			}
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if !cf.Platform().Equals(*d.Platform) {
				t.Errorf("config platform %+v, index platform %+v", cf.Platform(), d.Platform)
			}
			if !cf.Created.Time.Equal(created) || !slices.Equal(cf.Config.Entrypoint, []string{binPath}) ||
				cf.Config.User != "65532:65532" || cf.Config.Labels["org.opencontainers.image.version"] != "v9" {
				t.Errorf("config: created %v, %+v", cf.Created, cf.Config)
			}

			headers, data := layerFiles(t, img)
			wantBin, _ := os.ReadFile(want)
			if !bytes.Equal(data[binPath[1:]], wantBin) {
				t.Errorf("%s: %d bytes, not the %d of the %s binary", binPath, len(data[binPath[1:]]), len(wantBin), arch)
			}
			if f, err := elf.NewFile(bytes.NewReader(data[binPath[1:]])); err != nil || f.Machine != a.machine {
				t.Errorf("%s: not an ELF file for %v (%v)", binPath, a.machine, err)
			}
			info, err := readELF(data[binPath[1:]])
			if err != nil {
				t.Fatal(err)
			}
			libDir := "usr/lib/" + a.triple + "/"
			for _, lib := range []string{a.loader, "libc.so.6", "libm.so.6", "librt.so.1"} {
				f, err := elf.NewFile(bytes.NewReader(data[libDir+lib]))
				if err != nil || f.Machine != a.machine || f.Class != elf.ELFCLASS64 {
					t.Errorf("%s%s: want a 64-bit ELF file for %v (%v)", libDir, lib, a.machine, err)
				}
			}
			// The interpreter's path is a link to the loader, resolved
			// inside the layer.
			h := headers[info.interp[1:]]
			if h == nil || h.Typeflag != tar.TypeSymlink {
				t.Fatalf("layer lacks the link %s", info.interp)
			}
			if got := path.Join(path.Dir(info.interp[1:]), h.Linkname); got != libDir+a.loader {
				t.Errorf("%s links to %s (%s), want %s", info.interp, h.Linkname, got, libDir+a.loader)
			}

			root := t.TempDir()
			unpack(t, root, headers, data)
			var cmd *exec.Cmd
			switch {
			case arch == runtime.GOARCH:
				cmd = exec.Command(filepath.Join(root, libDir, a.loader), "--inhibit-cache",
					"--library-path", filepath.Join(root, libDir), filepath.Join(root, binPath))
			case arch == "arm64":
				qemu, err := exec.LookPath("qemu-aarch64-static")
				if err != nil {
					t.Skip("no qemu-aarch64-static to run the arm64 binary with")
				}
				cmd = exec.Command(qemu, "-L", root, filepath.Join(root, binPath))
			default:
				t.Skipf("cannot run %s here", arch)
			}
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "image-test "+arch {
				t.Errorf("%s in its unpacked layer: %v, output %q; want \"image-test %s\"", cmd, err, out, arch)
			}
		})
	}

	// The same as a tarball: the same index, byte for byte.
	archive := filepath.Join(t.TempDir(), "oci.tar")
	if err := run(o, targets, formatOCIArchive, archive, "inferno:test", created.Unix()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	untarred := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(created) {
			t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, created)
		}
		p := filepath.Join(untarred, h.Name)
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(p, 0o755)
		} else {
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	back, err := layout.ImageIndexFromPath(untarred)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := top.Digest()
	d2, err := back.Digest()
	if err != nil || d1 != d2 {
		t.Errorf("the archive's index.json %s, the directory's %s (%v)", d2, d1, err)
	}
}

func TestBuildChecksThePlatform(t *testing.T) {
	amd64 := dynamicBinary(t, "amd64")
	certs := writeCerts(t)
	for _, s := range []string{"linux/arm64=", "linux/arm64/v8="} {
		var targets binFlag
		if err := targets.Set(s + amd64); err != nil {
			t.Fatal(err)
		}
		_, err := buildAll(options{certs: certs}, targets)
		if err == nil || !strings.Contains(err.Error(), "an ELF executable for linux/amd64, given as linux/arm64") {
			t.Errorf("-bin %s<amd64 binary>: error %v, want a platform mismatch", s, err)
		}
	}

	var two binFlag
	two.Set("linux/amd64=" + amd64)
	two.Set(amd64)
	if _, err := buildAll(options{certs: certs}, two); err == nil || !strings.Contains(err.Error(), "two binaries for linux/amd64") {
		t.Errorf("two binaries for one platform: error %v", err)
	}
	err := run(options{certs: certs}, two, formatDocker, filepath.Join(t.TempDir(), "x.tar"), "inferno:test", 0)
	if err == nil || !strings.Contains(err.Error(), "docker load takes one") {
		t.Errorf("-format docker with two binaries: error %v", err)
	}
}

// TestLibrariesOfOtherArchitecturesArePassedOver looks for the arm64
// binary's libraries in the amd64 directory first.
func TestLibrariesOfOtherArchitecturesArePassedOver(t *testing.T) {
	requireLibc(t, "amd64")
	requireLibc(t, "arm64")
	data, err := os.ReadFile(dynamicBinary(t, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := readELF(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.arch != "arm64" || info.variant != "v8" || info.triple != "aarch64-linux-gnu" || info.machine != elf.EM_AARCH64 {
		t.Fatalf("arm64 binary read as %+v", info)
	}
	a := archs["amd64"]
	amd := binaryInfo{machine: a.machine, triple: a.triple}
	var amdDir string
	for _, d := range (options{}).libDirs(amd) {
		if _, err := os.Stat(filepath.Join(d, "libc.so.6")); err == nil {
			amdDir = d
			break
		}
	}
	files, err := sharedLibraries(info, append([]string{amdDir}, options{}.libDirs(info)...), []string{"libm.so.6"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if f.link != "" || strings.HasSuffix(f.path, "/") {
			continue
		}
		n++
		lib, err := elf.NewFile(bytes.NewReader(f.data))
		if err != nil || lib.Machine != elf.EM_AARCH64 || !strings.HasPrefix(f.path, "usr/lib/aarch64-linux-gnu/") {
			t.Errorf("%s: want an aarch64 library under usr/lib/aarch64-linux-gnu (%v)", f.path, err)
		}
	}
	if n < 3 {
		t.Errorf("%d libraries, want the loader, libc and libm at least", n)
	}

	// The arm64 loader alone, then the amd64 directory: its libc.so.6 is
	// no arm64 one.
	loaderOnly := t.TempDir()
	loader, _, err := findLibrary(path.Base(info.interp), (options{}).libDirs(info), elf.EM_AARCH64)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loaderOnly, path.Base(info.interp)), loader, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = sharedLibraries(info, []string{loaderOnly, amdDir}, nil)
	if err == nil || !strings.Contains(err.Error(), "passed over "+filepath.Join(amdDir, "libc.so.6")) {
		t.Errorf("with only the amd64 libraries: error %v, want one saying they were passed over", err)
	}
}

func TestBinFlag(t *testing.T) {
	var b binFlag
	for _, s := range []string{"bin/inferno", "linux/arm64=bin/a=b", "linux/amd64=x", "linux/arm64/v8=y", "./linux/x=y"} {
		if err := b.Set(s); err != nil {
			t.Errorf("Set(%q): %v", s, err)
		}
	}
	if got := b.String(); got != "bin/inferno,linux/arm64=bin/a=b,linux/amd64=x,linux/arm64/v8=y,./linux/x=y" {
		t.Errorf("String() = %q", got)
	}
	for _, s := range []string{"linux/riscv64=x", "linux/amd64/v3=x", "linux/arm64/v7=x", "linux/arm64="} {
		if err := b.Set(s); err == nil {
			t.Errorf("Set(%q): no error", s)
		}
	}
}

func TestContainerdName(t *testing.T) {
	for in, want := range map[string]string{
		"inferno:dev":                  "docker.io/library/inferno:dev",
		"localhost/inferno:ci":         "localhost/inferno:ci",
		"ghcr.io/org/inferno:v1":       "ghcr.io/org/inferno:v1",
		"registry:5000/a/inferno:main": "registry:5000/a/inferno:main",
	} {
		ref, err := name.NewTag(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := containerdName(ref); got != want {
			t.Errorf("containerdName(%s) = %s, want %s", in, got, want)
		}
	}
}
