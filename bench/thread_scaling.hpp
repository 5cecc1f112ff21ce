// thread_scaling.hpp - many small dots at once: each of T threads creates its own context and calls
// cudot_dot in a loop for a fixed time; the aggregate dots/s against one thread's says how well
// independent callers run side by side (target 7).
#pragma once

#include <cstddef>

#include "rows.hpp"

namespace bench {

// T threads (memory: a CUDOT_MEMORY_* value, F32 inputs of n elements, each thread its own context
// filled with the same values), all starting together and calling dot until `seconds` have passed.
// False if a context cannot be created or a dot fails (reason on stderr).
bool measure_scaling(int memory, int threads, std::size_t n, double seconds, ScalingRun *out);

}  // namespace bench
