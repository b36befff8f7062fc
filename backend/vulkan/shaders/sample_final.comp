#version 450
// sample_final: grid rows. A row's token: for sampled rows with top_k or
// top_p, the top_k candidates (or for top_p alone the kmax best) merged
// from sample_topk's partials, kept as package sampling keeps them (the
// cutoff, top_p over what is left, then min_p), and the Gumbel-max among
// those kept; for the others the merge of sample_race's partials, else
// the plain argmax of the allowed tokens, else 0. Then the raw
// log-probabilities asked for, and the patched logits put back.
//
// Results, SAMP_OUT ints a row at out[row*SAMP_OUT ..]: [0] the id (-1
// for a skipped row), [1] the chosen token's raw log-probability (float
// bits), [2] the number n of top log-probabilities, [3] 1 when a top_p
// nucleus is larger than the kmax candidates (the row is left to the
// host; the id is the best candidate), then n (id, log-probability)
// pairs from [4].
//
// Push block (sample.go's pushSampFinal):
//   F32s logits; SampRows rows; F32s race; F32s kval; I32s kidx;
//   F32s lval; I32s lidx; F32s rawstats; F32s poststats; I32s out;
//   int V; int G; int kmax; int C (sample_stats' and sample_race's chunks);
#define SAMP_SELECT
#include "sample.glsl"

layout(push_constant, std430) uniform Push {
	F32s logits;
	SampRows rows;
	F32s race;
	F32s kval;
	I32s kidx;
	F32s lval;
	I32s lidx;
	F32s rawstats;
	F32s poststats;
	I32s out_;
	int V;
	int G;
	int kmax;
	int C;
} p;

const int NONE = 0x7fffffff;

// What samp_sel_ck reads: partials of G chunks, stride apart, the first
// per of each.
uint64_t gval, gidx;
uint grow, gstride, gper;

uint64_t samp_sel_ck(uint q) {
	uint c = q / gper, j = q % gper;
	uint o = (grow * uint(p.G) + c) * gstride + j;
	int id = I32s(gidx).v[o];
	return id < 0 ? 0ul : samp_ck(F32s(gval).v[o], id);
}

shared int chosen, undrawn, nkeep;
shared float mtop, rawChosen;

// lp is the log-probability of raw logit v under the row's raw stats
// (m, s): inf when some logit is +Inf.
float lp(float v, float m, float s) {
	if (m == SAMP_INF) return v == SAMP_INF ? -samp_ln(s) : (isnan(v) ? v : -SAMP_INF);
	precise float lse = m + samp_ln(s);
	return v - lse;
}

void main() {
	int row = int(gl_WorkGroupID.x);
	uint t = gl_LocalInvocationID.x;
	SampRow r = p.rows.r[row];
	uint o = uint(row) * SAMP_OUT;
	if ((r.flags & SAMP_SKIP) != 0) {
		if (t == 0u) {
			p.out_.v[o] = -1;
			p.out_.v[o + 3u] = 0;
		}
		return;
	}
	uint64_t x = uint64_t(p.logits) + 4ul * uint64_t(row) * uint64_t(p.V);
	grow = uint(row);
	if (t == 0u) undrawn = 0;
	if (r.invT != 0.0 && (r.topk > 0 || r.topp > 0.0)) {
		bool nucleus = r.topk <= 0; // top_p alone, over the kmax best
		int k = nucleus ? p.kmax : min(r.topk, p.kmax);
		gval = uint64_t(p.kval);
		gidx = uint64_t(p.kidx);
		gstride = uint(p.kmax);
		gper = uint(k);
		uint cnt = samp_select(uint(p.G * k), uint(k));
		if (t == 0u) {
			// sampling's order: the cutoff, top_p over what is left, then min_p.
			int keep = 0;
			float m = cnt > 0u ? samp_ck_value(sel_out[0]) : 0.0;
			if (cnt > 0u && m < SAMP_INF) {
				precise float z = 0.0, zc = 0.0; // Kahan
				for (; keep < int(cnt); keep++) {
					precise float d = (samp_ck_value(sel_out[keep]) - m) * r.invT;
					if (!(d >= SAMP_CUTOFF)) break;
					precise float y = exp(d) - zc;
					precise float s = z + y;
					zc = (s - z) - y;
					z = s;
				}
				int nk = keep;
				if (r.topp > 0.0) {
					float zt = z; // top_p's mass: of the top_k candidates, or of the whole row
					if (nucleus) {
						precise float a = 0.0, ac = 0.0;
						for (int c = 0; c < p.C; c++) {
							uint so = 2u * (uint(row) * p.C + uint(c));
							float tm = p.poststats.v[so], ts = p.poststats.v[so + 1u];
							if (tm > -SAMP_INF) {
								precise float d = (tm - m) * r.invT;
								precise float y = ts * exp(d) - ac;
								precise float s = a + y;
								ac = (s - a) - y;
								a = s;
							}
						}
						zt = max(a, z);
					}
					precise float target = r.topp * zt;
					precise float cum = 0.0, cc = 0.0;
					bool reached = false;
					for (int j = 0; j < keep; j++) {
						precise float d = (samp_ck_value(sel_out[j]) - m) * r.invT;
						precise float y = exp(d) - cc;
						precise float s = cum + y;
						cc = (s - cum) - y;
						cum = s;
						if (cum >= target) {
							nk = j + 1;
							reached = true;
							break;
						}
					}
					// The nucleus goes on past the kmax candidates (all
					// valid and above the cutoff): the host samples this row.
					if (nucleus && !reached && keep == k) undrawn = 1;
				}
				for (int j = 0; j < nk; j++) {
					precise float d = (samp_ck_value(sel_out[j]) - m) * r.invT;
					if (d < r.lnminp) {
						nk = j;
						break;
					}
				}
				keep = nk;
			}
			chosen = cnt > 0u ? samp_ck_id(sel_out[0]) : 0; // +Inf first, or nothing kept: the best candidate
			nkeep = keep;
			mtop = m;
		}
		SYNC();
		int keep = nkeep;
		float m = mtop;
		float bs = -SAMP_INF;
		int bi = NONE;
		for (int j = int(t); j < keep; j += int(WG)) {
			int id = samp_ck_id(sel_out[j]);
			precise float d = (samp_ck_value(sel_out[j]) - m) * r.invT;
			precise float s = d + samp_noise(r, r.pos, id);
			if (samp_better(s, id, bs, bi)) {
				bs = s;
				bi = id;
			}
		}
		samp_argmax(bs, bi);
		if (t == 0u && keep > 0) chosen = bi;
	} else if (t == 0u) {
		float bs = -SAMP_INF, av = uintBitsToFloat(0x7fc00000u);
		int bi = NONE, ai = NONE;
		I32s ids = I32s(p.race);
		for (int c = 0; c < p.C; c++) {
			uint po = 4u * (uint(row) * p.C + uint(c));
			float ts = p.race.v[po], ta = p.race.v[po + 2u];
			int ti = ids.v[po + 1u], tai = ids.v[po + 3u];
			if (ti != NONE && samp_better(ts, ti, bs, bi)) {
				bs = ts;
				bi = ti;
			}
			if (tai != NONE && samp_better(ta, tai, av, ai)) {
				av = ta;
				ai = tai;
			}
		}
		int id = bi;
		if (bi < 0 || bi >= p.V) id = ai;
		if (id < 0 || id >= p.V) id = 0;
		chosen = id;
	}
	SYNC();
	int id = chosen;
	SampPatches pe = SampPatches(r.patches);
	if ((r.flags & SAMP_LOGPROBS) != 0) {
		// The raw logit of the chosen token: its saved original if patched.
		if (t == 0u) rawChosen = F32s(x).v[id];
		SYNC();
		for (int j = int(t); j < r.nprep; j += int(WG))
			if (pe.e[j].id == id) rawChosen = pe.e[j].orig;
		SYNC();
		float m = -SAMP_INF, s = 0.0;
		for (int c = 0; c < p.C; c++) {
			uint so = 2u * (uint(row) * p.C + uint(c));
			merge_ms(m, s, p.rawstats.v[so], p.rawstats.v[so + 1u]);
		}
		int nt = 0;
		if (r.ntop > 0) {
			int k = min(r.ntop, SAMP_TOPLP);
			gval = uint64_t(p.lval);
			gidx = uint64_t(p.lidx);
			gstride = uint(SAMP_TOPLP);
			gper = uint(k);
			uint cnt = samp_select(uint(p.G * k), uint(k));
			if (t == 0u)
				for (uint j = 0u; j < cnt; j++) {
					p.out_.v[o + 4u + 2u * uint(nt)] = samp_ck_id(sel_out[j]);
					p.out_.v[o + 5u + 2u * uint(nt)] = floatBitsToInt(lp(samp_ck_value(sel_out[j]), m, s));
					nt++;
				}
		}
		if (t == 0u) {
			p.out_.v[o + 1u] = floatBitsToInt(lp(rawChosen, m, s));
			p.out_.v[o + 2u] = nt;
		}
	}
	SYNC();
	// Every read of the row's logits is done: put the patched ones back.
	for (int j = int(t); j < r.nprep; j += int(WG)) F32s(x).v[pe.e[j].id] = pe.e[j].orig;
	if (t == 0u) {
		p.out_.v[o + 3u] = undrawn;
		p.out_.v[o] = id;
	}
}
