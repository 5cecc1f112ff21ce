#!/usr/bin/env bash
# test_wheel.sh - the binding as a user installs it: build the wheel with the library named by CUDOT_LIBRARY
# bundled, pip-install it offline into a fresh venv, and run the test suite there with CUDOT_LIBRARY unset,
# from outside the source tree, checking that the library in use is the wheel's own copy. Called by
# test.sh; needs python3-build, python3-venv (and python3-setuptools, python3-wheel). Writes only to a
# temporary folder, removed at the end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-/usr/bin/python3}
: "${CUDOT_LIBRARY:?set CUDOT_LIBRARY to the library to bundle}"
CUDOT_LIBRARY=$(realpath "$CUDOT_LIBRARY")  # the build runs in another folder

for module in build venv setuptools wheel; do
  if ! "$python" -c "import $module" 2>/dev/null; then
    echo "test_wheel.sh: $python lacks the $module module (Debian: python3-build python3-venv python3-setuptools" \
         "python3-wheel)" >&2
    exit 2
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Build from a copy, so that setuptools' build/ and *.egg-info never land in the source tree.
mkdir "$work/src"
cp -r "$here/cudot" "$here/setup.py" "$here/pyproject.toml" "$work/src/"
if ! (cd "$work/src" && "$python" -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1); then
  cat "$work/build.log" >&2
  exit 1
fi
wheel=$(echo "$work"/dist/cudot-*.whl)
echo "test_wheel.sh: built $(basename "$wheel")"
if [[ "$wheel" == *-any.whl ]]; then
  echo "test_wheel.sh: a wheel that carries libcudot must be tagged for a platform, not 'any'" >&2
  exit 1
fi

"$python" -m venv --system-site-packages "$work/venv"  # numpy and pytest come from the system
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install --no-index --no-deps --disable-pip-version-check --quiet "$wheel"
site=$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
# When $python is itself a virtual environment (the GPU machine's is), --system-site-packages shows the
# base interpreter's packages, not that environment's numpy and pytest: name their folders in a .pth,
# which Python appends after the venv's own site-packages, so the wheel's cudot still comes first.
"$python" -c 'import os, numpy, pytest
for m in (numpy, pytest): print(os.path.dirname(os.path.dirname(m.__file__)))' | sort -u > "$site/test-host-packages.pth"
test -f "$site/cudot/py.typed" || { echo "test_wheel.sh: py.typed missing from $site/cudot" >&2; exit 1; }

# The tests run from a copy too: a folder with no cudot package in it, and no pyproject.toml whose pytest
# settings would put the source tree on sys.path.
cp -r "$here/tests" "$work/tests"
cd "$work"
env -u CUDOT_LIBRARY -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 CUDOT_TEST_EXPECT_LIBRARY="$site/cudot/libcudot.so.1" \
  "$venv_python" -c 'import cudot, sys; assert cudot.__file__.startswith(sys.argv[1]), cudot.__file__' "$site"
env -u CUDOT_LIBRARY -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 CUDOT_TEST_EXPECT_LIBRARY="$site/cudot/libcudot.so.1" \
  "$venv_python" -m pytest -q -rs -p no:cacheprovider -W error::pytest.PytestUnraisableExceptionWarning tests
