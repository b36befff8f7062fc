//go:build !cuda_noembed

package cuda

import "embed"

// The kernel images, zstd-compressed (build_ptx.sh): the sm_80 and sm_90
// cubins and the compute_90 PTX (image.go says which GPU loads which).
//
//go:embed kernels/*.zst
var kernelFiles embed.FS

// kernelsEmbedded reports whether kernelFiles holds the kernels.
const kernelsEmbedded = true
