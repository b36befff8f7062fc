#version 450
// sample_prep: grid rows. Applies a row's patches (the logit bias, then
// the penalties: sampling.Patch.Apply) to its logits in place, saving each
// raw logit in its entry's orig (sample_final puts them back).
//
// Push block (sample.go's pushSampPrep):
//   F32s logits; SampRows rows; int V;
#include "sample.glsl"

layout(push_constant, std430) uniform Push {
	F32s logits;
	SampRows rows;
	int V;
} p;

// samp_penalize is the logit v of a patched token (Patch.Apply), every
// step rounded on its own.
float samp_penalize(float v, SampRow r, SampPatch e) {
	precise float y = v + e.bias;
	if (e.count > 0 || e.prompt != 0) {
		precise float z = y > 0.0 ? y / r.rep : y * r.rep;
		if (e.count > 0) {
			precise float f = r.freq * float(e.count);
			precise float z1 = z - f;
			precise float z2 = z1 - r.pres;
			z = z2;
		}
		y = z;
	}
	return y;
}

void main() {
	int row = int(gl_WorkGroupID.x);
	SampRow r = p.rows.r[row];
	if ((r.flags & SAMP_SKIP) != 0 || r.nprep == 0) return;
	uint64_t x = uint64_t(p.logits) + 4ul * uint64_t(row) * uint64_t(p.V);
	SampPatches pe = SampPatches(r.patches);
	for (int j = int(gl_LocalInvocationID.x); j < r.nprep; j += int(WG)) {
		SampPatch e = pe.e[j];
		float v = F32s(x).v[e.id];
		pe.e[j].orig = v;
		F32s(x).v[e.id] = samp_penalize(v, r, e);
	}
}
