# check_flags_refused.cmake - the flags that would change cudot's numbers are refused, with a message that
# names the flag (cmake/ieee_flags.cmake), and a source compiled with them some other way stops at the
# #error in src/core/types.hpp. Run by CTest: cmake -DSOURCE_DIR= -DWORK_DIR= -DCXX= -DGENERATOR= -P this.
# Each case configures the project alone (no tests, examples, MPI or CUDA language), which stops before
# anything is built.
set(quiet_options -DCUDOT_BUILD_TESTS=OFF -DCUDOT_BUILD_EXAMPLES=OFF -DCUDOT_WITH_MPI=OFF -DCUDOT_BUILD_BENCH=OFF)

# configure(NAME OUT_RC OUT_LOG ARGS...): configures a fresh build of the project with ARGS.
function(configure name out_rc out_log)
  file(REMOVE_RECURSE ${WORK_DIR}/${name})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${environment} ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/${name} -G ${GENERATOR}
                          ${quiet_options} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_log} "${out}${err}" PARENT_SCOPE)
endfunction()

# The control: ordinary flags are accepted, so a refusal below is the flag's doing.
configure(accepted rc log -DCUDOT_WITH_CUDA=OFF -DCMAKE_CXX_FLAGS=-O2 -DCMAKE_C_FLAGS=-O2)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ordinary flags were refused:\n${log}")
endif()

# VARIABLE=VALUE|FLAG NAMED IN THE MESSAGE (an ENV: variable is set in the environment instead)
set(refused
  "ENV:CUDAFLAGS=-O3 --use_fast_math|--use_fast_math"
  "CMAKE_CXX_FLAGS=-ffast-math|-ffast-math"
  "CMAKE_CXX_FLAGS=-O2 -Ofast|-Ofast"
  "CMAKE_C_FLAGS=-funsafe-math-optimizations|-funsafe-math-optimizations"
  "CMAKE_CXX_FLAGS_RELEASE=-O3 -ffinite-math-only|-ffinite-math-only"
  "CMAKE_CUDA_FLAGS=--use_fast_math|--use_fast_math"
  "CMAKE_CUDA_FLAGS=-lineinfo -ftz=true|-ftz=true"
  "CMAKE_CUDA_FLAGS=-prec-div=false|-prec-div=false"
  "CMAKE_CUDA_FLAGS=-Xcompiler=-O3,-ffast-math|-ffast-math")
set(index 0)
foreach(case IN LISTS refused)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 setting)
  list(GET parts 1 flag)
  math(EXPR index "${index} + 1")
  # CUDA flags are checked before the CUDA language is enabled: no toolkit needed for this.
  if(setting MATCHES "^ENV:(.*)")
    set(environment "${CMAKE_MATCH_1}")
    set(variable CUDAFLAGS)
    configure(refused${index} rc log -DCUDOT_WITH_CUDA=ON)
  else()
    set(environment "")
    string(REGEX REPLACE "=.*" "" variable "${setting}")
    configure(refused${index} rc log -DCUDOT_WITH_CUDA=ON "-D${setting}")
  endif()
  string(REGEX REPLACE "[ \n]+" " " flat "${log}")
  if(rc EQUAL 0 OR NOT flat MATCHES "cudot: ${variable} contains '${flag}', which would change cudot's results")
    message(FATAL_ERROR "${setting}: not refused with the message naming ${flag} (rc ${rc}):\n${log}")
  endif()
  message(STATUS "refused: ${setting}")
endforeach()

# The last line of defence: a source that includes the arithmetic's types with fast math on does not compile.
file(WRITE ${WORK_DIR}/uses_types.cpp "#include \"core/types.hpp\"\nint main() { return 0; }\n")
foreach(flags "-O2" "-ffast-math" "-Ofast")
  execute_process(COMMAND ${CXX} -std=c++17 ${flags} -I${SOURCE_DIR}/include -I${SOURCE_DIR}/src -fsyntax-only
                          ${WORK_DIR}/uses_types.cpp RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(flags STREQUAL "-O2")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "src/core/types.hpp does not compile with ${flags}:\n${out}${err}")
    endif()
  elseif(rc EQUAL 0 OR NOT err MATCHES "cudot must not be compiled with -ffast-math")
    message(FATAL_ERROR "src/core/types.hpp compiled with ${flags} without the #error:\n${out}${err}")
  endif()
endforeach()
message(STATUS "build flags: all refused, and src/core/types.hpp stops a fast-math compile")
