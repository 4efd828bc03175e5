// Tests that the recorder does not disturb the program: it starts with its caller's ignored signals, and signals sent to the parent or to the process group (even SIGKILL) reach only the recorded processes.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got[65];
static void on_sig(int sig) { got[sig]++; }

int main(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long ign = ~0ULL;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "SigIgn:", 7) == 0)
			ign = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	unsigned long long bad = 0;
	int sigs[] = {SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGABRT, SIGTRAP};
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		bad |= 1ULL << (sigs[i] - 1);
	printf("pid %d pgrp %d: job-control/terminal signals ignored at start: %s\n", getpid(), getpgrp(),
	       (ign & bad) ? "yes (disturbed)" : "no");
	struct sigaction sa = {0};
	sa.sa_handler = on_sig;
	for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
	/* Under gorr the program has a process group of its own; run
	 * natively it may share its launcher's, which it must not kill. */
	int shared = getpgrp() == getpgid(getppid());
	printf("shares its parent's process group: %d\n", shared);
	if (shared) {
		setpgid(0, 0);
	} else {
		/* To the parent (the recorder under gorr). */
		kill(getppid(), SIGINT);
		kill(getppid(), SIGQUIT);
	}
	/* To the whole group. */
	kill(0, SIGABRT);
	kill(0, SIGTRAP);
	kill(0, SIGINT);
	struct timespec ts = {0, 2 * 1000 * 1000};
	nanosleep(&ts, NULL);
	printf("handled: ABRT %d TRAP %d INT %d, time %ld\n", got[SIGABRT], got[SIGTRAP], got[SIGINT], (long)time(NULL));
	fflush(stdout);
	pid_t c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		printf("child %d kills its process group\n", getpid());
		fflush(stdout);
		kill(0, SIGKILL);
		_exit(1);
	}
	pause();
	return 1;
}
