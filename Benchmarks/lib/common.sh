# Shared by the benchmark scripts: option parsing, messages, installing the peers, building jobgraph in
# release. Source it; it expects `root` to be the repository root.

die() { echo "${0##*/}: $*" >&2; exit 2; }
note() { echo "== $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        die "need root (or sudo) to run: $*"; fi
}

apt_install() {
    command -v apt-get >/dev/null || die "apt-get not found: install the Debian package(s) $* by hand"
    note "installing $* with apt-get"
    # The package lists may be missing or stale on a fresh machine: update once, then retry.
    as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null 2>&1 \
        || { as_root apt-get update -qq >/dev/null 2>&1; as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null; } \
        || die "could not install $* with apt-get"
}

need_python() {
    command -v python3 >/dev/null || apt_install python3
}

# The calling script's header comment (from its second line to the first line not starting with #).
script_usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

# parse_options MODULE "$@": parses the script's arguments with the parser of lib/MODULE.py (the one
# option parser, lib/options.py; MODULE `none` for a script with no options of its own), before anything
# slow, so a wrong option costs nothing. Sets skip_build (yes/no, from --no-build), passed (the arguments
# without --no-build, to hand on to the module) and opt_NAME for every option (`--size-mb` is
# opt_size_mb; lists comma-separated, flags yes/no). --help prints the usage and exits 0, a wrong option
# exits 2.
parse_options() {
    local module=$1 code
    shift
    need_python
    code=$(BENCH_SCRIPT=${0##*/} BENCH_USAGE=$(script_usage) \
        python3 "$root/Benchmarks/lib/options.py" shell "$module" "$@") || exit $?
    eval "$code"
}

is_go_task() { command -v task >/dev/null && task --help 2>&1 | grep -q "Taskfile"; }

# ensure_peers TOOL... (names or comma-separated lists; names other than the peers are skipped):
# installs whichever of ninja, make and task (go-task) is missing.
ensure_peers() {
    local tool
    for tool in ${*//,/ }; do
        case $tool in
        ninja) command -v ninja >/dev/null || apt_install ninja-build ;;
        make) command -v make >/dev/null || apt_install make ;;
        task)
            if ! is_go_task; then
                note "installing go-task with pip (package go-task-bin)"
                python3 -m pip install -q go-task-bin >/dev/null 2>&1 \
                    || python3 -m pip install -q --user go-task-bin >/dev/null \
                    || die "could not install go-task: pip install go-task-bin failed"
                PATH="$PATH:$(python3 -m site --user-base)/bin"
                hash -r
                # Another program called `task` (Taskwarrior) may sit earlier on PATH.
                is_go_task || die "pip installed go-task-bin, but the 'task' on PATH is not go-task ($(command -v task || echo none))"
            fi
            ;;
        *) continue ;;
        esac
        command -v "$tool" >/dev/null || die "'$tool' is still not on PATH after installing it"
    done
}

# Sets `jobgraph` to the binary to measure: $JOBGRAPH when set, else a fresh release build, linked as
# scripts/install.sh links what users install (--static-swift-stdlib): the Swift runtime and Foundation
# inside the binary. Linked against the toolchain's shared libraries instead, every run starts about 5 ms
# later (jobgraph --version: 14.0 against 8.8 ms, perf stat -r 20, 2026-11-29).
find_jobgraph() {
    local skip_build=$1
    if [[ -n ${JOBGRAPH:-} ]]; then
        jobgraph=$JOBGRAPH
    else
        command -v swift >/dev/null || die "swift is not on PATH: install the Swift 6 toolchain, or set JOBGRAPH=/path/to/jobgraph"
        if [[ $skip_build != yes ]]; then
            note "building jobgraph in release (.build-release)"
            (cd "$root" && swift build -c release --static-swift-stdlib --product jobgraph --scratch-path .build-release >&2) \
                || die "the release build of jobgraph failed (see above)"
        fi
        jobgraph="$(cd "$root" && swift build -c release --static-swift-stdlib --scratch-path .build-release --show-bin-path)/jobgraph"
    fi
    [[ -f $jobgraph && -x $jobgraph ]] \
        || die "no jobgraph binary at '$jobgraph': build it (swift build -c release --static-swift-stdlib --product jobgraph --scratch-path .build-release) or set JOBGRAPH"
}

# Which binaries are measured, and how busy the machine is.
note_tools() {
    note "jobgraph: ${jobgraph:--}; ninja $(ninja --version 2>/dev/null || echo -); $(make --version 2>/dev/null | sed -n 1p || echo make -); go-task $(task --version 2>/dev/null || echo -)"
    note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
}
