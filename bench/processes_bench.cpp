// processes_bench.cpp - cudot-bench-processes: many processes, one per core, each doing HOST dots, as
// MPI ranks pinned one per core do. Every process is pinned to its core before its first cudot call, so
// cudot sees one CPU and must not start threads that compete with the other processes.
//
// It measures one process alone (pinned to the first CPU) and then N processes together (pinned to the
// first N CPUs of the affinity mask), all starting at once and dotting for the same time, and reports
// the aggregate dots/s against N times the lone process's (target: at least 0.9). Exit status: 0 when
// every dot returned the right value (whether the target was met or not), 1 otherwise.
//
//   cudot-bench-processes [--procs N] [--n ELEMENTS] [--seconds S] [--no-pin]
//
// --no-pin leaves every process free to run anywhere (cudot then sizes its pool from every CPU).
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "cudot.h"

namespace {

constexpr int kMaxProcs = 1024;

struct Options {
    int procs = 0;  // 0: one per CPU of the affinity mask
    std::size_t n = std::size_t(1) << 16;
    double seconds = 2.0;
    bool pin = true;
};

struct Result {
    long long dots;
    double seconds;
    int ok;  // every dot returned CUDOT_OK and the expected value
};

// Shared by the parent and its children (an anonymous shared mapping made before fork).
struct Shared {
    std::atomic<int> ready;
    std::atomic<int> go;
    Result results[kMaxProcs];
};

double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void pause_briefly() { usleep(100); }

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

// One process: its own HOST context, filled, warmed up, then dots until the shared deadline.
Result dot_until_told(const Options &o, Shared &shared) {
    Result r{0, 0, 0};
    cudot_config c = CUDOT_CONFIG_INIT;
    c.memory = CUDOT_MEMORY_HOST;
    cudot_ctx *ctx = nullptr;
    const bool made = cudot_init(&ctx, o.n, &c) == CUDOT_OK;
    double expected = 0;
    if (made) {
        void *x, *y;
        cudot_get_inputs(ctx, &x, &y);
        for (std::size_t i = 0; i < o.n; ++i) {  // small integers: the dot is exact in any order
            static_cast<float *>(x)[i] = static_cast<float>(i % 7) - 3.0f;
            static_cast<float *>(y)[i] = static_cast<float>(i % 5);
            expected += (static_cast<double>(i % 7) - 3.0) * static_cast<double>(i % 5);
        }
    } else {
        std::fprintf(stderr, "cudot-bench-processes: init: %s\n", cudot_last_error(nullptr));
    }
    bool ok = made;
    double value = 0;
    for (int i = 0; i < 50 && ok; ++i) ok = cudot_dot(ctx, &value) == CUDOT_OK && value == expected;
    shared.ready.fetch_add(1);
    while (shared.go.load() == 0) pause_briefly();
    const double start = now_s(), end = start + o.seconds;
    double t = start;
    while (ok && t < end) {
        ok = cudot_dot(ctx, &value) == CUDOT_OK && value == expected;
        ++r.dots;
        if ((r.dots & 15) == 0) t = now_s();
    }
    r.seconds = now_s() - start;
    r.ok = ok ? 1 : 0;
    if (made) cudot_deinit(ctx);
    return r;
}

// Runs `procs` processes together (process k on cpus[k] when pinning); false if one could not start.
bool run_together(const Options &o, const std::vector<int> &cpus, int procs, Shared &shared) {
    shared.ready.store(0);
    shared.go.store(0);
    std::vector<pid_t> children;
    for (int k = 0; k < procs; ++k) {
        const pid_t pid = fork();
        if (pid == 0) {
            if (o.pin && !pin_to(cpus[k % cpus.size()])) _exit(2);
            shared.results[k] = dot_until_told(o, shared);
            _exit(0);
        }
        if (pid < 0) {
            std::perror("cudot-bench-processes: fork");
            shared.go.store(1);
            for (pid_t c : children) waitpid(c, nullptr, 0);
            return false;
        }
        children.push_back(pid);
    }
    while (shared.ready.load() < procs) pause_briefly();
    shared.go.store(1);
    bool all_exited = true;
    for (pid_t c : children) {
        int status = 0;
        all_exited = waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0 && all_exited;
    }
    return all_exited;
}

double rate(const Result &r) { return r.seconds > 0 ? static_cast<double>(r.dots) / r.seconds : 0; }

bool parse(int argc, char **argv, Options *o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--procs" && has_value) o->procs = std::atoi(argv[++i]);
        else if (a == "--n" && has_value) o->n = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--seconds" && has_value) o->seconds = std::atof(argv[++i]);
        else if (a == "--no-pin") o->pin = false;
        else return false;
    }
    return o->procs >= 0 && o->procs <= kMaxProcs && o->n > 0 && o->seconds > 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    if (!parse(argc, argv, &o)) {
        std::fprintf(stderr, "usage: %s [--procs N (1..%d)] [--n ELEMENTS] [--seconds S] [--no-pin]\n", argv[0], kMaxProcs);
        return 2;
    }
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.empty()) {
        std::fprintf(stderr, "cudot-bench-processes: cannot read the affinity mask\n");
        return 1;
    }
    const int procs = o.procs > 0 ? o.procs : static_cast<int>(cpus.size());
    if (o.pin && procs > static_cast<int>(cpus.size()))
        std::fprintf(stderr, "cudot-bench-processes: %d processes on %zu CPUs: some share a core\n", procs, cpus.size());
    auto *shared = static_cast<Shared *>(
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (shared == MAP_FAILED) {
        std::perror("cudot-bench-processes: mmap");
        return 1;
    }
    new (shared) Shared{};

    std::printf("HOST f32 dots of n = %zu, %.2f s per run, %s\n", o.n, o.seconds,
                o.pin ? "each process pinned to one CPU" : "processes not pinned");
    if (!run_together(o, cpus, 1, *shared) || !shared->results[0].ok) {
        std::fprintf(stderr, "cudot-bench-processes: the lone process failed\n");
        return 1;
    }
    const double alone = rate(shared->results[0]);
    std::printf("1 process alone: %.0f dots/s\n", alone);

    if (!run_together(o, cpus, procs, *shared)) {
        std::fprintf(stderr, "cudot-bench-processes: a process failed\n");
        return 1;
    }
    double aggregate = 0;
    bool ok = true;
    for (int k = 0; k < procs; ++k) {
        const Result &r = shared->results[k];
        std::printf("  process %d: %.0f dots/s%s\n", k, rate(r), r.ok ? "" : "  WRONG RESULT OR FAILED DOT");
        aggregate += rate(r);
        ok = ok && r.ok;
    }
    const double ratio = alone > 0 ? aggregate / (procs * alone) : 0;
    std::printf("%d processes: %.0f dots/s together = %.3f x %d x one alone (target >= 0.9): %s\n", procs, aggregate,
                ratio, procs, ratio >= 0.9 ? "PASS" : "MISSED");
    return ok ? 0 : 1;
}
