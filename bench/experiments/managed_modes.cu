// managed_modes.cu - how should MANAGED buffers be handled so that both fresh host data and resident
// data are fast? Times prefetch + a reading kernel + sync for several unified-memory policies.
// Build: nvcc -O3 -arch=sm_90 managed_modes.cu -o managed_modes   Run on the GPU machine.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void read_kernel(const float4 *x, const float4 *y, size_t n4, double *out) {
    double acc = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
        float4 a = x[i], b = y[i];
        acc += double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z + double(a.w) * b.w;
    }
    if (acc == 12345.678) *out = acc;  // keep the loads alive
}

static double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static void host_write(float *p, size_t n, int round) {
    unsigned T = 16;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < T; ++t)
        ts.emplace_back([=] { for (size_t i = t * (n / T); i < (t + 1) * (n / T); ++i) p[i] = float((i + round) & 255); });
    for (auto &t : ts) t.join();
}

int main() {
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    double *out;
    CK(cudaMalloc(&out, 8));
    cudaMemLocation gpu{cudaMemLocationTypeDevice, dev};
    cudaMemLocation cpu{cudaMemLocationTypeHost, 0};
    const char *modes[] = {"fault", "prefetch", "readmostly+prefetch", "readmostly", "prefer-cpu+accessed-by"};
    for (int lg : {20, 22, 24, 26}) {
        size_t n = size_t(1) << lg, bytes = n * 4;
        for (int mode = 0; mode < 5; ++mode) {
            float *x, *y;
            CK(cudaMallocManaged(&x, bytes));
            CK(cudaMallocManaged(&y, bytes));
            if (mode == 2 || mode == 3) {
                CK(cudaMemAdvise(x, bytes, cudaMemAdviseSetReadMostly, gpu));
                CK(cudaMemAdvise(y, bytes, cudaMemAdviseSetReadMostly, gpu));
            }
            if (mode == 4) {
                CK(cudaMemAdvise(x, bytes, cudaMemAdviseSetPreferredLocation, cpu));
                CK(cudaMemAdvise(y, bytes, cudaMemAdviseSetPreferredLocation, cpu));
                CK(cudaMemAdvise(x, bytes, cudaMemAdviseSetAccessedBy, gpu));
                CK(cudaMemAdvise(y, bytes, cudaMemAdviseSetAccessedBy, gpu));
            }
            for (int fresh = 1; fresh >= 0; --fresh) {
                std::vector<double> t;
                for (int r = 0; r < 23; ++r) {
                    if (fresh || r == 0) { host_write(x, n, r); host_write(y, n, r); }
                    double t0 = now();
                    if (mode == 1 || mode == 2) {
                        CK(cudaMemPrefetchAsync(x, bytes, gpu, 0, s));
                        CK(cudaMemPrefetchAsync(y, bytes, gpu, 0, s));
                    }
                    read_kernel<<<132 * 8, 256, 0, s>>>((const float4 *)x, (const float4 *)y, n / 4, out);
                    CK(cudaStreamSynchronize(s));
                    if (r >= 3) t.push_back(now() - t0);
                }
                std::sort(t.begin(), t.end());
                double med = t[t.size() / 2];
                std::printf("n=2^%d %-24s %-8s %10.1f us %8.1f GB/s\n", lg, modes[mode], fresh ? "fresh" : "resident", med,
                            2.0 * bytes / (med * 1e3));
            }
            CK(cudaFree(x));
            CK(cudaFree(y));
        }
    }
    return 0;
}
