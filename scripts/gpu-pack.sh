#!/usr/bin/env bash
# gpu-pack.sh - pack a build folder for a GPU machine that has no compiler, Catch2, Go or OpenBLAS:
# everything CTest and scripts/gpu-check.sh need (binaries, libraries, CTest files, the Go test binary
# from `scripts/gpu-check.sh --prepare`), stripped, without object files, as one .tar.xz.
#
#   scripts/gpu-pack.sh BUILD_DIR OUT.tar.xz
# On the GPU machine, from the repository root:
#   mkdir -p BUILD_DIR && tar -xJf OUT.tar.xz -C BUILD_DIR && scripts/gpu-check.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Everything but compiler outputs and dependency files; keep CTest's own files and the export files
# the install test installs (CMakeFiles/Export).
(cd "$build" && find . \( -type f -o -type l \) ! -name '*.o' ! -name '*.d' ! -name '*.a' \
   \( ! -path './CMakeFiles/*' -o -path './CMakeFiles/Export/*' \) \
   ! -path '*/CMakeFiles/*.dir/*' ! -name '*.cubin' ! -name '*.fatbin*' -print0) |
  (cd "$build" && xargs -0 cp -P --parents -t "$work")
# Not csharp-gpu: its program is mono with the assemblies appended, which strip would cut off.
find "$work" -type f -perm -u+x ! -path "$work/csharp-gpu/*" -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-unneeded "$1" 2>/dev/null || true' _ {} \;
# The commit the build came from (a GPU machine's copy of the repository may carry an older .git).
git -C "$(dirname "$0")/.." describe --always --dirty > "$work/commit.txt" 2>/dev/null || echo unknown > "$work/commit.txt"
# A 32 MiB dictionary (-8): the statically linked programs share most of their bytes, which xz's default
# window is too small to see; the pack comes out about a third of the size.
XZ_OPT=${XZ_OPT:--8} tar -cJf "$out" -C "$work" .
echo "gpu-pack: $(du -h "$out" | cut -f1) in $out"
