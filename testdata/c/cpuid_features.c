// Tests the cpuid instruction: leaf 0 vendor string, leaf 1 family/model/feature bits (prints the RDRAND bit a recorder may hide), leaf 7, brand.
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    printf("cpuid(0): max leaf=%u vendor=%s\n", a, vendor);
    __cpuid(1, a, b, c, d);
    unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
    if (family == 0xf) family += (a >> 20) & 0xff;
    if (family >= 6) model |= ((a >> 16) & 0xf) << 4;
    printf("cpuid(1): family=%u model=%u stepping=%u apic-id=%u\n", family, model, stepping, b >> 24);
    int rdrand = (c >> 30) & 1;
    printf("features: sse2=%u sse4.2=%u avx=%u xsave=%u osxsave=%u rdrand=%d hypervisor=%u tsc=%u\n", (d >> 26) & 1, (c >> 20) & 1,
           (c >> 28) & 1, (c >> 26) & 1, (c >> 27) & 1, rdrand, (c >> 31) & 1, (d >> 4) & 1);
    unsigned max = __get_cpuid_max(0, NULL);
    if (max >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        printf("cpuid(7): rdseed=%u avx2=%u\n", (b >> 18) & 1, (b >> 5) & 1);
    }
    unsigned ext = __get_cpuid_max(0x80000000, NULL);
    if (ext >= 0x80000004) {
        char brand[49] = {0};
        for (unsigned i = 0; i < 3; i++) {
            __cpuid(0x80000002 + i, a, b, c, d);
            memcpy(brand + i * 16, &a, 4);
            memcpy(brand + i * 16 + 4, &b, 4);
            memcpy(brand + i * 16 + 8, &c, 4);
            memcpy(brand + i * 16 + 12, &d, 4);
        }
        printf("brand: %s\n", brand);
    }
    printf("pid=%d\n", getpid());
    printf("EXIT-SUCCESS\n");
    return 0;
}
