// sample.glsl: what the sampling shaders (sample_*.comp, driven by
// backend/vulkan/sample.go) share: a row's parameters, the patch list,
// the noise, the chunking and the workgroup reductions and selection.
//
// The definition is backend/cuda's (kernels/sample.cuh; package gumbel is
// its Go reference): a row's token is the Gumbel-max, the token with the
// largest (x - M)/T + g over the tokens its filters keep, g = -log(E),
// E = -log(u), u = (r + 1/2) / 2^32 from word id%4 of Philox4x32-10 of the
// counter (id/4, position, 0, 0) keyed by the row's 64-bit seed: the draw
// depends on the seed, the position and the logits alone, never on the
// row's place in the batch or how the row is split. Filters only set which
// tokens take part (a threshold a row); ties go to the lower id, always.
//
// Every buffer a row needs beyond the logits (its patches, its mask) is
// reached through addresses in the row's parameters, so that a recorded
// command buffer serves any rows' parameters: the push constants depend
// only on the number of rows and the vocabulary.
//
// Reductions go through shared memory (right for any subgroup size);
// the workgroup size (constant_id 0) must be a power of two, at least 32.

#include "common.glsl"
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x

#define SAMP_CHUNKS 64  // most chunks a row is split into by sample_stats and sample_race
#define SAMP_TOPLP 20   // most top log-probabilities (sampling.MaxTopLogprobs)
#define SAMP_OUT 44     // ints of a row's results: see sample_final.comp
#define SAMP_SEL 128    // most entries samp_select selects (TOPK_MAX)
#define SAMP_CUTOFF -30.0

#define SAMP_LOGPROBS 1 // flags: the row wants log-probabilities
#define SAMP_SKIP 2     // flags: not sampled here (sampling.Row.On false)

// SampRow is one row's parameters (sample.go's sampRow, 72 bytes).
struct SampRow {
	uint64_t patches; // address of the row's patch entries (nprep of them), 0: none
	uint64_t mask;    // address of the row's allowed-token bitmask (32-bit words), 0: none
	uint seed_lo, seed_hi;
	int pos;      // the index of the token drawn (the Philox counter)
	float invT;   // 1/temperature; 0: greedy (the largest logit after patches and mask)
	int topk;     // 0: off; else at most kmax
	float topp;   // 0: off
	float lnminp; // -inf: off
	int flags;    // SAMP_LOGPROBS, SAMP_SKIP
	int ntop;     // top log-probabilities
	int nprep;    // patch entries
	float rep, pres, freq;
	int pad0;
};
layout(buffer_reference, std430, buffer_reference_align = 8) buffer SampRows { SampRow r[]; };

// SampPatch is a patch list entry (sample.go's sampPatch): sample_prep
// saves the raw logit in orig, sample_final puts it back.
struct SampPatch {
	int id;
	float bias;
	int count;  // times generated
	int prompt; // 1: in the prompt
	float orig;
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer SampPatches { SampPatch e[]; };

#define SAMP_INF uintBitsToFloat(0x7f800000u)

// philox4x32_10 is Philox4x32-10 (Salmon et al., Random123).
uvec4 philox4x32_10(uvec4 c, uint k0, uint k1) {
	for (int r = 0; r < 10; r++) {
		uint hi0, lo0, hi1, lo1;
		umulExtended(0xD2511F53u, c.x, hi0, lo0);
		umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
		c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	return c;
}

// samp_ln is the natural logarithm of a positive normal x, to about an
// ulp relative (a series, not the driver's log, whose error bound near 1
// is absolute).
float samp_ln(float x) {
	int e;
	float m = frexp(x, e); // [0.5, 1)
	if (m < 0.70710678) {
		m *= 2.0;
		e -= 1;
	}
	precise float s = (m - 1.0) / (m + 1.0); // |s| <= 0.172
	precise float s2 = s * s;
	precise float t = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11)))));
	precise float r = float(e) * 0.693145751953125 + (2.0 * s + 2.0 * s * t);
	return r + float(e) * 1.428606765330187e-06;
}

// samp_ln1m is ln(1 - v) for v in (0, 1/2], with full relative precision
// for small v (log1p(-v)).
float samp_ln1m(float v) {
	precise float s = -v / (2.0 - v); // |s| <= 1/3
	precise float s2 = s * s;
	precise float t = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13 + s2 * (1.0 / 15 + s2 * (1.0 / 17))))))));
	return 2.0 * s + 2.0 * s * t;
}

// samp_gumbel is -log(E), E = -log(u), u = (r + 1/2) / 2^32, computed
// with full relative precision at both ends of u.
float samp_gumbel(uint r) {
	float e;
	if (r < 0x80000000u) {
		e = -samp_ln((float(r) + 0.5) * 2.3283064365386963e-10);
	} else {
		e = -samp_ln1m((float(0xFFFFFFFFu - r) + 0.5) * 2.3283064365386963e-10);
	}
	return -samp_ln(e);
}

// samp_noise is the noise of token id at position pos under the row's seed.
float samp_noise(SampRow p, int pos, int id) {
	uvec4 r = philox4x32_10(uvec4(uint(id) >> 2, uint(pos), 0u, 0u), p.seed_lo, p.seed_hi);
	uint w = (id & 3) == 0 ? r.x : (id & 3) == 1 ? r.y : (id & 3) == 2 ? r.z : r.w;
	return samp_gumbel(w);
}

// samp_allowed reports whether the row's mask (address, 0: none) allows id.
bool samp_allowed(uint64_t mask, int id) {
	return mask == 0ul || ((U32s(mask).v[id >> 5] >> (id & 31)) & 1u) != 0u;
}

// samp_chunk returns the [lo, hi) of chunk c of C over n elements, in
// whole groups of 4.
ivec2 samp_chunk(int n, int c, int C) {
	int g = (n + 3) >> 2;
	int per = (g + C - 1) / C;
	int lo = min(n, c * per * 4);
	return ivec2(lo, min(n, lo + per * 4));
}

// samp_better orders (score, id) pairs: a larger score first, the lower
// id among ties; NaN scores never win (an id of 0x7fffffff is none).
bool samp_better(float a, int ia, float b, int ib) {
	if (isnan(a)) return false;
	if (isnan(b) || a > b) return true;
	return a == b && ia < ib;
}

// merge_ms merges the (max, sum of exp(x - max)) pair (m2, s2) into (m, s).
void merge_ms(inout float m, inout float s, float m2, float s2) {
	if (!(m2 > -SAMP_INF)) return;
	if (!(m > -SAMP_INF)) {
		m = m2;
		s = s2;
		return;
	}
	if (m2 > m) {
		s = s * exp(m - m2) + s2;
		m = m2;
	} else {
		s += s2 * exp(m2 - m);
	}
}

// samp_key is the order-preserving image of a float as a uint: a larger
// float, a larger key; 0 is no float but NaN's (the key of no entry).
uint samp_key(float v) {
	uint u = floatBitsToUint(v);
	return (u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u);
}

// samp_unkey is samp_key's inverse.
float samp_unkey(uint k) {
	return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7fffffffu) : ~k);
}

// samp_ck is the selection key of an entry: a larger value first, then
// the lower id; 0 for no entry. Ids differ, so keys do.
uint64_t samp_ck(float v, int id) {
	return (uint64_t(samp_key(v)) << 32) | uint64_t(~uint(id));
}

float samp_ck_value(uint64_t c) { return samp_unkey(uint(c >> 32)); }
int samp_ck_id(uint64_t c) { return int(~uint(c & 0xffffffffu)); }

#define SYNC() \
	memoryBarrierShared(); \
	barrier()

shared float red_f[WG];
shared int red_i[WG];

// samp_argmax reduces the workgroup's (score, id) pairs to the best in
// samp_better's order, returned to every thread.
void samp_argmax(inout float s, inout int id) {
	uint t = gl_LocalInvocationID.x;
	red_f[t] = s;
	red_i[t] = id;
	SYNC();
	for (uint h = WG / 2; h > 0; h >>= 1) {
		if (t < h && samp_better(red_f[t + h], red_i[t + h], red_f[t], red_i[t])) {
			red_f[t] = red_f[t + h];
			red_i[t] = red_i[t + h];
		}
		SYNC();
	}
	s = red_f[0];
	id = red_i[0];
	SYNC();
}

// samp_max returns the workgroup's largest v (NaN ignored) to every thread.
float samp_max(float v) {
	uint t = gl_LocalInvocationID.x;
	red_f[t] = v;
	SYNC();
	for (uint h = WG / 2; h > 0; h >>= 1) {
		if (t < h && red_f[t + h] > red_f[t]) red_f[t] = red_f[t + h];
		SYNC();
	}
	float r = red_f[0];
	SYNC();
	return r;
}

// samp_sum returns the workgroup's sum of v to every thread (a fixed tree).
float samp_sum(float v) {
	uint t = gl_LocalInvocationID.x;
	red_f[t] = v;
	SYNC();
	for (uint h = WG / 2; h > 0; h >>= 1) {
		if (t < h) red_f[t] += red_f[t + h];
		SYNC();
	}
	float r = red_f[0];
	SYNC();
	return r;
}

#ifdef SAMP_SELECT
// Selection (shaders that define SAMP_SELECT and the function
// samp_sel_ck(q), the selection key samp_ck of entry q, 0 for none): samp_select's k best, a radix
// select on the 64-bit keys (8-bit digits from the top, a histogram a
// pass, stopping when the bin of the k-th best is taken whole), then the
// selected entries ranked by counting.
uint64_t samp_sel_ck(uint q);

shared uint sel_hist[256];
shared uint sel_need, sel_cnt;
shared uint64_t sel_pref;
shared int sel_bits;
shared bool sel_done;
shared uint64_t sel_c[SAMP_SEL];
shared uint64_t sel_out[SAMP_SEL];

// samp_select writes the keys of the k (<= SAMP_SEL) best of the n
// entries to sel_out[0:cnt), best first, and returns cnt (all of them
// when fewer than k). Every thread of the workgroup calls it.
uint samp_select(uint n, uint k) {
	uint t = gl_LocalInvocationID.x;
	if (k == 0u) return 0u;
	if (t == 0u) {
		sel_need = k;
		sel_pref = 0ul;
		sel_bits = 0;
		sel_done = false;
		sel_cnt = 0u;
	}
	SYNC();
	for (int pass = 0; pass < 8; pass++) {
		for (uint b = t; b < 256u; b += WG) sel_hist[b] = 0u;
		SYNC();
		int sh = 56 - 8 * pass;
		int bits = sel_bits;
		uint64_t pref = sel_pref;
		for (uint q = t; q < n; q += WG) {
			uint64_t c = samp_sel_ck(q);
			if (c != 0ul && (bits == 0 || (c >> (64 - bits)) == (pref >> (64 - bits))))
				atomicAdd(sel_hist[uint(c >> sh) & 255u], 1u);
		}
		SYNC();
		if (t == 0u) {
			uint need = sel_need, cum = 0u;
			int b = 255;
			for (; b >= 0; b--) {
				uint h = sel_hist[b];
				if (cum + h >= need) break;
				cum += h;
			}
			if (b < 0) {
				sel_done = true; // fewer than k entries (first pass): all of them
			} else {
				sel_need = need - cum;
				sel_pref |= uint64_t(b) << sh;
				sel_bits = bits + 8;
				if (sel_hist[b] == sel_need) sel_done = true;
			}
		}
		SYNC();
		if (sel_done) break;
	}
	int bits = sel_bits;
	uint64_t pref = sel_pref;
	for (uint q = t; q < n; q += WG) {
		uint64_t c = samp_sel_ck(q);
		if (c != 0ul && (bits == 0 || (c >> (64 - bits)) >= (pref >> (64 - bits)))) {
			uint at = atomicAdd(sel_cnt, 1u);
			if (at < SAMP_SEL) sel_c[at] = c;
		}
	}
	SYNC();
	uint cnt = min(sel_cnt, k);
	for (uint j = t; j < cnt; j += WG) {
		uint64_t c = sel_c[j];
		uint r = 0u;
		for (uint i = 0u; i < cnt; i++) r += sel_c[i] > c ? 1u : 0u;
		sel_out[r] = c;
	}
	SYNC();
	return cnt;
}
#endif
