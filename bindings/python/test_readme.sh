#!/usr/bin/env bash
# test_readme.sh - run README.md's "Install" section as a newcomer would paste it: its ```sh blocks, in
# order, in one shell, with only the two placeholders filled in (/path/to/cudot: a copy of this folder
# in a temporary one; /path/to/build/libcudot.so: CUDOT_LIBRARY). The recipe builds the wheel with
# /usr/bin/python3, installs it offline into a venv and runs the first example from outside the source
# tree; the example must print its result. Then the same example run from the source folder must fail
# with a LibraryLoadError that says the source tree was imported. Called by test.sh; writes only to a
# temporary folder, removed at the end. Needs /usr/bin/python3 with build, venv, setuptools, wheel and
# numpy (Debian: python3-build python3-venv python3-setuptools python3-wheel python3-numpy): the README
# names that interpreter, so PYTHON does not change it; without them the check says NOT RUN and passes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CUDOT_LIBRARY:?set CUDOT_LIBRARY to the library the recipe bundles}"
library=$(realpath "$CUDOT_LIBRARY")
readme=${CUDOT_README:-$here/README.md}  # another file only to check this script itself

if ! /usr/bin/python3 -c 'import build, venv, setuptools, wheel, numpy' 2>/dev/null; then
  echo "test_readme.sh: NOT RUN: /usr/bin/python3 lacks build, venv, setuptools, wheel or numpy (Debian:" \
       "python3-build python3-venv python3-setuptools python3-wheel python3-numpy)"
  exit 0
fi
platform=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_platform())')
if [[ $platform != linux-x86_64 ]]; then  # the recipe names the wheel file, tagged linux_x86_64
  echo "test_readme.sh: NOT RUN: the README's wheel is the linux-x86_64 one, this is $platform"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The fenced ```sh blocks between "## Install" and the next "## " heading, in order.
awk '/^## / { install = /^## Install/ }
     install && /^```/ { if (block) block = 0; else if (/^```sh *$/) block = 1; next }
     install && block' "$readme" > "$work/recipe.sh"
if [[ ! -s $work/recipe.sh ]]; then
  echo "test_readme.sh: no \`\`\`sh block in the Install section of $readme" >&2
  exit 1
fi
# Every build command must name /usr/bin/python3: a bare python3 may be one without the build module.
if grep -nE '(^|[^/[:alnum:]_.-])python3?( |$)' "$work/recipe.sh" >&2; then
  echo "test_readme.sh: the recipe runs a bare python3 (line above); name /usr/bin/python3" >&2
  exit 1
fi

mkdir -p "$work/cudot/bindings/python"
source_tree=$work/cudot/bindings/python
cp -r "$here/cudot" "$here/setup.py" "$here/pyproject.toml" "$source_tree/"
rm -rf "$source_tree"/cudot/__pycache__ "$source_tree"/cudot/libcudot.so.*  # as a fresh checkout has it
sed -e "s|/path/to/build/libcudot.so|$library|g" -e "s|/path/to/cudot|$work/cudot|g" "$work/recipe.sh" > "$work/run.sh"
if grep -n '/path/to' "$work/run.sh" >&2; then
  echo "test_readme.sh: the recipe has a placeholder this script does not fill" >&2
  exit 1
fi

# A user's shell: CUDOT_LIBRARY and PYTHONPATH unset, started in some other folder.
cd "$work"
if ! env -u CUDOT_LIBRARY -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 timeout 60 bash -e "$work/run.sh" \
     > "$work/log" 2>&1; then
  cat "$work/run.sh" "$work/log" >&2
  echo "test_readme.sh: the README's install recipe failed (script and output above)" >&2
  exit 1
fi
result=$(tail -n 1 "$work/log")
if ! [[ $result =~ ^3000\.0\ [a-z]+\ 1\.[0-9]+\.[0-9]+$ ]]; then
  cat "$work/log" >&2
  echo "test_readme.sh: the first example printed '$result', not '3000.0 <memory> <version>'" >&2
  exit 1
fi
echo "test_readme.sh: the README's install recipe ran; the first example printed: $result"

# The trap the README warns of: the same example from the source folder imports the source tree's cudot/.
if /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libcudot.so.1")' 2>/dev/null; then
  echo "test_readme.sh: the system has a libcudot.so.1 of its own: the run from the source folder is not checked"
  exit 0
fi
example=$(awk '/<<.EOF.$/ { on = 1; next } /^EOF$/ { on = 0 } on' "$work/recipe.sh")
if (cd "$source_tree" && env -u CUDOT_LIBRARY -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$work/nowhere" \
      venv/bin/python - <<<"$example" > "$work/shadowed" 2>&1); then
  cat "$work/shadowed" >&2
  echo "test_readme.sh: the example ran from the source folder; it should have imported the source tree" >&2
  exit 1
fi
for expected in "LibraryLoadError" "imported from $source_tree/cudot" "source tree" "run from another folder"; do
  if ! grep -qF "$expected" "$work/shadowed"; then
    cat "$work/shadowed" >&2
    echo "test_readme.sh: from the source folder, the error above does not say '$expected'" >&2
    exit 1
  fi
done
echo "test_readme.sh: from the source folder the example fails as the README says: $(tail -n 1 "$work/shadowed")"
