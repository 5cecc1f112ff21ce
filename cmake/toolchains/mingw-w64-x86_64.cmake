# Cross-compile cudot for 64-bit Windows with Debian's MinGW-w64 (package g++-mingw-w64-x86-64-posix):
#
#     cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake
#
# CPU backend only (nvcc on Windows needs MSVC). The posix thread model is required: Debian's plain
# x86_64-w64-mingw32-g++ is the win32 model, which has no std::thread or std::mutex.
# Test programs run under wine through scripts/wine-run.sh (CMAKE_CROSSCOMPILING_EMULATOR), so CTest
# and Catch2's test discovery work as on Linux.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# Libraries and headers from the MinGW sysroot only; header-only packages of the build machine (Catch2's
# CMake package) may still be found; programs run on the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(CUDOT_WITH_CUDA OFF CACHE BOOL "nvcc on Windows needs MSVC: the MinGW build is CPU-only")
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../../scripts/wine-run.sh")
