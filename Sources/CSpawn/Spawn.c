// Why not glibc's posix_spawn: per child it maps a fresh stack for the clone and unmaps it afterwards. In a
// process with several threads the unmap flushes the other CPUs' TLBs, and the child faults the new stack
// in. perf (10,000 `touch` tasks, 2 at a time) put those at 14 µs a task on the spawning thread, plus 2 µs
// for the file action that opens /dev/null in every child. Here the child runs on a buffer in the caller's
// stack frame, which is safe because CLONE_VFORK suspends the caller until the child has exec'd or exited
// (musl's posix_spawn does the same), and standard input comes from a descriptor opened once.
//
// The child shares this process's memory until its exec, so it makes raw system calls only (no errno-free
// wrappers exist in glibc's public API; errno is the suspended caller's and nobody reads it meanwhile) and
// is built without sanitizer instrumentation: ThreadSanitizer's bookkeeping lives in the caller's thread
// state, which the child would otherwise change. `__clone` is glibc's clone under the name
// ThreadSanitizer does not intercept; its `clone` interceptor would run fork bookkeeping meant for a copy
// of the address space, not a share of it.

#define _GNU_SOURCE
#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern int __clone(int (*function)(void *), void *stack, int flags, void *argument, ...);

#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define UNINSTRUMENTED __attribute__((disable_sanitizer_instrumentation, noinline))
#endif
#endif
#ifndef UNINSTRUMENTED
#define UNINSTRUMENTED __attribute__((no_sanitize("thread", "address", "undefined"), noinline))
#endif

/// The kernel's `struct sigaction` as rt_sigaction takes it. Zeroed, it means SIG_DFL, no flags and an empty
/// mask on every architecture, whether or not its layout has a restorer field.
struct kernel_signal_action {
    uintptr_t fields[4];
};

/// Bytes in the kernel's signal mask (64 signals).
enum { KERNEL_SIGNAL_SET_SIZE = 8, HIGHEST_SIGNAL = 64, CHILD_STACK_SIZE = 32 * 1024 };

struct child_context {
    const jobgraph_spawn_request *request;
    volatile int error;
    volatile int niceness_failed;
};

UNINSTRUMENTED static void fail(struct child_context *context) {
    context->error = errno != 0 ? errno : EINVAL;
    syscall(SYS_exit, 127);
}

/// Makes `target` a copy of `source` that survives exec.
UNINSTRUMENTED static int move_descriptor(int source, int target) {
    if (source == target) return (int)syscall(SYS_fcntl, target, F_SETFD, 0);
    return (int)syscall(SYS_dup3, source, target, 0);
}

UNINSTRUMENTED static int run_child(void *argument) {
    struct child_context *context = argument;
    const jobgraph_spawn_request *request = context->request;

    // Every signal is blocked (the caller blocked them before the clone). Each gets its default action
    // before any is unblocked: a handler of this process must not run here, and "ignored" would survive the
    // exec. Both SIGKILL and SIGSTOP are left alone; the kernel refuses them.
    // Static and zero: a local would be cleared with memset, which ThreadSanitizer intercepts.
    static const struct kernel_signal_action default_action;
    for (int signal = 1; signal <= HIGHEST_SIGNAL; signal++) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        syscall(SYS_rt_sigaction, signal, &default_action, NULL, KERNEL_SIGNAL_SET_SIZE);
    }

    // Its own process group, so that one kill(-pgid) reaches its descendants too.
    if (syscall(SYS_setpgid, 0, 0) != 0) fail(context);
    if (request->terminal >= 0) {
        // The terminal's foreground, so that the program may read it and change its modes. Every signal is
        // still blocked here, so a background group's SIGTTOU does not stop it.
        pid_t group = (pid_t)syscall(SYS_getpid);
        if (syscall(SYS_ioctl, request->terminal, TIOCSPGRP, &group) != 0) fail(context);
    }
    if (!request->inherits_standard_descriptors) {
        // Output first: if this process runs with 0–2 closed, the pipe may hold one of those numbers, and
        // the errors and input descriptors are 3 or above by contract.
        if (move_descriptor(request->output, STDOUT_FILENO) < 0) fail(context);
        int errors = request->errors >= 0 ? request->errors : request->output;
        if (move_descriptor(errors, STDERR_FILENO) < 0) fail(context);
        if (move_descriptor(request->input, STDIN_FILENO) < 0) fail(context);
    }
    if (request->directory != NULL && syscall(SYS_chdir, request->directory) != 0) fail(context);
    // Linux keeps niceness per thread, and this child is a thread of its own: set here, before the exec, the
    // program runs niced from its first instruction, and the caller's thread keeps its own. Raising it needs
    // no privilege.
    if (request->niceness != 0 && syscall(SYS_setpriority, PRIO_PROCESS, 0, request->niceness) != 0) {
        context->niceness_failed = 1;
        fail(context);
    }
#ifdef SYS_close_range
    // Every descriptor this process opens is close-on-exec; this also closes any a library left open.
    // ENOSYS (kernels before 5.9) leaves that to close-on-exec.
    syscall(SYS_close_range, 3, ~0U, 0);
#endif
    uint64_t empty_mask = 0;
    if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, NULL, KERNEL_SIGNAL_SET_SIZE) != 0) fail(context);
    syscall(SYS_execve, request->path, request->arguments, request->environment);
    fail(context);
    return 127;
}

int jobgraph_spawn(const jobgraph_spawn_request *request, pid_t *child, int *niceness_failed) {
    struct child_context context = {.request = request, .error = 0, .niceness_failed = 0};
    *niceness_failed = 0;
    // Blocked in this thread, and so in the child, until the child has reset every action.
    uint64_t every_signal = ~(uint64_t)0, previous_mask = 0;
    if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &every_signal, &previous_mask, KERNEL_SIGNAL_SET_SIZE) != 0) return errno;

    _Alignas(64) char stack[CHILD_STACK_SIZE];
    int pid = __clone(run_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &context);
    int clone_error = errno;

    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous_mask, NULL, KERNEL_SIGNAL_SET_SIZE);
    if (pid < 0) return clone_error;
    if (context.error != 0) {
        *niceness_failed = context.niceness_failed;
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return context.error;
    }
    *child = pid;
    return 0;
}
