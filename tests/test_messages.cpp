// test_messages.cpp - cudot_last_error: a failed call's message, read on the thread that made the call,
// is that call's message whatever other threads do on the same context; a failed deinit's message is in
// cudot_last_error(NULL). Under ThreadSanitizer (scripts/sanitize.sh) the first cases also show that
// reading a message never races with another thread's failure.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/messages.hpp"
#include "reference.hpp"
#include "testing.hpp"

namespace {

constexpr std::size_t kCapacity = 1000;

// What cudot_dot_n(ctx, n) beyond the capacity says, for each thread's own n.
std::string beyond_capacity(std::size_t n) {
    return "cudot_dot_n: n = " + std::to_string(n) + " exceeds the capacity " + std::to_string(kCapacity);
}

bool starts_with(const char *text, const std::string &prefix) {
    return std::strncmp(text, prefix.c_str(), prefix.size()) == 0;
}

}  // namespace

TEST_CASE("messages: each thread reads its own failure while others fail on the same context", "[messages][threads][slow-under-checkers]") {
    test::Ctx c(kCapacity, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    constexpr int kThreads = 8, kRounds = 20000;
    std::atomic<int> wrong_status{0}, wrong_message{0}, torn_reads{0};
    std::atomic<bool> failing{true};
    std::string example;  // one wrong message, for the report
    std::atomic<bool> example_taken{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const std::size_t n = kCapacity + 1 + static_cast<std::size_t>(t);
            const std::string own_dot = beyond_capacity(n);
            for (int i = 0; i < kRounds; ++i) {
                const bool dot = (i + t) % 2 == 0;
                double r;
                const cudot_status status = dot ? cudot_dot_n(c.ctx, n, &r) : cudot_get_capacity(c.ctx, nullptr);
                if (status != CUDOT_ERROR_INVALID_ARGUMENT) ++wrong_status;
                const char *message = cudot_last_error(c.ctx);
                const bool own = dot ? message == own_dot
                                     : std::strcmp(message, "cudot_get_capacity: n (the out-pointer) is NULL") == 0;
                if (!own) {
                    ++wrong_message;
                    if (!example_taken.exchange(true)) example = message;
                }
            }
        });
    // Readers that never fail on the context read its latest message from any thread: always whole.
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&] {
            while (failing.load()) {
                const char *message = cudot_last_error(c.ctx);
                if (message[0] != '\0' && !starts_with(message, "cudot_dot_n: n = ") &&
                    !starts_with(message, "cudot_get_capacity: "))
                    ++torn_reads;
            }
        });
    for (int t = 0; t < kThreads; ++t) threads[static_cast<std::size_t>(t)].join();
    failing = false;
    for (std::size_t t = kThreads; t < threads.size(); ++t) threads[t].join();
    INFO("a wrong message: " << example);
    CHECK(wrong_status == 0);
    CHECK(wrong_message == 0);
    CHECK(torn_reads == 0);
}

TEST_CASE("messages: a thread that never failed on a context reads the context's latest failure", "[messages]") {
    test::Ctx c(kCapacity, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(c.status == CUDOT_OK);
    CHECK(std::string(cudot_last_error(c.ctx)).empty());
    std::thread([&] {
        double r;
        CHECK(cudot_dot_n(c.ctx, kCapacity + 7, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    }).join();
    CHECK(cudot_last_error(c.ctx) == beyond_capacity(kCapacity + 7));
}

TEST_CASE("messages: a thread keeps its own message for each of the last contexts it failed on", "[messages]") {
    test::Ctx a(kCapacity, CUDOT_F32, CUDOT_MEMORY_HOST), b(kCapacity, CUDOT_F32, CUDOT_MEMORY_HOST);
    REQUIRE(a.status == CUDOT_OK);
    REQUIRE(b.status == CUDOT_OK);
    double r;
    REQUIRE(cudot_dot_n(a.ctx, kCapacity + 1, &r) == CUDOT_ERROR_INVALID_ARGUMENT);
    REQUIRE(cudot_get_capacity(b.ctx, nullptr) == CUDOT_ERROR_INVALID_ARGUMENT);
    // Another thread fails on a meanwhile: this thread still reads its own failure on a.
    std::thread([&] { cudot_dot_n(a.ctx, kCapacity + 2, &r); }).join();
    CHECK(cudot_last_error(a.ctx) == beyond_capacity(kCapacity + 1));
    CHECK(std::string(cudot_last_error(b.ctx)).find("cudot_get_capacity") == 0);
    // A success leaves the thread's last failure in place.
    REQUIRE(cudot_dot(a.ctx, &r) == CUDOT_OK);
    CHECK(cudot_last_error(a.ctx) == beyond_capacity(kCapacity + 1));
}

TEST_CASE("messages: a context at a reused address does not show its predecessor's message", "[messages]") {
    // What a later cudot_init at a destroyed context's address looks like to the messages: the same
    // address, a new serial and an empty shared message. (Built here rather than by freeing and
    // allocating: under ASan and valgrind the allocator does not hand a freed block out again soon.)
    cudot_ctx ctx;
    ctx.serial = cudot::messages::next_serial();
    {
        cudot::messages::CallOn call(ctx);
        call.finish(cudot::fail(ctx.sink(), CUDOT_ERROR_INVALID_ARGUMENT, "the predecessor's failure"));
    }
    REQUIRE(std::string(cudot::messages::read(ctx)) == "the predecessor's failure");
    ctx.serial = cudot::messages::next_serial();
    ctx.last_message[0] = '\0';
    CHECK(std::string(cudot::messages::read(ctx)).empty());
}

TEST_CASE("messages: a failed deinit leaves its message in cudot_last_error(NULL)", "[messages]") {
    cudot_config cfg = CUDOT_CONFIG_INIT;
    cfg.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    REQUIRE(cudot_init(&ctx, kCapacity, &cfg) == CUDOT_OK);
    cudot::testing::throw_on_next_lookup();
    CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INTERNAL);
    CHECK(std::string(cudot_last_error(nullptr)).find("cudot_deinit: the context's lookup failed") == 0);
    REQUIRE(cudot_deinit(ctx) == CUDOT_OK);  // it was still live
    // A successful deinit leaves the previous failure's message in place.
    CHECK(std::string(cudot_last_error(nullptr)).find("cudot_deinit: the context's lookup failed") == 0);
    CHECK(cudot_deinit(ctx) == CUDOT_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(cudot_last_error(nullptr)).find("cudot_deinit: not a live cudot context") == 0);
}
