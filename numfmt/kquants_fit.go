package numfmt

import "math"

// The scale searches of ggml's K-quant quantizers (ggml-quants.c), each
// the exact float32 arithmetic of its C counterpart: products that feed a
// sum are converted explicitly (float32(a*b)) so that the Go compiler
// cannot fuse them into FMAs, which ggml's build (x86-64 baseline, no
// -mfma) does not use.

const groupMaxEps = 1e-15 // ggml's GROUP_MAX_EPS

// makeQXQuantsGo is ggml's make_qx_quants with rmse_type 1 and no quant
// weights (w = x*x), as quantize_row_q6_K_ref calls it. L gets l+nmax.
func makeQXQuantsGo(nmax int, x []float32, L []uint8) float32 {
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

// makeQKX2QuantsGo is ggml's make_qkx2_quants: an asymmetric nmax-level
// quantization of x with a scale and a min (returned negated in *theMin,
// as ggml does), searching nstep+1 scales.
func makeQKX2QuantsGo(nmax int, x, weights []float32, L, Laux []uint8, theMin *float32, rmin, rdelta float32, nstep int, useMad bool) float32 {
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

// makeQXQuants is makeQXQuantsGo, with the 19 candidate scales searched
// eight at a time where fitAccel allows (same bits).
func makeQXQuants(nmax int, x []float32, L []uint8) float32 {
	n := len(x)
	if !fitAccel || n == 0 || n > 32 {
		return makeQXQuantsGo(nmax, x, L)
	}
	L = L[:n]
	var vmax, amax float32
	finite := true
	for _, v := range x {
		if ax := fabsf(v); ax > amax {
			amax, vmax = ax, v
		}
		if v-v != 0 { // Inf or NaN: the plain search keeps NaN payloads as ggml does
			finite = false
		}
	}
	if !finite {
		return makeQXQuantsGo(nmax, x, L)
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	var wbuf, wxbuf [32]float32
	w, wx := wbuf[:n], wxbuf[:n]
	for i, v := range x {
		w[i] = v * v
		wx[i] = w[i] * v
	}
	// Candidate 0 is the first pass, 1..18 the steps is = -9..-1, 1..9.
	var (
		isc  [24]float32
		sums [72]float32
		lbuf [3 * 32 * 8]float32
	)
	isc[0] = float32(-nmax) / vmax
	k := 1
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		isc[k] = -(float32(nmax) + float32(0.1*float32(is))) / vmax
		k++
	}
	fitSumsAVX2(&x[0], &x[0], &wx[0], &w[0], n, &isc[0], 3, int32(-nmax), int32(nmax-1), &sums[0], &lbuf[0])
	sumlx, suml2 := sums[0], sums[24]
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	bestK := 0
	for k := 1; k < 19; k++ {
		sumlx, suml2 = sums[k], sums[24+k]
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			scale = sumlx / suml2
			best = scale * sumlx
			bestK = k
		}
	}
	lb := lbuf[(bestK/8)*n*8+bestK%8:]
	for i := range L {
		L[i] = uint8(int(lb[8*i]) + nmax)
	}
	return scale
}

// makeQKX2Quants is makeQKX2QuantsGo, with the first pass and the nstep+1
// candidate scales searched eight at a time where fitAccel allows (same
// bits; Laux is then not used).
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8, theMin *float32, rmin, rdelta float32, nstep int, useMad bool) float32 {
	n := len(x)
	if !fitAccel || nstep < 1 || nstep > 22 || n == 0 || n > 32 {
		return makeQKX2QuantsGo(nmax, x, weights, L, Laux, theMin, rmin, rdelta, nstep, useMad)
	}
	weights, L = weights[:n], L[:n]
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
	for i, v := range x {
		if v-v != 0 || weights[i]-weights[i] != 0 { // Inf or NaN
			return makeQKX2QuantsGo(nmax, x, weights, L, Laux, theMin, rmin, rdelta, nstep, useMad)
		}
	}
	if mn > 0 {
		mn = 0
	}
	if mx == mn {
		clear(L)
		*theMin = -mn
		return 0
	}
	// ggml moves min to each better candidate's min, and the later
	// candidates quantize x-min with it: candidates go eight at a time
	// (the first group also holds the first pass, as candidate 0), and
	// a group restarts after a better candidate whose min differs.
	fmax := float32(nmax)
	var (
		xm    [32]float32
		nums  [24 + 8]float32
		num   [8]float32
		ov    [24]float32
		out   [24]float32
		lbufs [2][32 * 8]float32
	)
	nums[0] = fmax
	for is := 0; is <= nstep; is++ {
		nums[is+1] = float32(rmin + float32(rdelta*float32(is)) + fmax)
	}
	for i, v := range x {
		xm[i] = v - mn
	}
	iscale := fmax / (mx - mn)
	ov[0], ov[8], ov[16] = 1/iscale, mn, math.Float32frombits(^uint32(0))
	var scale, bestError float32
	bestBuf, bestLane := 0, 0
	cur := 0
	// c is the next candidate: 0 the first pass, 1+is step is.
	for c := 0; c <= nstep+1; {
		cnt := min(8, nstep+2-c)
		copy(num[:], nums[c:c+8])
		lb := &lbufs[cur]
		fitQKX2AVX2(&xm[0], &x[0], &weights[0], n, &num[0], mx-mn, sumW, sumX, int32(nmax), useMad, &ov[0], &lb[0], &out[0])
		k := 0
		if c == 0 {
			ov[16] = 0
			scale, bestError = out[8], out[0]
			bestBuf, bestLane = cur, 0
			k = 1
		}
		restart := false
		for ; k < cnt; k++ {
			if out[k] < bestError { // false for NaN: D <= 0
				bestError, scale = out[k], out[8+k]
				bestBuf, bestLane = cur, k
				newMin := out[16+k]
				if math.Float32bits(newMin) != math.Float32bits(mn) {
					mn = newMin
					for i, v := range x {
						xm[i] = v - mn
					}
					c += k + 1
					restart = true
					break
				}
			}
		}
		if !restart {
			c += cnt
		}
		if bestBuf == cur {
			cur ^= 1
		}
	}
	lb := lbufs[bestBuf][bestLane:]
	for i := range L {
		L[i] = uint8(lb[8*i])
	}
	*theMin = -mn
	return scale
}
