// Writes to descriptors 0-2 while they change files: the syscall buffer
// makes the writes to a pipe or /dev/null put on 1 and 2 itself, and
// must trace again every write that reaches the recorder's own stdout
// (whose output replay reproduces) after dup2, close and reopen, a
// vfork child's dup2 (its descriptors are its own, its memory is not)
// and a thread's. Prints random tokens and pids.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char rnd[16];

static void say(int fd, const char *what, int i) {
    char line[128];
    int n = snprintf(line, sizeof line, "%s %d token %02x%02x pid %d\n", what, i, rnd[i % 16], rnd[(i + 1) % 16], getpid());
    if (write(fd, line, n) != n) _exit(3);
}

static void *thread(void *arg) {
    (void)arg;
    say(1, "from a thread to stdout", 9);
    return NULL;
}

int main(void) {
    getrandom(rnd, sizeof rnd, 0);
    int saved = dup(1);
    int p[2];
    if (saved < 0 || pipe(p)) return 1;

    say(1, "stdout", 0);
    // stdout onto a pipe: these writes need no stop.
    dup2(p[1], 1);
    for (int i = 0; i < 5; i++) say(1, "into the pipe", i);
    char buf[1024];
    int n = read(p[0], buf, sizeof buf);
    dup2(saved, 1);
    say(1, "stdout again", 1);
    if (n > 0 && write(1, buf, n) != n) return 2;

    // close and reopen: /dev/null takes number 1, then stdout does.
    close(1);
    if (open("/dev/null", O_WRONLY) != 1) return 4;
    for (int i = 0; i < 3; i++) say(1, "into /dev/null", i);
    close(1);
    if (dup(saved) != 1) return 5;
    say(1, "stdout after dup", 2);

    // A vfork child puts the pipe on its own 1 and writes there; its
    // parent's 1 is still stdout.
    pid_t pid = vfork();
    if (pid == 0) {
        dup2(p[1], 1);
        say(1, "vfork child into the pipe", 3);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    say(1, "parent after vfork", 4);
    n = read(p[0], buf, sizeof buf);
    if (n > 0 && write(2, buf, n) != n) return 6;

    pthread_t th;
    pthread_create(&th, NULL, thread, NULL);
    pthread_join(th, NULL);
    // stderr onto the pipe and back.
    int saved2 = dup(2);
    dup2(p[1], 2);
    say(2, "stderr into the pipe", 5);
    dup2(saved2, 2);
    n = read(p[0], buf, sizeof buf);
    if (n > 0 && write(1, buf, n) != n) return 7;
    say(1, "EXIT-SUCCESS", 6);
    return 0;
}
