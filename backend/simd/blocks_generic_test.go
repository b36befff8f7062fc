//go:build !(amd64 || arm64) || purego

package simd

// asmTiles returns the assembly tiles of k's type: none here.
func asmTiles(k *typeKernels) []string { return nil }
