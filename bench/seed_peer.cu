// seed_peer.cu - see seed_peer.hpp. Written for the benchmark from the tutorial's description.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "seed_peer.hpp"

namespace bench {
namespace {

constexpr int kThreads = 256;                       // threads a block
constexpr int kPerThread = 8;                       // elements a thread
constexpr int kPerBlock = kThreads * kPerThread;    // 2048 elements a block, one partial each

// Prints the failing call and makes the enclosing function return `fail`.
#define SEED_CUDA(call, fail)                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "seed peer: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
            return fail;                                                                        \
        }                                                                                       \
    } while (0)

// Block b sums x[i] * y[i] over its 2048 elements in T and writes partials[b]. Thread t takes elements
// t, t + 256, ... of the block, so neighbouring threads read neighbouring elements on every step.
template <class T>
__global__ __launch_bounds__(kThreads) void seed_dot_kernel(const T *x, const T *y, std::size_t n, T *partials) {
    __shared__ T sums[kThreads];
    const std::size_t first = std::size_t(blockIdx.x) * kPerBlock + threadIdx.x;
    T sum = 0;
    for (int k = 0; k < kPerThread; ++k) {
        const std::size_t i = first + std::size_t(k) * kThreads;
        if (i < n) sum += x[i] * y[i];
    }
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sums[0];
}

template <class T>
class SeedDotImpl final : public SeedDot {
public:
    SeedDotImpl(SeedMemory memory, std::size_t n)
        : memory_(memory), n_(n), blocks_((n + kPerBlock - 1) / kPerBlock) {}

    ~SeedDotImpl() override {
        for (T *p : {h_x_, h_y_, h_partials_}) {
            if (memory_ == SeedMemory::Managed) cudaFree(p);
            else cudaFreeHost(p);
        }
        if (memory_ == SeedMemory::Pinned)  // MAPPED's and MANAGED's device pointers alias the host ones
            for (T *p : {d_x_, d_y_, d_partials_}) cudaFree(p);
    }

    // Allocates the buffers of the chosen memory; false (and every buffer freed by the destructor) on failure.
    bool allocate() {
        const std::size_t bytes = n_ * sizeof(T), partial_bytes = blocks_ * sizeof(T);
        switch (memory_) {
            case SeedMemory::Pinned:
                SEED_CUDA(cudaHostAlloc(&h_x_, bytes, cudaHostAllocDefault), false);
                SEED_CUDA(cudaHostAlloc(&h_y_, bytes, cudaHostAllocDefault), false);
                SEED_CUDA(cudaHostAlloc(&h_partials_, partial_bytes, cudaHostAllocDefault), false);
                SEED_CUDA(cudaMalloc(&d_x_, bytes), false);
                SEED_CUDA(cudaMalloc(&d_y_, bytes), false);
                SEED_CUDA(cudaMalloc(&d_partials_, partial_bytes), false);
                return true;
            case SeedMemory::Mapped:
                SEED_CUDA(cudaHostAlloc(&h_x_, bytes, cudaHostAllocMapped), false);
                SEED_CUDA(cudaHostAlloc(&h_y_, bytes, cudaHostAllocMapped), false);
                SEED_CUDA(cudaHostAlloc(&h_partials_, partial_bytes, cudaHostAllocMapped), false);
                SEED_CUDA(cudaHostGetDevicePointer(&d_x_, h_x_, 0), false);
                SEED_CUDA(cudaHostGetDevicePointer(&d_y_, h_y_, 0), false);
                SEED_CUDA(cudaHostGetDevicePointer(&d_partials_, h_partials_, 0), false);
                return true;
            case SeedMemory::Managed:
                SEED_CUDA(cudaMallocManaged(&h_x_, bytes), false);
                SEED_CUDA(cudaMallocManaged(&h_y_, bytes), false);
                SEED_CUDA(cudaMallocManaged(&h_partials_, partial_bytes), false);
                d_x_ = h_x_;
                d_y_ = h_y_;
                d_partials_ = h_partials_;
                return true;
        }
        return false;
    }

    void *x() override { return h_x_; }
    void *y() override { return h_y_; }

    bool dot(double *result) override {
        const std::size_t bytes = n_ * sizeof(T);
        if (memory_ == SeedMemory::Pinned) {
            SEED_CUDA(cudaMemcpy(d_x_, h_x_, bytes, cudaMemcpyHostToDevice), false);
            SEED_CUDA(cudaMemcpy(d_y_, h_y_, bytes, cudaMemcpyHostToDevice), false);
        }
        seed_dot_kernel<T><<<static_cast<unsigned>(blocks_), kThreads>>>(d_x_, d_y_, n_, d_partials_);
        SEED_CUDA(cudaGetLastError(), false);
        if (memory_ == SeedMemory::Pinned)  // the copy back waits for the kernel
            SEED_CUDA(cudaMemcpy(h_partials_, d_partials_, blocks_ * sizeof(T), cudaMemcpyDeviceToHost), false);
        else
            SEED_CUDA(cudaDeviceSynchronize(), false);
        double sum = 0;
        for (std::size_t b = 0; b < blocks_; ++b) sum += h_partials_[b];
        *result = sum;
        return true;
    }

private:
    SeedMemory memory_;
    std::size_t n_, blocks_;
    T *h_x_ = nullptr, *h_y_ = nullptr, *h_partials_ = nullptr;  // what the host writes and reads
    T *d_x_ = nullptr, *d_y_ = nullptr, *d_partials_ = nullptr;  // what the kernel reads and writes
};

template <class T>
std::unique_ptr<SeedDot> make(SeedMemory memory, std::size_t n) {
    auto dot = std::make_unique<SeedDotImpl<T>>(memory, n);
    if (!dot->allocate()) return nullptr;
    return dot;
}

}  // namespace

std::unique_ptr<SeedDot> SeedDot::create(SeedMemory memory, bool f64, std::size_t n) {
    if (n == 0) return nullptr;
    return f64 ? make<double>(memory, n) : make<float>(memory, n);
}

}  // namespace bench
