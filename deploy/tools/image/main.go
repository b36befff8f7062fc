// Command image assembles inferno's container image without Docker and
// without pulling a base image: one layer holding the inferno binary, the C
// library it and the CUDA driver link against (copied from the build
// machine), a passwd and group file with the non-root user 65532, the build
// machine's CA certificates (so that HTTPS downloads from the model hub
// work), a home directory, /tmp and the model cache directory /models.
//
// Given one binary, it writes a tarball that `docker load` and `podman load`
// accept:
//
//	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o bin/inferno ./cmd/inferno
//	cd deploy/tools && go run ./image -bin ../../bin/inferno -out ../../bin/inferno-image.tar
//
// Given one binary per platform (-bin linux/amd64=FILE -bin
// linux/arm64=FILE), it builds one image for each and writes them under one
// tag as a multi-architecture index in an OCI image layout: a directory
// (-format oci, the default then) that `crane push` and `skopeo copy oci:`
// read, or the same as a tarball (-format oci-archive) for `skopeo copy
// oci-archive:`. `docker load` takes one platform's image, not an index.
//
//	GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o bin/inferno-arm64 ./cmd/inferno
//	cd deploy/tools && go run ./image -bin linux/amd64=../../bin/inferno \
//		-bin linux/arm64=../../bin/inferno-arm64 -out ../../bin/inferno-oci
//
// Built without cgo, inferno still names the ELF interpreter and libc: the
// purego package it loads the CUDA driver with links them so that it can
// call dlopen. The driver library, libcuda.so.1, is not in the image; the
// NVIDIA container toolkit mounts it from the host, and it needs libm and
// librt besides what inferno needs, so those are copied too (-extra-libs).
// Each image gets the libraries of its binary's architecture: the build
// machine's own (/lib/x86_64-linux-gnu on Debian amd64), or a cross
// sysroot's for the other one (/usr/aarch64-linux-gnu/lib, Debian's
// libc6-arm64-cross); a library of another architecture is passed over.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identities inside the image.
const (
	binPath   = "/usr/bin/inferno"
	certPath  = "/etc/ssl/certs/ca-certificates.crt"
	homeDir   = "/home/nonroot"
	modelsDir = "/models"
	uid       = 65532
	port      = "8080/tcp"
)

// options are what the command line sets for one image.
type options struct {
	bin string // the inferno binary
	// platform is what bin must be built for; nil: whatever it is.
	platform *v1.Platform
	// oci: OCI media types for the manifest, config and layer, as an OCI
	// image layout wants; else Docker's, as docker load has them.
	oci      bool
	certs    string    // CA certificate bundle to copy in
	version  string    // org.opencontainers.image.version
	revision string    // org.opencontainers.image.revision
	created  time.Time // timestamp of every file and of the image
	// dirs are where the build machine's shared libraries are looked for
	// ({triple} stands for the multiarch directory); none: the defaults.
	dirs      []string
	extraLibs []string // sonames to copy besides those the binary needs
}

// defaultLibDirs are Debian's library directories, searched in this order:
// the multiarch ones of the build machine's own architecture (or of another
// one added with dpkg --add-architecture), a cross sysroot's
// (libc6-arm64-cross installs /usr/aarch64-linux-gnu/lib), then those of
// other distributions. Files of another architecture are passed over.
var defaultLibDirs = []string{"/lib/{triple}", "/usr/lib/{triple}", "/usr/{triple}/lib", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// libDirs are o.dirs, or the defaults, for bin's architecture.
func (o options) libDirs(bin binaryInfo) []string {
	dirs := o.dirs
	if len(dirs) == 0 {
		dirs = defaultLibDirs
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = strings.ReplaceAll(d, "{triple}", bin.triple)
	}
	return out
}

func main() {
	var (
		o       options
		targets binFlag
		format  string
		out     string
		tag     string
		epoch   int64
		dirs    string
		extra   string
	)
	flag.Var(&targets, "bin", "inferno binary to put in the image: FILE (its platform read from it), or linux/ARCH=FILE, given once per platform for a multi-architecture index (required)")
	flag.StringVar(&o.certs, "certs", certPath, "CA certificate bundle to copy into the image")
	flag.StringVar(&out, "out", "", "where to write: a tarball (docker), a directory (oci) or a tarball of it (oci-archive) (required)")
	flag.StringVar(&format, "format", "", "docker: a tarball for docker load or podman load, one platform; oci: an OCI image layout directory holding an index of every platform; oci-archive: that directory as a tarball (default: docker for one -bin, oci for several)")
	flag.StringVar(&tag, "tag", "inferno:dev", "image name and tag recorded in the output")
	flag.StringVar(&o.version, "version", "dev", "version label")
	flag.StringVar(&o.revision, "revision", "", "source revision label (git commit)")
	flag.Int64Var(&epoch, "epoch", sourceDateEpoch(), "creation time in Unix seconds (default $SOURCE_DATE_EPOCH, else 0) so that builds are reproducible")
	flag.StringVar(&dirs, "lib-dirs", strings.Join(defaultLibDirs, ","), "comma-separated directories to copy shared libraries from, searched in order for a file of the binary's architecture ({triple}: x86_64-linux-gnu or aarch64-linux-gnu)")
	flag.StringVar(&extra, "extra-libs", "libm.so.6,librt.so.1", "comma-separated sonames to copy besides those the binary names (the CUDA driver's)")
	flag.Parse()
	o.dirs = splitList(dirs)
	o.extraLibs = splitList(extra)
	if err := run(o, targets, format, out, tag, epoch); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// sourceDateEpoch is $SOURCE_DATE_EPOCH as a number, or 0.
func sourceDateEpoch() int64 {
	n, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// build assembles the image of o.bin.
func build(o options) (v1.Image, error) {
	bin, err := os.ReadFile(o.bin)
	if err != nil {
		return nil, err
	}
	info, err := readELF(bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.bin, err)
	}
	if p := o.platform; p != nil && (p.OS != "linux" || p.Architecture != info.arch || p.Variant != "" && p.Variant != info.variant) {
		return nil, fmt.Errorf("%s: an ELF executable for %s, given as %s", o.bin, info.platform(), platformString(*p))
	}
	libs, err := sharedLibraries(info, o.libDirs(info), o.extraLibs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.bin, err)
	}
	certs, err := os.ReadFile(o.certs)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	if !bytes.Contains(certs, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", o.certs)
	}
	files := []file{
		{path: "etc/", mode: 0o755},
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:" + homeDir + ":/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{path: "etc/ssl/", mode: 0o755},
		{path: "etc/ssl/certs/", mode: 0o755},
		{path: certPath[1:], mode: 0o644, data: certs},
		{path: "home/", mode: 0o755},
		{path: homeDir[1:] + "/", mode: 0o700, owner: uid},
		{path: modelsDir[1:] + "/", mode: 0o755, owner: uid},
		{path: "tmp/", mode: 0o1777},
		{path: "usr/", mode: 0o755},
		{path: "usr/bin/", mode: 0o755},
		{path: binPath[1:], mode: 0o755, data: bin},
	}
	for _, l := range libs {
		if !slices.ContainsFunc(files, func(f file) bool { return f.path == l.path }) {
			files = append(files, l)
		}
	}
	layerTar, err := tarFiles(files, o.created)
	if err != nil {
		return nil, err
	}
	layerOpts := []tarball.LayerOption{tarball.WithCompressionLevel(gzip.BestCompression)}
	base := empty.Image
	if o.oci {
		layerOpts = append(layerOpts, tarball.WithMediaType(types.OCILayer))
		base = mutate.ConfigMediaType(mutate.MediaType(base, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, layerOpts...)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: o.created}, CreatedBy: "inferno deploy/tools/image"},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = info.arch
	cf.Variant = info.variant
	cf.OS = "linux"
	cf.Created = v1.Time{Time: o.created}
	labels := map[string]string{
		"org.opencontainers.image.title":       "inferno",
		"org.opencontainers.image.description": "LLM inference engine: OpenAI-compatible server for Qwen3 GGUF models on NVIDIA GPUs and CPUs",
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.created":     o.created.Format(time.RFC3339),
	}
	if o.revision != "" {
		labels["org.opencontainers.image.revision"] = o.revision
	}
	cf.Config = v1.Config{
		User:       strconv.Itoa(uid) + ":" + strconv.Itoa(uid),
		Entrypoint: []string{binPath},
		Cmd:        []string{"--help"},
		WorkingDir: homeDir,
		Env: []string{
			"PATH=/usr/bin",
			"HOME=" + homeDir,
			"HF_HOME=" + modelsDir,
			// The NVIDIA container toolkit reads this: mount the driver's
			// compute library (libcuda.so.1) with the GPUs it is asked for.
			// Which GPUs is left to the runtime (--gpus, CDI, the device
			// plugin): no NVIDIA_VISIBLE_DEVICES=all that would hand
			// every GPU to a container meant for the CPU.
			"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
		},
		ExposedPorts: map[string]struct{}{port: {}},
		Volumes:      map[string]struct{}{modelsDir: {}},
		Labels:       labels,
		StopSignal:   "SIGTERM",
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return img, nil
}

// binaryInfo is what the image needs to know of the binary.
type binaryInfo struct {
	machine elf.Machine
	arch    string   // OCI architecture: amd64, arm64
	variant string   // OCI architecture variant: v8 for arm64
	triple  string   // Debian multiarch directory: x86_64-linux-gnu
	interp  string   // ELF interpreter, "" for a static binary
	needed  []string // shared libraries it names (DT_NEEDED)
}

// platform is the OCI platform the binary runs on.
func (b binaryInfo) platform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: b.arch, Variant: b.variant}
}

// readELF checks that data is a Linux ELF executable and describes it.
func readELF(data []byte) (binaryInfo, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return binaryInfo{}, fmt.Errorf("not an ELF executable: %w", err)
	}
	defer f.Close()
	b := binaryInfo{machine: f.Machine}
	switch {
	case f.Machine == elf.EM_X86_64 && f.Class == elf.ELFCLASS64:
		b.arch, b.triple = "amd64", "x86_64-linux-gnu"
	case f.Machine == elf.EM_AARCH64 && f.Class == elf.ELFCLASS64:
		b.arch, b.variant, b.triple = "arm64", "v8", "aarch64-linux-gnu"
	default:
		return binaryInfo{}, fmt.Errorf("ELF machine %v, %v: want 64-bit x86-64 or aarch64", f.Machine, f.Class)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		raw, err := io.ReadAll(p.Open())
		if err != nil {
			return binaryInfo{}, fmt.Errorf("ELF interpreter: %w", err)
		}
		b.interp = string(bytes.TrimRight(raw, "\x00"))
		if !path.IsAbs(b.interp) {
			return binaryInfo{}, fmt.Errorf("ELF interpreter %q is not an absolute path", b.interp)
		}
	}
	b.needed, err = f.ImportedLibraries()
	if err != nil {
		return binaryInfo{}, fmt.Errorf("ELF dynamic section: %w", err)
	}
	return b, nil
}

// sharedLibraries finds the libraries bin needs, with those they need in
// turn, plus extra, in the build machine's dirs, and returns them as files
// under /usr/lib/<triple>/ named by their sonames, with a relative link from
// bin's interpreter path to the interpreter among them (relative, so that it
// also resolves in the layer unpacked elsewhere, as qemu -L reads it).
func sharedLibraries(bin binaryInfo, dirs, extra []string) ([]file, error) {
	if bin.interp == "" {
		return nil, nil
	}
	libDir := "usr/lib/" + bin.triple + "/"
	files := []file{{path: "usr/lib/", mode: 0o755}, {path: libDir, mode: 0o755}}
	queue := append(append([]string{path.Base(bin.interp)}, bin.needed...), extra...)
	done := map[string]bool{}
	for len(queue) > 0 {
		soname := queue[0]
		queue = queue[1:]
		if done[soname] {
			continue
		}
		done[soname] = true
		if strings.Contains(soname, "/") {
			return nil, fmt.Errorf("shared library %q: want a bare soname", soname)
		}
		data, lib, err := findLibrary(soname, dirs, bin.machine)
		if err != nil {
			return nil, err
		}
		needed, err := lib.ImportedLibraries()
		lib.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", soname, err)
		}
		queue = append(queue, needed...)
		files = append(files, file{path: libDir + soname, mode: 0o755, data: data})
	}
	// The interpreter's own path (/lib64/ld-linux-x86-64.so.2) links to it.
	dir := strings.TrimPrefix(path.Dir(bin.interp), "/")
	if dir+"/" != libDir {
		for _, d := range parents(dir) {
			files = append(files, file{path: d + "/", mode: 0o755})
		}
		up := strings.Repeat("../", len(parents(dir)))
		files = append(files, file{path: bin.interp[1:], link: up + libDir + path.Base(bin.interp)})
	}
	return files, nil
}

// parents lists dir and the directories above it, outermost first:
// "a/b" gives "a", "a/b".
func parents(dir string) []string {
	var out []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

// findLibrary reads the first file named soname in dirs, following links,
// that is a 64-bit ELF file for machine, and returns it parsed too.
func findLibrary(soname string, dirs []string, machine elf.Machine) ([]byte, *elf.File, error) {
	var other []string // files of another architecture, passed over
	for _, d := range dirs {
		p := filepath.Join(d, soname)
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		lib, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		if lib.Machine != machine || lib.Class != elf.ELFCLASS64 {
			other = append(other, fmt.Sprintf("%s (%v)", p, lib.Machine))
			continue
		}
		return data, lib, nil
	}
	msg := fmt.Sprintf("shared library %s for %v: not in %s", soname, machine, strings.Join(dirs, ", "))
	if len(other) > 0 {
		msg += "; passed over " + strings.Join(other, ", ")
	}
	if machine == elf.EM_AARCH64 {
		msg += " (on Debian: apt-get install libc6-arm64-cross)"
	}
	return nil, nil, errors.New(msg)
}

// file is one entry of the layer: a directory when path ends in "/".
type file struct {
	path  string
	mode  int64
	owner int
	data  []byte
	link  string // a symbolic link to this target
}

// tarFiles writes files as an uncompressed tar with every time set to t.
func tarFiles(files []file, t time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: f.path, Mode: f.mode, Uid: f.owner, Gid: f.owner, ModTime: t,
			Typeflag: tar.TypeReg, Size: int64(len(f.data)),
		}
		switch {
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
		case f.path[len(f.path)-1] == '/':
			h.Typeflag = tar.TypeDir
		}
		if f.owner == uid {
			h.Uname, h.Gname = "nonroot", "nonroot"
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
