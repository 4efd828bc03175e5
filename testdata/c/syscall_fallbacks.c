// Tests unknown syscall numbers (ENOSYS), calls gorr answers so programs fall back (bpf, io_uring, AIO, userfaultfd, pkeys, ioperm), perf_event_open (which runs), PR_GET_TSC, modify_ldt, process_vm_writev to self, SIOCGIFBR.
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Unknown numbers must fail with ENOSYS everywhere; for the facilities
 * gorr makes look absent, want_errno is gorr's answer and a native run may
 * differ (the program only reports it). */
static void check(const char *what, long ret, int want_errno, int strict) {
  int e = ret < 0 ? errno : 0;
  printf("%s: ret %ld errno %d%s\n", what, ret, e, e == want_errno ? "" : " (not gorr's answer)");
  if (strict && (ret != -1 || e != want_errno)) {
    printf("FAIL %s: want errno %d\n", what, want_errno);
    exit(1);
  }
  if (ret >= 0 && ret < 1024 && !strict)
    close((int)ret);
}

int main(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned rnd;
  if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
    return 1;
  printf("pid %d time %ld.%09ld random %08x stack %p\n", getpid(), (long)ts.tv_sec, ts.tv_nsec, rnd, (void *)&ts);

  /* Numbers the kernel rejects: negative, past the table, the gap, x32. */
  long unknown[] = {-1, -10, 9999, 400, 472, 520, 0x40000027L, 0xffffffffL, 1008};
  for (unsigned i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "syscall(%ld)", unknown[i]);
    check(name, syscall(unknown[i], rnd, 0, 0), ENOSYS, 1);
  }
  /* The kernel dispatches on the low 32 bits only. */
  long pid = syscall(0x100000000L | SYS_getpid);
  printf("syscall(1<<32 | getpid) = %ld (%s)\n", pid, pid == getpid() ? "getpid" : "other");

  char attr[128] = {0};
  check("bpf", syscall(SYS_bpf, 0, attr, sizeof attr), ENOSYS, 0);
  struct perf_event_attr pe;
  memset(&pe, 0, sizeof pe);
  pe.size = sizeof pe;
  pe.type = PERF_TYPE_SOFTWARE;
  pe.config = PERF_COUNT_SW_TASK_CLOCK;
  check("perf_event_open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0), 0, 0); /* runs, as with rr */
  check("io_uring_setup", syscall(425, 8, attr), ENOSYS, 0);
  unsigned long ctx = 0;
  check("io_setup", syscall(SYS_io_setup, 8, &ctx), ENOSYS, 0);
  check("userfaultfd", syscall(SYS_userfaultfd, 0), ENOSYS, 0);
  check("pkey_alloc", syscall(SYS_pkey_alloc, 0, 0), ENOSPC, 0);
  check("ioperm", syscall(SYS_ioperm, 0x80, 1, 1), EPERM, 0);
  check("iopl", syscall(SYS_iopl, 3), EPERM, 0);

  /* pkey_mprotect with the default key is an mprotect. */
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  page[0] = (char)rnd;
  if (syscall(SYS_pkey_mprotect, page, 4096, PROT_READ, -1) != 0)
    return 1;
  printf("pkey_mprotect ok, page[0] %d\n", page[0]);

  /* The recorder traps rdtsc itself; PR_GET_TSC shows the program's mode. */
  int mode = -1;
  if (prctl(PR_GET_TSC, &mode) != 0 || mode != PR_TSC_ENABLE)
    return printf("FAIL PR_GET_TSC %d\n", mode), 1;
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0 || prctl(PR_GET_TSC, &mode) != 0 || mode != PR_TSC_SIGSEGV)
    return printf("FAIL PR_GET_TSC after set %d\n", mode), 1;
  if (prctl(PR_SET_TSC, PR_TSC_ENABLE) != 0 || prctl(PR_GET_TSC, &mode) != 0 || mode != PR_TSC_ENABLE)
    return printf("FAIL PR_GET_TSC after enable %d\n", mode), 1;
  printf("PR_GET_TSC follows PR_SET_TSC\n");
  printf("rdtsc low bits %u\n", (unsigned)(__builtin_ia32_rdtsc() & 0xffff));

  /* An LDT entry whose limit holds random bits, read back with lsl. */
  uint32_t limit = 0x1000 | (rnd & 0xfff);
  struct user_desc desc = {.entry_number = 0, .limit = limit, .seg_32bit = 1, .contents = 2, .useable = 1};
  if (syscall(SYS_modify_ldt, 0x11, &desc, sizeof desc) != 0)
    return printf("FAIL modify_ldt write errno %d\n", errno), 1;
  uint32_t got = 0, ok = 0, sel = (desc.entry_number << 3) | 7;
  asm volatile("lsl %[sel], %[lim]\n\tjnz 1f\n\tmovl $1, %[ok]\n1:" : [lim] "=r"(got), [ok] "+rm"(ok) : [sel] "r"(sel));
  unsigned char ldt[16];
  long n = syscall(SYS_modify_ldt, 0, ldt, sizeof ldt);
  /* Some paravirtualised guests keep the entry (read back below) but
     never load it for the CPU: lsl fails natively there too. */
  if (ok)
    printf("ldt limit 0x%x lsl 0x%x", limit, got);
  else
    printf("ldt limit 0x%x: lsl cannot load the selector on this machine", limit);
  printf(", read %ld bytes, low limit byte 0x%02x\n", n, ldt[0]);
  if (ok && got != limit)
    return 1;

  /* process_vm_writev into our own memory. */
  char src[32], dst[32] = {0};
  snprintf(src, sizeof src, "vm %08x", rnd);
  struct iovec l = {src, strlen(src) + 1}, r = {dst, sizeof dst};
  long w = syscall(SYS_process_vm_writev, getpid(), &l, 1, &r, 1, 0);
  printf("process_vm_writev %ld: %s\n", w, dst);

  /* Old bridge ioctl: BRCTL_GET_VERSION reads its arguments only. */
  int sk = socket(AF_INET, SOCK_STREAM, 0);
  unsigned long args[3] = {0, 0, 0};
  int v = ioctl(sk, SIOCGIFBR, args);
  printf("SIOCGIFBR version %d errno %d\n", v, v < 0 ? errno : 0);
  int bridges[8];
  unsigned long list[3] = {1, (unsigned long)bridges, 8};
  v = ioctl(sk, SIOCGIFBR, list);
  printf("SIOCGIFBR bridges %d\n", v);
  close(sk);

  puts("EXIT-SUCCESS");
  return 0;
}
