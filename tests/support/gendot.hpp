// gendot.hpp - ill-conditioned dot products with a chosen condition number, and their exact values.
//
// The generator follows the idea of GenDot in Ogita, Rump & Oishi, "Accurate Sum and Dot Product"
// (SIAM J. Sci. Comput. 26(6), 2005, Algorithm 6.1): the first half of the pairs has random exponents
// spread over half the wanted exponent range; each later pair is chosen so that it cancels most of the
// exact partial dot so far, with exponents falling linearly to zero; finally the pairs are shuffled.
// The result has cond = 2 sum|x_i y_i| / |sum x_i y_i| near the request (reported exactly, not assumed);
// below 100, positive pairs with cond = 2, the least possible.
// Exact values come from MPFR with enough bits to hold any sum of products of doubles without rounding.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace test {

// The exact dot of double-valued inputs, rounded once to the nearest double; and 2 sum|xy| / |dot|.
struct ExactDot {
    double value;      // the exact sum rounded to nearest
    double condition;  // 2 sum |x_i y_i| / |sum x_i y_i| (infinity if the sum is exactly 0)
    double abs_sum;    // sum |x_i y_i|, rounded
};
ExactDot exact_dot(const double *x, const double *y, std::size_t n);
// |r - sum x_i y_i|, the difference computed exactly and rounded once.
double exact_error(const double *x, const double *y, std::size_t n, double r);

// The bound of docs/ACCURACY.md with gamma(k) = k u / (1 - k u), u = 2^-53: compensated (either side F64)
// u |exact| + gamma(k)^2 abs_sum; otherwise gamma(k) abs_sum. The one formula every test bound uses.
inline long double dot_error_bound(bool compensated, long double exact, long double abs_sum, long double k) {
    const long double u = std::ldexp(1.0L, -53);
    const long double gamma = k * u / (1.0L - k * u);
    return compensated ? u * std::fabs(exact) + gamma * gamma * abs_sum : gamma * abs_sum;
}

// The documented bounds on |r - exact| for n products with sum |x_i y_i| = abs_sum (k = n - 1), allowing
// for exact and abs_sum themselves being rounded to double.
double documented_bound(bool compensated, double exact, double abs_sum, std::size_t n);

// Inputs of n elements (n >= 6) in float (f32 == true) or double precision with condition number
// near `condition` (>= 1), from a fixed seed. Values are stored as doubles; for f32 every value is a float.
void gendot(std::size_t n, double condition, bool f32, std::uint64_t seed, std::vector<double> &x,
            std::vector<double> &y);

}  // namespace test
