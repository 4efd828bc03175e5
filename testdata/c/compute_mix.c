// Tests a short compute-heavy loop (SHA-like mixing of random bytes for ~20 ms, no syscalls inside) and prints the digest and elapsed ns.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

int main(void) {
    uint32_t block[16];
    getrandom(block, sizeof block, 0);
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned rounds = 0;
    for (int iter = 0; iter < 70000; iter++) {
        uint32_t w[64];
        for (int i = 0; i < 16; i++) w[i] = block[i] ^ (uint32_t)iter;
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; i++) {
            uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
            uint32_t ch = (e & f) ^ (~e & g);
            uint32_t t1v = hh + S1 + ch + 0x428a2f98u * (uint32_t)(i + 1) + w[i];
            uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
            uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            uint32_t t2v = S0 + maj;
            hh = g; g = f; f = e; e = d + t1v; d = c; c = b; b = a; a = t1v + t2v;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
        rounds++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("input: %08x%08x...\n", block[0], block[1]);
    printf("digest after %u compressions: ", rounds);
    for (int i = 0; i < 8; i++) printf("%08x", h[i]);
    printf("\nelapsed %ld ns\n", (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    printf("EXIT-SUCCESS\n");
    return 0;
}
