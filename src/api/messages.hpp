// messages.hpp - where a failure's message on a context is kept, so that the thread whose call failed
// reads that call's message whatever other threads do on the same context meanwhile.
//
// Every failure on a context is written twice: into a record of the failing thread, tagged with the
// context's serial, and (under the context's message_mutex) into the context's last_message. A thread
// reading cudot_last_error(ctx) gets its own record for ctx when it has one, and otherwise a copy of the
// context's last_message taken under that lock. Nothing is ever read while another thread writes it.
#pragma once

#include <cstdarg>
#include <cstdint>

#include "../core/context.hpp"

namespace cudot {
namespace messages {

// How many contexts a thread keeps its own record for (the most recently failed ones).
constexpr unsigned kRecordsPerThread = 4;

// A serial no other context of this process has had.
std::uint64_t next_serial();

// fail()'s route for a context's message: formats it for the calling thread's current call on ctx
// (CallOn), whose finish() keeps it if the call fails.
void record(const char *format, va_list args);

// One entry point's call on ctx, from the start of its work to its return. finish() makes sure a failure
// has a message (a generic one if nothing recorded one) and hands it to the context's last_message; it
// must run with ctx.mutex released (a reader of last_message never waits for a dot).
class CallOn {
   public:
    explicit CallOn(const cudot_ctx &ctx);
    cudot_status finish(cudot_status status) noexcept;

   private:
    cudot_ctx &ctx_;
};

// cudot_last_error(ctx) for a live ctx: valid until the calling thread's next cudot call.
const char *read(const cudot_ctx &ctx) noexcept;

}  // namespace messages
}  // namespace cudot
