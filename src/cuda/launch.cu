// launch.cu - see launch.hpp.
#include "launch.hpp"

#include <atomic>
#include <cstring>

#include "../core/seams.hpp"
#include "cuda_check.hpp"

namespace cudot {
namespace cuda {

namespace {
constexpr int kMaxDevices = 256;
constexpr int kPairs = 36;  // element-type pairs (types.hpp: six types each side)
std::atomic<unsigned> resident[kMaxDevices][2][kPairs];  // [device][exact][pair]; 0: not asked yet

bool same_call(const KernelCall &a, const KernelCall &b) {
    return a.node.func == b.node.func && std::memcmp(a.params, b.params, sizeof a.params) == 0 &&
           std::memcmp(&a.x, &b.x, sizeof a.x) == 0 && std::memcmp(&a.y, &b.y, sizeof a.y) == 0 &&
           a.node.gridDim.x == b.node.gridDim.x && a.node.blockDim.x == b.node.blockDim.x;
}

bool same_copy(const InputCopy &a, const InputCopy &b) {
    return a.to == b.to && a.from == b.from && a.bytes == b.bytes;
}
}  // namespace

cudot_status resident_blocks(int device, int32_t x_dtype, int32_t y_dtype, unsigned *blocks, ErrorSink err,
                             bool exact) {
    std::atomic<unsigned> *known = device >= 0 && device < kMaxDevices
                                       ? &resident[device][exact ? 1 : 0][(x_dtype - 1) * 6 + (y_dtype - 1)]
                                       : nullptr;
    if (known && (*blocks = known->load(std::memory_order_relaxed)) != 0) return CUDOT_OK;
    int sms = 0, per_sm = 0;
    CUDOT_CUDA_TRY(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (exact) CUDOT_CUDA_TRY(err, exact_launcher_for(x_dtype, y_dtype).occupancy(&per_sm));
    else CUDOT_CUDA_TRY(err, launcher_for(x_dtype, y_dtype).occupancy(&per_sm));
    *blocks = static_cast<unsigned>(std::max(1, sms) * std::max(1, per_sm));
    if (known) known->store(*blocks, std::memory_order_relaxed);  // two threads asking at once agree
    return CUDOT_OK;
}

LaunchArgs dot_launch(const Operands &ops, unsigned resident, void *partials, unsigned *ticket, Completion *done) {
    LaunchArgs a;
    a.x = ops.x.gpu_data;
    a.y = ops.y.gpu_data;
    a.n = ops.n;
    a.tiles = order::tile_count(ops.n);
    a.blocks = grid_blocks(resident, a.tiles);
    a.partials = partials;
    a.ticket = ticket;
    a.done = done;
    a.dense = dense_on_gpu(ops.x.gpu_data, ops.x.stride) && dense_on_gpu(ops.y.gpu_data, ops.y.stride);
    a.x_stride = ops.x.stride_bytes();
    a.y_stride = ops.y.stride_bytes();
    a.x_aligned = reinterpret_cast<std::uintptr_t>(ops.x.gpu_data) % ops.x.size() == 0;
    a.y_aligned = reinterpret_cast<std::uintptr_t>(ops.y.gpu_data) % ops.y.size() == 0;
    return a;
}

LaunchArgs exact_launch(const Operands &ops, unsigned resident, void *workspace, Completion *done, void *partial) {
    LaunchArgs a = dot_launch(ops, resident, static_cast<char *>(workspace) + kHeadBytes,
                              static_cast<unsigned *>(workspace), done);
    a.blocks = std::max(1u, resident);
    a.exact_partial = partial;
    return a;
}

cudaError_t DotGraphs::replay(const KernelCall &call, const InputCopy *copies, unsigned count, cudaStream_t stream) {
    Graph *g = nullptr;
    for (Graph &known : graphs_)
        if (known.kernel == call.node.func && known.copies == count) g = &known;
    cudaError_t e = cudaSuccess;
    if (!g) {  // built: copies first, then the kernel after them
        Graph made;
        made.kernel = call.node.func;
        made.copies = count;
        e = cudaGraphCreate(&made.graph, 0);
        for (unsigned i = 0; i < count && e == cudaSuccess; ++i)
            e = cudaGraphAddMemcpyNode1D(&made.copy_nodes[i], made.graph, nullptr, 0, copies[i].to, copies[i].from,
                                         copies[i].bytes, cudaMemcpyDefault);
        if (e == cudaSuccess)
            e = cudaGraphAddKernelNode(&made.kernel_node, made.graph, made.copy_nodes, count, &call.node);
        if (e == cudaSuccess) e = cudaGraphInstantiate(&made.exec, made.graph, 0);
        if (e != cudaSuccess) {
            if (made.graph) (void)cudaGraphDestroy(made.graph);
            return e;
        }
        std::copy(copies, copies + count, made.last_copies);
        std::memcpy(&made.last, &call, sizeof call);
        graphs_.push_back(made);
        return cudaGraphLaunch(made.exec, stream);
    }
    for (unsigned i = 0; i < count && e == cudaSuccess; ++i)
        if (!same_copy(g->last_copies[i], copies[i])) {
            e = cudaGraphExecMemcpyNodeSetParams1D(g->exec, g->copy_nodes[i], copies[i].to, copies[i].from,
                                                   copies[i].bytes, cudaMemcpyDefault);
            g->last_copies[i] = e == cudaSuccess ? copies[i] : InputCopy{};
        }
    if (e == cudaSuccess && !same_call(g->last, call)) {
        e = cudaGraphExecKernelNodeSetParams(g->exec, g->kernel_node, &call.node);
        if (e == cudaSuccess) std::memcpy(&g->last, &call, sizeof call);
        else std::memset(&g->last, 0, sizeof g->last);
    }
    return e == cudaSuccess ? cudaGraphLaunch(g->exec, stream) : e;
}

cudaError_t DotGraphs::clear() {
    cudaError_t first = cudaSuccess;
    for (Graph &g : graphs_) {
        const cudaError_t e = g.exec ? note(cudaGraphExecDestroy(g.exec)) : cudaSuccess;
        const cudaError_t f = g.graph ? note(cudaGraphDestroy(g.graph)) : cudaSuccess;
        if (first == cudaSuccess) first = e != cudaSuccess ? e : f;
    }
    graphs_.clear();
    return first;
}

cudot_status launch(const KernelCall &call, int device, cudaStream_t stream, ErrorSink err, DotGraphs *graphs,
                    const InputCopy *copies, unsigned count) {
    CUDOT_TEST_SEAM(seams::before_launch(device, stream));
    (void)device;
    if (graphs) {
        CUDOT_CUDA_TRY_AS(err, graphs->replay(call, copies, count, stream), "dot_kernel launch (a CUDA graph)");
        return CUDOT_OK;
    }
    for (unsigned i = 0; i < count; ++i)
        CUDOT_CUDA_TRY(err, cudaMemcpyAsync(copies[i].to, copies[i].from, copies[i].bytes, cudaMemcpyDefault, stream));
    // cudaLaunchKernel returns this launch's own error: not one that the caller's code (or an earlier
    // call of cudot's) left pending in CUDA's per-thread last error.
    void **args = const_cast<void **>(call.args);  // CUDA's signature; it only reads them
    CUDOT_CUDA_TRY_AS(err, cudaLaunchKernel(call.node.func, call.node.gridDim, call.node.blockDim, args,
                                           call.node.sharedMemBytes, stream),
                      "dot_kernel launch");
    return CUDOT_OK;
}

}  // namespace cuda
}  // namespace cudot
