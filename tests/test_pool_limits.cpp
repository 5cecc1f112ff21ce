// test_pool_limits.cpp - the CPU thread pool as a guest: sized from the CPUs the process may use,
// waking only the workers a job needs, leaving the application's signals alone, and a fork() during
// the first dot. The cases tagged [.…] depend on the whole process (its environment, its affinity, the
// pool not started yet): CTest runs each in a process of its own (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "knobs.hpp"
#include "process/process_limits.hpp"
#include "testing.hpp"

#if !defined(_WIN32)
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#endif

namespace fs = std::filesystem;
using cudot::limits::CgroupLimits;
using cudot::limits::cgroup_limits;

namespace {

// A directory tree standing in for /sys/fs/cgroup, removed when the test ends.
struct FakeCgroupTree {
    fs::path root;
    FakeCgroupTree() {
        static int serial = 0;
        root = fs::temp_directory_path() /
               ("cudot-cgroup-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "-" +
                std::to_string(++serial));
        fs::create_directories(root);
    }
    ~FakeCgroupTree() {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
    void write(const std::string &relative, const std::string &text) const {
        const fs::path file = root / fs::path(relative);
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    }
    std::string path() const { return root.string(); }
};

constexpr std::size_t kGiB = std::size_t(1) << 30;

// A HOST context of n f32 elements (all ones, so the dot is n) whose dots always use the pool.
cudot_ctx *pooled_context(std::size_t n, unsigned threads = 0) {
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    if (cudot_init(&ctx, n, &c) != CUDOT_OK) return nullptr;
    void *x, *y;
    cudot_get_inputs(ctx, &x, &y);
    for (std::size_t i = 0; i < n; ++i) static_cast<float *>(x)[i] = static_cast<float *>(y)[i] = 1.0f;
    cudot::testing::set_cpu_always_parallel(ctx, true);
    cudot::testing::set_cpu_threads(ctx, threads);
    return ctx;
}

bool dot_is(cudot_ctx *ctx, double expected) {
    double r = 0;
    return cudot_dot(ctx, &r) == CUDOT_OK && r == expected;
}

}  // namespace

TEST_CASE("cgroup v2: cpu.max and memory.max, tightest level from the process's cgroup up", "[limits]") {
    FakeCgroupTree tree;
    tree.write("cgroup.controllers", "cpu memory");
    const std::string self = "0::/app/job\n";

    SECTION("no files: no limits") {
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 0);
        CHECK(l.memory == 0);
    }
    SECTION("max: no limits") {
        tree.write("app/job/cpu.max", "max 100000");
        tree.write("app/job/memory.max", "max");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 0);
        CHECK(l.memory == 0);
    }
    SECTION("a quota of 1.5 CPUs is 2 threads; a byte limit is taken as it is") {
        tree.write("app/job/cpu.max", "150000 100000");
        tree.write("app/job/memory.max", "1073741824");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 2);
        CHECK(l.memory == kGiB);
    }
    SECTION("an ancestor's tighter limit wins over the process's own cgroup") {
        tree.write("app/job/cpu.max", "400000 100000");
        tree.write("app/cpu.max", "100000 100000");
        tree.write("app/job/memory.max", "max");
        tree.write("app/memory.max", "2147483648");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 1);
        CHECK(l.memory == 2 * kGiB);
    }
    SECTION("text that is not a limit is ignored") {
        tree.write("app/job/cpu.max", "lots 100000");
        tree.write("app/job/memory.max", "-5");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 0);
        CHECK(l.memory == 0);
    }
    SECTION("v1 files are not read on a v2 tree") {
        tree.write("cpu/app/job/cpu.cfs_quota_us", "100000");
        tree.write("cpu/app/job/cpu.cfs_period_us", "100000");
        CHECK(cgroup_limits(tree.path(), self + "3:cpu:/app/job\n").cpus == 0);
    }
}

TEST_CASE("cgroup v1: cfs quota and memory.limit_in_bytes", "[limits]") {
    FakeCgroupTree tree;  // no cgroup.controllers at the root: v1
    const std::string self = "12:memory:/svc\n4:cpu,cpuacct:/svc\n0::/\n";
    tree.write("cpu,cpuacct/cgroup.procs", "");
    tree.write("memory/cgroup.procs", "");

    SECTION("quota -1: no CPU limit; the unlimited memory value is just very large") {
        tree.write("cpu,cpuacct/svc/cpu.cfs_quota_us", "-1");
        tree.write("cpu,cpuacct/svc/cpu.cfs_period_us", "100000");
        tree.write("memory/svc/memory.limit_in_bytes", "9223372036854771712");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 0);
        CHECK(l.memory == std::size_t(9223372036854771712ull));
    }
    SECTION("2.5 CPUs is 3 threads; 512 MiB") {
        tree.write("cpu,cpuacct/svc/cpu.cfs_quota_us", "250000");
        tree.write("cpu,cpuacct/svc/cpu.cfs_period_us", "100000");
        tree.write("memory/svc/memory.limit_in_bytes", "536870912");
        const CgroupLimits l = cgroup_limits(tree.path(), self);
        CHECK(l.cpus == 3);
        CHECK(l.memory == kGiB / 2);
    }
    SECTION("a container sees its own limits at the mount's root, under the host's path") {
        tree.write("cpu,cpuacct/cpu.cfs_quota_us", "200000");
        tree.write("cpu,cpuacct/cpu.cfs_period_us", "100000");
        tree.write("memory/memory.limit_in_bytes", "1073741824");
        const CgroupLimits l = cgroup_limits(tree.path(), "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n");
        CHECK(l.cpus == 2);
        CHECK(l.memory == kGiB);
    }
    SECTION("the controller's own name, where the mount is named so") {
        FakeCgroupTree plain;
        plain.write("cpu/svc/cpu.cfs_quota_us", "100000");
        plain.write("cpu/svc/cpu.cfs_period_us", "100000");
        CHECK(cgroup_limits(plain.path(), "4:cpu,cpuacct:/svc\n").cpus == 1);
    }
}

TEST_CASE("pool size and memory limit from the CPUs and cgroup limits", "[limits]") {
    using cudot::limits::memory_for;
    using cudot::limits::threads_for;
    FakeCgroupTree tree;
    tree.write("cgroup.controllers", "cpu memory");
    tree.write("cpu.max", "300000 100000");
    tree.write("memory.max", "1073741824");
    const CgroupLimits quota = cgroup_limits(tree.path(), "0::/\n");
    const CgroupLimits none;

    CHECK(threads_for(nullptr, 16, 64, quota) == 3);  // the quota is tighter than the affinity mask
    CHECK(threads_for(nullptr, 2, 64, quota) == 2);   // the mask is tighter than the quota
    CHECK(threads_for(nullptr, 1, 64, none) == 1);    // taskset -c 0: the caller alone
    CHECK(threads_for(nullptr, 0, 8, none) == 8);     // mask unknown: the machine's count
    CHECK(threads_for(nullptr, 0, 0, none) == 1);     // nothing known: the caller alone
    CHECK(threads_for("5", 1, 64, quota) == 5);       // CUDOT_NUM_THREADS overrides both
    CHECK(threads_for("0", 2, 64, quota) == 2);       // an invalid value is ignored
    CHECK(memory_for(64 * kGiB, quota) == kGiB);
    CHECK(memory_for(kGiB / 2, quota) == kGiB / 2);
    CHECK(memory_for(64 * kGiB, none) == 64 * kGiB);
    CHECK(memory_for(0, quota) == kGiB);
}

TEST_CASE("CUDOT_NUM_THREADS: a count from 1 to 1024, anything else ignored", "[limits]") {
    using cudot::limits::parse_thread_count;
    CHECK(parse_thread_count("1") == 1);
    CHECK(parse_thread_count("3") == 3);
    CHECK(parse_thread_count("1024") == 1024);
    CHECK(parse_thread_count(nullptr) == 0);
    CHECK(parse_thread_count("") == 0);
    CHECK(parse_thread_count("0") == 0);
    CHECK(parse_thread_count("-2") == 0);
    CHECK(parse_thread_count("+2") == 0);
    CHECK(parse_thread_count(" 2") == 0);
    CHECK(parse_thread_count("3x") == 0);
    CHECK(parse_thread_count("four") == 0);
    CHECK(parse_thread_count("1025") == 0);
    CHECK(parse_thread_count("99999999999999999999999") == 0);
}

#if defined(__linux__)
namespace {
int os_threads() {
    int count = 0;
    for (const auto &entry : fs::directory_iterator("/proc/self/task")) count += entry.is_directory() ? 1 : 0;
    return count;
}

// The count once threads that have been joined have also left /proc/self/task: a joined thread may still
// be listed for a moment (under qemu-user, often for milliseconds), so wait until the count holds still.
int settled_os_threads() {
    int last = os_threads(), same = 0;
    for (int i = 0; i < 400 && same < 10; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const int now = os_threads();
        same = now == last ? same + 1 : 0;
        last = now;
    }
    return last;
}
}  // namespace
#endif

// CTest runs this with CUDOT_TEST_POOL_THREADS set to the count the environment should give (under
// taskset, with CUDOT_NUM_THREADS, ...).
TEST_CASE("the pool has as many threads as the process may use", "[.pool-size]") {
    const char *expected_text = std::getenv("CUDOT_TEST_POOL_THREADS");
    REQUIRE(expected_text);
    const unsigned expected = static_cast<unsigned>(std::atoi(expected_text));
#if defined(__linux__)
    std::thread([] {}).join();  // a runtime's own helper threads (TSan's) start with the first thread
    const int before = settled_os_threads();
#endif
    cudot_ctx *ctx = pooled_context(1 << 16);
    REQUIRE(ctx);
    CHECK(dot_is(ctx, 1 << 16));
    CHECK(cudot::testing::cpu_pool_threads() == expected);
#if defined(__linux__)
    CHECK(os_threads() - before == static_cast<int>(expected) - 1);  // workers the library started
#endif
    cudot_deinit(ctx);
}

// CTest runs this with CUDOT_NUM_THREADS=4.
TEST_CASE("a job wakes only the sleeping workers it needs", "[.wakeups]") {
    REQUIRE(cudot::testing::cpu_pool_threads() == 4);
    const std::size_t n = std::size_t(1) << 22;  // tasks long enough for woken workers to join in
    cudot_ctx *two = pooled_context(n, 2);
    cudot_ctx *all = pooled_context(n, 0);
    REQUIRE(two);
    REQUIRE(all);
    auto wakeups_of = [](cudot_ctx *ctx, double expected) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // every worker asleep
        const unsigned long long before = cudot::testing::cpu_pool_wakeups();
        CHECK(dot_is(ctx, expected));
        return cudot::testing::cpu_pool_wakeups() - before;
    };
    for (int i = 0; i < 5; ++i) {
        // The caller and one helper (none woken if a heavily loaded machine left it still polling).
        CHECK(wakeups_of(two, double(n)) <= 1);
        CHECK(wakeups_of(all, double(n)) <= 3);
    }
    cudot_deinit(two);
    cudot_deinit(all);
}

#if !defined(_WIN32)
namespace {
std::atomic<long> handler_thread{0};
void record_thread(int) { handler_thread.store(syscall(SYS_gettid)); }
}  // namespace

// CTest runs this with CUDOT_NUM_THREADS=4, so that there are workers the signal could go to.
TEST_CASE("a signal the application blocks stays pending until it unblocks it", "[.signals]") {
    struct sigaction action = {};
    action.sa_handler = record_thread;
    sigemptyset(&action.sa_mask);
    REQUIRE(sigaction(SIGUSR1, &action, nullptr) == 0);
    cudot_ctx *ctx = pooled_context(1 << 20);  // the workers start while nothing is blocked
    REQUIRE(ctx);
    REQUIRE(dot_is(ctx, 1 << 20));
    REQUIRE(cudot::testing::cpu_pool_threads() == 4);

    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    REQUIRE(pthread_sigmask(SIG_BLOCK, &usr1, &old) == 0);
    REQUIRE(kill(getpid(), SIGUSR1) == 0);  // process-directed: any thread that does not block it
    for (int i = 0; i < 20; ++i) {
        CHECK(dot_is(ctx, 1 << 20));  // the workers busy, spinning and asleep in turn
        std::this_thread::sleep_for(std::chrono::milliseconds(i % 2 ? 1 : 10));
    }
    CHECK(handler_thread.load() == 0);  // not run on any worker
    sigset_t pending;
    REQUIRE(sigpending(&pending) == 0);
    CHECK(sigismember(&pending, SIGUSR1) == 1);

    REQUIRE(pthread_sigmask(SIG_SETMASK, &old, nullptr) == 0);  // delivered here, before this returns
    CHECK(handler_thread.load() == syscall(SYS_gettid));
    cudot_deinit(ctx);
    signal(SIGUSR1, SIG_DFL);
}

// CTest runs this in a fresh process: the kernel tables must not have been built yet.
TEST_CASE("a fork while another thread builds the kernel tables leaves a working child", "[.fork-first-build]") {
    constexpr int kBuildMs = 1000;
    test::DelayedKernelBuild delay(kBuildMs);
    std::atomic<double> init_ms{0};
    std::thread first([&] {
        const auto start = std::chrono::steady_clock::now();
        cudot_ctx *ctx = pooled_context(1000);
        init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (ctx) cudot_deinit(ctx);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(kBuildMs / 4));  // `first` is inside the build
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(10);  // a child stuck on the half-built table dies of SIGALRM
        delay.release();
        cudot_ctx *ctx = pooled_context(1000);
        _exit(ctx && dot_is(ctx, 1000) && cudot_deinit(ctx) == CUDOT_OK ? 0 : 1);
    }
    REQUIRE(pid > 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    first.join();
    CHECK(init_ms.load() >= kBuildMs * 0.9);  // the build really was under way at the fork
    CHECK_FALSE(WIFSIGNALED(status));
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}
#endif

TEST_CASE("HOST inits honour the cgroup's memory limit", "[limits]") {
    FakeCgroupTree tree;
    tree.write("cgroup.controllers", "memory");
    tree.write("box/memory.max", std::to_string(768u << 20));
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    cudot_status status = CUDOT_ERROR_INTERNAL;
    std::string message;
    {
        const test::LimitsFromCgroupTree limits(tree.path().c_str(), "0::/box\n");
        // 512 MiB each for x and y: more than half of the 768 MiB limit, far less than any CI machine's RAM.
        status = cudot_init(&ctx, std::size_t(1) << 27, &c);
        message = cudot_last_error(nullptr);
    }
    if (ctx) cudot_deinit(ctx);
    CHECK(status == CUDOT_ERROR_OUT_OF_MEMORY);
    CHECK(message.find("805306368 bytes") != std::string::npos);
}
