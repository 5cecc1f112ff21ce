// fma_mingw.cpp - fma for the MinGW build's baseline kernel copy (compiled without -mfma).
//
// There std::fma calls MinGW-w64's fma(), which is not correctly rounded: it disagrees with glibc's in
// many random cases, TwoProduct (fma(x, y, -x*y), order.hpp) among them, so F64 dots would differ from
// Linux's bits. The processor's FMA is used where it has one (x86-64 processors from Intel's Haswell
// and AMD's Piledriver on), so Windows gets exactly the instruction Linux uses; without one, a software
// path that is exact for TwoProduct.
#include "../core/order.hpp"

#if defined(__MINGW32__)
#include <cmath>

#include "../core/seams.hpp"

namespace cudot {
namespace order {
namespace {

__attribute__((target("fma"))) double hardware_fma(double a, double b, double c) {
    return __builtin_fma(a, b, c);  // one vfmadd instruction in a function built for FMA
}

bool use_hardware_fma() {
    static const bool has_fma = __builtin_cpu_supports("fma");
#if defined(CUDOT_TESTING)
    if (seams::software_fma()) return false;
#endif
    return has_fma;
}

// IEEE special cases first, then binary128: the product of two doubles (106 significant bits) is exact
// in its 113, and for TwoProduct's c = -RN(a*b) the sum a*b + c is representable in double (or below
// its subnormal range, then rounded once), so the result is the correctly rounded fma. For other c the
// sum is rounded twice (113 bits, then 53), which TwoProduct never needs.
double software_fma(double a, double b, double c) {
    if (!std::isfinite(a) || !std::isfinite(b) || std::isnan(c)) return a * b + c;  // Inf/NaN rules
    if (std::isinf(c)) return c;  // a finite product plus an infinity
    const __float128 product = static_cast<__float128>(a) * static_cast<__float128>(b);
    return static_cast<double>(product + static_cast<__float128>(c));
}

}  // namespace

double mingw_fma(double a, double b, double c) {
    return use_hardware_fma() ? hardware_fma(a, b, c) : software_fma(a, b, c);
}

}  // namespace order

}  // namespace cudot
#endif
