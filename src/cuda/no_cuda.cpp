// no_cuda.cpp - the CUDA backend of a build configured with CUDOT_WITH_CUDA=OFF: no GPU, ever.
#include "cuda_backend.hpp"

namespace cudot {
namespace cuda {

static const char kWhy[] = "this cudot was built without CUDA (CUDOT_WITH_CUDA=OFF): only CUDOT_MEMORY_HOST works";

cudot_status probe(int32_t, ErrorSink err) { return fail(err, CUDOT_ERROR_NO_DEVICE, "%s", kWhy); }
int32_t auto_strategy(int32_t, std::size_t, std::size_t, std::size_t) { return CUDOT_MEMORY_HOST; }
cudot_status create(cudot_ctx &, ErrorSink err) { return fail(err, CUDOT_ERROR_NO_DEVICE, "%s", kWhy); }
cudot_status destroy(cudot_ctx &, ErrorSink) { return CUDOT_OK; }
void *host_partials(cudot_ctx &) { return nullptr; }
cudot_status queue_tiles(cudot_ctx &ctx, std::size_t, std::size_t) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU tiles in a build without CUDA");
}
cudot_status wait_tiles(cudot_ctx &ctx, std::size_t, float *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU tiles in a build without CUDA");
}
cudot_status dot_rows(cudot_ctx &ctx, const Rows &, double *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU rows in a build without CUDA");
}
cudot_status queue_gpu_rows(cudot_ctx &ctx, const Rows &, double *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU rows in a build without CUDA");
}
cudot_status wait_gpu_rows(cudot_ctx &ctx, std::size_t, float *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU rows in a build without CUDA");
}
cudot_status auto_gpu_dot(cudot_ctx &ctx, std::size_t, bool, double *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU dot in a build without CUDA");
}
cudot_status auto_to_host(cudot_ctx &ctx, std::size_t) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "managed memory in a build without CUDA");
}
cudot_status tile_partials(cudot_ctx &ctx, std::size_t, std::size_t, void **) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU partials in a build without CUDA");
}
cudot_status exact_tile_partial(cudot_ctx &ctx, std::size_t, std::size_t, exact::Sum &) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU partials in a build without CUDA");
}
cudot_status add_gpu_exact_sums(cudot_ctx &ctx, exact::Sum &) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU partials in a build without CUDA");
}
cudot_status dot(cudot_ctx &ctx, std::size_t, double *) {
    return fail(ctx.sink(), CUDOT_ERROR_INTERNAL, "GPU dot in a build without CUDA");
}

cudot_status locate(Operand &o, std::size_t, const char *, ErrorSink) {
    o.place = Place::Pageable;
    o.gpu_data = o.data;
    return CUDOT_OK;
}
cudot_status check_within(const void *, std::uintptr_t, std::uintptr_t, const char *, ErrorSink) { return CUDOT_OK; }
int host_reader_device() { return -1; }
bool reads_pageable(int) { return false; }
cudot_status stream_rows(const Rows &, int, const StreamCall &, ErrorSink err) {
    return fail(err, CUDOT_ERROR_NO_DEVICE, "%s", kWhy);
}
cudot_status register_host(const void *, std::size_t, bool *locked, ErrorSink) {
    *locked = false;
    return CUDOT_OK;
}
cudot_status unregister_host(const void *, ErrorSink) { return CUDOT_OK; }
#if defined(CUDOT_TESTING)
void release_stream_state() {}
std::size_t kept_stream_workspaces(int) { return 0; }
#endif

}  // namespace cuda
}  // namespace cudot
