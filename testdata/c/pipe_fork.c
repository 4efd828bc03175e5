// Tests pipe/pipe2 between a parent and a forked child with random payloads, short reads, EOF and EPIPE.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe2(to_parent, O_CLOEXEC)) { perror("pipe"); return 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        unsigned char buf[256];
        unsigned total = 0, sum = 0;
        ssize_t n;
        while ((n = read(to_child[0], buf, sizeof buf)) > 0) {
            for (int i = 0; i < n; i++) sum += buf[i];
            total += n;
        }
        char reply[128];
        int len = snprintf(reply, sizeof reply, "child %d got %u bytes sum %u", getpid(), total, sum);
        write(to_parent[1], reply, len);
        _exit(0);
    }
    close(to_child[0]);
    close(to_parent[1]);
    unsigned char data[20000];
    getrandom(data, sizeof data, 0);
    unsigned len = 5000 + (data[0] | data[1] << 8) % 15000, sum = 0;
    for (unsigned i = 0; i < len; i++) sum += data[i];
    size_t off = 0;
    int writes = 0;
    while (off < len) {
        size_t chunk = 1 + data[off] * 7;
        if (chunk > len - off) chunk = len - off;
        ssize_t w = write(to_child[1], data + off, chunk);
        if (w < 0) { perror("write"); return 1; }
        off += w;
        writes++;
    }
    close(to_child[1]);
    printf("parent sent %u bytes sum %u in %d writes\n", len, sum, writes);
    char reply[128] = {0};
    ssize_t n = read(to_parent[0], reply, sizeof reply - 1);
    printf("reply(%zd): %s\n", n, reply);
    int st;
    waitpid(pid, &st, 0);
    printf("child pid matched=%d status=%d\n", strstr(reply, "child") != NULL, WEXITSTATUS(st));
    n = read(to_parent[0], reply, 1);
    printf("read after writer exit: %zd\n", n);

    /* EPIPE: write to a pipe with no readers */
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    pipe(p);
    close(p[0]);
    ssize_t w = write(p[1], "x", 1);
    printf("write without reader: %zd %s\n", w, strerror(errno));
    printf("EXIT-SUCCESS\n");
    return 0;
}
