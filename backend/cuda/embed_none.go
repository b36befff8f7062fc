//go:build cuda_noembed

package cuda

import "embed"

// Built with -tags cuda_noembed: no kernels are embedded (a binary 10 MB
// smaller, for carrying test builds to a GPU machine over a size-limited
// transfer); INFERNO_CUDA_PTX must name the kernel image to load.
var kernelFiles embed.FS

// kernelsEmbedded reports whether kernelFiles holds the kernels.
const kernelsEmbedded = false
