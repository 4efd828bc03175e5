// Tests dlopen/dlsym/dladdr/dlclose of libm plus direct libm calls (-lm -ldl); library and symbol addresses vary with ASLR.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <sys/random.h>

int main(void) {
    unsigned r;
    getrandom(&r, sizeof r, 0);
    double x = (r % 10000) / 1000.0;
    printf("x=%.3f sqrt=%.9f sin=%.9f exp=%.6g\n", x, sqrt(x), sin(x), exp(x));
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    double (*cosp)(double) = (double (*)(double))dlsym(h, "cos");
    printf("dlsym cos=%p cos(x)=%.9f same as linked cos: %d\n", (void *)cosp, cosp(x), cosp == cos);
    Dl_info info;
    if (dladdr((void *)cosp, &info)) printf("dladdr: sym=%s base=%p\n", info.dli_sname, info.dli_fbase);
    void *missing = dlsym(h, "no_such_symbol_gorr");
    printf("missing symbol=%p error=%s\n", missing, dlerror() ? "set" : "none");
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *pf = dlsym(libc, "printf");
    printf("printf via dlsym=%p direct=%p equal=%d\n", pf, (void *)printf, pf == (void *)printf);
    void *next = dlsym(RTLD_NEXT, "malloc");
    printf("RTLD_NEXT malloc=%p\n", next);
    printf("dlclose=%d %d\n", dlclose(h), dlclose(libc));
    void *bad = dlopen("libdoes-not-exist-gorr.so", RTLD_LAZY);
    printf("dlopen missing lib=%p\n", bad);
    printf("EXIT-SUCCESS\n");
    return 0;
}
