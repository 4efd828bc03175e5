// Tests POSIX IPC (-lrt): shm_open+mmap, named semaphores (sem_open) and message queues (mq_open/mq_send/mq_timedreceive) with a forked child.
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    char shm_name[64], sem_name[64], mq_name[64];
    snprintf(shm_name, sizeof shm_name, "/gorr-shm-%d", getpid());
    snprintf(sem_name, sizeof sem_name, "/gorr-sem-%d", getpid());
    snprintf(mq_name, sizeof mq_name, "/gorr-mq-%d", getpid());
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    ftruncate(fd, 4096);
    char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    sem_t *sem = sem_open(sem_name, O_CREAT | O_EXCL, 0600, 0);
    struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 64};
    mqd_t mq = mq_open(mq_name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    printf("shm fd=%d sem=%s mq=%d\n", fd, sem == SEM_FAILED ? "failed" : "ok", (int)mq);
    if (sem == SEM_FAILED || mq == (mqd_t)-1) { perror("open"); return 1; }
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(mem, 128, "child %d at %ld.%09ld", getpid(), (long)ts.tv_sec, ts.tv_nsec);
        sem_post(sem);
        mq_send(mq, "low", 3, 1);
        mq_send(mq, "high", 4, 9);
        _exit(0);
    }
    sem_wait(sem);
    printf("shared memory: %s\n", mem);
    waitpid(c, NULL, 0);
    struct mq_attr cur;
    mq_getattr(mq, &cur);
    printf("queue has %ld messages\n", cur.mq_curmsgs);
    char buf[64];
    unsigned prio;
    for (int i = 0; i < 2; i++) {
        ssize_t n = mq_receive(mq, buf, sizeof buf, &prio);
        printf("mq_receive %.*s prio=%u\n", (int)n, buf, prio);
    }
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 1000000;
    if (dl.tv_nsec >= 1000000000) { dl.tv_sec++; dl.tv_nsec -= 1000000000; }
    ssize_t n = mq_timedreceive(mq, buf, sizeof buf, &prio, &dl);
    printf("mq_timedreceive on empty=%zd\n", n);
    int sv;
    sem_getvalue(sem, &sv);
    printf("sem value=%d trywait=%d\n", sv, sem_trywait(sem));
    mq_close(mq);
    mq_unlink(mq_name);
    sem_close(sem);
    sem_unlink(sem_name);
    shm_unlink(shm_name);
    printf("EXIT-SUCCESS\n");
    return 0;
}
