#!/usr/bin/env bash
# Drives `jobgraph run` in a real terminal, a detached tmux session, and checks what a user sees there:
# the live board while tasks execute (tasks, elapsed times, counts), the screen once the run is over
# (the summary, nothing left of the board), and plain lines when TERM=dumb.
#
#   Tests/tty/board.sh [path/to/jobgraph]      # default: .build/debug/jobgraph
#
# Prints "tty board: N passed, M failed" and exits non-zero if anything failed. The tasks wait for a file
# this script creates once the board is on screen; every wait polls the screen, with a 20 s hang guard.
set -uo pipefail

name="tty board"
source "$(dirname "$0")/terminal.sh" "$@"

cat > "$work/pipeline.yaml" << 'YAML'
version: 1
tasks:
  alpha: {run: "until [ -e go ]; do sleep 0.02; done"}
  beta: {run: "until [ -e go ]; do sleep 0.02; done"}
  gamma: {needs: [alpha, beta], run: "echo gamma done"}
YAML

# 1. The live board, on a terminal tmux describes as TERM=screen.
start board "'$binary' run pipeline.yaml --jobs 2"
expect_wait board '^pipeline\.yaml: 0/3 done, 2 running, [0-9]+\.[0-9]s$' "the board's header counts 2 running of 3"
expect_line '^  alpha +default +[0-9]+\.[0-9]s$' "the board shows alpha executing with its elapsed time"
expect_line '^  beta +default +[0-9]+\.[0-9]s$' "the board shows beta executing with its elapsed time"
# With no event coming, the board's clocks still advance.
expect_wait board '^  alpha +default +([1-9][0-9]*|0\.[5-9])\.?[0-9]*s$' "alpha's elapsed time advances while it runs"
touch "$work/go"
expect_wait board '^jobgraph exited with ' "jobgraph ends once the tasks may finish"
expect_line '^jobgraph exited with 0$' "the run succeeds"
expect_line '^3 succeeded in [0-9.]+s$' "the summary is on screen"
expect_no_line 'done, [0-9]+ running' "no board header is left"
expect_no_line '^  (alpha|beta|gamma) +default' "no board row is left"
capture_all board
expect_line '^gamma \| gamma done$' "a task's output is printed for good"

# 2. TERM=dumb: plain lines, no board.
rm -f "$work/go"
touch "$work/go"
start dumb "TERM=dumb '$binary' run pipeline.yaml --jobs 2"
expect_wait dumb '^jobgraph exited with ' "jobgraph ends under TERM=dumb"
expect_line '^jobgraph exited with 0$' "the run succeeds under TERM=dumb"
expect_line '^\[ *[0-9]+\.[0-9]{2}s\] alpha  ready -> executing$' "plain transition lines under TERM=dumb"
expect_line '^\[ *[0-9]+\.[0-9]{2}s\] gamma  executing -> succeeded' "every transition has its line under TERM=dumb"
expect_line '^3 succeeded in [0-9.]+s$' "the summary under TERM=dumb"
expect_no_line 'done, [0-9]+ running' "no board under TERM=dumb"

finish
