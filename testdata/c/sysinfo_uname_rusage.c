// Tests uname, sysinfo, getrusage (SELF/CHILDREN/THREAD), times(), sysconf and gethostname.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void show_rusage(const char *who, int which) {
    struct rusage ru;
    int r = getrusage(which, &ru);
    printf("rusage %-8s r=%d utime=%ld.%06ld stime=%ld.%06ld maxrss=%ldkB minflt=%ld majflt=%ld nvcsw=%ld nivcsw=%ld\n", who, r,
           (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss,
           ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw);
}

int main(void) {
    struct utsname u;
    uname(&u);
    printf("uname sysname=%s release=%s machine=%s nodename=%s\n", u.sysname, u.release, u.machine, u.nodename);
    char host[256];
    gethostname(host, sizeof host);
    printf("hostname=%s\n", host);
    struct sysinfo si;
    sysinfo(&si);
    printf("sysinfo uptime=%ld loads=%lu/%lu/%lu totalram=%lu freeram=%lu procs=%u mem_unit=%u\n", si.uptime, si.loads[0], si.loads[1],
           si.loads[2], si.totalram, si.freeram, si.procs, si.mem_unit);
    printf("get_nprocs=%d conf=%d phys_pages=%ld avphys=%ld\n", get_nprocs(), get_nprocs_conf(), get_phys_pages(), get_avphys_pages());
    printf("sysconf PAGESIZE=%ld CLK_TCK=%ld OPEN_MAX=%ld\n", sysconf(_SC_PAGESIZE), sysconf(_SC_CLK_TCK), sysconf(_SC_OPEN_MAX));

    /* burn a little CPU and fault in memory so the counters move */
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 1000000; i++) x += i * i;
    char *mem = malloc(2 << 20);
    for (int i = 0; i < (2 << 20); i += 4096) mem[i] = i;
    pid_t pid = fork();
    if (pid == 0) {
        for (unsigned long i = 0; i < 500000; i++) x += i;
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    show_rusage("SELF", RUSAGE_SELF);
    show_rusage("CHILDREN", RUSAGE_CHILDREN);
    show_rusage("THREAD", RUSAGE_THREAD);
    struct tms t;
    clock_t c = times(&t);
    printf("times()=%ld utime=%ld stime=%ld cutime=%ld cstime=%ld\n", (long)c, (long)t.tms_utime, (long)t.tms_stime, (long)t.tms_cutime,
           (long)t.tms_cstime);
    printf("clock()=%ld\n", (long)clock());
    free(mem);
    printf("EXIT-SUCCESS\n");
    return 0;
}
