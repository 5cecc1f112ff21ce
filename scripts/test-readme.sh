#!/usr/bin/env bash
# test-readme.sh - the top-level README's recipes, run as written on a fresh clone of the committed tree,
# the way a newcomer would: the demo, `cmake --install` right after it, the plain build-and-install
# recipe, then the C example (the README's own block) built with pkg-config against the installed folder
# and run. The blocks are taken from README.md itself (scripts/readme_blocks.py), so the README cannot
# drift from what is tested. CUDAARCHS=90 (the README mentions it) builds the kernels for one GPU
# architecture to keep this short; CUDOT_README_CUDAARCHS overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 scripts/readme_blocks.py README.md "$work/blocks" quickstart.sh=./scripts/demo.sh \
  install.sh="cmake --install build --prefix" app.c="int main(void)" pkg-config.sh="pkg-config --cflags --libs cudot"
git clone -q "$root" "$work/cudot"
export HOME=$work/home CUDAARCHS=${CUDOT_README_CUDAARCHS:-90}
mkdir -p "$HOME"
cd "$work/cudot"

echo "==== README: the quick start's demo (scripts/demo.sh)"
grep -v 'scripts/test.sh' "$work/blocks/quickstart.sh" > "$work/blocks/demo-only.sh"  # test.sh is this run
bash -eo pipefail "$work/blocks/demo-only.sh" > "$work/demo.log" 2>&1 || { cat "$work/demo.log"; exit 1; }
tail -3 "$work/demo.log"

echo "==== README: cmake --install right after the demo"
cmake --install build --prefix "$work/after-demo" > "$work/install-after-demo.log" 2>&1 ||
  { cat "$work/install-after-demo.log"; echo "test-readme.sh: install after demo.sh FAILED"; exit 1; }
test -f "$work/after-demo/include/cudot.h"

echo "==== README: build and install, then the C example through pkg-config"
cp "$work/blocks/app.c" app.c
cat "$work/blocks/install.sh" "$work/blocks/pkg-config.sh" > "$work/blocks/recipe.sh"
bash -eo pipefail "$work/blocks/recipe.sh" > "$work/recipe.log" 2>&1 || { cat "$work/recipe.log"; exit 1; }
tail -2 "$work/recipe.log"
grep -q '^dot = 1000000.0 (strategy ' "$work/recipe.log" || { echo "test-readme.sh: the example printed no dot"; exit 1; }
echo "test-readme.sh: the README's recipes work as written"
