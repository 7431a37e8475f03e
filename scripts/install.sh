#!/usr/bin/env bash
# Builds jobgraph in release, with the Swift runtime linked into the binary (--static-swift-stdlib), and
# installs under PREFIX (default ~/.local):
#   PREFIX/bin/jobgraph
#   PREFIX/share/bash-completion/completions/jobgraph
#   PREFIX/share/zsh/site-functions/_jobgraph
#   PREFIX/share/fish/vendor_completions.d/jobgraph.fish
#   PREFIX/share/man/man1/jobgraph.1 and a page per command (jobgraph.run.1 …), from swift-argument-parser's
#     generate-manual plugin; skipped with a warning when the plugin cannot be built here.
# The binary then needs only Debian's shared libraries it names (libyaml, libpng, libturbojpeg, libsqlite3,
# and libcurl, which it loads when a download starts), no Swift toolchain:
#   bash scripts/install.sh "$HOME/.local" && jobgraph run examples/hello.yaml
# Run from anywhere; builds in the repository's .build folder.
set -euo pipefail

prefix="${1:-$HOME/.local}"
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."

bash .ci/install-deps
echo "building jobgraph (release, static Swift runtime); the first build takes a few minutes" >&2
swift build -c release --static-swift-stdlib --product jobgraph
binary="$(swift build -c release --static-swift-stdlib --show-bin-path)/jobgraph"

install -d "$prefix/bin" "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
    "$prefix/share/fish/vendor_completions.d" "$prefix/share/man/man1"
install -m 0755 "$binary" "$prefix/bin/jobgraph"
"$binary" --generate-completion-script bash > "$prefix/share/bash-completion/completions/jobgraph"
"$binary" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_jobgraph"
"$binary" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/jobgraph.fish"

# The man pages: the plugin builds its own generate-manual tool and asks the jobgraph it builds for its help.
manuals=".build/plugins/GenerateManual/outputs/jobgraph"
rm -rf "$manuals"
if swift package plugin generate-manual --multi-page >&2 && ls "$manuals"/*.1 >/dev/null 2>&1; then
    install -m 0644 "$manuals"/*.1 "$prefix/share/man/man1/"
else
    echo "warning: swift-argument-parser's generate-manual plugin did not produce man pages here; none installed" >&2
fi

echo "installed $prefix/bin/jobgraph ($("$prefix/bin/jobgraph" --version))" >&2
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to your PATH to run it as jobgraph" >&2 ;; esac
