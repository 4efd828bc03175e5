// Tests consuming all of stdin (given by the manifest at record time; replay must not read the real stdin) and printing a checksum.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    unsigned char buf[7]; /* small odd-sized reads */
    uint32_t a = 1, b = 0;
    size_t total = 0, lines = 0;
    int reads = 0;
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) {
        reads++;
        for (ssize_t i = 0; i < n; i++) {
            a = (a + buf[i]) % 65521;
            b = (b + a) % 65521;
            lines += buf[i] == '\n';
        }
        total += n;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("stdin: %zu bytes, %zu lines, %d reads, adler32=%08x\n", total, lines, reads, (b << 16) | a);
    printf("final read=%zd, t=%ld.%09ld\n", n, (long)ts.tv_sec, ts.tv_nsec);
    printf("EXIT-SUCCESS\n");
    return 0;
}
