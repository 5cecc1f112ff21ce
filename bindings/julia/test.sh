#!/usr/bin/env bash
# Checks of the Julia binding: the syntax check and the stdlib-only [deps] check always; the
# runtime tests only where a `julia` executable exists (none did where the binding was written).
#
#     bindings/julia/test.sh            (from any directory)
#
# The runtime tests need the C library: CUDOT_LIBRARY if set, else the first libcudot.so.1 found
# in a build*/ folder at the repository root.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

"$here/check_syntax.sh"
# Standard libraries only in [deps] (no registry needed to install); needs no Julia either.
/usr/bin/python3 "$here/check_deps.py" "$here/Project.toml"

if ! command -v julia >/dev/null 2>&1; then
    echo "julia not installed: runtime tests NOT run (syntax and [deps] checks only)"
    exit 0
fi

if [[ -z "${CUDOT_LIBRARY:-}" ]]; then
    for candidate in "$repo"/build*/libcudot.so.1; do
        if [[ -f "$candidate" ]]; then
            CUDOT_LIBRARY="$candidate"
            break
        fi
    done
fi
if [[ -z "${CUDOT_LIBRARY:-}" ]]; then
    echo "julia found, but no libcudot.so.1: build cudot (cmake) or set CUDOT_LIBRARY" >&2
    exit 1
fi
export CUDOT_LIBRARY
# No Pkg.instantiate: every dependency is a standard library (checked above), found without a
# manifest or a registry, so the tests run as an offline user's `using Cudot` does.
echo "running the Julia tests with CUDOT_LIBRARY=$CUDOT_LIBRARY"
julia --threads=2 --project="$here" "$here/test/runtests.jl"   # threads: the concurrency tests run in parallel
