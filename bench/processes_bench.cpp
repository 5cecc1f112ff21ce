// processes_bench.cpp - cudot-bench-processes: many processes, one per core, each doing HOST dots, as
// MPI ranks pinned one per core do. Every process is pinned to its core before its first cudot call, so
// cudot sees one CPU and must not start threads that compete with the other processes.
//
// It measures one process alone (pinned to the first CPU) and then N processes together (pinned one per
// physical core first: the CPUs of the affinity mask ordered so that SMT siblings come last), all
// starting at once and dotting for the same time, and reports the aggregate dots/s against N times the
// lone process's (target: at least 0.9). The same layout then runs a plain loop that reads and sums the
// same bytes without cudot: its ratio is what the machine itself gives N copies of one core's work
// (shared caches, memory, clock speed with more cores busy), the ceiling cudot's ratio is read against.
// Exit status: 0 when every dot returned the right value (whether the target was met or not), 1 otherwise.
//
//   cudot-bench-processes [--procs N] [--n ELEMENTS] [--seconds S] [--rounds R] [--no-pin]
//
// Shared and virtual machines change speed from second to second, so the lone run and the run together
// alternate, R rounds (default 3) of each, and the round with the median ratio is the one reported.
//
// --no-pin leaves every process free to run anywhere (cudot then sizes its pool from every CPU).
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
    bool plain = false;  // the ceiling: a plain loop instead of cudot
    int rounds = 3;      // each round: one alone, then N together; the median round's ratio is reported
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

int read_topology(int cpu, const char *what) {
    char path[128];
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = std::fopen(path, "r");
    int value = -1;
    if (f) {
        if (std::fscanf(f, "%d", &value) != 1) value = -1;
        std::fclose(f);
    }
    return value;
}

// The CPUs of the affinity mask, one per physical core first (package, core id), then the SMT siblings;
// *cores gets the number of physical cores.
std::vector<int> allowed_cpus(int *cores) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> first, siblings;
    *cores = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return first;
    std::vector<std::pair<int, int>> seen;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        const std::pair<int, int> core{read_topology(c, "physical_package_id"), read_topology(c, "core_id")};
        const bool shared = core.second >= 0 && std::find(seen.begin(), seen.end(), core) != seen.end();
        (shared ? siblings : first).push_back(c);
        if (!shared) seen.push_back(core);
    }
    *cores = static_cast<int>(first.size());
    first.insert(first.end(), siblings.begin(), siblings.end());
    return first;
}

// The ceiling's work: what a HOST dot of n floats reads, summed in double by one core with no library.
double plain_sum(const float *x, const float *y, std::size_t n) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(x[i + k]) * static_cast<double>(y[i + k]);
    for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * static_cast<double>(y[i]);
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
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
    const float *px = nullptr, *py = nullptr;
    if (made) cudot_get_inputs(ctx, (void **)&px, (void **)&py);
    // One dot: cudot's, or (the ceiling) the plain loop over the same buffers.
    auto dot = [&] {
        if (!o.plain) return cudot_dot(ctx, &value) == CUDOT_OK && value == expected;
        value = plain_sum(px, py, o.n);
        return value == expected;
    };
    for (int i = 0; i < 50 && ok; ++i) ok = dot();
    shared.ready.fetch_add(1);
    while (shared.go.load() == 0) pause_briefly();
    const double start = now_s(), end = start + o.seconds;
    double t = start;
    while (ok && t < end) {
        ok = dot();
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
        else if (a == "--rounds" && has_value) o->rounds = std::atoi(argv[++i]);
        else return false;
    }
    return o->procs >= 0 && o->procs <= kMaxProcs && o->n > 0 && o->seconds > 0 && o->rounds >= 1 && o->rounds <= 99;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    if (!parse(argc, argv, &o)) {
        std::fprintf(stderr, "usage: %s [--procs N (1..%d)] [--n ELEMENTS] [--seconds S] [--rounds R] [--no-pin]\n", argv[0], kMaxProcs);
        return 2;
    }
    int cores = 0;
    const std::vector<int> cpus = allowed_cpus(&cores);
    if (cpus.empty()) {
        std::fprintf(stderr, "cudot-bench-processes: cannot read the affinity mask\n");
        return 1;
    }
    const int procs = o.procs > 0 ? o.procs : static_cast<int>(cpus.size());
    if (o.pin && procs > cores)
        std::printf("note: %d processes on %d physical cores (%zu CPUs): some share a core\n", procs, cores, cpus.size());
    auto *shared = static_cast<Shared *>(
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (shared == MAP_FAILED) {
        std::perror("cudot-bench-processes: mmap");
        return 1;
    }
    new (shared) Shared{};

    std::printf("HOST f32 dots of n = %zu, %.2f s per run, %s; %zu CPUs, %d physical cores\n", o.n, o.seconds,
                o.pin ? "each process pinned to one CPU, one per physical core first" : "processes not pinned",
                cpus.size(), cores);
    bool ok = true;
    double ratios[2] = {0, 0};
    for (int pass = 0; pass < 2; ++pass) {  // cudot, then the plain loop (the ceiling)
        Options run = o;
        run.plain = pass == 1;
        const char *who = run.plain ? "plain loop (ceiling)" : "cudot";
        std::vector<double> round_ratios;
        for (int round = 0; round < o.rounds; ++round) {
            if (!run_together(run, cpus, 1, *shared) || !shared->results[0].ok) {
                std::fprintf(stderr, "cudot-bench-processes: the lone process failed (%s)\n", who);
                return 1;
            }
            const double alone = rate(shared->results[0]);
            if (!run_together(run, cpus, procs, *shared)) {
                std::fprintf(stderr, "cudot-bench-processes: a process failed (%s)\n", who);
                return 1;
            }
            double aggregate = 0, slowest = 0, fastest = 0;
            for (int k = 0; k < procs; ++k) {
                const Result &r = shared->results[k];
                if (!r.ok) std::printf("  %s process %d: WRONG RESULT OR FAILED DOT\n", who, k);
                aggregate += rate(r);
                slowest = k == 0 ? rate(r) : std::min(slowest, rate(r));
                fastest = std::max(fastest, rate(r));
                ok = ok && r.ok;
            }
            round_ratios.push_back(alone > 0 ? aggregate / (procs * alone) : 0);
            std::printf("%-22s round %d: 1 alone %.0f dots/s; %d together %.0f dots/s (each %.0f..%.0f) = %.3f x %d x "
                        "one alone\n",
                        who, round + 1, alone, procs, aggregate, slowest, fastest, round_ratios.back(), procs);
        }
        std::sort(round_ratios.begin(), round_ratios.end());
        ratios[pass] = round_ratios[round_ratios.size() / 2];
    }
    std::printf("median round: cudot %.3f of %d x one alone (target >= 0.9): %s; the machine's own ratio (plain loop) %.3f; "
                "cudot / ceiling %.3f\n",
                ratios[0], procs, ratios[0] >= 0.9 ? "PASS" : "MISSED", ratios[1],
                ratios[1] > 0 ? ratios[0] / ratios[1] : 0);
    return ok ? 0 : 1;
}
