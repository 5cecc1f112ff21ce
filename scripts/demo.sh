#!/usr/bin/env bash
# demo.sh - build cudot and run the quick-start example (examples/quickstart.c): 2^20 floats, the dot and
# its time for every memory strategy this machine has. Needs the CUDA toolkit (or pass
# -DCUDOT_WITH_CUDA=OFF through CUDOT_CMAKE_ARGS), CMake >= 3.24 and a C++17 compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
  echo "demo.sh: installing cmake and g++ (Debian packages)"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq cmake g++ >/dev/null
fi
# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCUDOT_BUILD_TESTS=OFF ${CUDOT_CMAKE_ARGS:-} >/dev/null
# `installable` too: what `cmake --install build` copies (the MPI library where MPI was found).
cmake --build build -j"$(nproc)" --target quickstart installable
./build/quickstart
