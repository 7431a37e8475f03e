# The terminal for Tests/tty scripts: a private tmux server, checks that poll its screen, a tally.
# Sourced, with `name` set to what the summary line calls the script (`tty board`).
# Usage in a script: `source "$(dirname "$0")/terminal.sh" "$@"`, then `start`, `wait_for`, `expect_*`, `finish`.

root=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(realpath "${1:-$root/.build/debug/jobgraph}")
if ! command -v tmux > /dev/null; then
    echo "$name: tmux is not installed; install it (apt-get install tmux)"
    exit 2
fi
if [ ! -x "$binary" ]; then
    echo "$name: no jobgraph executable at $binary; run swift build first"
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/jobgraph-tty-XXXXXX")
socket="jobgraph-tty-$$"
# A private server with a known configuration; a pane stays on screen after its command exits.
echo "set -g remain-on-exit on" > "$work/tmux.conf"
tmux() { command tmux -u -f "$work/tmux.conf" -L "$socket" "$@"; }
# The server inherits this script's signal mask, and a caller may have blocked SIGTERM (Foundation's
# Process passes on its thread's mask), so `kill-server` cannot be relied on: signal by process id.
# jobgraph itself reads SIGINT whatever the mask, so a run a failed check left waiting is stopped too.
cleanup() {
    local server socket_path pane
    server=$(tmux display-message -p '#{pid}' 2> /dev/null)
    socket_path=$(tmux display-message -p '#{socket_path}' 2> /dev/null)
    for pane in $(tmux list-panes -a -F '#{?pane_dead,,#{pane_pid}}' 2> /dev/null); do
        kill -INT -- "-$pane" 2> /dev/null
    done
    if [ -n "$server" ]; then kill -KILL "$server" 2> /dev/null; fi
    if [ -n "$socket_path" ]; then rm -f "$socket_path"; fi
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
screen=""

capture() { screen=$(tmux capture-pane -p -t "$1"); }
# The screen and the scrollback above it. tmux (scroll-on-clear, on by default) moves the screen into the
# scrollback whenever it is erased from the top-left corner, as each redraw of a board drawn at the top
# does, so a permanent line printed with a redraw may sit just above the visible screen.
capture_all() { screen=$(tmux capture-pane -p -S - -t "$1"); }

# wait_for SESSION REGEX: polls the visible screen until a line matches.
wait_for() {
    local deadline=$((SECONDS + 20))
    while ((SECONDS < deadline)); do
        capture "$1"
        if grep -Eq -- "$2" <<< "$screen"; then return 0; fi
        sleep 0.05
    done
    return 1
}

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    printf 'FAIL: %s\n--- screen ---\n%s\n--- standard error ---\n%s\n--------------\n' \
        "$1" "$screen" "$(cat "$work/stderr.txt" 2> /dev/null)"
}
expect_wait() { if wait_for "$1" "$2"; then pass; else fail "$3"; fi; }
expect_line() { if grep -Eq -- "$1" <<< "$screen"; then pass; else fail "$2"; fi; }
expect_no_line() { if grep -Eq -- "$1" <<< "$screen"; then fail "$2"; else pass; fi; }

# start SESSION COMMAND: the pane stays open after jobgraph exits, so its last screen can be read.
# Standard error goes to a file: only standard output draws the board, and a sanitizer's reports (a
# `--sanitize=thread` build) would otherwise push the lines under test off the screen.
start() {
    tmux new-session -d -x 100 -y 30 -s "$1" -c "$work" "$2 2>> stderr.txt; echo \"jobgraph exited with \$?\""
}

# A ThreadSanitizer build of jobgraph writes its reports to standard error: any report is a failure, even
# one that did not change the exit status (TSAN_OPTIONS may have set `exitcode`).
expect_no_race() { if grep -q 'ThreadSanitizer' "$work/stderr.txt" 2> /dev/null; then fail "$1"; else pass; fi; }

finish() {
    screen=""
    expect_no_race "ThreadSanitizer reported nothing in jobgraph"
    echo "$name: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
