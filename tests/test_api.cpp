// test_api.cpp - the contract of include/cudot.h, checked on the HOST backend (runs everywhere).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#if defined(__linux__)
#include <dlfcn.h>
#endif

#include "isolation.hpp"
#include "reference.hpp"
#include "testing.hpp"

using test::Ctx;

TEST_CASE("version macros and run-time version agree", "[api]") {
    CHECK(cudot_version() == CUDOT_VERSION_NUMBER);
    CHECK(cudot_version() / 10000 == CUDOT_VERSION_MAJOR);
    CHECK(std::string(cudot_version_string()) ==
          std::to_string(CUDOT_VERSION_MAJOR) + "." + std::to_string(CUDOT_VERSION_MINOR) + "." +
              std::to_string(CUDOT_VERSION_PATCH));
}

TEST_CASE("status strings name every status and never return NULL", "[api]") {
    CHECK(std::string(cudot_status_string(CUDOT_OK)) == "CUDOT_OK");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_INVALID_ARGUMENT)) == "CUDOT_ERROR_INVALID_ARGUMENT");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_OUT_OF_MEMORY)) == "CUDOT_ERROR_OUT_OF_MEMORY");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_NO_DEVICE)) == "CUDOT_ERROR_NO_DEVICE");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_UNSUPPORTED)) == "CUDOT_ERROR_UNSUPPORTED");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_CUDA)) == "CUDOT_ERROR_CUDA");
    CHECK(std::string(cudot_status_string(CUDOT_ERROR_INTERNAL)) == "CUDOT_ERROR_INTERNAL");
    for (int unknown : {-1, 7, 42, 1 << 30})
        CHECK(std::string(cudot_status_string(static_cast<cudot_status>(unknown))) == "CUDOT_ERROR_UNKNOWN");
}

TEST_CASE("the ABI values are the documented ones", "[api]") {
    CHECK(sizeof(cudot_config) == 40);
    CHECK(offsetof(cudot_config, dtype) == 4);
    CHECK(offsetof(cudot_config, memory) == 8);
    CHECK(offsetof(cudot_config, device) == 12);
    CHECK(offsetof(cudot_config, y_dtype) == 16);
    CHECK(offsetof(cudot_config, wait_ms) == 20);
    CHECK(offsetof(cudot_config, rows) == 24);
    CHECK(offsetof(cudot_config, mode) == 32);
    CHECK(offsetof(cudot_config, reserved) == 36);
    CHECK(CUDOT_EXACT_PARTIAL_BYTES == 1120);
    CHECK(CUDOT_DEFAULT_WAIT_MS == 60000u);
    CHECK(CUDOT_F16 == 3);
    CHECK(CUDOT_BF16 == 4);
    CHECK(CUDOT_I8 == 5);
    CHECK(CUDOT_U8 == 6);
    cudot_config c = CUDOT_CONFIG_INIT;
    CHECK(c.size == 40);
    CHECK(c.mode == CUDOT_MODE_CANONICAL);
    CHECK(c.reserved == 0);
    CHECK(c.wait_ms == 0);
    CHECK(c.rows == 0);
    CHECK(c.y_dtype == 0);
    CHECK(c.dtype == CUDOT_F32);
    CHECK(c.memory == CUDOT_MEMORY_AUTO);
    CHECK(c.device == 0);
}

// Calls cudot_init with ctx pre-set to garbage, and checks the failure contract.
static void expect_init_failure(std::size_t n, const cudot_config *config, cudot_status expected,
                                const char *message_part) {
    cudot_ctx *ctx = reinterpret_cast<cudot_ctx *>(std::uintptr_t(0xdead));
    cudot_status s = cudot_init(&ctx, n, config);
    INFO(cudot_last_error(nullptr));
    CHECK(s == expected);
    CHECK(ctx == nullptr);
    CHECK(std::strstr(cudot_last_error(nullptr), message_part) != nullptr);
}

TEST_CASE("init rejects bad arguments with a status and a message", "[api]") {
    CHECK(cudot_init(nullptr, 10, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::strstr(cudot_last_error(nullptr), "NULL") != nullptr);

    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    SECTION("config sizes smaller than the first version") {
        for (uint32_t size : {0u, 4u, 8u, 15u}) {
            c.size = size;
            expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "config->size");
        }
    }
    SECTION("unknown dtype") {
        for (int32_t dtype : {-1, 7, 99}) {
            c.dtype = dtype;
            expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "dtype");
        }
    }
    SECTION("unknown y_dtype") {
        for (int32_t y_dtype : {-1, 7, 1000}) {
            c.y_dtype = y_dtype;
            expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "y_dtype");
        }
    }
    SECTION("unknown memory strategy") {
        for (int32_t memory : {-1, 5, 1000}) {
            c.memory = memory;
            expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "memory");
        }
    }
    SECTION("negative device for a strategy that uses one") {
        c.memory = CUDOT_MEMORY_AUTO;
        c.device = -2;  // -1 is CUDOT_DEVICE_ALL (test_multi_gpu.cpp)
        expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "CUDOT_DEVICE_ALL");
        c.device = -7;
        expect_init_failure(10, &c, CUDOT_ERROR_INVALID_ARGUMENT, "device");
    }
    SECTION("n whose byte count overflows") {
        expect_init_failure(std::numeric_limits<std::size_t>::max(), &c, CUDOT_ERROR_INVALID_ARGUMENT, "overflow");
        c.dtype = CUDOT_F64;
        expect_init_failure(std::numeric_limits<std::size_t>::max() / 4, &c, CUDOT_ERROR_INVALID_ARGUMENT, "overflow");
    }
    SECTION("n beyond the machine's memory") {
        expect_init_failure(std::size_t(1) << 60, &c, CUDOT_ERROR_OUT_OF_MEMORY, "physical memory");
    }
}

TEST_CASE("config structs from older and newer callers", "[api]") {
    struct Bigger {
        cudot_config base;
        int32_t future_field;
        int32_t future_field2;
    } big;
    std::memset(&big, 0, sizeof big);
    big.base.size = sizeof big;
    big.base.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    SECTION("larger struct, unknown tail all zero: accepted") {
        REQUIRE(cudot_init(&ctx, 5, &big.base) == CUDOT_OK);
        cudot_deinit(ctx);
    }
    SECTION("larger struct asking for something unknown: refused") {
        big.future_field2 = 1;
        expect_init_failure(5, &big.base, CUDOT_ERROR_UNSUPPORTED, "newer than this library");
    }
    SECTION("absurd size: refused without reading beyond") {
        big.base.size = 1u << 31;
        expect_init_failure(5, &big.base, CUDOT_ERROR_INVALID_ARGUMENT, "config->size");
    }
    SECTION("zero fields mean defaults") {
        cudot_config zero;
        std::memset(&zero, 0, sizeof zero);
        zero.size = sizeof zero;
        REQUIRE(cudot_init(&ctx, 5, &zero) == CUDOT_OK);
        int32_t memory = -1;
        REQUIRE(cudot_get_memory(ctx, &memory, nullptr) == CUDOT_OK);
        CHECK(memory != CUDOT_MEMORY_AUTO);
        cudot_deinit(ctx);
    }
}

// The cudot_config of version 1.0, as a caller compiled against that header lays it out.
struct ConfigV1 {
    uint32_t size;
    int32_t dtype, memory, device;
};

TEST_CASE("a caller compiled with the 1.0 config (16 bytes, no y_dtype) still works", "[api]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_I8}) {
        // The 1.0 struct followed by bytes a newer library must not read as y_dtype.
        struct {
            ConfigV1 v1;
            int32_t garbage;
        } old;
        old.v1 = ConfigV1{16, dtype, CUDOT_MEMORY_HOST, 0};
        old.garbage = 99;
        cudot_ctx *ctx = nullptr;
        REQUIRE(cudot_init(&ctx, 10, reinterpret_cast<const cudot_config *>(&old.v1)) == CUDOT_OK);
        int32_t xd = 0, yd = 0;
        REQUIRE(cudot_get_dtypes(ctx, &xd, &yd) == CUDOT_OK);
        CHECK(xd == dtype);
        CHECK(yd == dtype);  // y_dtype defaulted to "same as dtype"
        void *x, *y;
        cudot_get_inputs(ctx, &x, &y);
        for (int i = 0; i < 10; ++i) {
            test::set_value(dtype, x, i, 2);
            test::set_value(dtype, y, i, 3);
        }
        double r = 0;
        REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
        CHECK(r == 60.0);
        cudot_deinit(ctx);
    }
}

TEST_CASE("mixed element types: x and y buffers of their own types", "[api]") {
    for (int32_t xd : test::all_dtypes())
        for (int32_t yd : test::all_dtypes()) {
            Ctx c(37, xd, CUDOT_MEMORY_HOST, 0, yd);
            INFO(test::dtype_name(xd) << " x " << test::dtype_name(yd));
            REQUIRE(c.status == CUDOT_OK);
            int32_t gx = 0, gy = 0;
            REQUIRE(cudot_get_dtypes(c.ctx, &gx, &gy) == CUDOT_OK);
            CHECK(gx == xd);
            CHECK(gy == yd);
            void *x, *y;
            cudot_get_inputs(c.ctx, &x, &y);
            for (int i = 0; i < 37; ++i) {
                test::set_value(xd, x, i, i % 2 ? 1 : 2);  // 2,1,2,1,...
                test::set_value(yd, y, i, i % 3);          // 0,1,2,0,...
            }
            double expected = 0;
            for (int i = 0; i < 37; ++i) expected += (i % 2 ? 1 : 2) * (i % 3);
            CHECK(c.dot() == expected);
        }
    CHECK(cudot_get_dtypes(nullptr, nullptr, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("NULL config means F32 and AUTO", "[api]") {
    cudot_ctx *ctx = nullptr;
    REQUIRE(cudot_init(&ctx, 100, nullptr) == CUDOT_OK);
    int32_t memory = -1, device = -1;
    REQUIRE(cudot_get_memory(ctx, &memory, &device) == CUDOT_OK);
    CHECK(memory != CUDOT_MEMORY_AUTO);
    if (memory == CUDOT_MEMORY_HOST) CHECK(device == CUDOT_DEVICE_NONE);
    else CHECK(device == 0);
    std::size_t cap = 0;
    REQUIRE(cudot_get_capacity(ctx, &cap) == CUDOT_OK);
    CHECK(cap == 100);
    float *x = nullptr, *y = nullptr;
    REQUIRE(cudot_get_inputs(ctx, reinterpret_cast<void **>(&x), reinterpret_cast<void **>(&y)) == CUDOT_OK);
    for (int i = 0; i < 100; ++i) x[i] = y[i] = 0.5f;  // F32 buffers: 100 floats each
    double r = 0;
    REQUIRE(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == 25.0);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
}

TEST_CASE("GPU strategies without a usable GPU say so and AUTO falls back to HOST", "[api]") {
    for (int32_t memory : {CUDOT_MEMORY_PINNED, CUDOT_MEMORY_MAPPED, CUDOT_MEMORY_MANAGED}) {
        Ctx c(64, CUDOT_F32, memory);
        INFO(test::memory_name(memory) << ": " << c.init_error);
        if (c.status == CUDOT_ERROR_NO_DEVICE) {
            CHECK(c.ctx == nullptr);
            CHECK_FALSE(c.init_error.empty());
            Ctx a(64, CUDOT_F32, CUDOT_MEMORY_AUTO);
            REQUIRE(a.status == CUDOT_OK);
            int32_t resolved = -1, device = 0;
            cudot_get_memory(a.ctx, &resolved, &device);
            CHECK(resolved == CUDOT_MEMORY_HOST);
            CHECK(device == CUDOT_DEVICE_NONE);
        } else {
            CHECK(c.status == CUDOT_OK);  // a machine with a GPU: test_gpu covers it
        }
    }
}

#if defined(__linux__)
// Without a GPU, a GPU strategy's message says which of three things is missing: a driver at all (CUDA's
// own words, "driver version is insufficient", would send the user to update a driver they do not have),
// a new enough driver, or a device.
TEST_CASE("without a GPU, the message says whether there is a driver at all", "[api]") {
    Ctx c(64, CUDOT_F32, CUDOT_MEMORY_PINNED);
    if (c.status == CUDOT_OK) TEST_SKIP("a usable GPU: no message to explain");
    const std::string why = c.init_error;
    INFO(why);
    REQUIRE(c.status == CUDOT_ERROR_NO_DEVICE);
    if (why.find("built without CUDA") != std::string::npos) return;  // a CPU-only build says that instead
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
        CHECK(why.find("no NVIDIA driver on this machine") != std::string::npos);
        CHECK(why.find("insufficient") == std::string::npos);
    } else {
        dlclose(driver);
        CHECK(why.find("no NVIDIA driver") == std::string::npos);
    }
}

// CTest runs this with a stand-in libcuda.so.1 first on LD_LIBRARY_PATH (tests/support/fake_old_driver.c)
// that reports a CUDA 11.4 driver, and CUDOT_TEST_FAKE_OLD_DRIVER=1; without that variable (a run of every
// case, hidden ones included) it has nothing to check, and says so.
TEST_CASE("a driver too old for the build is named as such, with both versions", "[.old-driver]") {
    if (!std::getenv("CUDOT_TEST_FAKE_OLD_DRIVER"))
        TEST_SKIP("needs the stand-in old driver that CTest puts first on the library path");
    Ctx c(64, CUDOT_F32, CUDOT_MEMORY_PINNED);
    INFO(c.init_error);
    REQUIRE(c.status == CUDOT_ERROR_NO_DEVICE);
    CHECK(c.init_error.find("too old for this build") != std::string::npos);
    CHECK(c.init_error.find("supports CUDA 11.4") != std::string::npos);
    Ctx a(64, CUDOT_F32, CUDOT_MEMORY_AUTO);  // and AUTO still works, on the CPU
    CHECK(a.status == CUDOT_OK);
}
#endif

TEST_CASE("HOST ignores the device field", "[api]") {
    Ctx c(8, CUDOT_F64, CUDOT_MEMORY_HOST, -5);
    REQUIRE(c.status == CUDOT_OK);
}

TEST_CASE("calls on NULL or with NULL out-pointers fail cleanly", "[api]") {
    double r = 1.0;
    CHECK(cudot_dot(nullptr, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_dot_n(nullptr, 0, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(r == 1.0);
    void *p = nullptr;
    CHECK(cudot_get_inputs(nullptr, &p, &p) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_get_memory(nullptr, nullptr, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    std::size_t cap = 0;
    CHECK(cudot_get_capacity(nullptr, &cap) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_deinit(nullptr) == CUDOT_OK);
    CHECK(cudot_last_error(nullptr) != nullptr);

    Ctx c(10, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    CHECK(std::string(cudot_last_error(c.ctx)).empty());
    CHECK(cudot_dot(c.ctx, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::strstr(cudot_last_error(c.ctx), "result") != nullptr);
    CHECK(cudot_get_capacity(c.ctx, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_get_inputs(c.ctx, nullptr, nullptr) == CUDOT_OK);
    CHECK(cudot_get_memory(c.ctx, nullptr, nullptr) == CUDOT_OK);
}

TEST_CASE("a failed call leaves the context usable and its message in place", "[api]") {
    Ctx c(10, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    for (int i = 0; i < 10; ++i) c.x<float>()[i] = c.y<float>()[i] = 1.0f;
    double r = 0;
    CHECK(cudot_dot_n(c.ctx, 11, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    std::string message = cudot_last_error(c.ctx);
    CHECK(message.find("capacity") != std::string::npos);
    CHECK(c.dot() == 10.0);
    CHECK(message == cudot_last_error(c.ctx));  // success does not clear the last failure
}

TEST_CASE("inputs are aligned, distinct and stable", "[api]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
        Ctx c(1001, dtype, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        void *x1, *y1, *x2, *y2;
        cudot_get_inputs(c.ctx, &x1, &y1);
        cudot_get_inputs(c.ctx, &x2, &y2);
        CHECK(x1 == x2);
        CHECK(y1 == y2);
        CHECK(x1 != y1);
        CHECK(reinterpret_cast<std::uintptr_t>(x1) % 64 == 0);
        CHECK(reinterpret_cast<std::uintptr_t>(y1) % 64 == 0);
    }
}

TEST_CASE("n = 0: a context with no elements, every dot exactly +0.0", "[api]") {
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64}) {
        Ctx c(0, dtype, CUDOT_MEMORY_HOST);
        REQUIRE(c.status == CUDOT_OK);
        void *x = nullptr, *y = nullptr;
        REQUIRE(cudot_get_inputs(c.ctx, &x, &y) == CUDOT_OK);
        CHECK(x != nullptr);
        CHECK(y != nullptr);
        double r = c.dot();
        CHECK(test::bits(r) == test::bits(0.0));
        CHECK(test::bits(c.dot_n(0)) == test::bits(0.0));
        CHECK(cudot_dot_n(c.ctx, 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    }
}

TEST_CASE("dot_n reads only the first n and matches a context of capacity n", "[api]") {
    const std::size_t cap = 50000;
    Ctx big(cap, CUDOT_F64, CUDOT_MEMORY_HOST);
    REQUIRE(big.status == CUDOT_OK);
    test::fill_random(big.x<double>(), big.y<double>(), cap, 7);
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(8191), std::size_t(8193), cap - 1, cap}) {
        Ctx small(n, CUDOT_F64, CUDOT_MEMORY_HOST);
        REQUIRE(small.status == CUDOT_OK);
        std::memcpy(small.x<double>(), big.x<double>(), n * sizeof(double));
        std::memcpy(small.y<double>(), big.y<double>(), n * sizeof(double));
        INFO("n = " << n);
        CHECK(test::bits(big.dot_n(n)) == test::bits(small.dot()));
    }
    // Poison beyond n: dot_n must not see it.
    big.x<double>()[100] = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(std::isnan(big.dot_n(100)));
    CHECK(std::isnan(big.dot_n(101)));
    double r;
    CHECK(cudot_dot_n(big.ctx, cap + 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(cudot_dot_n(big.ctx, std::numeric_limits<std::size_t>::max(), &r) == CUDOT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("join_partials: a tile count whose bytes overflow is refused, not multiplied", "[api][partials]") {
    unsigned char partials[CUDOT_PARTIAL_BYTES] = {0};
    double r = 0;
    for (int32_t dtype : {CUDOT_F32, CUDOT_F64, CUDOT_I8}) {
        // tiles * 16 wraps to a small number: before, a small scratch array was then filled past its end.
        const std::size_t tiles = SIZE_MAX / 16 + 2;
        CHECK(cudot_join_partials(dtype, 0, partials, tiles, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(cudot_last_error(nullptr)).find("exceed the address space") != std::string::npos);
    }
}

TEST_CASE("a context lookup that throws gives INTERNAL from every entry point, and nothing is lost",
          "[api]") {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    REQUIRE(cudot_init(&ctx, 100, &c) == CUDOT_OK);
    void *x = nullptr, *y = nullptr;
    REQUIRE(cudot_get_inputs(ctx, &x, &y) == CUDOT_OK);
    for (int i = 0; i < 100; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
    double r = 0;
    int32_t a = 0, b = 0;
    std::size_t n = 0;
    unsigned char partials[CUDOT_PARTIAL_BYTES];
    using cudot::testing::throw_on_next_lookup;
    throw_on_next_lookup();
    CHECK(cudot_dot(ctx, &r) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_dot_n(ctx, 10, &r) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_get_inputs(ctx, &x, &y) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_get_memory(ctx, &a, &b) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_get_dtypes(ctx, &a, &b) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_get_capacity(ctx, &n) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(cudot_tile_partials(ctx, 0, 100, partials) == CUDOT_ERROR_INTERNAL);
    throw_on_next_lookup();
    CHECK(std::string(cudot_last_error(ctx)).find("lookup failed") != std::string::npos);
    throw_on_next_lookup();
    CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INTERNAL);
    // The context is still there and works; the next deinit destroys it.
    CHECK(cudot_dot(ctx, &r) == CUDOT_OK);
    CHECK(r == 100.0);
    CHECK(cudot_deinit(ctx) == CUDOT_OK);
    CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INVALID_ARGUMENT);
}
