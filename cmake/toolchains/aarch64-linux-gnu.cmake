# Cross-compile cudot for Linux on 64-bit Arm (AArch64: Grace, Graviton, Jetson's CPU) with Debian's
# cross compiler (packages g++-aarch64-linux-gnu, and qemu-user to run the tests):
#
#     cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# CPU backend only: the CUDA build for aarch64 (sbsa, Jetson) needs NVIDIA's aarch64 toolkit.
# Test programs run under qemu-user through scripts/aarch64-run.sh (CMAKE_CROSSCOMPILING_EMULATOR), so
# CTest and Catch2's test discovery work as on a native build. qemu-user emulates the instruction set,
# FPCR included; it is not Arm hardware (no memory-ordering or timing behaviour of a real core).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and headers from the aarch64 sysroot only; header-only packages of the build machine (Catch2's
# CMake package) may still be found; programs run on the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(CUDOT_WITH_CUDA OFF CACHE BOOL "the CUDA build for aarch64 needs NVIDIA's aarch64 toolkit")
# The build machine's MPI (found through its mpicc) is not the target's.
set(CUDOT_WITH_MPI OFF CACHE BOOL "no aarch64 MPI in the cross sysroot")
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../../scripts/aarch64-run.sh")
