// log2f.c writes log2f.txt, the fixture of TestMXFP4ExponentGlibc: ggml's
// MXFP4 quantizer takes floorf(log2f(amax)), and log2f rounds up to the
// next integer within a few ulps below a power of two. For every positive
// finite float32 it compares floorf(log2f(x)) with x's binary exponent k
// and prints, per binade where they differ, k and the first x (its bits)
// from which the floor is k+1 (to the top of the binade). It checks that
// log2f never decreases, so the first x is a threshold. Build with the C
// library ggml is built with (glibc):
//   cc -O2 log2f.c -o log2f -lm && ./log2f > log2f.txt
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    int prevk = 1000;
    float prev = -INFINITY;
    printf("# floorf(log2f(x)) = k+1 for x in binade [2^k, 2^(k+1)) from the bits given on (log2f.c)\n");
    for (uint32_t b = 1; b < 0x7f800000u; b++) {
        float x;
        memcpy(&x, &b, 4);
        const float l = log2f(x);
        if (l < prev) { fprintf(stderr, "log2f decreases at %08x\n", b); return 1; }
        prev = l;
        const int k = ilogbf(x);
        const int f = (int)floorf(l);
        if (f == k) continue;
        if (f != k + 1) { fprintf(stderr, "floor %d in binade %d at %08x\n", f, k, b); return 1; }
        if (k != prevk) printf("%d %08x\n", k, b);
        prevk = k;
    }
    return 0;
}
