// Tests mkdir/getdents64/rename/unlink/rmdir on a directory of randomly named files.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list(const char *dir, const char *label) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) { perror("open dir"); exit(1); }
    char buf[512]; /* small buffer forces several getdents64 calls */
    char *names[64];
    int count = 0, calls = 0;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        calls++;
        if (n < 0) { perror("getdents64"); exit(1); }
        if (n == 0) break;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") && count < 64) names[count++] = strdup(d->d_name);
            off += d->d_reclen;
        }
    }
    close(fd);
    printf("%s: %d entries in %d getdents64 calls (raw order first=%s)\n", label, count, calls, count ? names[0] : "-");
    qsort(names, count, sizeof names[0], cmp);
    for (int i = 0; i < count; i++) { printf("  %s\n", names[i]); free(names[i]); }
    return count;
}

int main(void) {
    unsigned char r[256];
    getrandom(r, sizeof r, 0);
    char dir[32];
    snprintf(dir, sizeof dir, "dir_%02x%02x%02x", r[0], r[1], r[2]);
    if (mkdir(dir, 0755) != 0) { perror("mkdir"); return 1; }
    int nfiles = 5 + r[3] % 10;
    char path[96];
    for (int i = 0; i < nfiles; i++) {
        snprintf(path, sizeof path, "%s/f_%02x%02x%02x%02x_%d", dir, r[8 + 4 * i], r[9 + 4 * i], r[10 + 4 * i], r[11 + 4 * i], i);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        write(fd, r, r[100 + i]);
        close(fd);
    }
    snprintf(path, sizeof path, "%s/sub_%02x", dir, r[5]);
    mkdir(path, 0700);
    list(dir, "initial");

    /* rename every file to an upper-case prefix, remove the subdirectory */
    DIR *d = opendir(dir);
    struct dirent *e;
    int renamed = 0;
    char oldp[300], newp[300];
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "f_", 2) == 0) {
            snprintf(oldp, sizeof oldp, "%s/%s", dir, e->d_name);
            snprintf(newp, sizeof newp, "%s/R%s", dir, e->d_name);
            if (rename(oldp, newp) == 0) renamed++;
        }
    }
    closedir(d);
    printf("renamed %d\n", renamed);
    if (rmdir(path) != 0) perror("rmdir sub");
    list(dir, "after rename");

    d = opendir(dir);
    int removed = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == 'R') {
            snprintf(oldp, sizeof oldp, "%s/%s", dir, e->d_name);
            struct stat st;
            stat(oldp, &st);
            printf("  unlink %s size=%lld\n", e->d_name, (long long)st.st_size);
            if (unlink(oldp) == 0) removed++;
        }
    }
    closedir(d);
    printf("removed %d\n", removed);
    list(dir, "after unlink");
    if (rmdir(dir) != 0) { perror("rmdir"); return 1; }
    printf("rmdir ok, access=%d\n", access(dir, F_OK));
    printf("EXIT-SUCCESS\n");
    return 0;
}
