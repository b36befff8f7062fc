// gen.c writes the ggml fixtures for package quant's bit-exactness tests:
// float rows, the bytes ggml quantizes them to (ggml_quantize_chunk with no
// importance matrix; quantize_row_q8_1_ref and quantize_row_q8_K_ref for
// the activation formats), ggml's dequantization of those bytes
// (type_traits to_float), and random raw blocks with their dequantization.
// Build and run with gen.sh. Formats (all little-endian):
//
//   rows.bin:  "IFQR" u32 nrows { u32 n, f32 x[n] }
//   TYPE.bin:  "IFQT" u32 type u32 blck u32 bytes u32 has_deq
//              u32 ncases { u32 row, u8 q[n/blck*bytes], has_deq ? f32 y[n] }
//              u32 nraw   { u32 nblocks, u8 q[nblocks*bytes], f32 y[nblocks*blck] }
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-quants.h"

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t next64(void) { // splitmix64
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(void) { return (next64() >> 11) * 0x1.0p-53; } // [0, 1)

static double normal(void) {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

#define MAXROWS 64
static float *rows[MAXROWS];
static int rown[MAXROWS];
static int nrows;

static float *newrow(int n) {
    float *x = calloc(n, sizeof(float));
    rows[nrows] = x;
    rown[nrows] = n;
    nrows++;
    return x;
}

static void make_rows(void) {
    float *x;
    int n;
    // Gaussian weights of several scales.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)normal();
    x = newrow(n = 512);  for (int i = 0; i < n; i++) x[i] = (float)(0.02 * normal());
    x = newrow(n = 1024); for (int i = 0; i < n; i++) x[i] = (float)(0.02 * normal());
    x = newrow(n = 768);  for (int i = 0; i < n; i++) x[i] = (float)(3.5 * normal());
    // Uniform, signed and positive.
    x = newrow(n = 768);  for (int i = 0; i < n; i++) x[i] = (float)(2 * uniform() - 1);
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)uniform();
    // All zeros.
    newrow(256);
    // One huge outlier in small weights.
    x = newrow(n = 512);  for (int i = 0; i < n; i++) x[i] = (float)(0.02 * normal()); x[300] = 100.f;
    // Tiny values: scales near and below the F16 subnormals.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)(1e-5 * normal());
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)(3e-7 * normal());
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)(1e-12 * normal());
    // All negative.
    x = newrow(n = 512);  for (int i = 0; i < n; i++) x[i] = -(float)fabs(normal());
    // Constant.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = 0.37f;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = -2.5f;
    // Sparse: 90% zeros.
    x = newrow(n = 1024); for (int i = 0; i < n; i++) x[i] = uniform() < 0.1 ? (float)normal() : 0.f;
    // Heavy tails.
    x = newrow(n = 1024); for (int i = 0; i < n; i++) { double g = normal(); x[i] = (float)(g * g * g * 0.1); }
    // A zero super-block next to a normal one, and the reverse.
    x = newrow(n = 512);  for (int i = 256; i < n; i++) x[i] = (float)normal();
    x = newrow(n = 512);  for (int i = 0; i < 256; i++) x[i] = (float)normal();
    // Sub-block magnitudes spanning 1e-6 .. 1: small scales quantize to 0.
    x = newrow(n = 512);  for (int i = 0; i < n; i++) x[i] = (float)(normal() * pow(10.0, -((i / 16) % 7)));
    // Only one sub-block of 16 nonzero.
    x = newrow(n = 256);  for (int i = 48; i < 64; i++) x[i] = (float)normal();
    // Exact ties: multiples of 1/4.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)((int)(next64() % 17) - 8) * 0.25f;
    // A ramp.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = -1.f + 2.f * i / (n - 1);
    // Large values (F16 scales near their range).
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)(2e4 * normal());
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)(1e6 * normal());
    // Exact rounding ties: half-integers under a maximum that makes the
    // scale 1 (Q8_0, Q8_K: 127; Q6_K's first pass, every 16: 32).
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)((int)(next64() % 253) - 126) + 0.5f; x[0] = -127.f;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = i % 16 ? (float)((int)(next64() % 63) - 31) + 0.5f : -32.f;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = i % 32 ? (float)((int)(next64() % 15) - 7) + 0.5f : -8.f;
    // Non-finite values: what ggml's arithmetic makes of them.
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)normal(); x[5] = NAN;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)normal(); x[37] = INFINITY;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = (float)normal(); x[200] = -INFINITY; x[0] = NAN;
    x = newrow(n = 256);  for (int i = 0; i < n; i++) x[i] = NAN;
    // Short rows for the 32-value formats.
    x = newrow(n = 32);   for (int i = 0; i < n; i++) x[i] = (float)normal();
    x = newrow(n = 64);   for (int i = 0; i < n; i++) x[i] = (float)(2 * uniform() - 1);
    x = newrow(n = 96);   for (int i = 0; i < n; i++) x[i] = (float)(0.02 * normal()); x[40] = -7.f;
    x = newrow(n = 128);  for (int i = 0; i < n; i++) x[i] = uniform() < 0.2 ? (float)normal() : 0.f;
    x = newrow(n = 32);   for (int i = 0; i < n; i++) x[i] = 1.f;
    x = newrow(n = 32);   x[17] = -0.001f;
    x = newrow(n = 64);   for (int i = 0; i < n; i++) x[i] = (float)(1e-5 * normal());
    // MXFP4's exponent, floorf(log2f(amax)) - 2 + 127 as uint8_t: block b
    // of 32 has its largest magnitude just below, at and just above a
    // power of two (log2f rounds up within a few ulps of it), from 2^-149
    // (the exponent wraps around) to FLT_MAX (levels times the scale
    // overflow); the other values spread below it, half negative.
    x = newrow(n = 32 * 24);
    for (int b = 0; b < 24; b++) {
        const int k = -149 + b * 12 + (b == 23 ? 1 : 0); // up to 2^128 - ulp
        float top = ldexpf(1.f, k > 127 ? 127 : k);
        if (b % 3 == 0) top = nextafterf(top, 0.f);
        if (b % 3 == 2) top = nextafterf(top, INFINITY);
        if (k > 127) top = 3.4028235e38f;
        for (int j = 0; j < 32; j++) x[32 * b + j] = top * (float)((j * 7) % 32) / 32.f * (j % 2 ? -1.f : 1.f);
        x[32 * b + (b % 32)] = b % 2 ? -top : top;
    }
    // Exact ties between MXFP4 levels (scale 1: largest 8): the midpoints
    // 0.5, 1.5, 2.5, 3.5, 5, 7, 10 of both signs, and 0 and -0.
    x = newrow(n = 32);
    { static const float m[16] = {8.f, 0.5f, 1.5f, 2.5f, 3.5f, 5.f, 7.f, 10.f, -0.f, -0.5f, -1.5f, -2.5f, -3.5f, -5.f, -7.f, -10.f};
      for (int i = 0; i < n; i++) x[i] = m[i % 16] * (i >= 16 ? 0.75f : 1.f); }
}

static void put32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }

// f16 returns a random finite half: sign, exponent and mantissa random,
// the exponent within [emin, emax] (biased, 0..30).
static uint16_t rand_half(int emin, int emax) {
    uint16_t s = (next64() & 1) << 15;
    uint16_t e = emin + next64() % (emax - emin + 1);
    uint16_t m = next64() & 0x3ff;
    return s | e << 10 | m;
}

static const uint16_t edge_halves[] = {
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
};
#define NEDGE (int)(sizeof(edge_halves) / sizeof(edge_halves[0]))

// half_offsets lists where a block holds F16 fields.
static int half_offsets(enum ggml_type t, int *off) {
    switch (t) {
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q5_0: case GGML_TYPE_Q8_0: case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS:
        off[0] = 0; return 1;
    case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_1: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K:
        off[0] = 0; off[1] = 2; return 2;
    case GGML_TYPE_Q2_K: off[0] = 80; off[1] = 82; return 2;
    case GGML_TYPE_Q3_K: off[0] = 108; return 1;
    case GGML_TYPE_Q6_K: off[0] = 208; return 1;
    default: return 0;
    }
}

static void dequant(enum ggml_type t, const void *q, float *y, int64_t n) {
    if (t == GGML_TYPE_Q8_K) { dequantize_row_q8_K(q, y, n); return; }
    if (t == GGML_TYPE_F32) { memcpy(y, q, n * 4); return; }
    ggml_get_type_traits(t)->to_float(q, y, n);
}

static void write_type(const char *dir, enum ggml_type t) {
    const struct ggml_type_traits *tr = ggml_get_type_traits(t);
    const int blck = (int)tr->blck_size, bytes = (int)tr->type_size;
    const int has_deq = t != GGML_TYPE_F32 && t != GGML_TYPE_Q8_1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, ggml_type_name(t));
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(1); }
    fwrite("IFQT", 4, 1, f);
    put32(f, t); put32(f, blck); put32(f, bytes); put32(f, has_deq);

    int cases = 0;
    for (int r = 0; r < nrows; r++) cases += rown[r] % blck == 0;
    put32(f, cases);
    for (int r = 0; r < nrows; r++) {
        const int n = rown[r];
        if (n % blck) continue;
        const size_t qb = (size_t)n / blck * bytes;
        uint8_t *q = calloc(qb, 1);
        float *y = calloc(n, sizeof(float));
        if (t == GGML_TYPE_Q8_1) quantize_row_q8_1_ref(rows[r], (block_q8_1 *)q, n);
        else if (t == GGML_TYPE_Q8_K) quantize_row_q8_K_ref(rows[r], (block_q8_K *)q, n);
        else ggml_quantize_chunk(t, rows[r], q, 0, 1, n, NULL);
        put32(f, r);
        fwrite(q, 1, qb, f);
        if (has_deq) { dequant(t, q, y, n); fwrite(y, 4, n, f); }
        free(q); free(y);
    }

    // Raw blocks: random bytes with random sane scales, then edge scales.
    int nrand, nedge;
    if (blck == 1) { nrand = 2048; nedge = NEDGE; }
    else if (blck == 32) { nrand = 40; nedge = NEDGE; }
    else { nrand = 16; nedge = NEDGE; }
    if (!has_deq) { nrand = 0; nedge = 0; }
    put32(f, has_deq ? 2 : 0);
    if (!has_deq) { fclose(f); return; }
    for (int pass = 0; pass < 2; pass++) {
        const int nb = pass == 0 ? nrand : nedge;
        const int nvals = blck == 1 ? nb : nb * blck;
        uint8_t *q = malloc((size_t)nb * bytes);
        float *y = malloc((size_t)nvals * sizeof(float));
        for (int b = 0; b < nb; b++) {
            uint8_t *blk = q + (size_t)b * bytes;
            for (int i = 0; i < bytes; i++) blk[i] = next64() & 0xff;
            int off[2];
            const int nh = half_offsets(t, off);
            for (int h = 0; h < nh; h++) {
                uint16_t v = pass == 0 ? rand_half(1, 16) : edge_halves[(b + 5 * h) % NEDGE];
                memcpy(blk + off[h], &v, 2);
            }
            if (t == GGML_TYPE_Q8_K) {
                static const uint32_t edge_f32[] = {0, 0x80000000u, 1, 0x00800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0x3f800000u};
                uint32_t v;
                if (pass == 0) { float d = (float)(ldexp(normal(), -(int)(next64() % 20))); memcpy(&v, &d, 4); }
                else v = edge_f32[b % 8];
                memcpy(blk, &v, 4);
            }
            if (t == GGML_TYPE_MXFP4) { // the E8M0 exponent: moderate, then the edges
                static const uint8_t edge_e[] = {0, 1, 2, 3, 126, 127, 128, 200, 252, 253, 254, 255};
                blk[0] = pass == 0 ? (uint8_t)(117 + next64() % 20) : edge_e[b % 12];
            }
            if (t == GGML_TYPE_F16) {
                uint16_t v = pass == 0 ? rand_half(0, 30) : edge_halves[b];
                memcpy(blk, &v, 2);
            }
            if (t == GGML_TYPE_BF16) {
                uint16_t v;
                do { v = next64() & 0xffff; } while ((v & 0x7f80) == 0x7f80 && (v & 0x7f)); // no NaN
                if (pass == 1) { static const uint16_t e[] = {0, 0x8000, 1, 0x807f, 0x0080, 0x3f80, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x4049, 0xc000}; v = e[b]; }
                memcpy(blk, &v, 2);
            }
        }
        dequant(t, q, y, nvals);
        put32(f, nb);
        fwrite(q, 1, (size_t)nb * bytes, f);
        fwrite(y, 4, nvals, f);
        free(q); free(y);
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: gen DIR\n"); return 2; }
    make_rows();
    char path[4096];
    snprintf(path, sizeof path, "%s/rows.bin", argv[1]);
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return 1; }
    fwrite("IFQR", 4, 1, f);
    put32(f, nrows);
    for (int r = 0; r < nrows; r++) { put32(f, rown[r]); fwrite(rows[r], 4, rown[r], f); }
    fclose(f);
    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
        GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,
        GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4,
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) write_type(argv[1], types[i]);
    return 0;
}
