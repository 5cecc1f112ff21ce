// messages.cpp - see messages.hpp; also fail(), the one function every message is written through.
#include "messages.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace cudot {

cudot_status fail(ErrorSink err, cudot_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (err.ctx)
        messages::record(format, args);
    else if (err.text && err.size)
        std::vsnprintf(err.text, err.size, format, args);
    va_end(args);
    return status;
}

namespace messages {
namespace {

constexpr std::size_t kTextSize = sizeof cudot_ctx::last_message;

struct Record {
    std::uint64_t serial;     // the context this record is for; 0: unused
    std::uint64_t last_used;  // when this thread last wrote it: the oldest makes way for a new context
    char text[kTextSize];
};

// Zero-initialized per thread, with no constructor to run.
struct ThreadMessages {
    Record records[kRecordsPerThread];
    std::uint64_t writes;     // the clock of last_used
    bool recorded;            // the current call on a context recorded a message in `pending`...
    char pending[kTextSize];  // ...which becomes the context's record only if the call fails
    char copy[kTextSize];     // the context-wide message this thread last read
};
thread_local ThreadMessages mine;

std::atomic<std::uint64_t> serials{0};

Record *find(std::uint64_t serial) {
    for (Record &r : mine.records)
        if (r.serial == serial) return &r;
    return nullptr;
}

Record &record_for(std::uint64_t serial) {
    Record *r = find(serial);
    if (!r) {
        r = &mine.records[0];
        for (Record &candidate : mine.records)
            if (candidate.last_used < r->last_used) r = &candidate;
        r->serial = serial;
    }
    r->last_used = ++mine.writes;
    return *r;
}

}  // namespace

std::uint64_t next_serial() { return serials.fetch_add(1, std::memory_order_relaxed) + 1; }

void record(const char *format, va_list args) {
    std::vsnprintf(mine.pending, sizeof mine.pending, format, args);
    mine.recorded = true;
}

CallOn::CallOn(const cudot_ctx &ctx) : ctx_(const_cast<cudot_ctx &>(ctx)) { mine.recorded = false; }

cudot_status CallOn::finish(cudot_status status) noexcept {
    // A success leaves the previous failure's message in place, even where a step that failed on the way
    // (and was recovered from) recorded one.
    if (status == CUDOT_OK) return status;
    if (!mine.recorded)
        fail(ctx_.sink(), status, "a call failed (%s) without a message: an internal error, please report it",
             cudot_status_string(status));
    Record &r = record_for(ctx_.serial);
    std::memcpy(r.text, mine.pending, sizeof r.text);
    try {
        std::lock_guard<std::mutex> lock(ctx_.message_mutex);
        std::memcpy(ctx_.last_message, r.text, sizeof r.text);
    } catch (...) {
        // The lock failed: only this thread's record has the message, which is what this thread reads.
    }
    return status;
}

const char *read(const cudot_ctx &ctx) noexcept {
    if (const Record *r = find(ctx.serial)) return r->text;
    try {
        std::lock_guard<std::mutex> lock(const_cast<cudot_ctx &>(ctx).message_mutex);
        std::memcpy(mine.copy, ctx.last_message, sizeof mine.copy);
    } catch (...) {
        return "cudot_last_error: the context's message lock failed (an internal error)";
    }
    return mine.copy;
}

}  // namespace messages
}  // namespace cudot
