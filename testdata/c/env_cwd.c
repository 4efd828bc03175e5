// Tests the environment and working directory: getenv of HOME/PATH/PWD, setenv/unsetenv, environ walk, getcwd of the scratch dir.
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    char cwd[PATH_MAX];
    getcwd(cwd, sizeof cwd);
    printf("cwd=%s\n", cwd);
    printf("argc=%d argv[1]=%s\n", argc, argc > 1 ? argv[1] : "(none)");
    const char *home = getenv("HOME");
    const char *path = getenv("PATH");
    printf("HOME=%s\n", home ? home : "(unset)");
    printf("PATH set=%d len=%zu\n", path != NULL, path ? strlen(path) : 0);
    const char *pwd = getenv("PWD");
    printf("PWD=%s\n", pwd ? pwd : "(unset)");
    int n = 0;
    size_t bytes = 0;
    for (char **e = environ; *e; e++) {
        n++;
        bytes += strlen(*e);
    }
    printf("environ: %d vars, %zu bytes, environ at %p\n", n, bytes, (void *)environ);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char val[64];
    snprintf(val, sizeof val, "%ld-%d", ts.tv_nsec, getpid());
    setenv("GORR_DYNAMIC", val, 1);
    printf("GORR_DYNAMIC=%s\n", getenv("GORR_DYNAMIC"));
    unsetenv("GORR_DYNAMIC");
    printf("after unsetenv: %s\n", getenv("GORR_DYNAMIC") ? "still set" : "gone");
    printf("EXIT-SUCCESS\n");
    return 0;
}
