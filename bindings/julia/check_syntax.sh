#!/usr/bin/env bash
# Syntax check of the Julia binding: every .jl file under bindings/julia must parse with
# tree-sitter-julia (no ERROR or MISSING node). No Julia runtime is involved: this does NOT run
# the code, it only proves that it parses.
#
# usage: bindings/julia/check_syntax.sh [PATH ...]     (default: all of bindings/julia)
#
# The parser (npm packages tree-sitter and tree-sitter-julia, versions pinned by
# syntax-check/package-lock.json) is installed into bindings/julia/.syntax-check/, which is not
# tracked. Both packages ship prebuilt N-API binaries for linux-x64 (and others); on a platform
# without one, npm/node-gyp builds them from source (needs python3, make and a C++ compiler).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
spec="$here/syntax-check"
tools="$here/.syntax-check"

need_install=1
if [[ -f "$tools/package-lock.json" && -d "$tools/node_modules/tree-sitter-julia" ]] &&
   cmp -s "$spec/package-lock.json" "$tools/package-lock.json" &&
   cmp -s "$spec/package.json" "$tools/package.json"; then
    need_install=0
fi

if [[ $need_install == 1 ]]; then
    echo "installing the pinned tree-sitter parser into $tools" >&2
    rm -rf "$tools"
    mkdir -p "$tools"
    cp "$spec/package.json" "$spec/package-lock.json" "$tools/"
    npm ci --prefix "$tools" --no-audit --no-fund --loglevel=error >&2
fi

# Make sure the native parts load; if no prebuilt binary fits this machine, build them.
if ! node -e "require('$tools/node_modules/tree-sitter'); require('$tools/node_modules/tree-sitter-julia')" 2>/dev/null; then
    echo "no usable prebuilt tree-sitter binary here: building from source (node-gyp)" >&2
    npm rebuild --prefix "$tools" --foreground-scripts tree-sitter tree-sitter-julia >&2
fi

if [[ $# -eq 0 ]]; then
    set -- "$here"
fi
exec node "$spec/parse.js" "$tools/node_modules" "$@"
