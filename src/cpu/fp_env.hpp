// fp_env.hpp - run CPU arithmetic in the IEEE default environment, whatever the caller's thread set.
//
// A host process may have switched its threads to flush-to-zero / denormals-are-zero or another
// rounding mode (some audio and ML libraries do). That would change cudot's results and break the
// promise that CPU and GPU agree bit for bit, so every dot runs under this guard (and pool workers
// start in the default environment): round to nearest, no FTZ/DAZ, all exceptions masked. The
// caller's own setting is restored on return.
#pragma once

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <xmmintrin.h>
#define CUDOT_HAVE_MXCSR 1
#else
#include <cfenv>
#endif

namespace cudot {
namespace cpu {

class DefaultFpEnv {
   public:
#if defined(CUDOT_HAVE_MXCSR)
    static constexpr unsigned kDefault = 0x1f80;  // exceptions masked, round to nearest, no FTZ, no DAZ
    DefaultFpEnv() : saved_(_mm_getcsr()) {
        if (saved_ != kDefault) _mm_setcsr(kDefault);
    }
    ~DefaultFpEnv() {
        if (saved_ != kDefault) _mm_setcsr(saved_);
    }

   private:
    unsigned saved_;
#else
    DefaultFpEnv() : saved_(std::fegetround()) { std::fesetround(FE_TONEAREST); }
    ~DefaultFpEnv() { std::fesetround(saved_); }

   private:
    int saved_;
#endif
   public:
    DefaultFpEnv(const DefaultFpEnv &) = delete;
    DefaultFpEnv &operator=(const DefaultFpEnv &) = delete;
};

}  // namespace cpu
}  // namespace cudot
