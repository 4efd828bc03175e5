// Tests reading /proc/self/maps, /proc/self/stat, /proc/self/status and /proc/self/cmdline (address-space layout varies per run).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t slurp(const char *path, char *buf, size_t cap) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) { perror(path); return -1; }
    size_t len = 0;
    ssize_t n;
    while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0) len += n;
    buf[len] = 0;
    close(fd);
    return len;
}

int main(int argc, char **argv) {
    static char buf[1 << 17];
    int stack_var;
    void *heap = malloc(64);
    ssize_t n = slurp("/proc/self/maps", buf, sizeof buf);
    printf("maps: %zd bytes\n", n);
    /* print the mappings that belong to the program itself, [heap] and [stack] */
    char *save, *line = strtok_r(buf, "\n", &save);
    int lines = 0;
    while (line) {
        lines++;
        if (strstr(line, "proc_self_files") || strstr(line, "[heap]") || strstr(line, "[stack]") || strstr(line, "[vdso]")) {
            /* keep address range, perms and the last path component */
            char range[64], perms[8];
            sscanf(line, "%63s %7s", range, perms);
            const char *name = strrchr(line, ' ');
            const char *slash = strrchr(line, '/');
            printf("  %s %s %s\n", range, perms, slash ? slash + 1 : name + 1);
        }
        line = strtok_r(NULL, "\n", &save);
    }
    printf("maps lines=%d stack_var=%p heap=%p\n", lines, (void *)&stack_var, heap);

    slurp("/proc/self/stat", buf, sizeof buf);
    int pid, ppid, pgrp;
    char comm[64], state;
    sscanf(buf, "%d %63s %c %d %d", &pid, comm, &state, &ppid, &pgrp);
    printf("stat: pid=%d (getpid %d) comm=%s state=%c ppid-matches=%d\n", pid, getpid(), comm, state, ppid == getppid());
    /* field 22 = starttime, 23 = vsize */
    char *p = strrchr(buf, ')') + 2;
    unsigned long long field[60] = {0};
    int fi = 3;
    for (char *tok = strtok_r(p, " ", &save); tok && fi < 60; tok = strtok_r(NULL, " ", &save)) field[fi++] = strtoull(tok, NULL, 10);
    printf("stat: starttime=%llu vsize=%llu startstack=%llx\n", field[22], field[23], field[28]);

    slurp("/proc/self/status", buf, sizeof buf);
    line = strtok_r(buf, "\n", &save);
    while (line) {
        if (!strncmp(line, "Name:", 5) || !strncmp(line, "Pid:", 4) || !strncmp(line, "Threads:", 8)) printf("status %s\n", line);
        line = strtok_r(NULL, "\n", &save);
    }
    n = slurp("/proc/self/cmdline", buf, sizeof buf);
    printf("cmdline bytes=%zd argc=%d\n", n, argc);
    (void)argv;
    free(heap);
    printf("EXIT-SUCCESS\n");
    return 0;
}
