//go:build (amd64 || arm64) && !purego

package simd

// The element-wise kernels' wrappers on the architectures with assembly:
// each runs the architecture's kernel (elementwise_amd64.s: AVX2;
// elementwise_arm64.s: NEON) over the multiple of 8 of its length and the
// Go reference over the rest. The kernels give the bits of the references.

//go:noescape
func scaleMulAsm(y, x, gain *float32, s float32, n int)

//go:noescape
func addAsm(x, y *float32, n int)

//go:noescape
func swigluAsm(out, gate, up *float32, n int)

//go:noescape
func gegluAsm(out, gate, up *float32, n int)

//go:noescape
func swigluOAIAsm(out, gate, up *float32, n int)

//go:noescape
func expSubAsm(p, s *float32, m float32, n int) float32

// scaleMul computes y = x * s * g; len(y), len(g) >= len(x).
func scaleMul(y, x, g []float32, s float32) {
	n := 0
	if accel {
		n = len(x) &^ 7
	}
	if n > 0 {
		_, _ = y[n-1], g[n-1]
		scaleMulAsm(&y[0], &x[0], &g[0], s, n)
	}
	scaleMulGo(y[n:], x[n:], g[n:], s)
}

// add computes x += y; len(y) >= len(x).
func add(x, y []float32) {
	n := 0
	if accel {
		n = len(x) &^ 7
	}
	if n > 0 {
		_ = y[n-1]
		addAsm(&x[0], &y[0], n)
	}
	addGo(x[n:], y[n:])
}

// swiglu computes out = silu(gate) * up, all of one length.
func swiglu(out, gate, up []float32) {
	n := 0
	if accel {
		n = len(gate) &^ 7
	}
	if n > 0 {
		_, _ = out[n-1], up[n-1]
		swigluAsm(&out[0], &gate[0], &up[0], n)
	}
	swigluGo(out[n:], gate[n:], up[n:])
}

// geglu computes out = gelu(gate) * up; see geluMul.
func geglu(out, gate, up []float32) {
	n := 0
	if accel {
		n = len(gate) &^ 7
	}
	if n > 0 {
		_, _ = out[n-1], up[n-1]
		gegluAsm(&out[0], &gate[0], &up[0], n)
	}
	gegluGo(out[n:], gate[n:], up[n:])
}

// swigluOAI computes OpenAI's clamped SwiGLU; see swigluOAIMul.
func swigluOAI(out, gate, up []float32) {
	n := 0
	if accel {
		n = len(gate) &^ 7
	}
	if n > 0 {
		_, _ = out[n-1], up[n-1]
		swigluOAIAsm(&out[0], &gate[0], &up[0], n)
	}
	swigluOAIGo(out[n:], gate[n:], up[n:])
}

// expSub sets p[i] = expf(s[i] - m) and returns their sum; len(p) >= len(s).
// The kernel gives p the bits of expSubGo's and adds them in its own order.
func expSub(p, s []float32, m float32) float32 {
	n := len(s) &^ 7
	if !accel || n == 0 {
		return expSubGo(p, s, m)
	}
	_ = p[n-1]
	sum := expSubAsm(&p[0], &s[0], m, n)
	return sum + expSubGo(p[n:], s[n:], m)
}
