//go:build arm64 && !purego

package simd

// The multi-token tiles (ktile_arm64.s): eight packed rows times four
// tokens, with SDOT.

//go:noescape
func q8Tile8x4SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, nb int)

//go:noescape
func kTile32MinSDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile16MinSDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile32SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile16SDOT(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile32MinI8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile16MinI8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile32I8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

//go:noescape
func kTile16I8MM(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

// q8VNNI8x4 multiplies a repacked tile of eight rows of a Q8_0-like
// format (packQ8Go) by four tokens qstride values apart (their scales nb
// apart), token j's eight results going to y[j*ldy:][:8]; the bits of
// dot32. (The name is amd64's; cx is not needed here.)
func q8VNNI8x4(y []float32, ldy int, pack []byte, qs []int8, qstride int, ds []float32, cx []int32, nb int) {
	_, _, _, _ = y[3*ldy+7], pack[nb*packBlockBytes-1], qs[3*qstride+nb*qk-1], ds[3*nb+nb-1]
	q8Tile8x4SDOT(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], nb)
}

// kTile multiplies eight packed rows by four tokens qstride values apart
// (scales nb apart, sums nb*bsK apart), token j's results going to
// y[j*ldy:][:8]; see kTileGo. The last argument (amd64's choice of VNNI)
// is ignored.
func kTile(y []float32, ldy int, f *kFormat, pack []byte, qs []int8, qstride int, ds []float32, bs []int16, nb int, _ bool) {
	_, _, _, _, _ = y[3*ldy+7], pack[nb*kPackBytes(f.nsub)-1], qs[3*qstride+nb*qkK-1], ds[4*nb-1], bs[4*nb*bsK-1]
	tile := kTiles[kTileIndex(f)]
	if i8mm {
		tile = kTilesI8MM[kTileIndex(f)]
	}
	tile(&y[0], ldy, &pack[0], &qs[0], qstride, &ds[0], &bs[0], nb, int(f.off))
}

// kTileFunc is a K tile kernel; see kTile.
type kTileFunc func(y *float32, ldy int, pack *byte, qs *int8, qstride int, ds *float32, bs *int16, nb int, off int)

// The K tiles by kTileIndex: SDOT, and SMMLA (USMMLA, I8MM).
var (
	kTiles     = [4]kTileFunc{kTile16SDOT, kTile32SDOT, kTile16MinSDOT, kTile32MinSDOT}
	kTilesI8MM = [4]kTileFunc{kTile16I8MM, kTile32I8MM, kTile16MinI8MM, kTile32MinI8MM}
)

// kTileIndex returns the index of f's tile kernels: sub-blocks of 32
// (nsub 8) or 16, with or without mins.
func kTileIndex(f *kFormat) int {
	i := 0
	if f.nsub == 8 {
		i = 1
	}
	if f.min {
		i += 2
	}
	return i
}
