#!/usr/bin/env bash
# test.sh - run the Python binding's tests and examples against the library named by CUDOT_LIBRARY, from
# the source tree; then test_readme.sh runs README.md's install recipe as written, and test_wheel.sh runs
# the same tests from a wheel (with that library bundled) installed in a temporary venv. Installs nothing
# outside temporary folders: needs python3 with numpy, pytest, build, venv, setuptools and wheel (Debian:
# python3-numpy python3-pytest python3-build python3-venv python3-setuptools python3-wheel). Set
# CUDOT_TEST_GPU=1 on a GPU machine so that GPU strategies reporting NO_DEVICE fail instead of being
# skipped. PYTHON overrides /usr/bin/python3 (not in test_readme.sh: the README names /usr/bin/python3).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-/usr/bin/python3}

if [[ -z "${CUDOT_LIBRARY:-}" ]]; then
  echo "test.sh: set CUDOT_LIBRARY to the full path of the built library, e.g." >&2
  echo "  CUDOT_LIBRARY=/path/to/build/libcudot.so bash $0" >&2
  exit 2
fi
if [[ ! -f "$CUDOT_LIBRARY" ]]; then
  echo "test.sh: CUDOT_LIBRARY=$CUDOT_LIBRARY is not a file" >&2
  exit 2
fi

cd "$here"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the source tree
# No .pytest_cache either; an exception swallowed by a finalizer counts as a failure.
CUDOT_TEST_EXPECT_LIBRARY="$CUDOT_LIBRARY" \
  "$python" -m pytest -q -rs -p no:cacheprovider -W error::pytest.PytestUnraisableExceptionWarning tests
"$python" example.py
"$python" example_own_arrays.py
bash "$here/test_readme.sh"
bash "$here/test_wheel.sh"
