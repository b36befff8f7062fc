//go:build amd64 && !purego

package simd

//go:noescape
func tabMatVecAVX2(y *float32, w *byte, rb int, groups int, qs *int8, ds *float32, cx *int32, nb int, kv *[32]int8, mx int)

//go:noescape
func packTabAVX2(dst, w *byte, rb, nb int, kv *[32]uint8, mx int)

// matVecTab is the matrix-vector kernel of the table format l.
func matVecTab(l *l32Format, y []float32, w []byte, rb int, a *Acts, t int) {
	if len(y) > 0 {
		qs, ds, cx, _ := l32MatVecArgs(y, w, rb, l.bytes, a, t)
		tabMatVecAVX2(&y[0], &w[0], rb, len(y)/8, &qs[0], &ds[0], &cx[0], a.nb, &l.tab.lanes, l.tab.mx)
	}
}

// packTab is the packer of the table format l.
func packTab(l *l32Format, dst, w []byte, rb, nb int) {
	_, _ = dst[nb*packBlockBytes-1], w[7*rb+nb*l.bytes-1]
	packTabAVX2(&dst[0], &w[0], rb, nb, &l.tab.plus, l.tab.mx)
}

func matVecIQ4NL(y []float32, w []byte, rb int, a *Acts, t int) { matVecTab(lIQ4NL, y, w, rb, a, t) }

func matVecMXFP4(y []float32, w []byte, rb int, a *Acts, t int) { matVecTab(lMXFP4, y, w, rb, a, t) }

func packIQ4NL(dst, w []byte, rb, nb int) { packTab(lIQ4NL, dst, w, rb, nb) }

func packMXFP4(dst, w []byte, rb, nb int) { packTab(lMXFP4, dst, w, rb, nb) }
