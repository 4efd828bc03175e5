// Tests rdtsc and cpuid in code a program writes at run time (JIT-style: anonymous memory made executable, and an anonymous RWX mapping), run by a thread blocked in read while the code was made, by the main thread and by a forked child.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef unsigned long long (*tsc_fn)(void);
typedef unsigned (*cpuid_fn)(void);

/* rdtsc; shl $32,%rdx; or %rdx,%rax; ret */
static const unsigned char tsc_code[] = {0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0, 0xc3};
/* push %rbx; xor %eax,%eax; xor %ecx,%ecx; cpuid; mov %ebx,%eax; pop %rbx; ret */
static const unsigned char cpuid_code[] = {0x53, 0x31, 0xc0, 0x31, 0xc9, 0x0f, 0xa2, 0x89, 0xd8, 0x5b, 0xc3};

static tsc_fn jit_tsc;
static int wake[2];

static void *reader(void *arg) {
    (void)arg;
    char c;
    if (read(wake[0], &c, 1) != 1) /* blocked here while main makes the code */
        abort();
    unsigned long long a = jit_tsc(), b = jit_tsc();
    printf("thread: jit rdtsc %llu then %llu (%s)\n", a, b, b > a ? "increasing" : "NOT increasing");
    return NULL;
}

int main(void) {
    if (pipe(wake) != 0) return 1;
    pthread_t th;
    pthread_create(&th, NULL, reader, NULL);
    usleep(20000);

    /* Written, then made executable by mprotect. */
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memcpy(p, tsc_code, sizeof tsc_code);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
    jit_tsc = (tsc_fn)p;
    unsigned long long t0 = jit_tsc();
    printf("main: jit rdtsc %llu\n", t0);

    /* An anonymous mapping made RWX at once, written after mmap. */
    unsigned char *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) return 1;
    memcpy(q, cpuid_code, sizeof cpuid_code);
    unsigned ebx = ((cpuid_fn)q)();
    char vendor[5] = {0};
    memcpy(vendor, &ebx, 4);
    printf("main: jit cpuid(0) ebx %.4s\n", vendor);
    memcpy(q + 64, tsc_code, sizeof tsc_code);
    printf("main: rwx rdtsc %llu\n", ((tsc_fn)(q + 64))());

    if (write(wake[1], "x", 1) != 1) return 1;
    pthread_join(th, NULL);

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        printf("child %d: jit rdtsc %llu\n", getpid(), jit_tsc());
        return 0;
    }
    int st;
    waitpid(c, &st, 0);
    unsigned long long t1 = jit_tsc();
    printf("main: child exited %d; %llu ticks in all\n", WEXITSTATUS(st), t1 - t0);
    printf("EXIT-SUCCESS\n");
    return 0;
}
