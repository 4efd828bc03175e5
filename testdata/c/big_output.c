// Tests large and interleaved output: ~300 KB of random hex to stdout in many write sizes plus stderr lines, via stdio and write(2).
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int main(void) {
    static unsigned char rnd[150000];
    for (size_t off = 0; off < sizeof rnd;) {
        ssize_t n = getrandom(rnd + off, sizeof rnd - off, 0);
        if (n <= 0) return 1;
        off += n;
    }
    static const char hexd[] = "0123456789abcdef";
    static char line[200];
    size_t pos = 0;
    int lines = 0;
    while (pos < sizeof rnd) {
        int width = 8 + rnd[pos] % 90;
        if (pos + width > sizeof rnd) width = sizeof rnd - pos;
        int l = 0;
        for (int i = 0; i < width; i++) {
            line[l++] = hexd[rnd[pos + i] >> 4];
            line[l++] = hexd[rnd[pos + i] & 15];
        }
        line[l++] = '\n';
        if (lines % 3 == 0) {
            fflush(stdout);
            write(1, line, l);
        } else {
            fwrite(line, 1, l, stdout);
        }
        if (lines % 500 == 0) {
            fflush(stdout);
            fprintf(stderr, "progress: line %d offset %zu\n", lines, pos);
        }
        pos += width;
        lines++;
    }
    printf("lines=%d\n", lines);
    printf("EXIT-SUCCESS\n");
    return 0;
}
