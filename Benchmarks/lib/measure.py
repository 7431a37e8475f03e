"""Runs one command and measures its wall time (perf_counter) and, on request, its peak memory."""

import os
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass


@dataclass
class Measurement:
    seconds: float        # wall time, from spawn to exit
    peak_rss_mb: float    # the command's peak resident set (GNU time's %M), MiB; 0 unless asked for
    status: int           # exit status; negative: killed by that signal
    timed_out: bool
    stderr_tail: str      # the last lines it wrote to stderr, to explain a failure
    stdout: str           # what it printed, when asked to keep it


TIME = "/usr/bin/time"


def measure(command, cwd, timeout=600.0, keep_stdout=False, peak_rss=False, environment=None):
    """Runs `command` in `cwd`, stdout discarded unless `keep_stdout`; returns its Measurement.
    `environment`: variables set for the command on top of this process's.

    With `peak_rss`, the command runs under /usr/bin/time. Its rusage cannot come from this process's
    own wait4: Linux counts the parent's memory before exec into the child's ru_maxrss, and this
    Python process may hold a large generated graph; GNU time is small.
    """
    stderr_path = os.path.join(cwd, ".bench-stderr")
    stdout_path = os.path.join(cwd, ".bench-stdout")
    rss_path = os.path.join(cwd, ".bench-rss")
    if peak_rss:
        command = [TIME, "-f", "%M", "-o", rss_path] + list(command)
    with open(stderr_path, "wb") as stderr, open(stdout_path if keep_stdout else os.devnull, "wb") as stdout:
        start = time.perf_counter()
        # A session of its own, so a timeout kills the whole process group.
        process = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=stderr, start_new_session=True,
                                   env=dict(os.environ, **environment) if environment else None)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        process.wait()
        seconds = time.perf_counter() - start
        timer.cancel()
    with open(stderr_path, "rb") as stderr:
        tail = stderr.read()[-2000:].decode("utf-8", "replace")
    os.remove(stderr_path)
    kept = ""
    if keep_stdout:
        with open(stdout_path, "rb") as output:
            kept = output.read().decode("utf-8", "replace")
        os.remove(stdout_path)
    rss_mb = 0.0
    if peak_rss:
        try:
            with open(rss_path, encoding="utf-8") as report:
                # GNU time writes "Command exited with non-zero status N" before the figure when it fails.
                rss_mb = int(report.read().split()[-1]) / 1024.0
            os.remove(rss_path)
        except (OSError, IndexError, ValueError):
            pass  # killed before GNU time could report: the timeout already marks this run

    return Measurement(seconds, rss_mb, process.returncode, timed_out.is_set(), tail, kept)


def median(values):
    return statistics.median(values) if values else float("nan")


def scratch_folder(prefix, parent=None):
    """A new folder for a benchmark's files: under `parent` when given, else in /dev/shm when that is a
    writable tmpfs, else the system's temporary folder.

    Why memory by default: every run deletes its 10,000 outputs and creates them again, and ext4 then
    spends most of each file creation in its inode allocator skipping the inodes just deleted
    (`recently_deleted` in a kernel profile). That cost fell on whichever tool ran next and swamped the
    tools' own differences; on tmpfs the figures measure the tools.
    """
    import tempfile
    if parent is None and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        parent = "/dev/shm"
    if parent is not None:
        os.makedirs(parent, exist_ok=True)  # `--dir` may name a folder that does not exist yet
    return tempfile.mkdtemp(prefix=prefix, dir=parent)
