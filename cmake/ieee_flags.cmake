# ieee_flags.cmake - refuse the compiler flags that would change cudot's numbers (docs/ACCURACY.md, "The
# floating-point environment and build flags").
#
# Host: -ffast-math, -Ofast and the flags they are made of let the compiler reassociate sums (Dot2's
# compensation is optimised away), assume there is no Inf or NaN, and make other NaN bits. CUDA: nvcc's
# --use_fast_math, -ftz=true, -prec-div=false and -prec-sqrt=false flush subnormals and approximate.
# Refused rather than overridden after the user's flags: GCC links crtfastmath.o into a shared library
# built with -Ofast even when -fno-fast-math follows (measured with GCC 12), and that object sets FTZ/DAZ
# for the whole process when the library loads; and nvcc warns for every source where a later flag
# overrides an earlier one. nvcc's -fmad=true is its default, which the kernels are built and tested with:
# the operations whose rounding matters are written as intrinsics (__fma_rn, __dmul_rn, __dadd_rn) that
# no -fmad setting can contract.
set(cudot_host_flags_refused "-ffast-math|-Ofast|-funsafe-math-optimizations|-ffinite-math-only|-fassociative-math|-freciprocal-math|-fno-signed-zeros")
set(cudot_cuda_flags_refused "--?use_fast_math|--?ftz[= ]true|--?prec-div[= ]false|--?prec-sqrt[= ]false")

# cudot_refuse_flags(VARIABLE PATTERN): stops the configuration if VARIABLE or a per-configuration
# variant of it (VARIABLE_RELEASE...) holds a flag matching PATTERN (on its own, or inside -Xcompiler=a,b).
function(cudot_refuse_flags variable pattern)
  foreach(config "" _DEBUG _RELEASE _RELWITHDEBINFO _MINSIZEREL)
    set(var ${variable}${config})
    if(" ${${var}} " MATCHES "[ ,=](${pattern})[ ,]")
      message(FATAL_ERROR "cudot: ${var} contains '${CMAKE_MATCH_1}', which would change cudot's results "
        "(IEEE arithmetic is what makes them exact and the same on every CPU and GPU). Remove it "
        "for cudot's build (e.g. use -O3 instead of -Ofast); see docs/ACCURACY.md.")
    endif()
  endforeach()
endfunction()

cudot_refuse_flags(CMAKE_C_FLAGS "${cudot_host_flags_refused}")
cudot_refuse_flags(CMAKE_CXX_FLAGS "${cudot_host_flags_refused}")
if(CUDOT_WITH_CUDA)
  # Checked before enable_language(CUDA), so that a refusal needs no toolkit; CMake turns the CUDAFLAGS
  # environment variable into CMAKE_CUDA_FLAGS only there, on the first configuration.
  if(NOT DEFINED CMAKE_CUDA_FLAGS AND DEFINED ENV{CUDAFLAGS})
    set(CUDAFLAGS "$ENV{CUDAFLAGS}")
    cudot_refuse_flags(CUDAFLAGS "${cudot_host_flags_refused}|${cudot_cuda_flags_refused}")
    unset(CUDAFLAGS)
  endif()
  cudot_refuse_flags(CMAKE_CUDA_FLAGS "${cudot_host_flags_refused}|${cudot_cuda_flags_refused}")
endif()
