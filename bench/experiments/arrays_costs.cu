// arrays_costs.cu - what a blocking dot of device arrays (cudot_dot_arrays) spends its time on: the cost
// of each CUDA call it makes, against the floor of its launch-and-poll mechanism and against a context's
// dot. Medians in microseconds.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude bench/experiments/arrays_costs.cu -Lbuild -lcudot \
//          -Xlinker -rpath -Xlinker '$ORIGIN/..' -o build/experiments/arrays_costs
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "cudot.h"

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median_of(int reps, const std::function<void()> &f) {
    std::vector<double> t(reps);
    for (int i = 0; i < 100; ++i) f();
    for (int i = 0; i < reps; ++i) {
        const double t0 = now_us();
        f();
        t[i] = now_us() - t0;
    }
    std::sort(t.begin(), t.end());
    return t[reps / 2];
}

__global__ void empty_kernel() {}
__global__ void flag_kernel(volatile unsigned long long *flag, unsigned long long v) { *flag = v; }

void row(const char *what, double us) { std::printf("%-64s %8.3f\n", what, us); }

}  // namespace

int main() {
    using Attributes = CUresult (*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault, &found);
    Attributes attributes = reinterpret_cast<Attributes>(fn);
    const std::size_t n = 1024;
    float *x = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    std::vector<float> host(n, 1.0f);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    unsigned long long *flag = nullptr;
    cudaHostAlloc(&flag, 64, cudaHostAllocMapped);
    const int reps = 20000;

    auto ask = [&](const void *p) {
        unsigned type = 0, managed = 0;
        int ordinal = -1;
        CUdeviceptr start = 0;
        std::size_t size = 0;
        CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                       CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                       CU_POINTER_ATTRIBUTE_RANGE_SIZE};
        void *values[] = {&type, &managed, &ordinal, &start, &size};
        attributes(5, names, values, reinterpret_cast<CUdeviceptr>(p));
    };
    row("cuPointerGetAttributes (5), device pointer", median_of(reps, [&] { ask(x); }));
    row("cuPointerGetAttributes (5), pageable host pointer", median_of(reps, [&] { ask(host.data()); }));
    cudaStreamCaptureStatus cs;
    row("cudaStreamIsCapturing", median_of(reps, [&] { cudaStreamIsCapturing(s, &cs); }));
    int dev;
    row("cudaStreamGetDevice", median_of(reps, [&] { cudaStreamGetDevice(s, &dev); }));
    unsigned long long id;
    row("cudaStreamGetId", median_of(reps, [&] { cudaStreamGetId(s, &id); }));
    CUcontext c;
    row("cudaStreamQuery (idle stream)", median_of(reps, [&] { cudaStreamQuery(s); }));
    (void)c;
    row("empty kernel: launch + cudaStreamSynchronize", median_of(reps, [&] {
            empty_kernel<<<1, 32, 0, s>>>();
            cudaStreamSynchronize(s);
        }));
    unsigned long long v = 0;
    row("flag kernel: launch + host polls the mapped flag", median_of(reps, [&] {
            ++v;
            flag_kernel<<<1, 32, 0, s>>>(flag, v);
            while (*reinterpret_cast<volatile unsigned long long *>(flag) != v) {
            }
        }));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    flag_kernel<<<1, 32, 0, s>>>(flag, ~0ull);
    cudaStreamEndCapture(s, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    row("flag kernel as a graph: replay + host polls the mapped flag", median_of(reps, [&] {
            *reinterpret_cast<volatile unsigned long long *>(flag) = 0;
            cudaGraphLaunch(exec, s);
            while (*reinterpret_cast<volatile unsigned long long *>(flag) != ~0ull) {
            }
        }));
    row("one-kernel graph launch alone (1000 back to back, per launch)", median_of(50, [&] {
            for (int i = 0; i < 1000; ++i) cudaGraphLaunch(exec, s);
            cudaStreamSynchronize(s);
        }) / 1000);
    cudaGraphNode_t nodes[1];
    size_t count = 1;
    cudaGraphGetNodes(graph, nodes, &count);
    cudaKernelNodeParams kp{};
    void *kargs[] = {&flag, &v};
    kp.func = reinterpret_cast<void *>(&flag_kernel);
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(32);
    kp.kernelParams = kargs;
    row("cudaGraphExecKernelNodeSetParams", median_of(reps, [&] {
            ++v;
            cudaGraphExecKernelNodeSetParams(exec, nodes[0], &kp);
        }));
    row("empty kernel launch alone (1000 back to back, per launch)", median_of(50, [&] {
            for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32, 0, s>>>();
            cudaStreamSynchronize(s);
        }) / 1000);
    cudot_arrays a = CUDOT_ARRAYS_INIT;
    a.n = n;
    a.x.data = a.y.data = x;
    a.stream = s;
    double r;
    row("cudot_dot_arrays, device f32 n=1024, blocking", median_of(reps, [&] { cudot_dot_arrays(&a, &r); }));
    double *d = nullptr;
    cudaMalloc(&d, 1000 * sizeof(double));
    row("cudot_dot_arrays_async, device f32 n=1024 (1000 back to back, per dot)", median_of(50, [&] {
            for (int i = 0; i < 1000; ++i) cudot_dot_arrays_async(&a, d + i);
            cudaStreamSynchronize(s);
        }) / 1000);
    cudot_arrays h = CUDOT_ARRAYS_INIT;
    h.n = n;
    h.x.data = h.y.data = host.data();
    row("cudot_dot_arrays, pageable host f32 n=1024", median_of(reps, [&] { cudot_dot_arrays(&h, &r); }));
    for (int32_t memory : {CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_PINNED, CUDOT_MEMORY_HOST}) {
        cudot_config cfg = CUDOT_CONFIG_INIT;
        cfg.memory = memory;
        cudot_ctx *ctx = nullptr;
        if (cudot_init(&ctx, n, &cfg) != CUDOT_OK) continue;
        float *cx, *cy;
        cudot_get_inputs(ctx, reinterpret_cast<void **>(&cx), reinterpret_cast<void **>(&cy));
        std::fill(cx, cx + n, 1.0f);
        std::fill(cy, cy + n, 1.0f);
        char what[96];
        std::snprintf(what, sizeof what, "context dot, f32 n=1024, memory %d", memory);
        row(what, median_of(reps, [&] { cudot_dot(ctx, &r); }));
        cudot_deinit(ctx);
    }
    return 0;
}
