#!/usr/bin/env bash
# test-aarch64.sh - Linux on 64-bit Arm (AArch64), CPU backend: cross-built here with Debian's
# g++-aarch64-linux-gnu (cmake/toolchains/aarch64-linux-gnu.cmake) and the C/C++ suite run through CTest
# under qemu-user (scripts/aarch64-run.sh as the emulator). The suite includes:
#   - the caller's flush-to-zero (FPCR.FZ, FZ16, round toward zero) around dots of all-subnormal inputs,
#     and pool workers started by a thread with FZ set (tests/test_fp_env.cpp, tests/fp_env/);
#   - the digest of many fixed HOST dots, which must equal the x86 build's (tests/shared/bits_digest.c).
# qemu-user emulates the instruction set (FPCR included), not Arm hardware; the CUDA build for aarch64
# (sbsa, Jetson) needs NVIDIA's aarch64 toolkit and is neither built nor tested here.
# Needs g++-aarch64-linux-gnu and qemu-user (scripts/test.sh installs them).
# Environment: AARCH64_BUILD_DIR (default build-aarch64; relative to the repository root, or absolute).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${AARCH64_BUILD_DIR:-build-aarch64}

for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "test-aarch64.sh: $tool not found" >&2; exit 2; }
done

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
      -DCMAKE_BUILD_TYPE=Release -DCUDOT_BUILD_TESTS=ON
cmake --build "$build" -j"$(nproc)"

# Left out under the emulator, which runs them many times slower than the x86 build does:
#  - the size sweeps, the 2^24-element vector, the literal-order comparison and the many-thread stress and
#    soak programs: x86 runs them on every CI run, and the digest below shows the AArch64 build gives the
#    x86 build's bits for every pair of element types at sizes up to the thread pool's;
#  - the fork cases, the pool's included: qemu-user 7.2 aborts on its own assertion (cpu_exec: cpu ==
#    current_cpu) when a forked child of a threaded process starts threads, whatever the program does, and
#    such a child can also hang, now and then, until its alarm kills it ("pool: fork during the first
#    build of the kernel tables" among them). x86 runs all of them natively on every CI run, and ASan
#    the pool's.
slow_or_emulator='stress: |soak: |fork: |fork during |awkward sizes|counts come out exact|a large vector|literal implementation'
slow_or_emulator+='|contexts on 8 threads|context shared by 8 threads|short tiles give'
#  - the exact mode's 2^31 products: the x86 build (and wine) run them; the AArch64 build sums with the same
#    portable code, checked here on the other exact cases.
slow_or_emulator+='|exact: 2\^31 products'

echo "==== AArch64: C/C++ suite under qemu-aarch64 (CTest)"
# Two pool threads whatever the build machine has, so that the workers' floating-point test has workers.
if (cd "$build" && CUDOT_NUM_THREADS=2 ctest --output-on-failure --no-tests=error -j"$(nproc)" -E "$slow_or_emulator"); then
  echo "test-aarch64.sh: the AArch64 suite passed (under qemu-user)"
else
  echo "test-aarch64.sh: FAILED: ctest"
  exit 1
fi
