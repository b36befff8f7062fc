#version 450
// attn: paged causal grouped-query attention over a half-precision cache
// (backend.Ops.AttentionF16, scalar.AttentionF16), for decode (one query
// token a sequence) and prompts (many) alike.
//
// The queries come in tiles: tile i is tiles[2i+1] (at most TQ) consecutive
// tokens of one sequence from token tiles[2i] (vulkan.AttnTiles builds
// them). Token t is at position pos[t] of sequence seq[t], whose block
// table starts at tables[tabOff[seq[t]]] (rope_store's layout); its query
// head h (q[t*qStride + h*D ...], D = headDim; qStride = nHeads*D when
// packed, a fused QKV product's width) attends to the keys and
// values of KV head h / (nHeads/nKV) at positions lo..pos[t], lo = 0, or
// pos[t] - window + 1 with a positive window; position p is row p %
// blockSize of block tables[...+ p/blockSize], block b's row r starting at
// value (b*blockSize + r) * nKV*D of kc and vc. The logits are q.k *
// scale; with a sinks address (not 0), sinks[h] joins the softmax's
// denominator (a key of that logit and a value of zeros).
//
// A workgroup computes R = TQ*HPW query rows: the tile's tokens times HPW
// query heads of one KV head, reading each key and value once for all of
// them. It walks the keys in chunks of WG positions: invocation j computes
// the R logits of key j of the chunk (its row of the cache read 8 halves
// at a time), the chunk's maxima update each row's running maximum
// (online softmax, float32), and the invocations then accumulate the
// chunk's values: each a column of VP value pairs of the R rows (VP 4, 2
// or 1 as R grows) for the keys of its key group (WG/columns groups, keys
// g, g+groups, ...), several keys' loads in flight at once, so that a
// decode step's few workgroups wait on memory a few times a chunk rather
// than once a key. The key groups' partial outputs and the denominators
// are summed over the workgroup at the end, in a fixed order.
//
// With splits > 1 (decode at depth, where tiles times head groups are too
// few workgroups to fill the device) the keys of a tile are cut into
// splits runs of whole chunks, one a workgroup, and each writes its
// rows' running maximum m, denominator l and unnormalized output (D
// values) to part, at ((t*nHeads + h)*splits + split)*(D+2) for token t
// and head h; attn_combine.comp then merges the runs (and the sinks) into
// out. A run past the keys writes m = -inf, l = 0.
//
// With FUSE (decode passes: every tile one token, TQ = 1) the dispatch
// does rope_store's work for its token itself: q holds the packed QKV
// rows as the product wrote them (qStride values a token: nHeads query
// heads, nKV key heads, nKV value heads), and the layer's rope block
// (RopeArgs at address rope) says how to normalize and turn them. Each
// workgroup normalizes and turns its query heads and its KV head's key,
// rounds the key and the value to half precision as the cache holds them,
// and takes the token's own position from those instead of the cache;
// the first workgroup of the KV head (its first head group, split 0)
// stores them in the cache for the next steps. The arithmetic is
// rope_store's (ops.glsl), so the logits are those of rope_store then
// attn. No workgroup reads a cache row another writes: a pass holds one
// position of each sequence.
//
// Specialization constants: 0 WG (invocations, keys a chunk), 1 HPW
// (query heads a workgroup, dividing nHeads/nKV), 2 TQ (tokens a tile), 3
// D (headDim, a multiple of 8), 4 FUSE, 5 VP (value pairs an invocation
// reads of a key: 1, 2 or 4, fewer as the rows grow). Shared memory: 4*(R*D + 4*ceil(R/4)*WG +
// R*WG + WG) bytes, 4*KG*D more with KG > 1 key groups, and 4*(R*D + 2*D +
// (R + 1)*D/2) more with FUSE (attnShape.shared in ops.go; pickAttnShape
// picks the shape).
//
// Push block (Go: pushAttn):
//   q             address of the queries (float32), qStride values a token
//   out           address of tokens*nHeads*D float32 values
//   kc, vc        addresses of the layer's key and value caches (f16)
//   pos, seq      addresses of an int32 a token
//   tables        address of the int32 block tables
//   tabOff        address of an int32 offset into tables a sequence
//   tiles         address of nTiles (first token, tokens) int32 pairs
//   sinks         address of nHeads float32 logits, or 0: none
//   part          address of the runs' partial results (read with splits > 1)
//   rope          address of the layer's RopeArgs (read with FUSE)
//   nTiles, nHeads, nKV, blockSize  uint
//   window        int (0: none)
//   scale         float
//   splits        uint (1: no partial results)
//   qStride       uint
// Grid: (x, nHeads/HPW, splits*zt); the tiles over x and zt (attnGroups in
// ops.go cuts them at 65535): tile = (z / splits) * gl_NumWorkGroups.x
// + x, split z % splits.
#include "common.glsl"
#include "ops.glsl"

layout(constant_id = 1) const uint HPW = 1;
layout(constant_id = 2) const uint TQ = 1;
layout(constant_id = 3) const uint D = 128;
layout(constant_id = 4) const uint FUSE = 0;
layout(constant_id = 5) const uint VP = 4;

// RopeArgs is a layer's rope block (Go: ropeArgs): rope_store's table,
// gains and options.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer RopeArgs {
  uint64_t tab;
  uint64_t qgain;
  uint64_t kgain;
  uint rotDims;
  uint style;
  uint maxPos;
  uint flags; // 1: QK-norm
  float eps;
};

const uint R = TQ * HPW;
const uint DP = D / 2u;               // value pairs a row
const uint NR4 = (R + 3u) / 4u;        // vec4s of weights a key
const uint D4 = D / 4u;                // vec4s of a query row

// The values' walk: invocation tid reads VP consecutive value pairs
// (column tid % VPR of a row) of keys tid / VPR, tid / VPR + KG, ... of
// each chunk, UNR of them in flight before it uses them, keeping VP*R
// accumulator pairs; the KG partial results of a column are summed in a
// fixed order at the end.
const uint VPR = DP / VP;                    // columns of VP pairs a row
const uint KG = WG >= VPR ? WG / VPR : 1u;   // keys read at once
const uint NC = (VPR + WG - 1u) / WG;        // columns an invocation (KG 1)
const uint NP = NC * VP;                     // pairs an invocation
const uint UNR = 8u;

layout(push_constant, std430) uniform Push {
  F32s q;
  F32s dst;
  UVec4s kc;
  U32s vc;
  I32s pos;
  I32s seq;
  I32s tables;
  I32s tabOff;
  I32s tiles;
  F32s sinks;
  F32s part;
  RopeArgs rope;
  uint nTiles;
  uint nHeads;
  uint nKV;
  uint blockSize;
  int window;
  float scale;
  uint splits;
  uint qStride;
} p;

shared vec4 qs[R * D4];     // the rows' queries
shared vec4 ps[WG * NR4];   // the chunk's weights, key-major, rows padded to 4
shared float rmax[R * WG];  // a partial a subgroup and row
shared uint crow[WG];       // the cache row of each key of the chunk (FUSE: NEWROW for the token's own)
shared vec2 vred[KG > 1u ? KG * DP : 1u]; // the key groups' partial outputs of one row

// FUSE: the token's key and value (half precision values), the sums of
// squares of its query rows and key.
const uint FD = FUSE != 0u ? D : 1u;
const uint FR = FUSE != 0u ? R + 1u : 1u;
// (Scalars: invocations write single values, never parts of a vec4.)
shared float qf[FUSE != 0u ? R * D : 1u];  // the turned queries, then copied to qs
shared float kn[FD];
shared vec2 vn2[FD / 2u > 0u ? FD / 2u : 1u];
shared float nss[FR * (FD / 2u)];  // the rows' partial sums of squares
const uint NEWROW = 0xffffffffu;

// fuse normalizes and turns the query rows of the tile's token t0 (HPW
// heads from head0) into qs and its key into kn, rounds its value into
// vn2, and with store puts the key and value into the cache row crow0.
void fuse(uint t0, uint head0, uint kvh, int ps, bool store, uint crow0) {
  uint tid = gl_LocalInvocationID.x;
  uint kvDim = p.nKV * D;
  uint qkBase = t0 * p.qStride;
  uint kBase = qkBase + p.nHeads * D + kvh * D;
  uint vBase = qkBase + p.nHeads * D + kvDim + kvh * D;
  RopeArgs ra = p.rope;
  bool norm = (ra.flags & 1u) != 0u;
  // Each head's sum of squares (ops.glsl's tree), at nss[r * D/2].
  const uint H = D / 2u;
  if (norm) {
    for (uint e = tid; e < (R + 1u) * H; e += WG) {
      uint r = e / H, i = e % H;
      uint base = r < R ? qkBase + (head0 + r) * D : kBase;
      nss[e] = sq_pair(p.q.v[base + 2u * i], p.q.v[base + 2u * i + 1u]);
    }
    for (uint h = ss_first(H); h > 0u; h /= 2u) {
      barrier();
      for (uint e = tid; e < (R + 1u) * H; e += WG) {
        uint i = e % H;
        if (i < h && i + h < H) {
          nss[e] += nss[e + h];
        }
      }
    }
  }
  barrier();
  uint rpairs = ra.rotDims / 2u;
  for (uint i = tid; i < (R + 1u) * (D / 2u); i += WG) {
    uint r = i / (D / 2u), pi = i % (D / 2u);
    uvec2 ab = rope_index(pi, ra.rotDims, ra.style);
    uint base = r < R ? qkBase + (head0 + r) * D : kBase;
    vec2 v = vec2(p.q.v[base + ab.x], p.q.v[base + ab.y]);
    if (norm) {
      F32s g = F32s(r < R ? ra.qgain : ra.kgain);
      v = norm_pair(v.x, v.y, nss[r * H], D, ra.eps, g.v[ab.x], g.v[ab.y]);
    }
    if (pi < rpairs && uint(ps) < ra.maxPos) {
      F32s tab = F32s(ra.tab);
      uint ti = (uint(ps) * rpairs + pi) * 2u;
      v = rope_pair(v.x, v.y, tab.v[ti], tab.v[ti + 1u]);
    }
    if (r < R) {
      qf[r * D + ab.x] = v.x;
      qf[r * D + ab.y] = v.y;
      continue;
    }
    uint ha = f32_to_f16(v.x), hb = f32_to_f16(v.y);
    kn[ab.x] = unpackHalf2x16(ha).x;
    kn[ab.y] = unpackHalf2x16(hb).x;
    if (store) {
      U16s kc = U16s(uint64_t(p.kc));
      uint dst = crow0 * kvDim + kvh * D;
      kc.v[dst + ab.x] = uint16_t(ha);
      kc.v[dst + ab.y] = uint16_t(hb);
    }
  }
  for (uint i = tid; i < D / 2u; i += WG) {
    uint h2 = f32_to_f16(p.q.v[vBase + 2u * i]) | (f32_to_f16(p.q.v[vBase + 2u * i + 1u]) << 16);
    vn2[i] = unpackHalf2x16(h2);
    if (store) {
      p.vc.v[(crow0 * kvDim + kvh * D) / 2u + i] = h2;
    }
  }
  barrier();
  for (uint i = tid; i < R * D4; i += WG) {
    qs[i] = vec4(qf[4u * i], qf[4u * i + 1u], qf[4u * i + 2u], qf[4u * i + 3u]);
  }
  barrier();
}

// load_pairs reads the VP value pairs from pair index at of the value
// cache (a multiple of VP) into v[to ..].
void load_pairs(uint at, inout vec2 v[NP], uint to) {
  if (VP == 4u) {
    uvec4 w = UVec4s(uint64_t(p.vc)).v[at / 4u];
    for (uint i = 0; i < 4u; i++) {
      v[to + i] = unpackHalf2x16(w[i]);
    }
  } else if (VP == 2u) {
    uvec2 w = UVec2s(uint64_t(p.vc)).v[at / 2u];
    for (uint i = 0; i < 2u; i++) {
      v[to + i] = unpackHalf2x16(w[i]);
    }
  } else {
    v[to] = unpackHalf2x16(p.vc.v[at]);
  }
}

#define NEG_INF uintBitsToFloat(0xff800000u)

void main() {
  uint split = gl_WorkGroupID.z % p.splits;
  uint tile = (gl_WorkGroupID.z / p.splits) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (tile >= p.nTiles) {
    return; // the whole workgroup
  }
  uint tid = gl_LocalInvocationID.x;
  uint t0 = uint(p.tiles.v[2u * tile]);
  uint nt = min(uint(p.tiles.v[2u * tile + 1u]), TQ);
  uint head0 = gl_WorkGroupID.y * HPW;
  uint kvh = head0 / (p.nHeads / p.nKV);
  uint kvDim = p.nKV * D;
  int tab = p.tabOff.v[p.seq.v[t0]];

  // Each row's position and first key; the tile's key range lo..hi.
  int rpos[TQ];
  int rlo[TQ];
  int lo = 0x7fffffff;
  int hi = -1;
  for (uint r = 0; r < TQ; r++) {
    rpos[r] = -1;
    rlo[r] = 0;
    if (r < nt) {
      rpos[r] = p.pos.v[t0 + r];
      rlo[r] = p.window > 0 ? max(0, rpos[r] - p.window + 1) : 0;
      lo = min(lo, rlo[r]);
      hi = max(hi, rpos[r]);
    }
  }
  if (p.splits > 1u && hi >= lo) {
    int cps = ((hi - lo) / int(WG) + int(p.splits)) / int(p.splits); // chunks a split
    int from = lo + int(split) * cps * int(WG);
    hi = min(hi, from + cps * int(WG) - 1);
    lo = from;
  }

  // The token's own position (FUSE), its row in the cache.
  int newPos = -1;
  if (FUSE != 0u && rpos[0] >= 0) {
    newPos = rpos[0];
    uint blk = uint(p.tables.v[tab + newPos / int(p.blockSize)]);
    bool first = head0 % (p.nHeads / p.nKV) == 0u && split == 0u;
    fuse(t0, head0, kvh, newPos, first, blk * p.blockSize + uint(newPos) % p.blockSize);
  } else {
    for (uint i = tid; i < R * D4; i += WG) {
      uint r = i / D4;
      uint tq = r / HPW;
      vec4 v = vec4(0.0);
      if (tq < nt) {
        uint o = (t0 + tq) * p.qStride + (head0 + r % HPW) * D + 4u * (i % D4);
        v = vec4(p.q.v[o], p.q.v[o + 1u], p.q.v[o + 2u], p.q.v[o + 3u]);
      }
      qs[i] = v;
    }
    barrier();
  }

  float m[R];
  float lsum[R];
  vec2 acc[NP][R]; // column vcol + k*WG's pair i at k*VP + i
  for (uint r = 0; r < R; r++) {
    m[r] = NEG_INF;
    lsum[r] = 0.0;
    for (uint i = 0; i < NP; i++) {
      acc[i][r] = vec2(0.0);
    }
  }
  const uint vcol = tid % VPR, kg = tid / VPR;

  for (int base = lo; base <= hi; base += int(WG)) {
    // The logits of key base+tid.
    int kp = base + int(tid);
    float s[R];
    for (uint r = 0; r < R; r++) {
      s[r] = 0.0;
    }
    if (kp <= hi && kp == newPos) {
      crow[tid] = NEWROW;
      for (uint c = 0; c < D / 8u; c++) {
        vec4 ka = vec4(kn[8u * c], kn[8u * c + 1u], kn[8u * c + 2u], kn[8u * c + 3u]);
        vec4 kb = vec4(kn[8u * c + 4u], kn[8u * c + 5u], kn[8u * c + 6u], kn[8u * c + 7u]);
        for (uint r = 0; r < R; r++) {
          s[r] += dot(qs[r * D4 + 2u * c], ka) + dot(qs[r * D4 + 2u * c + 1u], kb);
        }
      }
    } else if (kp <= hi) {
      uint blk = uint(p.tables.v[tab + kp / int(p.blockSize)]);
      uint row = blk * p.blockSize + uint(kp) % p.blockSize;
      crow[tid] = row;
      uint k8 = (row * kvDim + kvh * D) / 8u;
      for (uint c = 0; c < D / 8u; c++) {
        uvec4 w = p.kc.v[k8 + c];
        vec4 ka = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
        vec4 kb = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
        for (uint r = 0; r < R; r++) {
          s[r] += dot(qs[r * D4 + 2u * c], ka) + dot(qs[r * D4 + 2u * c + 1u], kb);
        }
      }
    }
    for (uint r = 0; r < R; r++) {
      uint tq = r / HPW;
      s[r] = (kp <= rpos[tq] && kp >= rlo[tq]) ? s[r] * p.scale : NEG_INF;
      float mx = subgroupMax(s[r]);
      if (subgroupElect()) {
        rmax[gl_SubgroupID * R + r] = mx;
      }
    }
    barrier();

    float alpha[R];
    for (uint r = 0; r < R; r++) {
      float mc = NEG_INF;
      for (uint g = 0; g < gl_NumSubgroups; g++) {
        mc = max(mc, rmax[g * R + r]);
      }
      float mn = max(m[r], mc);
      alpha[r] = mn == NEG_INF ? 1.0 : exp(m[r] - mn);
      s[r] = s[r] == NEG_INF ? 0.0 : exp(s[r] - mn); // the weight
      lsum[r] = lsum[r] * alpha[r] + s[r];
      m[r] = mn;
    }
    for (uint g = 0; g < NR4; g++) {
      vec4 w = vec4(0.0);
      for (uint e = 0; e < 4u; e++) {
        if (4u * g + e < R) {
          w[e] = s[4u * g + e];
        }
      }
      ps[tid * NR4 + g] = w;
    }
    barrier();

    uint nk = uint(min(int(WG), hi - base + 1));
    if (kg < KG) {
      for (uint r = 0; r < R; r++) {
        for (uint i = 0; i < NP; i++) {
          acc[i][r] *= alpha[r];
        }
      }
      for (uint j0 = kg; j0 < nk; j0 += KG * UNR) {
        vec2 v[UNR][NP];
        for (uint u = 0; u < UNR; u++) {
          uint j = j0 + u * KG;
          uint cr = j < nk ? crow[j] : NEWROW;
          for (uint k = 0; k < NC; k++) {
            uint c = vcol + k * WG;
            if (FUSE != 0u && j < nk && c < VPR && cr == NEWROW) {
              for (uint i = 0; i < VP; i++) {
                v[u][k * VP + i] = vn2[c * VP + i];
              }
            } else if (j < nk && c < VPR) {
              load_pairs(cr * (kvDim / 2u) + kvh * DP + c * VP, v[u], k * VP);
            } else {
              for (uint i = 0; i < VP; i++) {
                v[u][k * VP + i] = vec2(0.0);
              }
            }
          }
        }
        for (uint u = 0; u < UNR; u++) {
          uint j = min(j0 + u * KG, WG - 1u); // past nk: v is 0
          for (uint g = 0; g < NR4; g++) {
            vec4 w = ps[j * NR4 + g];
            for (uint e = 0; e < 4u; e++) {
              if (4u * g + e < R) {
                for (uint i = 0; i < NP; i++) {
                  acc[i][4u * g + e] += w[e] * v[u][i];
                }
              }
            }
          }
        }
      }
    }
    barrier();
  }

  // The denominators, summed over the workgroup; the sinks; the output.
  for (uint r = 0; r < R; r++) {
    float sm = subgroupAdd(lsum[r]);
    if (subgroupElect()) {
      rmax[gl_SubgroupID * R + r] = sm;
    }
  }
  barrier();
  for (uint r = 0; r < R; r++) {
    uint tq = r / HPW;
    if (tq >= nt) {
      continue; // the same for the whole workgroup
    }
    float l = 0.0;
    for (uint g = 0; g < gl_NumSubgroups; g++) {
      l += rmax[g * R + r];
    }
    // The row's output pairs (columns vcol + k*WG): the key groups' sum,
    // in order (KG > 1 only where NC is 1).
    vec2 o[NP];
    for (uint i = 0; i < NP; i++) {
      o[i] = acc[i][r];
    }
    if (KG > 1u) {
      if (kg < KG) {
        for (uint i = 0; i < VP; i++) {
          vred[tid * VP + i] = o[i];
        }
      }
      barrier();
      if (kg == 0u) {
        for (uint g = 1u; g < KG; g++) {
          for (uint i = 0; i < VP; i++) {
            o[i] += vred[(g * VPR + vcol) * VP + i];
          }
        }
      }
      barrier();
    }
    uint h = head0 + r % HPW;
    if (kg == 0u && p.splits > 1u) {
      uint po = (((t0 + tq) * p.nHeads + h) * p.splits + split) * (D + 2u);
      if (tid == 0u) {
        p.part.v[po] = m[r];
        p.part.v[po + 1u] = l;
      }
      for (uint i = 0; i < NP; i++) {
        uint pi = (vcol + i / VP * WG) * VP + i % VP;
        if (pi < DP) {
          p.part.v[po + 2u + 2u * pi] = o[i].x;
          p.part.v[po + 3u + 2u * pi] = o[i].y;
        }
      }
    } else if (kg == 0u) {
      float f = 1.0; // exp(m - the maximum with the sink)
      if (uint64_t(p.sinks) != 0ul) {
        float sk = p.sinks.v[h];
        float mf = max(m[r], sk);
        f = m[r] == NEG_INF ? 0.0 : exp(m[r] - mf);
        l = l * f + exp(sk - mf);
      }
      f = l > 0.0 ? f / l : 0.0;
      uint ob = ((t0 + tq) * p.nHeads + h) * DP;
      for (uint i = 0; i < NP; i++) {
        uint pi = (vcol + i / VP * WG) * VP + i % VP;
        if (pi < DP) {
          vec2 v = o[i] * f;
          p.dst.v[2u * (ob + pi)] = v.x;
          p.dst.v[2u * (ob + pi) + 1u] = v.y;
        }
      }
    }
  }
}
