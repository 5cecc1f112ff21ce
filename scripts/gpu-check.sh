#!/usr/bin/env bash
# gpu-check.sh - run the whole test suite on a machine with an NVIDIA GPU, and fail if the GPU tests
# did not really run (on a GPU machine "skipped" is a failure).
#
#   scripts/gpu-check.sh                 configure, build (needs Catch2: scripts/test.sh installs it) and test
#   scripts/gpu-check.sh BUILD_DIR       test an existing build, e.g. one built on another machine and
#                                        copied here (the GPU machine needs no compiler or Catch2 then)
# Logs go to $OUT (if set) or ./gpu-check-logs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
logs=${OUT:-$root/gpu-check-logs}
mkdir -p "$logs"

build=${1:-}
if [[ -z "$build" ]]; then
  build=build-gpu
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native
  cmake --build "$build" -j"$(nproc)"
fi
build=$(cd "$build" && pwd)

# A build made elsewhere names its source and build folders by absolute path; where those paths do not
# exist here, make them point at this checkout so CTest finds everything.
src_then=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
bin_then=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
if [[ -n "$src_then" && ! -e "$src_then" ]]; then
  mkdir -p "$(dirname "$src_then")" && ln -s "$root" "$src_then"
fi
if [[ -n "$bin_then" && ! -e "$bin_then" ]]; then
  ln -s "$build" "$bin_then"
fi

cmake_then=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$build/CMakeCache.txt")
if [[ -n "$cmake_then" && ! -e "$cmake_then" ]] && command -v cmake >/dev/null; then
  ln -s "$(command -v cmake)" "$cmake_then"  # CTest runs script tests with the cmake that configured them
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv | tee "$logs/gpu.txt"
export CUDOT_CLASSIC_TEST_GPU=1  # the classic C test also runs its GPU strategies
status=0
(cd "$build" && ctest --output-on-failure -j4 2>&1) | tee "$logs/ctest.log" || status=1
if grep -q "gpu:.*(Skipped)" "$logs/ctest.log"; then
  echo "gpu-check: GPU tests were skipped on a machine with a GPU" >&2
  status=1
fi
exit $status
