#!/usr/bin/env bash
# Drives `jobgraph run` in a real terminal, a detached tmux session, and checks the tasks that use it
# (docs/pipeline.md, "Interactive tasks"): an interactive task reads the keyboard as the terminal's
# foreground process group while the board steps aside; a prompt runs its task on `y`, fails it on any
# other answer, and Ctrl-C at a prompt or in an interactive task stops the run with exit status 130.
#
#   Tests/tty/console.sh [path/to/jobgraph]      # default: .build/debug/jobgraph
#
# Prints "tty console: N passed, M failed" and exits non-zero if anything failed. Every wait polls the
# screen, with a 20 s hang guard.
set -uo pipefail

name="tty console"
source "$(dirname "$0")/terminal.sh" "$@"

cat > "$work/pipeline.yaml" << 'YAML'
version: 1
tasks:
  build: {run: "echo built"}
  ask:
    interactive: true
    needs: [build]
    run:
      - "[ -t 0 ] && [ \"$(ps -o tpgid= -p $$ | tr -d ' ')\" = \"$(ps -o pgid= -p $$ | tr -d ' ')\" ] && echo foreground"
      - "printf 'name? '; read name; echo \"hello, $name\""
  deploy:
    prompt: "Deploy to production?"
    needs: [build]
    run: "echo deploying now"
YAML

# 1. An interactive task has the keyboard, in the terminal's foreground, with the live board around it.
start interactive "'$binary' run pipeline.yaml ask"
expect_wait interactive '^name\?$' "the interactive task asks on the screen"
expect_line '^foreground$' "the interactive task's group has the terminal's foreground"
tmux send-keys -t interactive "Ada" Enter
expect_wait interactive '^jobgraph exited with ' "jobgraph ends once the interactive task has its answer"
expect_line '^hello, Ada$' "the interactive task read the keyboard, its output not prefixed"
expect_line '^jobgraph exited with 0$' "the run with an interactive task succeeds"
expect_line '^2 succeeded in [0-9.]+s$' "the summary follows the interactive task"

# 2. A prompt answered yes runs the task.
start yes "'$binary' run pipeline.yaml deploy"
expect_wait yes '^deploy: Deploy to production\? \[y/N\]$' "the prompt is asked on the terminal"
tmux send-keys -t yes "y" Enter
expect_wait yes '^jobgraph exited with ' "jobgraph ends after a yes"
expect_line '^jobgraph exited with 0$' "a prompt answered yes runs its task"
capture_all yes
expect_line 'deploying now' "the task ran after the yes"

# 3. Any other answer fails the task.
start no "'$binary' run pipeline.yaml deploy"
expect_wait no '^deploy: Deploy to production\? \[y/N\]$' "the prompt is asked again"
tmux send-keys -t no "nope" Enter
expect_wait no '^jobgraph exited with ' "jobgraph ends after a no"
expect_line '^jobgraph exited with 1$' "a declined prompt fails the run"
expect_line 'deploy failed: declined at the prompt' "the summary says the prompt was declined"

# 4. Ctrl-C at the prompt stops the run as Ctrl-C does anywhere.
start interrupt "'$binary' run pipeline.yaml deploy"
expect_wait interrupt '^deploy: Deploy to production\? \[y/N\]$' "the prompt waits for an answer"
tmux send-keys -t interrupt C-c
expect_wait interrupt '^jobgraph exited with ' "Ctrl-C at the prompt ends jobgraph"
expect_line '^jobgraph exited with 130$' "Ctrl-C at the prompt exits 130"

# 5. Ctrl-C in an interactive task, which has the foreground, stops the run too.
start interactive_interrupt "'$binary' run pipeline.yaml ask"
expect_wait interactive_interrupt '^name\?$' "the interactive task waits for its answer"
tmux send-keys -t interactive_interrupt C-c
expect_wait interactive_interrupt '^jobgraph exited with ' "Ctrl-C in an interactive task ends jobgraph"
expect_line '^jobgraph exited with 130$' "Ctrl-C in an interactive task exits 130"

finish
