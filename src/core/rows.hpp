// rows.hpp - a batch of dots as the backends see it: `count` rows, row i two operand views. A caller's
// cudot_rows request (api/own_rows.cpp) is checked and turned into Rows; a backend asks for each row's
// views and dots them as it dots any operands, so row i has the bits of its own dot by construction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operands.hpp"

namespace cudot {

struct Rows {
    enum class Layout { Strided, Segmented, Pointers };
    Layout layout = Layout::Strided;
    std::size_t count = 0;
    std::size_t n = 0;  // Strided and Pointers: the elements of every row
    // Strided: row 0's views; Segmented: the long vectors' (element 0); Pointers: type, stride and place
    // of every row (data unused).
    Operand x, y;
    std::int64_t x_row_stride = 0, y_row_stride = 0;  // Strided: elements from row i's element 0 to row i + 1's
    const std::int64_t *offsets = nullptr;            // Segmented: count + 1, non-decreasing, >= 0
    const void *const *x_rows = nullptr;              // Pointers: count each
    const void *const *y_rows = nullptr;
    bool exact = false;  // every row's dot in the exact mode (exact_sum.hpp), else the canonical one

    std::size_t length(std::size_t i) const {
        return layout == Layout::Segmented ? static_cast<std::size_t>(offsets[i + 1] - offsets[i]) : n;
    }
    // Row i's two views (its element 0, and the batch's type, stride and place).
    Operands row(std::size_t i) const {
        Operands ops;
        ops.n = length(i);
        ops.x = x;
        ops.y = y;
        switch (layout) {
            case Layout::Strided:
                ops.x.data = element(x, static_cast<std::int64_t>(i) * x_row_stride);
                ops.y.data = element(y, static_cast<std::int64_t>(i) * y_row_stride);
                break;
            case Layout::Segmented:
                ops.x.data = element(x, offsets[i] * x.stride);
                ops.y.data = element(y, offsets[i] * y.stride);
                break;
            case Layout::Pointers:
                ops.x.data = static_cast<const unsigned char *>(x_rows[i]);
                ops.y.data = static_cast<const unsigned char *>(y_rows[i]);
                break;
        }
        ops.x.gpu_data = ops.x.data;  // unified addressing: one address for host, managed and page-locked
        ops.y.gpu_data = ops.y.data;
        return ops;
    }

    // A single dot as a batch of one row.
    static Rows one(const Operands &ops, bool exact) {
        Rows r;
        r.count = 1;
        r.n = ops.n;
        r.x = ops.x;
        r.y = ops.y;
        r.exact = exact;
        return r;
    }

    // Strided: rows [first, first + count) as a batch of their own.
    Rows strided_run(std::size_t first, std::size_t count) const {
        Rows run = *this;
        run.count = count;
        run.x.data = run.x.gpu_data = element(x, static_cast<std::int64_t>(first) * x_row_stride);
        run.y.data = run.y.gpu_data = element(y, static_cast<std::int64_t>(first) * y_row_stride);
        return run;
    }

private:
    // The address `elements` elements (signed) from o's element 0; the request's checks keep it in range.
    static const unsigned char *element(const Operand &o, std::int64_t elements) {
        return o.data + static_cast<std::ptrdiff_t>(elements) * static_cast<std::ptrdiff_t>(o.size());
    }
};

}  // namespace cudot
