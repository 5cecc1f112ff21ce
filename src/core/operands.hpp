// operands.hpp - the seam between the API layer and the backends: what a dot reads, as two views.
//
// A context's buffers and a caller's own arrays (cudot_dot_arrays) reach the backends the same way: as
// Operands, n elements of each of two views (pointer, element type, stride, where the memory is). The
// backends read through the views and never ask where they came from; the canonical order
// (order.hpp) sees only the element values, so every view of the same values gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "types.hpp"

namespace cudot {

// Where an operand's memory is, as CUDA reports it (cuda::locate; pageable without CUDA).
enum class Place { Pageable, PageLocked, Managed, Device };

struct Operand {
    const unsigned char *data = nullptr;  // element 0, as the host addresses it
    int32_t dtype = CUDOT_F32;
    std::int64_t stride = 1;               // elements from element i to i + 1; signed; 0 repeats element 0
    Place place = Place::Pageable;
    int device = -1;                       // Device and Managed: the GPU that holds it
    const unsigned char *gpu_data = nullptr;  // element 0 as a GPU addresses it (PageLocked: its mapped view)

    std::size_t size() const { return types::size_of(dtype); }
    std::ptrdiff_t stride_bytes() const { return static_cast<std::ptrdiff_t>(stride) * static_cast<std::ptrdiff_t>(size()); }
    const unsigned char *at(std::size_t i) const { return data + static_cast<std::ptrdiff_t>(i) * stride_bytes(); }
    // Contiguous and aligned to its element type: the backends' widest loops read it as it is.
    bool dense() const { return stride == 1 && reinterpret_cast<std::uintptr_t>(data) % size() == 0; }
};

struct Operands {
    std::size_t n = 0;
    Operand x, y;
};

// A view of contiguous host memory (a context's buffers).
inline Operand dense_operand(const void *data, int32_t dtype) {
    Operand o;
    o.data = static_cast<const unsigned char *>(data);
    o.gpu_data = o.data;
    o.dtype = dtype;
    return o;
}

// The lowest byte an operand of n >= 1 elements touches and the byte after its highest; false when the
// span does not fit the address space (n * stride * size overflows).
inline bool byte_span(const Operand &o, std::size_t n, std::uintptr_t &lo, std::uintptr_t &hi) {
    const std::uint64_t size = o.size();
    const std::uint64_t step = o.stride < 0 ? 0 - static_cast<std::uint64_t>(o.stride) : static_cast<std::uint64_t>(o.stride);
    const std::uint64_t last = static_cast<std::uint64_t>(n - 1);
    if (step != 0 && last > (static_cast<std::uint64_t>(PTRDIFF_MAX) - size) / size / step) return false;
    const std::uint64_t reach = last * step * size;  // bytes from element 0 to the farthest element
    const std::uint64_t base = reinterpret_cast<std::uintptr_t>(o.data);
    if (o.stride >= 0) {
        if (base > UINTPTR_MAX - reach - size) return false;
        lo = base;
        hi = base + reach + size;
    } else {
        if (base < reach || base > UINTPTR_MAX - size) return false;
        lo = base - reach;
        hi = base + size;
    }
    return true;
}

}  // namespace cudot
