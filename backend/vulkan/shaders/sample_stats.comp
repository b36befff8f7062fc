#version 450
// sample_stats: grid (C, rows), C <= SAMP_CHUNKS. Per chunk of a row the max and
// the sum of exp(x - max): mode 0, rows with logprobs, of the raw logits
// (sum of exp(x - max)); mode 1, sampled rows without top_k that have
// min_p or top_p, after the patches, masked (sum of exp((x - max)/T)).
// NaN and -Inf are left out; out[row*C + chunk] = (max, sum)
// as two floats. Other rows exit.
//
// Push block (sample.go's pushSampStats):
//   F32s logits; SampRows rows; F32s out; int V; int mode; int C; int pad;
#include "sample.glsl"

layout(push_constant, std430) uniform Push {
	F32s logits;
	SampRows rows;
	F32s out_;
	int V;
	int mode;
	int C;
	int pad;
} p;

void main() {
	int row = int(gl_WorkGroupID.y), c = int(gl_WorkGroupID.x);
	SampRow r = p.rows.r[row];
	if ((r.flags & SAMP_SKIP) != 0) return;
	if (p.mode == 0 ? (r.flags & SAMP_LOGPROBS) == 0
	                : (r.topk > 0 || r.invT == 0.0 || !(r.lnminp > -SAMP_INF || r.topp > 0.0)))
		return;
	float sc = p.mode == 1 ? r.invT : 1.0;
	uint64_t mk = p.mode == 1 ? r.mask : 0ul;
	uint64_t x = uint64_t(p.logits) + 4ul * uint64_t(row) * uint64_t(p.V);
	ivec2 ch = samp_chunk(p.V, c, p.C);
	float m = -SAMP_INF;
	for (int i = ch.x + int(gl_LocalInvocationID.x); i < ch.y; i += int(WG)) {
		float v = F32s(x).v[i];
		if (v > m && samp_allowed(mk, i)) m = v;
	}
	m = samp_max(m);
	float s = 0.0;
	if (m > -SAMP_INF && m < SAMP_INF) {
		for (int i = ch.x + int(gl_LocalInvocationID.x); i < ch.y; i += int(WG)) {
			float v = F32s(x).v[i];
			if (v > -SAMP_INF && samp_allowed(mk, i)) {
				precise float d = (v - m) * sc;
				s += exp(d);
			}
		}
	} else if (m == SAMP_INF) {
		for (int i = ch.x + int(gl_LocalInvocationID.x); i < ch.y; i += int(WG))
			if (F32s(x).v[i] == SAMP_INF && samp_allowed(mk, i)) s += 1.0;
	}
	s = samp_sum(s);
	if (gl_LocalInvocationID.x == 0u) {
		uint o = 2u * (uint(row) * p.C + uint(c));
		p.out_.v[o] = m;
		p.out_.v[o + 1u] = s;
	}
}
