// host_pipeline.hpp - dots of large page-locked host arrays through the copy engines (host_pipeline.cu).
#pragma once

#include <cuda_runtime.h>

#include "../core/operands.hpp"
#include "launch.hpp"

namespace cudot {
namespace cuda {

// Whether a blocking dot of these operands goes through the pipeline: both dense (stride 1) page-locked
// host memory, from kPipelineMinElements elements.
bool pipeline_serves(const Operands &ops);
// The dot of page-locked host operands on GPU `device` (current), ordered after `stream`'s earlier work:
// each chunk of both arrays is copied into device staging while the previous chunk's tile partials are
// computed; the host joins the partials. `blocks` is the kernel's resident grid on this GPU.
cudot_status pipelined_host_dot(const Operands &ops, int device, cudaStream_t stream, const Launcher &launcher,
                                unsigned blocks, double *result, ErrorSink err);
// Frees every GPU's pipeline state (no dot may be running; the caller made each GPU current in turn
// through release_stream_state).
void release_host_pipeline(int device);

}  // namespace cuda
}  // namespace cudot
