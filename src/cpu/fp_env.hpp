// fp_env.hpp - run CPU arithmetic in the IEEE default environment, whatever the caller's thread set.
//
// A host process may have switched its threads to flush-to-zero / denormals-are-zero or another
// rounding mode (some audio and ML libraries do; so does any library built with -Ofast, on load). That
// would change cudot's results and break the promise that CPU and GPU agree bit for bit, so every dot
// runs under this guard, and every pool worker runs its whole life under one: round to nearest, no
// flushing of subnormals, all exceptions masked.
//
// On return the calling thread's environment is exactly what it was: its modes and also its sticky
// exception flags (include/cudot.h states this rule). The flags are restored rather than left with
// whatever cudot's arithmetic raised because part of a dot may run on pool workers, whose flags the
// caller could never see: a rule of "cudot may raise flags" would hold or not depending on threading.
//
//   x86:     MXCSR, saved whole and set to 0x1f80 (exceptions masked, round to nearest, FTZ and DAZ off,
//            no flags) for the call.
//   AArch64: FPCR set to 0 for the call: round to nearest (RMode, bits 22-23), no flush-to-zero (FZ,
//            bit 24; FZ16, bit 19), the IEEE behaviour rather than the alternative one (AH, bit 1; FIZ,
//            bit 0; NEP, bit 2), no default-NaN or alternative half precision, traps off. FPSR (the
//            sticky flags) saved and restored.
//   Other:   <cfenv>'s rounding mode and exception flags.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <xmmintrin.h>
#define CUDOT_FP_ENV_MXCSR 1
#elif defined(__aarch64__) && defined(__GNUC__)
#define CUDOT_FP_ENV_AARCH64 1
#else
#include <cfenv>
#endif

namespace cudot {
namespace cpu {

// The thread's floating-point state as cudot saves it: the control register and where the sticky
// flags live, read and written raw.
struct FpState {
#if defined(CUDOT_FP_ENV_MXCSR)
    static constexpr std::uint32_t kDefault = 0x1f80;
    std::uint32_t mxcsr;
    static constexpr std::uint32_t kFlags = 0x3f;  // bits 0-5: the sticky exception flags
    static FpState read() { return FpState{static_cast<std::uint32_t>(_mm_getcsr())}; }
    bool is_default() const { return (mxcsr & ~kFlags) == kDefault; }  // the flags do not change results
    static void write_default() { _mm_setcsr(kDefault); }
    void write() const { _mm_setcsr(mxcsr); }
    bool operator==(const FpState &o) const { return mxcsr == o.mxcsr; }
#elif defined(CUDOT_FP_ENV_AARCH64)
    std::uint64_t fpcr, fpsr;
    static FpState read() {
        FpState s;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(s.fpcr));
        __asm__ __volatile__("mrs %0, fpsr" : "=r"(s.fpsr));
        return s;
    }
    bool is_default() const { return fpcr == 0; }
    static void write_default() {
        __asm__ __volatile__("msr fpcr, %0" : : "r"(std::uint64_t{0}) : "memory");
    }
    void write() const {
        __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
        __asm__ __volatile__("msr fpsr, %0" : : "r"(fpsr) : "memory");
    }
    bool operator==(const FpState &o) const { return fpcr == o.fpcr && fpsr == o.fpsr; }
#else
    int round;
    std::fexcept_t flags;
    static FpState read() {
        FpState s;
        s.round = std::fegetround();
        std::fegetexceptflag(&s.flags, FE_ALL_EXCEPT);
        return s;
    }
    bool is_default() const { return round == FE_TONEAREST; }
    static void write_default() { std::fesetround(FE_TONEAREST); }
    void write() const {
        std::fesetround(round);
        std::fesetexceptflag(&flags, FE_ALL_EXCEPT);
    }
    bool operator==(const FpState &) const { return false; }  // fexcept_t is opaque: always restore
#endif
};

class DefaultFpEnv {
   public:
    DefaultFpEnv() : saved_(FpState::read()) {
        if (!saved_.is_default()) FpState::write_default();
    }
    ~DefaultFpEnv() {
        if (!(FpState::read() == saved_)) saved_.write();  // writing the control register costs more than reading
    }
    DefaultFpEnv(const DefaultFpEnv &) = delete;
    DefaultFpEnv &operator=(const DefaultFpEnv &) = delete;

   private:
    FpState saved_;
};

}  // namespace cpu
}  // namespace cudot
