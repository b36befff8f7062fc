package cuda

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// The kernel images. build_ptx.sh compiles kernels/kernels.cu into three,
// zstd-compressed (embed.go embeds them; kernels/kernels.stamp records what
// they were built from):
//
//	compute90.ptx  PTX for compute_90 (nvcc 11.8: PTX ISA 7.8), with
//	               programmatic dependent launch and the cluster attention
//	sm80.cubin     machine code for sm_80 (ptxas 11.8, from the compute_80
//	               PTX, which is not shipped)
//	sm90.cubin     machine code for sm_90 (ptxas 13.0, from compute90.ptx)
//
// A cubin runs on the GPUs of its major compute capability whose minor one
// is the same or higher; PTX is compiled by the driver (its JIT, seconds for
// this much code; the driver caches the result) for a GPU of its compute
// capability or a newer one. So a GPU of compute capability
//
//   - below 8.0 (Volta, Turing and older) is refused (newDevice): the kernels
//     use what sm_80 brought (cp.async, int8 mma.sync).
//   - 8.x (A100 8.0; RTX 30xx, A10, A40 8.6; Orin 8.7; RTX 40xx, L4, L40
//     8.9) loads sm80.cubin. It has no PTX to fall back on (compute90.ptx
//     needs 9.0), so a driver that refused the cubin would leave these GPUs
//     without kernels. No driver that could run them before refuses it:
//     ptxas 11.8's cubins load on the drivers of CUDA 11.8 (R520) and
//     later, the same drivers that could compile the compute_80 PTX (ISA
//     7.8) shipped until issue 34.
//   - 9.0 (H100, H200) loads sm90.cubin. A driver older than the ptxas that
//     assembled it (CUDA 13.0's, R580) may refuse it; the loader then falls
//     back to compute90.ptx, which drivers from R520 on compile.
//   - 10.x, 12.x and newer (Blackwell on) loads compute90.ptx, compiled by
//     the driver.
//
// Only the image the GPU needs is uncompressed, when a device loads its
// module: about 55 ms for sm90.cubin or compute90.ptx on one core of a
// 2-core EPYC (BenchmarkDecodeKernels; gzip, before issue 34, took 200 and
// 380). It is not kept: the driver holds its own copy.

// cubinArchs are the compute capabilities with an embedded cubin.
var cubinArchs = []int{80, 90}

// kernelImage is a module image to load: its bytes (NUL-terminated PTX, or
// a cubin), where it came from, whether its kernels wait for their
// predecessors (so may be launched with programmatic dependent launch), and
// the PTX to fall back on when a cubin does not load.
type kernelImage struct {
	data     []byte
	what     string
	pdl      bool
	fallback string // embedded PTX image, "" for none
}

// cubinFor returns the embedded cubin for compute capability cc: the
// highest of the same major version not above it, or "" for none.
func cubinFor(cc int) string {
	best := 0
	for _, a := range cubinArchs {
		if a/10 == cc/10 && a <= cc {
			best = max(best, a)
		}
	}
	if best == 0 {
		return ""
	}
	return fmt.Sprintf("sm%d.cubin", best)
}

// ptxFor returns the embedded PTX for compute capability cc, "" for none.
func ptxFor(cc int) string {
	if cc >= 90 {
		return "compute90.ptx"
	}
	return ""
}

// kernelSource returns the image to load on a GPU of compute capability cc:
// the embedded one chosen as the comment at the top of this file says,
// unless one of two debugging switches asks for another.
//
//   - INFERNO_CUDA_PTX=FILE loads FILE instead: PTX or a cubin, raw or
//     compressed with zstd or gzip (build_ptx.sh's images, the cubin its
//     --cubin90 writes, the .gz images of the commits before issue 34), to
//     try kernels without rebuilding the binary or to compare two builds.
//     A cubin's kernels are taken to wait for their predecessors on 9.0 and
//     up, as the embedded ones do; PTX from a file is launched without
//     programmatic dependent launch (it may come from an older build).
//   - INFERNO_CUDA_JIT=1 loads the embedded PTX where a cubin would be
//     loaded, for the driver to compile: its JIT against ptxas. GPUs of
//     compute capability 8.x have no PTX: there it is an error.
func kernelSource(cc int) (kernelImage, error) {
	if p := os.Getenv("INFERNO_CUDA_PTX"); p != "" {
		return fileImage(p, cc)
	}
	pdl := cc >= 90
	ptx := ptxFor(cc)
	if os.Getenv("INFERNO_CUDA_JIT") == "1" {
		if ptx == "" {
			return kernelImage{}, fmt.Errorf("cuda: INFERNO_CUDA_JIT=1: no PTX for compute capability %d.%d (compute90.ptx needs 9.0 or newer)", cc/10, cc%10)
		}
		return embeddedPTX(ptx, pdl)
	}
	if name := cubinFor(cc); name != "" {
		b, err := embedded(name)
		if err != nil {
			return kernelImage{}, err
		}
		return kernelImage{data: b, what: "embedded " + name, pdl: pdl, fallback: ptx}, nil
	}
	if ptx == "" {
		return kernelImage{}, fmt.Errorf("cuda: no kernels for compute capability %d.%d; they need %s or newer", cc/10, cc%10, minComputeCapabilityHuman)
	}
	return embeddedPTX(ptx, pdl)
}

// fileImage reads the image INFERNO_CUDA_PTX names for a GPU of compute
// capability cc.
func fileImage(path string, cc int) (kernelImage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return kernelImage{}, fmt.Errorf("cuda: INFERNO_CUDA_PTX: %w", err)
	}
	if b, err = unpack(b); err != nil {
		return kernelImage{}, fmt.Errorf("cuda: INFERNO_CUDA_PTX %s: %w", path, err)
	}
	if bytes.HasPrefix(b, elfMagic) {
		return kernelImage{data: b, what: path, pdl: cc >= 90}, nil
	}
	return kernelImage{data: nulTerminated(b), what: path}, nil
}

// embeddedPTX returns the embedded PTX image name, ready to load.
func embeddedPTX(name string, pdl bool) (kernelImage, error) {
	b, err := embedded(name)
	if err != nil {
		return kernelImage{}, err
	}
	return kernelImage{data: nulTerminated(b), what: "embedded " + name, pdl: pdl}, nil
}

// embedded returns the uncompressed bytes of the embedded image name
// (compute90.ptx, sm80.cubin, sm90.cubin).
func embedded(name string) ([]byte, error) {
	if !kernelsEmbedded {
		return nil, fmt.Errorf("cuda: this binary was built with -tags cuda_noembed and has no kernels: set INFERNO_CUDA_PTX to a PTX or cubin file (backend/cuda/kernels/*.zst)")
	}
	z, err := kernelFiles.ReadFile("kernels/" + name + ".zst")
	if err != nil {
		return nil, fmt.Errorf("cuda: embedded kernels: %w", err)
	}
	b, err := unpack(z)
	if err != nil {
		return nil, fmt.Errorf("cuda: embedded kernels %s: %w", name, err)
	}
	return b, nil
}

// The magic numbers that tell images' formats apart.
var (
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	gzipMagic = []byte{0x1f, 0x8b}
	elfMagic  = []byte("\x7fELF")
)

// maxImageBytes bounds an image's uncompressed size: the largest, the PTX,
// is about 50 MB; a file that claims more is not a kernel image.
const maxImageBytes = 1 << 30

// unpack returns the bytes of an image file, uncompressed when they are
// zstd or gzip (told by their magic numbers), as they are otherwise. A
// zstd image comes back with room for the NUL byte PTX is loaded with.
func unpack(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, zstdMagic):
		var h zstd.Header
		if err := h.Decode(b); err != nil {
			return nil, err
		}
		var dst []byte
		if h.HasFCS && h.FrameContentSize < maxImageBytes {
			dst = make([]byte, 0, h.FrameContentSize+1)
		}
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxImageBytes))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.DecodeAll(b, dst)
	case bytes.HasPrefix(b, gzipMagic):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}
	return b, nil
}

// nulTerminated returns b with a NUL byte appended (PTX is loaded as a
// C string).
func nulTerminated(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == 0 {
		return b
	}
	return append(b, 0)
}
