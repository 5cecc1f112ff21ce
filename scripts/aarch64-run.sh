#!/usr/bin/env bash
# aarch64-run.sh PROGRAM [ARGS...] - run a Linux AArch64 program under qemu-user for the AArch64 test job
# (the CMake toolchain's CROSSCOMPILING_EMULATOR, and scripts/test-aarch64.sh).
#   - the target's loader and libraries from Debian's cross sysroot (QEMU_LD_PREFIX);
#   - always under a timeout (CUDOT_QEMU_TIMEOUT seconds, default 600): a hung program fails, never stalls CI.
set -euo pipefail
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
exec timeout --kill-after=10 "${CUDOT_QEMU_TIMEOUT:-600}" qemu-aarch64 "$@"
