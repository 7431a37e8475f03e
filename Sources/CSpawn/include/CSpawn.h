#ifndef JOBGRAPH_CSPAWN_H
#define JOBGRAPH_CSPAWN_H

// Starts a child process the way posix_spawn does (a clone that shares this process's memory until the
// child's exec), without what glibc's posix_spawn adds per child and jobgraph does not need: a stack
// mapped and unmapped for every child, and file actions replayed from a list. See Spawn.c for why.

#include <sys/types.h>

typedef struct {
    /// The program to run; not searched for in PATH.
    const char *path;
    /// NULL-terminated.
    char *const *arguments;
    /// NULL-terminated `NAME=value` entries.
    char *const *environment;
    /// Becomes the child's standard output, and its standard error unless `errors` is given.
    int output;
    /// -1, or a descriptor numbered 3 or above that becomes the child's standard error.
    int errors;
    /// An open descriptor numbered 3 or above that becomes the child's standard input.
    int input;
    /// The child's working directory; NULL keeps this process's.
    const char *directory;
    /// The child's niceness, set before its exec; 0 keeps the calling thread's.
    int niceness;
    /// Nonzero: descriptors 0–2 stay this process's own (an interactive task), and `output` and `input`
    /// are not used.
    int inherits_standard_descriptors;
    /// A terminal descriptor whose foreground process group the child's new group becomes before its exec,
    /// or -1 to leave the terminal alone.
    int terminal;
} jobgraph_spawn_request;

/// Starts `request->path` in a new process group of its own, with an empty signal mask, every signal at its
/// default action, descriptors 0–2 as the request says and no other descriptor open.
///
/// Returns 0 and stores the child's id in `*child`, or returns an errno value: from clone, or from the
/// child's setup or its execve (in which case the child has already been reaped). `*niceness_failed` is
/// then 1 when it was setting the niceness that failed, else 0.
int jobgraph_spawn(const jobgraph_spawn_request *request, pid_t *child, int *niceness_failed);

#endif
