package quant

// The scale searches of ggml's K-quant quantizers (ggml-quants.c), each
// the exact float32 arithmetic of its C counterpart: products that feed a
// sum are converted explicitly (float32(a*b)) so that the Go compiler
// cannot fuse them into FMAs, which ggml's build (x86-64 baseline, no
// -mfma) does not use.

const groupMaxEps = 1e-15 // ggml's GROUP_MAX_EPS

// makeQXQuants is ggml's make_qx_quants with rmse_type 1 and no quant
// weights (w = x*x), as quantize_row_q6_K_ref calls it. L gets l+nmax.
func makeQXQuants(nmax int, x []float32, L []uint8) float32 {
	L = L[:len(x)]
	var vmax, amax float32
	for _, v := range x {
		if ax := fabsf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	clamp := func(l int) int { return max(-nmax, min(nmax-1, l)) }
	// w = x*x and w*x are the same in every pass: computed once.
	var wbuf, wxbuf [32]float32
	w, wx := wbuf[:len(x)], wxbuf[:len(x)]
	for i, v := range x {
		w[i] = v * v
		wx[i] = w[i] * v
	}
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale * v))
		L[i] = uint8(l + nmax)
		fl := float32(l)
		sumlx += float32(wx[i] * fl)
		suml2 += float32(w[i] * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / vmax
		sumlx, suml2 = 0, 0
		for i, v := range x {
			fl := float32(clamp(nearestInt(iscale * v)))
			sumlx += float32(wx[i] * fl)
			suml2 += float32(w[i] * fl * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				L[i] = uint8(nmax + clamp(nearestInt(iscale*v)))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse. L gets l+nmax.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	L = L[:len(x)]
	var vmax, amax float32
	for _, v := range x {
		if ax := fabsf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	clamp := func(l int) int { return max(-nmax, min(nmax-1, l)) }
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := clamp(nearestInt(iscale * v))
		L[i] = int8(l)
		w := v * v
		fl := float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			fl := float32(L[i])
			slx := sumlx - float32(w*v*fl)
			if slx > 0 {
				sl2 := suml2 - float32(w*fl*fl)
				newL := clamp(nearestInt(v * sl2 / slx))
				if newL != int(L[i]) {
					fn := float32(newL)
					slx += float32(w * v * fn)
					sl2 += float32(w * fn * fn)
					if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
						L[i] = int8(newL)
						sumlx, suml2 = slx, sl2
						changed = true
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is ggml's make_qkx2_quants: an asymmetric nmax-level
// quantization of x with a scale and a min (returned negated in *theMin,
// as ggml does), searching nstep+1 scales.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, theMin *float32, rmin, rdelta float32, nstep int, useMad bool) float32 {
	n := len(x)
	weights, L, Laux = weights[:n], L[:n], Laux[:n]
	mn, mx := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < mn {
			mn = x[i]
		}
		if x[i] > mx {
			mx = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L)
		*theMin = -mn
		return 0
	}
	fmax := float32(nmax)
	iscale := fmax / (mx - mn)
	scale := 1 / iscale
	var bestError float32
	for i, v := range x {
		l := max(0, min(nmax, nearestInt(iscale*float32(v-mn))))
		L[i] = uint8(l)
		diff := float32(float32(scale*float32(l))+mn) - v
		if useMad {
			diff = fabsf(diff)
		} else {
			diff = diff * diff
		}
		bestError += float32(weights[i] * diff)
	}
	if nstep < 1 {
		*theMin = -mn
		return scale
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(rmin+float32(rdelta*float32(is))+fmax) / (mx - mn)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := max(0, min(nmax, nearestInt(iscale*float32(v-mn))))
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i, v := range x {
				diff := float32(float32(thisScale*float32(Laux[i]))+thisMin) - v
				if useMad {
					diff = fabsf(diff)
				} else {
					diff = diff * diff
				}
				curError += float32(weights[i] * diff)
			}
			if curError < bestError {
				copy(L, Laux)
				bestError = curError
				scale = thisScale
				mn = thisMin
			}
		}
	}
	*theMin = -mn
	return scale
}
