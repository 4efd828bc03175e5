// Tests reading a setup-created input directory (random names and contents) via readdir/fopen; before_replay edits the files in place, deletes one and adds one.
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    DIR *d = opendir("inputs");
    if (!d) { perror("opendir inputs"); return 1; }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp);
    printf("%d input files\n", n);
    uint64_t all = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        char path[300];
        snprintf(path, sizeof path, "inputs/%s", names[i]);
        struct stat st;
        stat(path, &st);
        FILE *f = fopen(path, "rb");
        uint64_t h = 1469598103934665603ULL;
        int c;
        long len = 0;
        while ((c = fgetc(f)) != EOF) {
            h = (h ^ (unsigned char)c) * 1099511628211ULL;
            len++;
        }
        fclose(f);
        all ^= h + i;
        printf("  %s size=%lld read=%ld fnv=%016llx\n", names[i], (long long)st.st_size, len, (unsigned long long)h);
        free(names[i]);
    }
    printf("combined=%016llx\n", (unsigned long long)all);
    printf("EXIT-SUCCESS\n");
    return 0;
}
