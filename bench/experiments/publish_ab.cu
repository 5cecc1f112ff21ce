// publish_ab.cu - how the last block should hand the result to a host that polls mapped memory.
// One-block kernels, launched back to back on one stream, the variants alternated launch by launch;
// the time is launch -> the host seeing the result (medians in microseconds):
//   flag     : a system fence, then one 8-byte write (the ceiling gpu_paths.cu measures)
//   fenced   : the result, a system fence, then a sequence word (cudot 1.4.0's publish)
//   sentinel : the result alone, one 8-byte write; the host set the slot to a signalling NaN before the
//              launch and waits until it changes (a dot's result passes through an addition, so it is
//              never a signalling NaN)
// Build: nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/publish_ab.cu -o build-dev/publish_ab
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Slot {
    double result;
    unsigned long long seq;
};

__global__ void flag_kernel(Slot *s, unsigned long long seq) {
    __threadfence_system();
    *reinterpret_cast<volatile unsigned long long *>(&s->seq) = seq;
}
__global__ void fenced_kernel(Slot *s, double v, unsigned long long seq) {
    *reinterpret_cast<volatile double *>(&s->result) = v;
    __threadfence_system();
    *reinterpret_cast<volatile unsigned long long *>(&s->seq) = seq;
}
__global__ void sentinel_kernel(Slot *s, double v) { *reinterpret_cast<volatile double *>(&s->result) = v; }

const std::uint64_t kSentinel = 0x7ff4000000000001ull;  // a signalling NaN

double bits_to_double(std::uint64_t b) {
    double d;
    std::memcpy(&d, &b, 8);
    return d;
}
std::uint64_t double_bits(const volatile double *p) {
    double d = *p;
    std::uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main() {
    cudaStream_t st;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return 1;
    Slot *h = nullptr, *d = nullptr;
    cudaHostAlloc(reinterpret_cast<void **>(&h), sizeof *h, cudaHostAllocMapped);
    cudaHostGetDevicePointer(reinterpret_cast<void **>(&d), h, 0);
    volatile Slot *vh = h;
    h->result = 0;
    h->seq = 0;
    std::vector<double> flag, fenced, sentinel;
    unsigned long long seq = 0;
    bool wrong = false;
    for (int i = 0; i < 6000; ++i) {
        const double value = 1.0 + i;
        double t0 = now_us();
        flag_kernel<<<1, 1, 0, st>>>(d, ++seq);
        while (vh->seq != seq) {
        }
        double t1 = now_us();
        cudaStreamSynchronize(st);

        double t2 = now_us();
        fenced_kernel<<<1, 1, 0, st>>>(d, value, ++seq);
        while (vh->seq != seq) {
        }
        wrong |= vh->result != value;
        double t3 = now_us();
        cudaStreamSynchronize(st);

        const double sentinel_value = bits_to_double(kSentinel);
        std::memcpy(const_cast<double *>(&vh->result), &sentinel_value, 8);
        double t4 = now_us();
        sentinel_kernel<<<1, 1, 0, st>>>(d, value);
        while (double_bits(&vh->result) == kSentinel) {
        }
        wrong |= vh->result != value;
        double t5 = now_us();
        cudaStreamSynchronize(st);
        if (i >= 200) {
            flag.push_back(t1 - t0);
            fenced.push_back(t3 - t2);
            sentinel.push_back(t5 - t4);
        }
    }
    std::printf("launch -> host sees it, medians of %zu (us): flag %.2f  fenced (result, fence, seq) %.2f  "
                "sentinel (result only) %.2f%s\n",
                flag.size(), median(flag), median(fenced), median(sentinel), wrong ? "  WRONG VALUE SEEN" : "");
    cudaError_t e = cudaGetLastError();
    cudaFreeHost(h);
    cudaStreamDestroy(st);
    return e == cudaSuccess && !wrong ? 0 : 1;
}
