// rows.hpp - one measured line of cudot-bench's tables, and how to look one up.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

// How a row's last result was checked against HOST on the same inputs.
enum class Check {
    None,      // not checked (cuBLAS: its own data)
    Same,      // cudot: bit for bit equal, as promised
    Differs,   // cudot: not equal (the run fails)
    Close,     // a peer (another summation order): within its tolerance (close_to_host, inputs.hpp)
    Far,       // a peer that is off: the peer is broken, its times mean nothing
};

// How a check reads in the tables and the JSON.
inline const char *check_text(Check c) {
    switch (c) {
        case Check::Same: return "ok";
        case Check::Differs: return "MISMATCH";
        case Check::Close: return "close";
        case Check::Far: return "FAR";
        case Check::None: return "";
    }
    return "";
}

struct Row {
    std::string what;      // cudot strategy ("auto" ... "host"), seed peer ("seed-pinned" ...) or peer name
    std::string dtype;     // "f32", "f64", or a pair "f32xu8"
    std::size_t n = 0;
    std::string scenario;  // fresh | resident | peer (cuBLAS: device data of its own)
    Stats t;
    double bytes = 0;         // input bytes of one dot
    double own_read_GBps = 0; // HOST: a plain read of the row's own buffers, timed in alternation with it
    double pair_us = 0;       // seed rows: the median of their cudot strategy in their own block (T2)
    Check check = Check::None;
    // Filled by bound_rows once every ceiling round is in:
    double GBps = 0;
    std::string bound;        // which ceiling bounds it
    double ceiling_GBps = 0;  // the bandwidth ceiling of that ratio
    double ratio = 0;         // achieved / ceiling (bandwidth), or (bytes / ceiling + launch) / time
};

inline const Row *find(const std::vector<Row> &rows, const std::string &what, const std::string &dtype, std::size_t n,
                       const std::string &scenario) {
    for (const Row &r : rows)
        if (r.what == what && r.dtype == dtype && r.n == n && r.scenario == scenario) return &r;
    return nullptr;
}

// Target 1's block (cudot-bench): MANAGED resident dots of one size, timed call by call in turn with an
// empty kernel's launch + sync and nothing else, so that the ratio of the two medians comes from the
// same rounds.
struct T1Row {
    std::string dtype;  // "f32" | "f64"
    std::size_t n = 0;
    Stats dot, launch;  // the dot's calls and the empty kernel's, alternated
    Check check = Check::None;
    double ratio() const { return launch.median_us > 0 ? dot.median_us / launch.median_us : 0; }
};

// Many small dots at once: T threads, each with its own context, calling dot for a fixed time.
struct ScalingRun {
    std::string memory;  // "host" | "managed"
    int threads = 0;
    std::size_t n = 0;
    double seconds = 0;    // from the common start to the last thread's last return
    long long dots = 0;    // over every thread
    double dots_per_s = 0; // dots / seconds
    bool checked = true;   // every thread's last result equal to HOST's bits
};

}  // namespace bench
