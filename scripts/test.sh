#!/usr/bin/env bash
# test.sh - install what the tests need (Debian packages), build everything, run every test: the C/C++
# suite through CTest (GPU cases report "skipped" where no GPU is usable) and each binding's tests.
# Then the Windows build under wine (scripts/test-windows.sh), the AArch64 build under qemu-user
# (scripts/test-aarch64.sh) and the reliability jobs: sanitizers,
# valgrind and the fuzzer (scripts/sanitize.sh, scripts/fuzz.sh).
# Environment: CUDOT_CMAKE_ARGS (extra configure arguments, e.g. -DCMAKE_CUDA_ARCHITECTURES=90),
#              CUDOT_SKIP_INSTALL=1 (do not run apt-get), BUILD_DIR (default: build),
#              CUDOT_SKIP_RELIABILITY=1 (skip sanitizers/valgrind/fuzz), CUDOT_FUZZ_SECONDS (default 180).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${BUILD_DIR:-build}

packages=(cmake g++ gcc pkg-config catch2 libmpfr-dev libgmp-dev libopenblas-dev python3-matplotlib python3-numpy python3-pytest
          golang-go mono-mcs mono-devel mono-runtime nunit-console libnunit-cil-dev
          valgrind clang libclang-rt-14-dev libopenmpi-dev openmpi-bin
          python3-build python3-venv python3-mypy nuget g++-mingw-w64-x86-64-posix wine64)
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
packages+=(g++-aarch64-linux-gnu qemu-user)  # the AArch64 job (scripts/test-aarch64.sh)
if [[ "${CUDOT_SKIP_INSTALL:-0}" != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    echo "test.sh: installing ${missing[*]}"
    sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd=sudo
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

# Each phase's time goes to the summary at the end (the CI run must stay under an hour on 2 cores).
timings=()
phase_start=$SECONDS
phase_name=
phase() {  # the name of the phase that starts now ("" at the end)
  [[ -n $phase_name ]] && timings+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
  phase_name=$1
  phase_start=$SECONDS
}

phase "build (CUDA library and tests)"
# shellcheck disable=SC2086
# Tests forced on: demo.sh configures the same folder with them off, and a cached OFF would leave
# CTest with nothing to run.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUDOT_BUILD_TESTS=ON -DCUDOT_BUILD_EXPERIMENTS=ON ${CUDOT_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"

failed=()
phase "versions"
echo "==== package versions against include/cudot.h (scripts/check_versions.sh)"
scripts/check_versions.sh || failed+=(versions)
phase "C/C++ suite (CTest)"
echo "==== C/C++ suite (CTest)"
(cd "$build" && ctest --output-on-failure --no-tests=error -j"$(nproc)") || failed+=(ctest)

export CUDOT_LIBRARY=$root/$build/libcudot.so
export CUDOT_CLASSIC_LIBRARY=$root/$build/libcudot_classic.so
for binding in python go csharp julia; do
  script=bindings/$binding/test.sh
  [[ -x $script ]] || { echo "==== $binding: $script missing"; failed+=("$binding"); continue; }
  phase "$binding binding"
  echo "==== $binding binding"
  "$script" || failed+=("$binding")
done

# The top-level README's recipes as a newcomer runs them, on a fresh clone.
phase "README recipes (scripts/test-readme.sh)"
echo "==== README recipes on a fresh clone (scripts/test-readme.sh)"
scripts/test-readme.sh || failed+=(readme)

# The Windows half: cudot.dll cross-built with MinGW-w64 and tested under wine. Installed
# above; a machine without them (CUDOT_SKIP_INSTALL=1) says so and fails, since CI must run it.
phase "Windows (MinGW-w64 build, wine)"
echo "==== Windows: cross-built with MinGW-w64, run under wine (scripts/test-windows.sh)"
scripts/test-windows.sh || failed+=(windows)

# Linux AArch64: the CPU library and the C/C++ suite cross-built with Debian's aarch64 compiler
# and run under qemu-user, with the caller's flush-to-zero and the bits digest checked there.
phase "AArch64 (cross build, qemu-user)"
echo "==== AArch64: cross-built, run under qemu-user (scripts/test-aarch64.sh)"
scripts/test-aarch64.sh || failed+=(aarch64)

# Reliability jobs (docs/RELIABILITY.md): the CPU path under ASan+UBSan, TSan and valgrind, then the
# fuzzer from the committed corpus for a bounded time. CUDOT_SKIP_RELIABILITY=1 leaves them out.
if [[ "${CUDOT_SKIP_RELIABILITY:-0}" != 1 ]]; then
  phase "sanitizers and valgrind"
  echo "==== reliability: sanitizers and valgrind (scripts/sanitize.sh)"
  CUDOT_VALGRIND_BUILD=$build scripts/sanitize.sh || failed+=(sanitize)
  phase "fuzzer"
  echo "==== reliability: fuzzing (scripts/fuzz.sh)"
  scripts/fuzz.sh "${CUDOT_FUZZ_SECONDS:-180}" || failed+=(fuzz)
fi

phase ""
echo "==== time per phase (total $SECONDS s)"
printf '%s\n' "${timings[@]}"

if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "test.sh: all test suites passed"
