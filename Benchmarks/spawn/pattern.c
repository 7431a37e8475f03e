// What jobgraph's own CPU time costs a clean run, measured without jobgraph: N `touch out/tNNNNN`
// children, 2 at a time, started with the system calls jobgraph makes for each task (a pipe made
// non-blocking, posix_spawn with the same file actions and attributes, a pidfd, both watched by epoll,
// waitid, kill of the process group), and PRE / POST microseconds of busy CPU work per task before and
// after each spawn, standing in for a runner's own work. Prints the wall time in seconds.
//
//   cc -O2 -o /tmp/pattern Benchmarks/spawn/pattern.c
//   mkdir -p /dev/shm/p/out && cd /dev/shm/p && /tmp/pattern 10000 [PRE [POST]]
//
// With PRE = POST = 0 it runs as fast as the spawn floor (lib/spawn_floor.py): these system calls cost
// a run nothing measurable. Each microsecond of work per task, before or after the spawn alike, then
// adds about 12 ms to 10,000 tasks on a 2-core machine (Benchmarks/README.md, "Latest figures").
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void busy(int microseconds) {
    if (microseconds <= 0) return;
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    while ((now.tv_sec - start.tv_sec) * 1e6 + (now.tv_nsec - start.tv_nsec) / 1e3 < microseconds);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: pattern N [PRE [POST]]\n"); return 2; }
    int count = atoi(argv[1]), jobs = 2;
    int pre = argc > 2 ? atoi(argv[2]) : 0, post = argc > 3 ? atoi(argv[3]) : 0;
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    int pidfds[2] = {-1, -1}, outputs[2] = {-1, -1}, pids[2] = {0, 0};
    int next = 0, running = 0, done = 0, failed = 0;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (done < count) {
        while (running < jobs && next < count) {
            int slot = pids[0] == 0 ? 0 : 1;
            busy(pre);
            char path[32];
            snprintf(path, sizeof path, "out/t%05d", next);
            char *arguments[] = {"touch", path, NULL};
            int pipe_ends[2];
            if (pipe2(pipe_ends, O_CLOEXEC) != 0) { perror("pipe2"); return 1; }
            fcntl(pipe_ends[0], F_SETFL, fcntl(pipe_ends[0], F_GETFL) | O_NONBLOCK);
            posix_spawn_file_actions_t actions;
            posix_spawn_file_actions_init(&actions);
            posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], 1);
            posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], 2);
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
            posix_spawn_file_actions_addclosefrom_np(&actions, 3);
            posix_spawnattr_t attributes;
            posix_spawnattr_init(&attributes);
            posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            posix_spawnattr_setpgroup(&attributes, 0);
            sigset_t empty, all;
            sigemptyset(&empty);
            sigfillset(&all);
            sigdelset(&all, SIGKILL);
            sigdelset(&all, SIGSTOP);
            posix_spawnattr_setsigmask(&attributes, &empty);
            posix_spawnattr_setsigdefault(&attributes, &all);
            pid_t pid;
            if (posix_spawn(&pid, "/usr/bin/touch", &actions, &attributes, arguments, environ) != 0) { perror("posix_spawn"); return 1; }
            posix_spawn_file_actions_destroy(&actions);
            posix_spawnattr_destroy(&attributes);
            close(pipe_ends[1]);
            int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            struct epoll_event event = {.events = EPOLLIN, .data.u64 = (uint64_t)slot * 2};
            epoll_ctl(epoll, EPOLL_CTL_ADD, pipe_ends[0], &event);
            event.data.u64 = (uint64_t)slot * 2 + 1;
            epoll_ctl(epoll, EPOLL_CTL_ADD, pidfd, &event);
            pidfds[slot] = pidfd;
            outputs[slot] = pipe_ends[0];
            pids[slot] = pid;
            running++;
            next++;
            busy(post);
        }
        struct epoll_event events[8];
        int ready = epoll_wait(epoll, events, 8, -1);
        for (int index = 0; index < ready; index++) {
            int slot = (int)(events[index].data.u64 / 2), isExit = (int)(events[index].data.u64 % 2);
            if (pids[slot] == 0) continue;
            if (!isExit && outputs[slot] >= 0) {
                char buffer[4096];
                if (read(outputs[slot], buffer, sizeof buffer) == 0) {
                    epoll_ctl(epoll, EPOLL_CTL_DEL, outputs[slot], NULL);
                    close(outputs[slot]);
                    outputs[slot] = -1;
                }
            } else if (isExit && pidfds[slot] >= 0) {
                siginfo_t info;
                memset(&info, 0, sizeof info);
                waitid(P_PIDFD, pidfds[slot], &info, WEXITED | WNOHANG);
                if (info.si_pid != 0) {
                    if (info.si_code != CLD_EXITED || info.si_status != 0) failed++;
                    epoll_ctl(epoll, EPOLL_CTL_DEL, pidfds[slot], NULL);
                    close(pidfds[slot]);
                    pidfds[slot] = -1;
                    kill(-pids[slot], SIGKILL);
                }
            }
            if (pidfds[slot] == -1 && outputs[slot] == -1) {
                pids[slot] = 0;
                running--;
                done++;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%.3f\n", (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
    return failed ? 1 : 0;
}
