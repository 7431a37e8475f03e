#!/usr/bin/env bash
# Times `download` steps against curl on loopback: one large file, then many small files 4 at a time
# (a `foreach` on a queue of 4 against `xargs -P 4 curl`). Prints the median of N runs and the ratios.
#
#   Benchmarks/download.sh [--size-mb 200] [--files 200] [--runs 3] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_download "$@"
keep=$opt_keep size_mb=$opt_size_mb files=$opt_files runs=$opt_runs
command -v curl >/dev/null || apt_install curl
find_jobgraph "$skip_build"

work=$(mktemp -d "${TMPDIR:-/tmp}/jobgraph-download-bench.XXXXXX")
server_pid=
cleanup() {
    # The server ends by the SIGTERM sent here, so its status is 143: not the script's (under `set -e`, the
    # last command of an `&&` list that fails would end the script with it).
    if [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; then wait "$server_pid" 2>/dev/null || true; fi
    if [[ $keep == yes ]]; then note "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

note "making the files: one of $size_mb MB, $files of 10 KB"
mkdir -p "$work/www/small"
head -c $((size_mb * 1000 * 1000)) /dev/urandom >"$work/www/large.bin"
for ((i = 1; i <= files; i++)); do head -c 10240 /dev/urandom >"$work/www/small/f$i.bin"; done

# http.server with sendfile, so that the server is not what is measured. HTTP/1.0, a connection per
# request: with keep-alive, its header and body writes meet delayed ACKs and stall each small request.
cat >"$work/serve.py" <<'PY'
import http.server, os, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
    def copyfile(self, source, outputfile):
        self.wfile.flush()
        self.connection.sendfile(source)
os.chdir(sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
coproc SERVER { exec python3 "$work/serve.py" "$work/www"; }
server_pid=$SERVER_PID
read -r -t 10 port <&"${SERVER[0]}" || die "the loopback server did not start"
base="http://127.0.0.1:$port"

names=$(for ((i = 1; i <= files; i++)); do printf 'f%d, ' "$i"; done)
cat >"$work/large.yaml" <<EOF
version: 1
tasks:
  fetch:
    download: {url: "$base/large.bin", to: out/large.bin}
EOF
cat >"$work/small.yaml" <<EOF
version: 1
queues:
  downloads: {max_concurrent: 4}
tasks:
  fetch:
    foreach: [${names%, }]
    download: {url: "$base/small/{{ item }}.bin", to: "out/{{ item }}.bin"}
    queue: downloads
EOF

fresh() { rm -rf "$work/out" "$work/.jobgraph"; mkdir -p "$work/out"; }
seconds() { # command...: prints the wall-clock seconds it took; fails if it fails
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>"$work/last-error" || { cat "$work/last-error" >&2; die "failed: $*"; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.3f}')"
}
jobgraph_large() { "$jobgraph" run "$work/large.yaml" --jobs 4 --progress plain; }
jobgraph_small() { "$jobgraph" run "$work/small.yaml" --jobs 4 --progress plain; }
curl_large() { curl -sSf -o "$work/out/large.bin" "$base/large.bin"; }
curl_small() {
    for ((i = 1; i <= files; i++)); do echo "f$i"; done \
        | xargs -P 4 -I{} curl -sSf -o "$work/out/{}.bin" "$base/small/{}.bin"
}
check() { # what: the downloads must equal the served files
    case $1 in
    large) cmp -s "$work/out/large.bin" "$work/www/large.bin" || die "$2: out/large.bin differs from the served file" ;;
    small) for ((i = 1; i <= files; i++)); do
            cmp -s "$work/out/f$i.bin" "$work/www/small/f$i.bin" || die "$2: out/f$i.bin differs from the served file"
        done ;;
    esac
}

note "jobgraph: $jobgraph; $(curl --version | head -n 1 | cut -d' ' -f1-2)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
declare -A times
for ((run = 1; run <= runs; run++)); do
    for case in large small; do
        for tool in jobgraph curl; do
            fresh
            times[$case.$tool]+="$(seconds "${tool}_$case") "
            check "$case" "$tool"
        done
    done
done

python3 "$root/Benchmarks/lib/bench_download.py" table "$size_mb" "$files" \
    "${times[large.jobgraph]}" "${times[large.curl]}" "${times[small.jobgraph]}" "${times[small.curl]}"
