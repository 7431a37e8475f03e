#!/usr/bin/env bash
# Times the output cache on a real C build: Brotli 1.2.1's 36 sources (its PyPI sdist) compiled and linked
# into its `brotli` tool as 37 cached tasks at --jobs 2. Measures a clean build (--no-cache), a fresh clone
# restoring from a warm local cache, a fresh clone with an empty local cache restoring from nginx (WebDAV,
# on 127.0.0.1), and one task of 1,000 small output files restored from nginx. Checks every restore is
# byte-identical to the build it came from. Prints the medians of N runs.
#
#   Benchmarks/output-cache.sh [--runs 3] [--jobs 2] [--files 1000] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_cache "$@"
keep=$opt_keep runs=$opt_runs jobs=$opt_jobs files=$opt_files
[[ -x /usr/sbin/nginx ]] || apt_install nginx-light
command -v cc >/dev/null || apt_install gcc
find_jobgraph "$skip_build"
note_tools

work=$(mktemp -d "${TMPDIR:-/tmp}/jobgraph-cache-bench.XXXXXX")
nginx_pid=
cleanup() {
    if [[ -n $nginx_pid ]] && kill "$nginx_pid" 2>/dev/null; then wait "$nginx_pid" 2>/dev/null || true; fi
    if [[ $keep == yes ]]; then note "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

note "fetching Brotli 1.2.1's sdist with pip"
python3 -m pip download -q --no-deps --no-binary :all: brotli==1.2.1 -d "$work/sdist" >/dev/null \
    || die "pip could not download brotli==1.2.1"
tar -xzf "$work/sdist/brotli-1.2.1.tar.gz" -C "$work/sdist"
mkdir -p "$work/source"
cp -r "$work/sdist/brotli-1.2.1/c" "$work/source/"
python3 "$root/Benchmarks/lib/bench_cache.py" pipeline "$work/source" >"$work/source/p.yaml"
{
    echo "version: 1"
    echo "tasks:"
    echo "  many:"
    echo "    cache: true"
    echo "    outputs: [many]"
    echo "    run: mkdir -p many && for i in \$(seq $files); do echo \$i > many/f\$i.txt; done"
} >"$work/many.yaml"

mkdir -p "$work/nginx/www" "$work/nginx/temp" "$work/nginx/logs"
chmod 755 "$work" "$work/nginx"
chmod 777 "$work/nginx/www" "$work/nginx/temp"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/nginx/nginx.conf" <<NGINX
daemon off;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/nginx/temp;
    server {
        listen 127.0.0.1:$port;
        root $work/nginx/www;
        client_max_body_size 0;
        location / {
            dav_methods PUT DELETE MKCOL;
            create_full_put_path on;
            dav_access user:rw group:rw all:rw;
        }
    }
}
NGINX
/usr/sbin/nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 100); do [[ -e $work/nginx/nginx.pid ]] && break; sleep 0.05; done
[[ -e $work/nginx/nginx.pid ]] || die "nginx did not start: $(cat "$work/nginx/logs/error.log")"

# timed FOLDER ARGS...: runs jobgraph in FOLDER, prints its wall seconds; fails on a failed run.
timed() {
    local folder=$1 start end
    shift
    start=$(date +%s.%N)
    (cd "$folder" && "$jobgraph" run p.yaml --jobs "$jobs" --progress plain "$@" >"$folder.out" 2>&1) \
        || die "jobgraph failed in $folder: $(tail -5 "$folder.out")"
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.4f}')"
}
# clone NAME [PIPELINE]: a fresh folder with the sources (or the given pipeline), as a new clone has.
clone() {
    rm -rf "$work/$1"
    if [[ -n ${2:-} ]]; then mkdir -p "$work/$1" && cp "$2" "$work/$1/p.yaml"; else cp -r "$work/source" "$work/$1"; fi
    echo "$work/$1"
}
# same A B: every output of folder B is byte-identical to A's.
outputs() { (cd "$1" && find . -type f \( -path './obj/*' -o -path './bin/*' -o -path './many/*' \) | sort); }
same() {
    local f
    for f in $(outputs "$1"); do cmp -s "$1/$f" "$2/$f" || die "$2/$f differs from $1/$f"; done
    [[ $(outputs "$1" | wc -l) -gt 0 ]] || die "nothing built in $1"
}
restored_count() { grep -c -- "-> restored" "$1.out" || true; }

clean=() local_=() remote=() small=()
for run in $(seq "$runs"); do
    note "run $run of $runs"
    clean+=("$(timed "$(clone clean)" --no-cache)")
    # The build that fills both caches, untimed.
    built=$(clone built)
    timed "$built" --cache-dir "$work/local-$run" --remote-cache "http://127.0.0.1:$port/r$run" >/dev/null
    folder=$(clone local)
    local_+=("$(timed "$folder" --cache-dir "$work/local-$run")")
    same "$built" "$folder"
    [[ $(restored_count "$folder") == 37 ]] || die "the local cache restored $(restored_count "$folder") of 37 tasks"
    folder=$(clone remote)
    remote+=("$(timed "$folder" --cache-dir "$work/empty-$run" --remote-cache "http://127.0.0.1:$port/r$run")")
    same "$built" "$folder"
    [[ $(restored_count "$folder") == 37 ]] || die "the remote cache restored $(restored_count "$folder") of 37 tasks"
    many=$(clone many-built "$work/many.yaml")
    timed "$many" --cache-dir "$work/many-local-$run" --remote-cache "http://127.0.0.1:$port/m$run" >/dev/null
    folder=$(clone many "$work/many.yaml")
    small+=("$(timed "$folder" --cache-dir "$work/many-empty-$run" --remote-cache "http://127.0.0.1:$port/m$run")")
    same "$many" "$folder"
    [[ $(restored_count "$folder") == 1 ]] || die "the task of $files files was not restored from the remote"
done
python3 "$root/Benchmarks/lib/bench_cache.py" table "${clean[*]}" "${local_[*]}" "${remote[*]}" "${small[*]}"
