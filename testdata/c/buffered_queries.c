// Tests the queries the syscall buffer makes in the tracee: ioctl TCGETS and TIOCGWINSZ on a pseudo-terminal whose size and flags were set to random values, isatty on a pipe (TCGETS failing with ENOTTY), and rt_sigaction queries of handlers installed with random masks and flags.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <termios.h>
#include <unistd.h>

static void on_sig(int sig) { (void)sig; }

int main(void) {
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) return 1;
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        perror("posix_openpt");
        return 1;
    }
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    if (slave < 0) {
        perror("open slave");
        return 1;
    }
    struct winsize set = {.ws_row = 10 + seed % 90, .ws_col = 40 + (seed >> 8) % 200};
    if (ioctl(master, TIOCSWINSZ, &set) != 0) {
        perror("TIOCSWINSZ");
        return 1;
    }
    struct termios t;
    if (tcgetattr(slave, &t) != 0) {
        perror("tcgetattr");
        return 1;
    }
    t.c_cc[VMIN] = 1 + (seed >> 16) % 200;
    t.c_cc[VTIME] = (seed >> 24) % 100;
    if ((seed >> 32) & 1) t.c_lflag &= ~ECHO;
    if (tcsetattr(slave, TCSANOW, &t) != 0) {
        perror("tcsetattr");
        return 1;
    }
    unsigned long sum = 0;
    for (int i = 0; i < 50; i++) {
        struct winsize ws;
        struct termios got;
        memset(&ws, 0xa5, sizeof ws);
        memset(&got, 0xa5, sizeof got);
        if (ioctl(slave, TIOCGWINSZ, &ws) != 0 || tcgetattr(slave, &got) != 0) {
            perror("query");
            return 1;
        }
        sum = sum * 31 + ws.ws_row * 1000 + ws.ws_col + got.c_cc[VMIN] * 7 + got.c_cc[VTIME] + (got.c_lflag & ECHO);
    }
    int p[2];
    if (pipe(p) != 0) return 1;
    errno = 0;
    int tty = isatty(p[0]);
    int err = errno;
    struct winsize ws;
    ioctl(slave, TIOCGWINSZ, &ws);
    printf("pty %dx%d vmin %d vtime %d echo %d; pipe isatty %d errno %s; sum %lx\n", ws.ws_row, ws.ws_col,
           t.c_cc[VMIN], t.c_cc[VTIME], (t.c_lflag & ECHO) != 0, tty, err == ENOTTY ? "ENOTTY" : strerror(err), sum);

    int sigs[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH};
    for (int i = 0; i < 4; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sig;
        sa.sa_flags = ((seed >> (40 + i)) & 1) ? SA_RESTART : 0;
        sigemptyset(&sa.sa_mask);
        for (int s = 1; s < 32; s++)
            if ((seed >> ((s + i * 7) % 64)) & 1 && s != SIGKILL && s != SIGSTOP) sigaddset(&sa.sa_mask, s);
        if (sigaction(sigs[i], &sa, NULL) != 0) {
            perror("sigaction");
            return 1;
        }
    }
    for (int i = 0; i < 4; i++) {
        struct sigaction old;
        memset(&old, 0xa5, sizeof old);
        if (sigaction(sigs[i], NULL, &old) != 0) {
            perror("sigaction query");
            return 1;
        }
        unsigned mask = 0;
        for (int s = 1; s < 32; s++)
            if (sigismember(&old.sa_mask, s)) mask |= 1u << s;
        printf("signal %d: handler %s, restart %d, mask %08x\n", sigs[i], old.sa_handler == on_sig ? "ours" : "other",
               (old.sa_flags & SA_RESTART) != 0, mask);
    }
    struct sigaction dfl;
    if (sigaction(SIGTERM, NULL, &dfl) != 0) return 1;
    printf("SIGTERM %s\n", dfl.sa_handler == SIG_DFL ? "default" : "changed");
    printf("EXIT-SUCCESS\n");
    return 0;
}
