// Tests brk via sbrk (grow/shrink), small and large malloc (mmap threshold), calloc, realloc growth and free.
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* keep stdio from calling malloc between the sbrk calls */
    unsigned r;
    getrandom(&r, sizeof r, 0);
    void *b0 = sbrk(0);
    intptr_t grow = 4096 * (1 + r % 16);
    char *old = sbrk(grow);
    void *b1 = sbrk(0);
    memset(old, 0x5a, grow);
    unsigned char last = (unsigned char)old[grow - 1];
    sbrk(-grow);
    void *b2 = sbrk(0);
    printf("initial break %p\n", b0);
    printf("sbrk(+%ld) returned old break=%d new break=%p delta=%ld\n", (long)grow, old == b0, b1, (long)((char *)b1 - (char *)b0));
    printf("wrote into new heap, last byte=%#x\n", last);
    printf("shrunk back: %d\n", b2 == b0);

    void *small[8];
    for (int i = 0; i < 8; i++) small[i] = malloc(16 << i);
    printf("small mallocs: %p %p %p ... %p\n", small[0], small[1], small[2], small[7]);
    size_t big_len = (2 + r % 6) << 20;
    unsigned char *big = malloc(big_len);
    printf("large malloc %zu MiB at %p (page aligned+16: %d)\n", big_len >> 20, (void *)big, ((uintptr_t)big & 0xfff) == 0x10);
    for (size_t i = 0; i < big_len; i += 4096) big[i] = (unsigned char)(i >> 12);
    unsigned long sum = 0;
    for (size_t i = 0; i < big_len; i += 4096) sum += big[i];
    printf("touched %zu pages sum=%lu\n", big_len / 4096, sum);
    int *z = calloc(1 << 20, sizeof(int));
    int zeros = 1;
    for (int i = 0; i < (1 << 20); i += 997) zeros &= z[i] == 0;
    printf("calloc 4MiB at %p zeros=%d\n", (void *)z, zeros);
    char *g = malloc(10);
    strcpy(g, "grow");
    for (int i = 0; i < 6; i++) {
        char *n = realloc(g, 100 << (i * 3));
        printf("realloc to %d: %p moved=%d keep=%s\n", 100 << (i * 3), (void *)n, n != g, n);
        g = n;
    }
    free(g);
    free(z);
    free(big);
    for (int i = 0; i < 8; i++) free(small[i]);
    struct mallinfo2 mi = mallinfo2();
    printf("mallinfo2 arena=%zu hblks=%zu\n", mi.arena, mi.hblks);
    printf("EXIT-SUCCESS\n");
    return 0;
}
