package simd

import "math"

// Constants of expf, a float32 exp after Cephes' expf: x = n ln2 + r with
// |r| <= ln2/2, exp(r) by a degree-7 polynomial, times 2^n. The assembly
// evaluates the same operations in the same order, so both give the same
// bits. Relative error is about 2e-7 on [expLo, expHi]; below expLo the
// result is 0 (the true value is under 2e-38), above expHi it is exp(expHi).
const (
	expLo  = -87.0
	expHi  = 88.0
	log2e  = 1.44269504088896341
	expC1  = 0.693359375
	expC2  = -2.12194440e-4
	expP0  = 1.9875691500e-4
	expP1  = 1.3981999507e-3
	expP2  = 8.3334519073e-3
	expP3  = 4.1665795894e-2
	expP4  = 1.6666665459e-1
	expP5  = 5.0000001201e-1
	expOne = 1.0
)

// expf returns e**x in float32; see the constants above.
func expf(x float32) float32 {
	if !(x >= expLo) { // also NaN
		return 0
	}
	x = min(x, expHi)
	fx := float32(math.Floor(float64(float32(x*log2e) + 0.5)))
	r := x - float32(fx*expC1)
	r -= float32(fx * expC2)
	z := float32(r * r)
	y := float32(expP0)
	y = float32(y*r) + expP1
	y = float32(y*r) + expP2
	y = float32(y*r) + expP3
	y = float32(y*r) + expP4
	y = float32(y*r) + expP5
	y = float32(float32(y*z)+r) + expOne
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}

// siluMul returns silu(g) * u = g / (1 + e**-g) * u.
func siluMul(g, u float32) float32 {
	return float32(g/(1+expf(-g))) * u
}

func swigluGo(out, gate, up []float32) {
	for i, g := range gate {
		out[i] = siluMul(g, up[i])
	}
}

// The constants of geluMul: gelu's tanh approximation is
// g/2 * (1 + tanh(z)) = g * sigmoid(2z), z = sqrt(2/pi) * (g + 0.044715 g^3),
// and 2z = g * (geluK0 + geluK1 g^2).
const (
	geluK0 = 1.5957691216057307117597842397375 // 2*sqrt(2/pi)
	geluK1 = geluK0 * 0.044715
)

// geluMul returns gelu(g) * u, gelu's tanh approximation as
// g / (1 + e**-(g*(geluK0 + geluK1*g*g))).
func geluMul(g, u float32) float32 {
	t := float32(g * g)
	t = float32(t*geluK1) + geluK0
	t = float32(t * g)
	return float32(g/(1+expf(-t))) * u
}

func gegluGo(out, gate, up []float32) {
	for i, g := range gate {
		out[i] = geluMul(g, up[i])
	}
}

// The constants of swigluOAIMul (arch.SwiGLUOAIAlpha and Limit).
const (
	oaiAlpha = 1.702
	oaiLimit = 7
)

// swigluOAIMul returns OpenAI's clamped SwiGLU of g and u: g = min(g, 7),
// u = clamp(u, -7, 7), g / (1 + e**(-1.702 g)) * (u + 1). The clamps keep
// the limit for a NaN, as the assembly's VMINPS and VMAXPS do.
func swigluOAIMul(g, u float32) float32 {
	if !(g < oaiLimit) {
		g = oaiLimit
	}
	if !(u < oaiLimit) {
		u = oaiLimit
	}
	if !(u > -oaiLimit) {
		u = -oaiLimit
	}
	return float32(g/(1+expf(float32(g*-oaiAlpha)))) * (u + 1)
}

func swigluOAIGo(out, gate, up []float32) {
	for i, g := range gate {
		out[i] = swigluOAIMul(g, up[i])
	}
}

func addGo(x, y []float32) {
	for i := range x {
		x[i] += y[i]
	}
}

// scaleMulGo computes y = x * s * g.
func scaleMulGo(y, x, g []float32, s float32) {
	for i, v := range x {
		y[i] = float32(v*s) * g[i]
	}
}

func sumSquaresGo(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return ss
}

// expSubGo sets p[i] = expf(s[i] - m) and returns the sum of p.
func expSubGo(p, s []float32, m float32) float32 {
	var sum float32
	for i, v := range s {
		p[i] = expf(v - m)
		sum += p[i]
	}
	return sum
}
