/* Tests the calls the syscall buffer makes in-process that change only names and metadata (mkdir, mkdirat, symlink, link, rename, renameat, renameat2, chmod, fchmod, fchmodat, chown, fchown, lchown, fchownat, setxattr, lsetxattr, removexattr, lremovexattr, fremovexattr, unlink, unlinkat, rmdir) and the path-based queries with output (readlink, readlinkat, getxattr, lgetxattr, listxattr, llistxattr), on names, link targets, modes and attribute values drawn at random. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static unsigned char rnd[64];

static void hex(char *dst, const unsigned char *src, int n) {
  for (int i = 0; i < n; i++) sprintf(dst + 2 * i, "%02x", src[i]);
}

static void check(const char *what, long r) {
  printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : "ok");
}

int main(void) {
  if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) return 1;
  char tag[17], dir[64], sub[96], file[128], sym[128], hard[128], moved[128], target[64];
  hex(tag, rnd, 8);
  snprintf(dir, sizeof dir, "md-%s", tag);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(file, sizeof file, "%s/f", dir);
  snprintf(sym, sizeof sym, "%s/l", dir);
  snprintf(hard, sizeof hard, "%s/h", dir);
  snprintf(moved, sizeof moved, "%s/m", dir);
  hex(target, rnd + 8, 12);
  printf("tag %s target %s\n", tag, target);

  check("mkdir", mkdir(dir, 0700 | (rnd[20] & 070)));
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  check("mkdirat", mkdirat(dfd, "sub", 0755));
  int fd = open(file, O_CREAT | O_WRONLY, 0600);
  check("write", write(fd, rnd, 32));
  check("symlink", symlink(target, sym));
  check("symlinkat", symlinkat(tag, dfd, "l2"));
  check("link", link(file, hard));
  char buf[256];
  long n = readlink(sym, buf, sizeof buf);
  printf("readlink: %ld %.*s\n", n, (int)(n > 0 ? n : 0), buf);
  n = readlinkat(dfd, "l2", buf, sizeof buf);
  printf("readlinkat: %ld %.*s\n", n, (int)(n > 0 ? n : 0), buf);
  mode_t mode = 0400 | (rnd[21] & 077);
  check("chmod", chmod(file, mode));
  check("fchmod", fchmod(fd, mode | 0200));
  check("fchmodat", fchmodat(dfd, "h", mode | 0600, 0));
  struct stat st;
  if (stat(file, &st) == 0) printf("mode %o nlink %ld\n", st.st_mode & 0777, (long)st.st_nlink);
  check("chown", chown(file, getuid(), getgid()));
  check("fchown", fchown(fd, -1, getgid()));
  check("lchown", lchown(sym, getuid(), -1));
  check("fchownat", fchownat(dfd, "l", getuid(), getgid(), AT_SYMLINK_NOFOLLOW));

  /* Extended attributes: a random value; the file system may not
     support them (ENOTSUP), which is recorded all the same. */
  char val[17];
  hex(val, rnd + 24, 8);
  check("setxattr", setxattr(file, "user.gorr", val, 16, 0));
  check("lsetxattr", lsetxattr(file, "user.other", tag, 16, 0));
  memset(buf, 0, sizeof buf);
  n = getxattr(file, "user.gorr", buf, sizeof buf);
  printf("getxattr: %ld %.*s\n", n, (int)(n > 0 ? n : 0), buf);
  printf("getxattr size query: %ld\n", (long)getxattr(file, "user.gorr", NULL, 0));
  n = lgetxattr(file, "user.other", buf, sizeof buf);
  printf("lgetxattr: %ld %.*s\n", n, (int)(n > 0 ? n : 0), buf);
  memset(buf, 0, sizeof buf);
  n = listxattr(file, buf, sizeof buf);
  printf("listxattr: %ld\n", n);
  for (long i = 0; i < n; i += strlen(buf + i) + 1) printf("  name %s\n", buf + i);
  printf("llistxattr: %ld\n", (long)llistxattr(sym, buf, sizeof buf));
  check("removexattr", removexattr(file, "user.gorr"));
  check("lremovexattr", lremovexattr(file, "user.other"));
  check("fremovexattr", fremovexattr(fd, "user.none"));

  check("rename", rename(hard, moved));
  check("renameat", renameat(dfd, "m", dfd, "m2"));
  check("renameat2", renameat2(dfd, "m2", dfd, "m3", RENAME_NOREPLACE));
  check("unlink", unlink(file));
  check("unlinkat", unlinkat(dfd, "m3", 0));
  check("unlinkat l", unlinkat(dfd, "l", 0));
  check("unlinkat l2", unlinkat(dfd, "l2", 0));
  check("unlinkat sub", unlinkat(dfd, "sub", AT_REMOVEDIR));
  check("rmdir", rmdir(dir));
  check("rmdir again", rmdir(dir));
  close(fd);
  close(dfd);
  printf("EXIT-SUCCESS\n");
  return 0;
}
