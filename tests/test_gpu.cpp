// test_gpu.cpp - the GPU strategies (PINNED, MAPPED, MANAGED): the same checks as HOST, plus bitwise
// equality with HOST and across forced grid sizes. Without a usable GPU, every case exits with 77,
// which CTest reports as "skipped" (never as passed).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "checks.hpp"
#include "gendot.hpp"
#include "isolation.hpp"
#include "knobs.hpp"
#include "testing.hpp"
#include "threads.hpp"

using test::Ctx;

static const int32_t kGpuStrategies[] = {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED};

TEST_CASE("GPU: random inputs of awkward sizes: within the bound and bitwise equal to HOST", "[gpu][accuracy]") {
    for (std::size_t n : test::awkward_sizes()) {
        double host32 = test::check_accuracy<float>(CUDOT_MEMORY_HOST, CUDOT_F32, n, n);
        double host64 = test::check_accuracy<double>(CUDOT_MEMORY_HOST, CUDOT_F64, n, n + 1);
        for (int32_t memory : kGpuStrategies) {
            INFO(test::memory_name(memory) << " n=" << n);
            CHECK(test::bits(test::check_accuracy<float>(memory, CUDOT_F32, n, n)) == test::bits(host32));
            CHECK(test::bits(test::check_accuracy<double>(memory, CUDOT_F64, n, n + 1)) == test::bits(host64));
        }
    }
}

TEST_CASE("GPU: counts come out exact at every size (no dropped tail)", "[gpu]") {
    for (int32_t memory : kGpuStrategies)
        for (std::size_t n : test::awkward_sizes()) {
            test::check_counts<float>(memory, CUDOT_F32, n);
            test::check_counts<double>(memory, CUDOT_F64, n);
        }
}

TEST_CASE("GPU: every dot sees what the host last wrote", "[gpu]") {
    for (int32_t memory : kGpuStrategies) {
        test::check_fresh_data<float>(memory, CUDOT_F32);
        test::check_fresh_data<double>(memory, CUDOT_F64);
    }
}

TEST_CASE("GPU: NaN and Inf as on the CPU, bit for bit", "[gpu][special]") {
    auto host32 = test::check_special_values<float>(CUDOT_MEMORY_HOST, CUDOT_F32);
    auto host64 = test::check_special_values<double>(CUDOT_MEMORY_HOST, CUDOT_F64);
    for (int32_t memory : kGpuStrategies) {
        auto gpu32 = test::check_special_values<float>(memory, CUDOT_F32);
        auto gpu64 = test::check_special_values<double>(memory, CUDOT_F64);
        REQUIRE(gpu32.size() == host32.size());
        REQUIRE(gpu64.size() == host64.size());
        for (std::size_t i = 0; i < gpu32.size(); ++i) CHECK(test::bits(gpu32[i]) == test::bits(host32[i]));
        for (std::size_t i = 0; i < gpu64.size(); ++i) CHECK(test::bits(gpu64[i]) == test::bits(host64[i]));
    }
}

TEST_CASE("GPU: F64 is compensated (Dot2)", "[gpu][accuracy]") {
    for (int32_t memory : kGpuStrategies) test::check_f64_cancellation(memory);
}

template <class T>
static void check_grids(int32_t memory, int32_t dtype, std::size_t n) {
    Ctx host(n, dtype, CUDOT_MEMORY_HOST);
    Ctx gpu(n, dtype, memory);
    REQUIRE(host.status == CUDOT_OK);
    REQUIRE(gpu.status == CUDOT_OK);
    test::fill_random(host.x<T>(), host.y<T>(), n, 1234);
    std::memcpy(gpu.x<T>(), host.x<T>(), n * sizeof(T));
    std::memcpy(gpu.y<T>(), host.y<T>(), n * sizeof(T));
    const double expected = host.dot();
    for (unsigned blocks : {1u, 2u, 3u, 7u, 64u, 132u, 1000u, 100000u}) {
        cudot::testing::set_gpu_blocks(gpu.ctx, blocks);
        INFO(test::memory_name(memory) << " n=" << n << " blocks=" << blocks);
        CHECK(test::bits(gpu.dot()) == test::bits(expected));
        CHECK(test::bits(gpu.dot_n(n / 3)) == test::bits(host.dot_n(n / 3)));
    }
}

TEST_CASE("GPU: bitwise identical for every forced grid size", "[gpu][determinism]") {
    for (int32_t memory : kGpuStrategies)
        for (std::size_t n : {std::size_t(100), std::size_t(8192 * 1024 + 1), std::size_t(3 * 8192 * 2000 + 77)}) {
            check_grids<float>(memory, CUDOT_F32, n);
            check_grids<double>(memory, CUDOT_F64, n);
        }
}

TEST_CASE("GPU: dot_n bounds and equality with a context of capacity n", "[gpu]") {
    for (int32_t memory : kGpuStrategies) {
        const std::size_t cap = 70000;
        Ctx big(cap, CUDOT_F32, memory);
        REQUIRE(big.status == CUDOT_OK);
        test::fill_random(big.x<float>(), big.y<float>(), cap, 17);
        for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(8193), cap}) {
            Ctx small(n, CUDOT_F32, memory);
            REQUIRE(small.status == CUDOT_OK);
            std::memcpy(small.x<float>(), big.x<float>(), n * sizeof(float));
            std::memcpy(small.y<float>(), big.y<float>(), n * sizeof(float));
            CHECK(test::bits(big.dot_n(n)) == test::bits(small.dot()));
        }
        double r;
        CHECK(cudot_dot_n(big.ctx, cap + 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    }
}

TEST_CASE("GPU: n = 0 contexts", "[gpu]") {
    for (int32_t memory : kGpuStrategies) {
        Ctx c(0, CUDOT_F64, memory);
        REQUIRE(c.status == CUDOT_OK);
        void *x = nullptr, *y = nullptr;
        cudot_get_inputs(c.ctx, &x, &y);
        CHECK(x != nullptr);
        CHECK(y != nullptr);
        CHECK(test::bits(c.dot()) == test::bits(0.0));
    }
}

TEST_CASE("GPU: AUTO picks a GPU strategy and says which", "[gpu]") {
    Ctx c(10, CUDOT_F32, CUDOT_MEMORY_AUTO);
    REQUIRE(c.status == CUDOT_OK);
    int32_t memory = -1, device = -1;
    REQUIRE(cudot_get_memory(c.ctx, &memory, &device) == CUDOT_OK);
    CHECK(memory == CUDOT_MEMORY_MAPPED);
    CHECK(device == 0);
    {  // opted in: managed memory on a GPU that shares it with the host (an H100)
        const test::EnvVar opt_in("CUDOT_AUTO_MANAGED", "1");
        Ctx m(10, CUDOT_F32, CUDOT_MEMORY_AUTO);
        REQUIRE(m.status == CUDOT_OK);
        REQUIRE(cudot_get_memory(m.ctx, &memory, &device) == CUDOT_OK);
        CHECK(memory == CUDOT_MEMORY_MANAGED);
    }
    {  // opted in, on a GPU without concurrent managed access (Windows, WSL2, some Jetsons): MAPPED
        const test::EnvVar opt_in("CUDOT_AUTO_MANAGED", "1");
        test::NoConcurrentManaged pretend;
        Ctx m(10, CUDOT_F32, CUDOT_MEMORY_AUTO);
        pretend.release();
        REQUIRE(m.status == CUDOT_OK);
        REQUIRE(cudot_get_memory(m.ctx, &memory, &device) == CUDOT_OK);
        CHECK(memory == CUDOT_MEMORY_MAPPED);
        m.x<float>()[3] = 2.0f;
        m.y<float>()[3] = 4.0f;
        CHECK(m.dot() == 8.0);
    }
    for (int32_t m : kGpuStrategies) {
        Ctx g(10, CUDOT_F32, m);
        REQUIRE(g.status == CUDOT_OK);
        cudot_get_memory(g.ctx, &memory, &device);
        CHECK(memory == m);
    }
}

TEST_CASE("GPU: a device ordinal that does not exist is an invalid argument", "[gpu]") {
    for (int32_t memory : {CUDOT_MEMORY_AUTO, CUDOT_MEMORY_PINNED}) {
        Ctx c(10, CUDOT_F32, memory, 4096);
        CHECK(c.status == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(c.init_error.find("4096") != std::string::npos);
    }
}

TEST_CASE("GPU: MANAGED refuses more than the device has free, before allocating", "[gpu]") {
    Ctx c(std::size_t(1) << 40, CUDOT_F32, CUDOT_MEMORY_MANAGED);  // 2 x 4 TiB
    CHECK(c.status == CUDOT_ERROR_OUT_OF_MEMORY);
    CHECK(c.init_error.find("free memory") != std::string::npos);
    Ctx p(std::size_t(1) << 40, CUDOT_F32, CUDOT_MEMORY_PINNED);
    CHECK(p.status == CUDOT_ERROR_OUT_OF_MEMORY);
    Ctx ok(1000, CUDOT_F32, CUDOT_MEMORY_MANAGED);  // and the device still works afterwards
    CHECK(ok.status == CUDOT_OK);
}

TEST_CASE("GPU: large vectors (2^26 + 5)", "[gpu][large]") {
    const std::size_t n = (std::size_t(1) << 26) + 5;
    for (int32_t memory : kGpuStrategies) {
        test::check_accuracy<float>(memory, CUDOT_F32, n, 21);
        test::check_accuracy<double>(memory, CUDOT_F64, n, 22);
    }
}

TEST_CASE("GPU: private contexts on 8 threads", "[gpu][threads]") {
    for (int32_t memory : kGpuStrategies) test::check_private_contexts(memory, 8, 6);
}

TEST_CASE("GPU: one context shared by 8 threads", "[gpu][threads]") {
    for (int32_t memory : kGpuStrategies) test::check_shared_context(memory, 8, 30);
}

template <class T>
static void check_hybrid(int32_t dtype, std::size_t n) {
    Ctx host(n, dtype, CUDOT_MEMORY_HOST);
    Ctx autoc(n, dtype, CUDOT_MEMORY_AUTO);
    REQUIRE(host.status == CUDOT_OK);
    REQUIRE(autoc.status == CUDOT_OK);
    test::fill_random(host.x<T>(), host.y<T>(), n, 4321 + n);
    for (std::size_t i = 0; i < n; i += 5) host.x<T>()[i] = std::ldexp(host.x<T>()[i], static_cast<int>(i % 60) - 30);
    std::memcpy(autoc.x<T>(), host.x<T>(), n * sizeof(T));
    std::memcpy(autoc.y<T>(), host.y<T>(), n * sizeof(T));
    const double expected = host.dot();
    for (double share : {0.0, 0.01, 0.3, 0.5, 0.77, 1.0, -1.0}) {
        cudot::testing::set_hybrid_share(autoc.ctx, share);
        INFO("n=" << n << " share=" << share);
        for (int call = 0; call < 3; ++call) CHECK(test::bits(autoc.dot()) == test::bits(expected));
        CHECK(test::bits(autoc.dot_n(n - n / 3)) == test::bits(host.dot_n(n - n / 3)));
    }
}

TEST_CASE("GPU: AUTO splits dots between CPU and GPU with the same bits as HOST", "[gpu][determinism]") {
    for (std::size_t n : {std::size_t(1000), std::size_t(8193), std::size_t(1 << 20),
                          std::size_t(8192 * 300 + 1), std::size_t((1 << 24) + 5)}) {
        check_hybrid<float>(CUDOT_F32, n);
        check_hybrid<double>(CUDOT_F64, n);
    }
}

TEST_CASE("GPU: AUTO adapts the GPU's share of a dot and stays correct", "[gpu]") {
    const std::size_t n = (std::size_t(1) << 24) + 3;  // large enough for the GPU to take part
    Ctx c(n, CUDOT_F32, CUDOT_MEMORY_AUTO);
    REQUIRE(c.status == CUDOT_OK);
    for (std::size_t i = 0; i < n; ++i) c.x<float>()[i] = c.y<float>()[i] = 1.0f;
    const double before = cudot::testing::hybrid_share(c.ctx);
    for (int i = 0; i < 20; ++i) CHECK(c.dot() == static_cast<double>(n));
    const double after = cudot::testing::hybrid_share(c.ctx);
    WARN("AUTO GPU share: " << before << " -> " << after);
    CHECK(after > 0.0);
    CHECK(after < 1.0);
    CHECK(after != before);  // it measured and moved
}

TEST_CASE("GPU: MANAGED stays correct while it switches between resident and migrating inputs", "[gpu]") {
    const std::size_t n = (std::size_t(1) << 22) + 9;
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
        Ctx m(n, dtype, CUDOT_MEMORY_MANAGED);
        Ctx h(n, dtype, CUDOT_MEMORY_HOST);
        REQUIRE(m.status == CUDOT_OK);
        REQUIRE(h.status == CUDOT_OK);
        const std::size_t es = dtype == CUDOT_F64 ? 8 : 4;
        for (int round = 0; round < 12; ++round) {
            if (round % 4 < 2) {  // rounds 0,1 and 4,5 ...: the host rewrites; others: resident
                if (dtype == CUDOT_F64) test::fill_random(h.x<double>(), h.y<double>(), n, 50 + round);
                else test::fill_random(h.x<float>(), h.y<float>(), n, 50 + round);
                std::memcpy(m.x<char>(), h.x<char>(), n * es);
                std::memcpy(m.y<char>(), h.y<char>(), n * es);
            }
            INFO("round " << round);
            CHECK(test::bits(m.dot()) == test::bits(h.dot()));
        }
    }
}

TEST_CASE("GPU: every pair of element types on every strategy equals HOST bit for bit", "[gpu][determinism]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes())
            for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(8193), std::size_t(3 * 8192 * 5 + 11),
                                  std::size_t((1 << 20) + 3)}) {
                Ctx host(n, xd, CUDOT_MEMORY_HOST, 0, yd);
                REQUIRE(host.status == CUDOT_OK);
                void *hx, *hy;
                cudot_get_inputs(host.ctx, &hx, &hy);
                test::fill_random_any(xd, hx, n, 7 * n + xd);
                test::fill_random_any(yd, hy, n, 11 * n + yd);
                const double expected = host.dot();
                const test::Reference ref = test::reference_any(xd, hx, yd, hy, n);
                CHECK(test::within_bound(xd, yd, expected, ref, n));
                for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
                    Ctx g(n, xd, memory, 0, yd);
                    REQUIRE(g.status == CUDOT_OK);
                    void *gx, *gy;
                    cudot_get_inputs(g.ctx, &gx, &gy);
                    std::memcpy(gx, hx, n * test::dtype_size(xd));
                    std::memcpy(gy, hy, n * test::dtype_size(yd));
                    if (memory == CUDOT_MEMORY_AUTO) cudot::testing::set_hybrid_share(g.ctx, 0.5);
                    INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd) << " n=" << n << " "
                                              << test::memory_name(memory));
                    CHECK(test::bits(g.dot()) == test::bits(expected));
                    if (memory == CUDOT_MEMORY_MAPPED)
                        for (unsigned blocks : {1u, 3u, 1000u}) {
                            cudot::testing::set_gpu_blocks(g.ctx, blocks);
                            CHECK(test::bits(g.dot()) == test::bits(expected));
                        }
                }
            }
}

TEST_CASE("GPU: GenDot inputs (cond 1..1e40): within the bounds and bitwise equal to HOST", "[gpu][accuracy]") {
    std::vector<double> x, y;
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64})
        for (std::size_t n : {std::size_t(1000), std::size_t(300007)})
            for (double c : {1.0, 1e8, 1e16, 1e24, 1e32, 1e40}) {
                test::gendot(n, c, dtype == CUDOT_F32, n + static_cast<std::uint64_t>(std::log10(c)), x, y);
                const test::ExactDot e = test::exact_dot(x.data(), y.data(), n);
                const double bound = test::documented_bound(dtype == CUDOT_F64, e.value, e.abs_sum, n);
                double host_result = 0;
                for (int32_t memory : {CUDOT_MEMORY_HOST, CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED,
                                       CUDOT_MEMORY_MANAGED, CUDOT_MEMORY_AUTO}) {
                    Ctx g(n, dtype, memory);
                    REQUIRE(g.status == CUDOT_OK);
                    for (std::size_t i = 0; i < n; ++i) {
                        test::set_value(dtype, g.x<void>(), i, x[i]);
                        test::set_value(dtype, g.y<void>(), i, y[i]);
                    }
                    if (memory == CUDOT_MEMORY_AUTO) cudot::testing::set_hybrid_share(g.ctx, 0.4);
                    const double r = g.dot();
                    INFO(test::dtype_name(dtype) << " " << test::memory_name(memory) << " n=" << n << " cond="
                                                 << e.condition << " r=" << r << " exact=" << e.value);
                    CHECK(test::exact_error(x.data(), y.data(), n, r) <= bound);
                    if (memory == CUDOT_MEMORY_HOST) host_result = r;
                    CHECK(test::bits(r) == test::bits(host_result));
                    if (memory == CUDOT_MEMORY_MANAGED)
                        for (unsigned blocks : {1u, 5u, 77u, 4096u}) {
                            cudot::testing::set_gpu_blocks(g.ctx, blocks);
                            CHECK(test::bits(g.dot()) == test::bits(host_result));
                        }
                }
            }
}

#if !defined(_WIN32)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

// A child of a process that used CUDA cannot use it: inherited GPU contexts refuse every call with a
// message naming fork, deinit still works, GPU inits report no device, AUTO falls back to the CPU, and
// HOST works. The child exits with the number of the first check that failed (alarm: 142).
TEST_CASE("GPU: after fork, GPU contexts are refused with a clear status and the child keeps working", "[gpu][fork]") {
    for (int32_t memory : kGpuStrategies) {
        Ctx c(1000, CUDOT_F32, memory);
        REQUIRE(c.status == CUDOT_OK);
        double r = 0;
        REQUIRE(cudot_dot(c.ctx, &r) == CUDOT_OK);
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(30);
            double v = 0;
            void *x = nullptr, *y = nullptr;
            if (cudot_dot(c.ctx, &v) != CUDOT_ERROR_UNSUPPORTED) _exit(1);
            if (!std::strstr(cudot_last_error(c.ctx), "fork")) _exit(2);
            if (cudot_get_inputs(c.ctx, &x, &y) != CUDOT_ERROR_UNSUPPORTED) _exit(3);
            if (cudot_deinit(c.ctx) != CUDOT_OK) _exit(4);
            cudot_config cfg = CUDOT_CONFIG_INIT;
            cfg.memory = memory;
            cudot_ctx *fresh = nullptr;
            if (cudot_init(&fresh, 10, &cfg) != CUDOT_ERROR_NO_DEVICE) _exit(5);
            cfg.memory = CUDOT_MEMORY_AUTO;
            int32_t got = -1, device = 0;
            if (cudot_init(&fresh, 10, &cfg) != CUDOT_OK) _exit(6);
            if (cudot_get_memory(fresh, &got, &device) != CUDOT_OK || got != CUDOT_MEMORY_HOST) _exit(7);
            if (cudot_deinit(fresh) != CUDOT_OK) _exit(8);
            _exit(0);
        }
        REQUIRE(pid > 0);
        int status = 0;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        INFO("memory " << memory << ": child status " << status);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        double again = 0;
        CHECK(cudot_dot(c.ctx, &again) == CUDOT_OK);  // the parent's context is untouched
        CHECK(test::bits(again) == test::bits(r));
    }
}
#endif

// Every strategy's buffers read zero when the context is made (cudot.h, since 1.8), and PINNED and MAPPED
// buffers, like HOST's, stay mapped as zero pages after deinit: a stale view reads zeros and its writes
// reach no other context (src/process/input_buffers.hpp). MANAGED buffers are CUDA's and are freed at deinit.
TEST_CASE("GPU: buffers start at zero; a stale PINNED or MAPPED view is harmless", "[gpu][buffers]") {
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED})
        for (std::size_t n : {std::size_t(1000), std::size_t(1) << 22}) {
            INFO(test::memory_name(memory) << " n = " << n);
            float *stale_x = nullptr;
            {
                Ctx old(n, CUDOT_F32, memory);
                REQUIRE(old.status == CUDOT_OK);
                for (std::size_t i = 0; i < n; ++i) old.x<float>()[i] = old.y<float>()[i] = 7.0f;
                double r = 0;
                REQUIRE(cudot_dot(old.ctx, &r) == CUDOT_OK);
                CHECK(r == 49.0 * n);
                stale_x = old.x<float>();
            }
            Ctx fresh(n, CUDOT_F32, memory);
            REQUIRE(fresh.status == CUDOT_OK);
            bool zero = true;
            for (std::size_t i = 0; i < n; ++i) zero = zero && fresh.x<float>()[i] == 0.0f && fresh.y<float>()[i] == 0.0f;
            CHECK(zero);
            for (std::size_t i = 0; i < 10; ++i) fresh.x<float>()[i] = fresh.y<float>()[i] = 1.0f;
            double r = 0;
            REQUIRE(cudot_dot(fresh.ctx, &r) == CUDOT_OK);
            CHECK(r == 10.0);
            if (memory != CUDOT_MEMORY_MANAGED) {
                CHECK(fresh.x<float>() != stale_x);
                volatile float *stale = stale_x;
                CHECK(stale[n - 1] == 0.0f);
                for (std::size_t i = 0; i < n; ++i) stale_x[i] = 99.0f;  // no crash, and nobody else sees it
                REQUIRE(cudot_dot(fresh.ctx, &r) == CUDOT_OK);
                CHECK(r == 10.0);
            }
        }
}
