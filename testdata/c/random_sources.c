// Tests randomness sources: getrandom (incl. GRND_NONBLOCK), /dev/urandom, /dev/random, AT_RANDOM from getauxval, rand() seeded by time.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void hex(const char *label, const unsigned char *p, int n) {
    printf("%s:", label);
    for (int i = 0; i < n; i++) printf("%02x", p[i]);
    printf("\n");
}

int main(void) {
    unsigned char buf[64];
    ssize_t n = getrandom(buf, 32, 0);
    printf("getrandom=%zd\n", n);
    hex("  bytes", buf, 32);
    n = getrandom(buf, 16, GRND_NONBLOCK);
    printf("getrandom NONBLOCK=%zd\n", n);
    hex("  bytes", buf, 16);
    n = syscall(SYS_getrandom, buf, 8, GRND_INSECURE);
    printf("raw getrandom INSECURE=%zd\n", n);
    hex("  bytes", buf, n > 0 ? n : 0);

    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    n = read(fd, buf, 24);
    close(fd);
    printf("/dev/urandom read=%zd\n", n);
    hex("  bytes", buf, 24);
    FILE *f = fopen("/dev/random", "rb");
    size_t m = fread(buf, 1, 8, f);
    fclose(f);
    printf("/dev/random fread=%zu\n", m);
    hex("  bytes", buf, 8);

    const unsigned char *at = (const unsigned char *)getauxval(AT_RANDOM);
    hex("AT_RANDOM", at, 16);
    printf("AT_SYSINFO_EHDR=%#lx AT_HWCAP=%#lx AT_PAGESZ=%lu AT_SECURE=%lu\n", getauxval(AT_SYSINFO_EHDR), getauxval(AT_HWCAP),
           getauxval(AT_PAGESZ), getauxval(AT_SECURE));

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srand(ts.tv_nsec ^ ts.tv_sec);
    printf("rand():");
    for (int i = 0; i < 5; i++) printf(" %d", rand() % 1000);
    printf("\n");
    srandom(getpid());
    printf("random() seeded by pid: %ld\n", random());
    printf("EXIT-SUCCESS\n");
    return 0;
}
