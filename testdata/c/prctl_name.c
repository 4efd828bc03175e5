// Tests prctl PR_SET_NAME/PR_GET_NAME with a random name (checked in /proc/self/comm), thread names, and other prctl queries.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

static void read_comm(const char *path, char *out, size_t cap) {
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n > 0 && out[n - 1] == '\n') n--;
    out[n > 0 ? n : 0] = 0;
}

static void *worker(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "worker-%s", (char *)arg);
    prctl(PR_SET_NAME, name);
    char got[16] = {0}, path[64], comm[32];
    prctl(PR_GET_NAME, got);
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", gettid());
    read_comm(path, comm, sizeof comm);
    printf("thread name=%s comm=%s\n", got, comm);
    return NULL;
}

int main(void) {
    char orig[16] = {0};
    prctl(PR_GET_NAME, orig);
    printf("original name=%s\n", orig);
    unsigned char r[4];
    getrandom(r, sizeof r, 0);
    char name[32];
    snprintf(name, sizeof name, "gorr-%02x%02x%02x%02x-long-name", r[0], r[1], r[2], r[3]);
    printf("set name=%s: %d\n", name, prctl(PR_SET_NAME, name));
    char got[17] = {0};
    prctl(PR_GET_NAME, got);
    char comm[32];
    read_comm("/proc/self/comm", comm, sizeof comm);
    printf("get name=%s (len %zu) comm=%s\n", got, strlen(got), comm);

    pthread_t t;
    char tag[8];
    snprintf(tag, sizeof tag, "%02x", r[0]);
    pthread_create(&t, NULL, worker, tag);
    pthread_join(t, NULL);
    char tn[16];
    pthread_setname_np(pthread_self(), "main-renamed");
    pthread_getname_np(pthread_self(), tn, sizeof tn);
    printf("pthread_getname_np=%s\n", tn);

    printf("PR_GET_DUMPABLE=%d\n", prctl(PR_GET_DUMPABLE));
    printf("PR_GET_PDEATHSIG r=%d\n", prctl(PR_GET_PDEATHSIG, (unsigned long)&(int){0}));
    int ts = prctl(PR_GET_TIMERSLACK);
    printf("PR_GET_TIMERSLACK=%d\n", ts);
    printf("PR_SET_NO_NEW_PRIVS=%d get=%d\n", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    printf("EXIT-SUCCESS\n");
    return 0;
}
