# Sourced by the fake Slurm commands: their state folder and the log of calls.
D=${FAKE_SLURM_DIR:?FAKE_SLURM_DIR is not set}
mkdir -p "$D/jobs"
log_call() {
    line=$(basename "$0")
    for argument in "$@"; do line="$line $argument"; done
    printf '%s\n' "$line" >>"$D/calls.log"
}
# Writes a job's state: renamed into place, so that squeue and sacct never read a state file half written.
set_state() { # JOB STATE
    printf '%s\n' "$2" >"$D/jobs/.$1.$$" && mv -f "$D/jobs/.$1.$$" "$D/jobs/$1"
}
# Prints a new job id. Callers are one at a time (salloc once, sbatch from one queue), but a lock keeps
# the counter right anyway.
new_id() {
    while ! mkdir "$D/id.lock" 2>/dev/null; do sleep 0.01; done
    id=$(cat "$D/next-id" 2>/dev/null || echo 100)
    echo $((id + 1)) >"$D/next-id"
    rmdir "$D/id.lock"
    echo "$id"
}
