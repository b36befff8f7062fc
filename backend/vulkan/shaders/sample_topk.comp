#version 450
// sample_topk: grid (G, rows), G chunks of ceil(V/G) logits a row. Per
// chunk the k best (larger logit first, the lower id among ties; NaN,
// -Inf and masked tokens left out): mode 0, rows with top
// log-probabilities (k = ntop), raw logits; mode 1, sampled rows with
// top_k (k = topk) or top_p alone (k = kmax: the nucleus when it is that
// small), after the patches, masked. Writes them best first to
// val/idx[(row*G + chunk)*stride ..], (-Inf, -1) past what the chunk has.
// Other rows exit.
//
// Push block (sample.go's pushSampTopK):
//   F32s logits; SampRows rows; F32s val; I32s idx; int V; int mode;
//   int G; int stride (kmax in mode 1, SAMP_TOPLP in mode 0);
#define SAMP_SELECT
#include "sample.glsl"

layout(push_constant, std430) uniform Push {
	F32s logits;
	SampRows rows;
	F32s val;
	I32s idx;
	int V;
	int mode;
	int G;
	int stride;
} p;

uint64_t gx;      // the row's logits
int glo;          // the chunk's first id
uint64_t gmask;   // the mask in effect (0: none)

uint64_t samp_sel_ck(uint q) {
	int id = glo + int(q);
	float v = F32s(gx).v[id];
	return v > -SAMP_INF && samp_allowed(gmask, id) ? samp_ck(v, id) : 0ul;
}

void main() {
	int row = int(gl_WorkGroupID.y), c = int(gl_WorkGroupID.x);
	SampRow r = p.rows.r[row];
	if ((r.flags & SAMP_SKIP) != 0) return;
	bool post = p.mode == 1;
	int k = !post ? ((r.flags & SAMP_LOGPROBS) != 0 ? r.ntop : 0)
	              : (r.invT == 0.0 ? 0 : r.topk > 0 ? r.topk : r.topp > 0.0 ? p.stride : 0);
	k = min(k, p.stride);
	if (k <= 0) return;
	int chunk = (p.V + p.G - 1) / p.G;
	glo = min(p.V, c * chunk);
	int hi = min(p.V, glo + chunk);
	gx = uint64_t(p.logits) + 4ul * uint64_t(row) * uint64_t(p.V);
	gmask = post ? r.mask : 0ul;
	uint cnt = samp_select(uint(hi - glo), uint(k));
	uint o = (uint(row) * uint(p.G) + uint(c)) * uint(p.stride);
	for (uint j = gl_LocalInvocationID.x; j < uint(k); j += WG) {
		if (j < cnt) {
			p.val.v[o + j] = samp_ck_value(sel_out[j]);
			p.idx.v[o + j] = samp_ck_id(sel_out[j]);
		} else {
			p.val.v[o + j] = -SAMP_INF;
			p.idx.v[o + j] = -1;
		}
	}
}
