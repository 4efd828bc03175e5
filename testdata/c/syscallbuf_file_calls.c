/* Tests the file calls the syscall buffer makes in-process: openat (writable ones checked for procfs), xattrs (incl. size queries), utimensat/futimens, fadvise, copy_file_range, FICLONE, and writes beside MAP_SHARED views or through /proc/self/mem. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static void hex(const char *what, const unsigned char *p, int n) {
  printf("%s:", what);
  for (int i = 0; i < n; i++) printf("%02x", p[i]);
  printf("\n");
}

static const char *err(long r) { return r < 0 ? strerrorname_np(errno) : "ok"; }

int main(void) {
  unsigned char rnd[64], back[64];
  if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  int fa = open("a.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
  int fb = open("b.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fa < 0 || fb < 0 || write(fa, rnd, sizeof rnd) != sizeof rnd) return 1;
  for (int round = 0; round < 4; round++) {
    /* Read-only opens are buffered; read back what was written. */
    int fr = openat(AT_FDCWD, "a.dat", O_RDONLY | O_CLOEXEC);
    if (fr < 0 || read(fr, back, sizeof back) != sizeof back) return 1;
    hex("reopened", back + 8 * round, 8);
    close(fr);
    printf("missing: %s\n", err(openat(AT_FDCWD, "no-such-file", O_RDONLY)));

    /* xattrs: set a random value, query sizes, read the value and list. */
    char val[17], got[64], list[256];
    snprintf(val, sizeof val, "%02x%02x%02x%02x%02x%02x%02x%02x", rnd[round], rnd[round + 1], rnd[round + 2], rnd[round + 3],
             rnd[round + 4], rnd[round + 5], rnd[round + 6], rnd[round + 7]);
    long r = fsetxattr(fa, "user.gorr", val, 16, 0);
    printf("fsetxattr: %s\n", err(r));
    if (r == 0) {
      long need = fgetxattr(fa, "user.gorr", NULL, 0);
      memset(got, 0, sizeof got);
      long n = fgetxattr(fa, "user.gorr", got, sizeof got);
      long lneed = flistxattr(fa, NULL, 0);
      long ln = flistxattr(fa, list, sizeof list);
      printf("fgetxattr: need %ld got %ld %.16s; flistxattr: need %ld got %ld %s\n", need, n, got, lneed, ln, ln > 0 ? list : "-");
    }
    printf("fgetxattr missing: %s\n", err(fgetxattr(fa, "user.none", got, sizeof got)));

    /* Times: utimensat with random nanoseconds, futimens(NULL) = now. */
    struct timespec ts[2] = {{1000000 + rnd[round], rnd[round + 8] * 1000L}, {2000000 + rnd[round + 9], rnd[round + 10] * 1000L}};
    struct stat st;
    printf("utimensat: %s\n", err(utimensat(AT_FDCWD, "a.dat", ts, 0)));
    if (stat("a.dat", &st) == 0) printf("times %ld.%09ld %ld.%09ld\n", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    printf("futimens: %s\n", err(futimens(fb, NULL)));
    if (fstat(fb, &st) == 0) printf("b mtime %ld.%09ld\n", (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);

    /* fadvise, copy_file_range without offsets, FICLONE. */
    printf("fadvise: %d\n", posix_fadvise(fa, 0, 0, POSIX_FADV_SEQUENTIAL));
    lseek(fa, 16 * round, SEEK_SET);
    lseek(fb, 0, SEEK_SET);
    ssize_t c = copy_file_range(fa, NULL, fb, NULL, 16, 0);
    printf("copy_file_range: %zd %s\n", c, err(c));
    if (pread(fb, back, 16, 0) == 16) hex("copied", back, 16);
    r = ioctl(fb, FICLONE, fa);
    printf("FICLONE: %s\n", r == 0 ? "ok" : (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY) ? "unsupported" : strerrorname_np(errno));
  }

  /* Writes through a writable /proc/self/mem descriptor change memory. */
  static volatile unsigned long cell;
  int mem = open("/proc/self/mem", O_RDWR);
  for (int i = 0; i < 3 && mem >= 0; i++) {
    unsigned long v;
    if (getrandom(&v, sizeof v, 0) != sizeof v || pwrite(mem, &v, sizeof v, (off_t)(unsigned long)&cell) != sizeof v) return 1;
    printf("cell %s %016lx\n", cell == v ? "written" : "NOT written", cell);
  }
  /* A read-only shared view of a read-only fd, and a writable one: writes
     to the file show through both. */
  int ro = open("a.dat", O_RDONLY);
  unsigned char *view = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
  unsigned char *wview = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 0);
  if (view == MAP_FAILED || wview == MAP_FAILED) return 1;
  for (int i = 0; i < 3; i++) {
    unsigned char r2[8];
    if (getrandom(r2, sizeof r2, 0) != sizeof r2 || pwrite(fa, r2, 8, 8 * i) != 8) return 1;
    lseek(fb, 0, SEEK_SET);
    lseek(fa, 0, SEEK_SET);
    if (copy_file_range(fb, NULL, fa, NULL, 4, 0) != 4) return 1;
    hex("view", view, 24);
    hex("wview", wview + 24, 8);
    wview[24 + i] = r2[0];
    hex("file", view + 24, 8);
  }
  printf("pid %d\n", getpid());
  puts("EXIT-SUCCESS");
  return 0;
}
