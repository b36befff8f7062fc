#version 450
// sample_race: grid (C, rows). For rows without top_k or top_p
// (and greedy rows): per chunk the Gumbel-max winner over the allowed
// tokens (NaN and -Inf left out; min_p's threshold from the mode-1 stats'
// max M: (x - M)/T >= ln(min_p)), scores (x - M)/T + noise (noise off for
// greedy rows), and the plain argmax of the allowed tokens (NaN last).
// part[(row*C + chunk)*4 ..] = (score, id, argmax value,
// argmax id), ids as int32, 0x7fffffff for none. Rows with top_k or
// top_p exit.
//
// Push block (sample.go's pushSampRace):
//   F32s logits; SampRows rows; F32s stats; F32s part; int V; int C;
#include "sample.glsl"

layout(push_constant, std430) uniform Push {
	F32s logits;
	SampRows rows;
	F32s stats;
	F32s part;
	int V;
	int C;
} p;

const int NONE = 0x7fffffff;

void main() {
	int row = int(gl_WorkGroupID.y), c = int(gl_WorkGroupID.x);
	SampRow r = p.rows.r[row];
	if ((r.flags & SAMP_SKIP) != 0) return;
	bool greedy = r.invT == 0.0;
	if (!greedy && (r.topk > 0 || r.topp > 0.0)) return;
	uint64_t x = uint64_t(p.logits) + 4ul * uint64_t(row) * uint64_t(p.V);
	ivec2 ch = samp_chunk(p.V, c, p.C);
	float tau = -SAMP_INF, M = 0.0;
	if (!greedy && r.lnminp > -SAMP_INF) {
		float m = -SAMP_INF;
		for (int k = 0; k < p.C; k++) m = max(m, p.stats.v[2 * (row * p.C + k)]);
		M = m;
		tau = r.lnminp;
	}
	float bs = -SAMP_INF, av = uintBitsToFloat(0x7fc00000u);
	int bi = NONE, ai = NONE;
	for (int b = ch.x + 4 * int(gl_LocalInvocationID.x); b < ch.y; b += 4 * int(WG)) {
		float v[4];
		bool ok[4];
		bool any = false;
		for (int j = 0; j < 4; j++) {
			int id = b + j;
			v[j] = id < ch.y ? F32s(x).v[id] : uintBitsToFloat(0x7fc00000u);
			ok[j] = id < ch.y && samp_allowed(r.mask, id);
			if (ok[j] && samp_better(v[j], id, av, ai)) {
				av = v[j];
				ai = id;
			}
			if (greedy) {
				ok[j] = false;
				continue;
			}
			precise float d = (v[j] - M) * r.invT;
			ok[j] = ok[j] && v[j] > -SAMP_INF && d >= tau;
			any = any || ok[j];
		}
		if (!any) continue;
		uvec4 w = philox4x32_10(uvec4(uint(b) >> 2, uint(r.pos), 0u, 0u), r.seed_lo, r.seed_hi);
		for (int j = 0; j < 4; j++) {
			if (!ok[j]) continue;
			precise float d = (v[j] - M) * r.invT;
			precise float s = v[j] == SAMP_INF ? SAMP_INF : d + samp_gumbel(w[j]);
			if (samp_better(s, b + j, bs, bi)) {
				bs = s;
				bi = b + j;
			}
		}
	}
	if (greedy) {
		bool ok = !isnan(av) && ai != NONE;
		bs = ok ? av : -SAMP_INF;
		bi = ok ? ai : NONE;
	}
	samp_argmax(bs, bi);
	samp_argmax(av, ai);
	if (gl_LocalInvocationID.x == 0u) {
		uint o = 4u * (uint(row) * p.C + uint(c));
		p.part.v[o] = bs;
		p.part.v[o + 2u] = av;
		I32s ids = I32s(p.part); // ids as ints: a NaN's bits need not survive a float store
		ids.v[o + 1u] = bi;
		ids.v[o + 3u] = ai;
	}
}
