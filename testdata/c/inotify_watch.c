// Tests inotify: watches the current directory and a file, then creates/writes/renames/deletes it and prints the events.
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static void drain(int fd) {
    char buf[4096] __attribute__((aligned(8)));
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 20) > 0) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) return;
        for (char *q = buf; q < buf + n;) {
            struct inotify_event *e = (struct inotify_event *)q;
            printf("  wd=%d mask=%08x%s%s%s%s%s%s%s cookie=%s name=%s\n", e->wd, e->mask, e->mask & IN_CREATE ? " CREATE" : "",
                   e->mask & IN_MODIFY ? " MODIFY" : "", e->mask & IN_CLOSE_WRITE ? " CLOSE_WRITE" : "",
                   e->mask & IN_MOVED_FROM ? " MOVED_FROM" : "", e->mask & IN_MOVED_TO ? " MOVED_TO" : "",
                   e->mask & IN_DELETE ? " DELETE" : "", e->mask & IN_ATTRIB ? " ATTRIB" : "", e->cookie ? "set" : "0",
                   e->len ? e->name : "");
            q += sizeof *e + e->len;
        }
    }
}

int main(void) {
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    char name[64], moved[80];
    snprintf(name, sizeof name, "watched_%d.txt", getpid());
    snprintf(moved, sizeof moved, "moved_%s", name);
    int dw = inotify_add_watch(in, ".", IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE);
    printf("inotify fd=%d dir wd=%d\n", in, dw);
    int fd = open(name, O_CREAT | O_WRONLY, 0644);
    int fw = inotify_add_watch(in, name, IN_MODIFY | IN_ATTRIB);
    printf("file wd=%d\n", fw);
    char text[64];
    int len = snprintf(text, sizeof text, "pid %d writes\n", getpid());
    write(fd, text, len);
    write(fd, text, len);
    fchmod(fd, 0600);
    close(fd);
    printf("events after create/write/chmod/close:\n");
    drain(in);
    rename(name, moved);
    unlink(moved);
    printf("events after rename/unlink:\n");
    drain(in);
    printf("rm_watch dir=%d\n", inotify_rm_watch(in, dw));
    printf("EXIT-SUCCESS\n");
    return 0;
}
