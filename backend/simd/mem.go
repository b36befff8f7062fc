package simd

import "encoding/binary"

// memSumGo returns the sum of b's little-endian 64-bit words, its last
// len(b)%8 bytes added one by one.
func memSumGo(b []byte) uint64 {
	var s uint64
	for len(b) >= 8 {
		s += binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		s += uint64(c)
	}
	return s
}
