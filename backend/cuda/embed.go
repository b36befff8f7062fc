//go:build !cuda_noembed

package cuda

import "embed"

// The kernels, gzip-compressed (build_ptx.sh): PTX for compute capability
// 8.0 and up (kernels.ptx) and 9.0 and up (kernels_sm90.ptx, with
// programmatic dependent launch and the cluster attention compiled in), and
// machine code (cubins) for sm_80, sm_86, sm_89 and sm_90, which load
// without the driver's JIT compilation (seconds for this much PTX).
//
//go:embed kernels/*.gz
var kernelFiles embed.FS

// kernelsEmbedded reports whether kernelFiles holds the kernels.
const kernelsEmbedded = true
