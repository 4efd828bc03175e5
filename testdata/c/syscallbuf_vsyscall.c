// Tests calls into the legacy vsyscall page (gettimeofday, time, getcpu), which the kernel emulates without syscall stops: their results must be recorded, and rcx/r11 kept.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

// Each call is the `mov $entry, %rax; call *%rax` that old binaries use;
// rcx and r11 carry values the page must give back unchanged.
#define VSYSCALL(entry, ret, a, b, c)                                                       \
	do {                                                                                \
		register unsigned long r11 asm("r11") = 0x1111;                             \
		unsigned long rcx = 0x2222;                                                 \
		__asm__ __volatile__("movq $" entry ", %%rax\n\tcallq *%%rax"               \
				     : "=a"(ret), "+c"(rcx), "+r"(r11)                      \
				     : "D"(a), "S"(b), "d"(c)                               \
				     : "cc", "memory");                                     \
		if (rcx != 0x2222 || r11 != 0x1111) {                                       \
			printf("registers changed: rcx %#lx r11 %#lx\n", rcx, (unsigned long)r11); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

static int has_vsyscall(void) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "[vsyscall]"))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

int main(void) {
	if (!has_vsyscall()) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		printf("no vsyscall page at %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
		puts("EXIT-SUCCESS");
		return 0;
	}
	for (int i = 0; i < 3; i++) {
		struct timeval tv = {0, 0};
		long ret;
		VSYSCALL("0xffffffffff600000", ret, &tv, NULL, 0);
		time_t t1 = 0, t2;
		VSYSCALL("0xffffffffff600400", t2, &t1, 0, 0);
		unsigned cpu = ~0u, node = ~0u;
		long r3;
		VSYSCALL("0xffffffffff600800", r3, &cpu, &node, NULL);
		printf("gettimeofday %ld: %ld.%06ld time %ld (%ld) getcpu %ld: cpu<256 %d node<256 %d\n", ret,
		       (long)tv.tv_sec, (long)tv.tv_usec, (long)t2, (long)t1, r3, cpu < 256, node < 256);
	}
	puts("EXIT-SUCCESS");
	return 0;
}
