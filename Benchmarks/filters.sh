#!/usr/bin/env bash
# Times jobgraph's built-in `filter` step against ImageMagick (`convert`) and libvips (`vips`) on a generated
# 24-megapixel photo-like image, side by side: seconds (median of --runs) and jobgraph's ratio to each.
#
#   Benchmarks/filters.sh [--runs 3] [--cases sepia,blur,resize,copy] [--formats jpeg,png] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_filters "$@"

# A machine may carry a stand-in called `convert` earlier on PATH: use Debian's ImageMagick by its full path,
# and install it when that is not ImageMagick.
convert=/usr/bin/convert
if ! "$convert" -version 2>/dev/null | grep -q ImageMagick; then apt_install imagemagick; fi
"$convert" -version 2>/dev/null | grep -q ImageMagick || die "$convert is not ImageMagick even after installing imagemagick"
command -v vips >/dev/null || apt_install libvips-tools
command -v vips >/dev/null || die "'vips' is still not on PATH after installing libvips-tools"
find_jobgraph "$skip_build"

note "jobgraph: $jobgraph; $("$convert" -version | head -n 1 | cut -d' ' -f2-3); $(vips --version)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/bench_filters.py" --jobgraph "$jobgraph" --convert "$convert" "${passed[@]}"
