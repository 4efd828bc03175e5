// Tests System V IPC between parent and forked child: shmget/shmat shared memory, semget/semop semaphores (SETALL/GETALL of a set) and msgget/msgsnd/msgrcv queues.
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct msg {
    long mtype;
    char text[64];
};

int main(void) {
    int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    int mq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    if (shm < 0 || sem < 0 || mq < 0) { perror("ipc get"); return 1; }
    printf("ids: shm=%d sem=%d msq=%d\n", shm, sem, mq);
    long *mem = shmat(shm, NULL, 0);
    printf("shmat at %p\n", (void *)mem);
    semctl(sem, 0, SETVAL, 0);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        long *cm = shmat(shm, NULL, 0);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cm[0] = getpid();
        cm[1] = ts.tv_nsec;
        struct sembuf up = {0, 1, 0};
        semop(sem, &up, 1);
        for (int i = 0; i < 3; i++) {
            struct msg m = {.mtype = 1 + i};
            snprintf(m.text, sizeof m.text, "msg%d from %d", i, getpid());
            msgsnd(mq, &m, sizeof m.text, 0);
        }
        shmdt(cm);
        _exit(0);
    }
    struct sembuf down = {0, -1, 0};
    semop(sem, &down, 1);
    printf("child wrote pid=%ld (match %d) t=%ld\n", mem[0], mem[0] == c, mem[1]);
    struct msg m;
    ssize_t n = msgrcv(mq, &m, sizeof m.text, 3, 0); /* select by type */
    printf("msgrcv type 3: %zd '%s'\n", n, m.text);
    for (int i = 0; i < 2; i++) {
        msgrcv(mq, &m, sizeof m.text, 0, 0);
        printf("msgrcv any: type=%ld '%s'\n", m.mtype, m.text);
    }
    waitpid(c, NULL, 0);
    struct shmid_ds ds;
    shmctl(shm, IPC_STAT, &ds);
    printf("shm nattch=%lu cpid match=%d lpid match=%d\n", (unsigned long)ds.shm_nattch, ds.shm_cpid == getpid(), ds.shm_lpid == c);
    struct timespec to = {0, 1000000};
    int r = semtimedop(sem, &down, 1, &to);
    printf("semtimedop on zero semaphore=%d\n", r);
    int set = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
    unsigned short vals[3] = {(unsigned short)(mem[1] & 0x7fff), (unsigned short)(c & 0x7fff), 7}, got[3] = {0};
    semctl(set, 0, SETALL, vals);
    semctl(set, 0, GETALL, got);
    printf("GETALL of a 3-semaphore set: %u %u %u\n", got[0], got[1], got[2]);
    semctl(set, 0, IPC_RMID);
    shmdt(mem);
    shmctl(shm, IPC_RMID, NULL);
    semctl(sem, 0, IPC_RMID);
    msgctl(mq, IPC_RMID, NULL);
    printf("EXIT-SUCCESS\n");
    return 0;
}
