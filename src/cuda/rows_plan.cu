// rows_plan.cu - a batch's plan (rows_plan.hpp): which kernel, the launch's shape, the workspace's layout
// and the tables copied into it. Nothing here touches a GPU.
#include <algorithm>

#include "rows_plan.hpp"

namespace cudot {
namespace cuda {

namespace {

constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

// Whether every row of `o`'s batch starts on a 16-byte boundary with elements one apart (vector loads),
// and whether every element is aligned to its type.
void row_alignment(const Rows &rows, const Operand &o, const void *const *row_pointers, bool &dense, bool &aligned) {
    const std::size_t size = o.size();
    const auto at = [](const void *p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; };
    dense = o.stride == 1;
    aligned = true;
    switch (rows.layout) {
        case Rows::Layout::Strided: {
            const std::int64_t row_stride = &o == &rows.x ? rows.x_row_stride : rows.y_row_stride;
            const bool rows_step = rows.count == 1 || (static_cast<std::uint64_t>(row_stride) * size) % kLoadAlign == 0;
            dense = dense && at(o.data, kLoadAlign) && rows_step;
            aligned = at(o.data, size);
            break;
        }
        case Rows::Layout::Segmented:
            aligned = at(o.data, size);
            dense = dense && at(o.data, kLoadAlign);
            for (std::size_t i = 0; dense && i < rows.count; ++i)
                dense = (static_cast<std::uint64_t>(rows.offsets[i]) * size) % kLoadAlign == 0;
            break;
        case Rows::Layout::Pointers:
            for (std::size_t i = 0; i < rows.count; ++i) {
                dense = dense && at(row_pointers[i], kLoadAlign);
                aligned = aligned && at(row_pointers[i], size);
            }
            break;
    }
}

// A segmented batch's items, `part` elements each (at least one a row): first_item, joins, p.items.
void plan_segment_items(const Rows &rows, std::size_t part, RowsPlan &plan) {
    plan.first_item.resize(rows.count + 1);
    unsigned long long items = 0;
    for (std::size_t i = 0; i < rows.count; ++i) {
        plan.first_item[i] = items;
        const std::size_t parts = (rows.length(i) + part - 1) / part;
        plan.joins = plan.joins || parts > 1;
        items += std::max<std::size_t>(1, parts);
    }
    plan.first_item[rows.count] = items;
    plan.p.items = items;
}

// The exact mode's items (exact_rows_kernel.cuh): short equal rows to groups of threads; other rows cut
// into parts of whole vector loads, enough of them to fill the `resident` blocks twice where rows are
// few, none shorter than eight loads a thread.
void plan_exact_items(const Rows &rows, unsigned resident, RowsPlan &plan) {
    RowsParams &p = plan.p;
    const std::size_t group_elements = 16 / std::max(rows.x.size(), rows.y.size());  // one vector load
    const std::size_t least_part = std::size_t(kThreads) * group_elements * 8;
    const std::size_t count = rows.count;
    if (rows.layout != Rows::Layout::Segmented && rows.n <= kWarpRowsUpTo) {
        p.items = count;
        // Eight loads a thread where the row has them: a level of the group's merge costs about what a
        // thread's products of two loads do. Two threads at least, so that each load of a group reads
        // 32 bytes of its row.
        std::size_t group = 2;
        while (group < 32 && 8 * group * group_elements < rows.n) group *= 2;
        p.group = static_cast<int>(group);
        plan.kernel = RowsKernel::Short;
        return;
    }
    if (rows.layout != Rows::Layout::Segmented) {
        const std::size_t wanted = std::max<std::size_t>(1, (2 * std::size_t(resident) + count - 1) / count);
        const std::size_t most = std::max<std::size_t>(1, rows.n / least_part);
        const std::size_t parts = std::min(wanted, most);
        p.part = align_up((rows.n + parts - 1) / parts, group_elements);
        p.tiles_per_row = std::max<std::size_t>(1, (rows.n + p.part - 1) / p.part);
        p.items = count * p.tiles_per_row;
        plan.joins = p.tiles_per_row > 1;
        return;
    }
    p.part = 4 * least_part;
    plan_segment_items(rows, p.part, plan);
}

}  // namespace

// A batch of one row that has elements is a single dot: the dot kernel spreads the row's tiles over the
// whole GPU and joins them in its last block, the bits of the batch kernels' join, and needs no tickets
// zeroed first. Its workspace: the head (the ticket), then the tiles' partials, or the exact kernel's
// slot per block (`resident`) and, for an exact partial, that partial.
// Partials the kernel writes elsewhere itself (`partials_elsewhere`) take no room in the workspace.
void plan_one(const Rows &rows, std::size_t partial_bytes, unsigned resident, bool exact_partial,
              bool partials_elsewhere, RowsPlan &plan) {
    plan.one = true;
    plan.row = rows.row(0);
    plan.partials_at = kHeadBytes + (rows.exact ? resident * kExactSlotBytes : 0);
    if (partials_elsewhere) plan.bytes = plan.partials_at;
    else plan.bytes = rows.exact ? plan.partials_at + (exact_partial ? kExactPartialBytes : 0)
                                 : plan.partials_at + order::tile_count(plan.row.n) * partial_bytes;
}

void plan_rows(const Rows &rows, std::size_t partial_bytes, bool results_in_workspace, unsigned exact_resident,
               RowsPlan &plan) {
    RowsParams &p = plan.p;
    p.count = rows.count;
    p.n = rows.n;
    p.layout = rows.layout == Rows::Layout::Strided ? kRowsStrided
               : rows.layout == Rows::Layout::Segmented ? kRowsSegmented : kRowsPointers;
    p.x = rows.x.gpu_data;
    p.y = rows.y.gpu_data;
    const long long sx = static_cast<long long>(rows.x.size()), sy = static_cast<long long>(rows.y.size());
    p.x_row_bytes = rows.x_row_stride * sx;
    p.y_row_bytes = rows.y_row_stride * sy;
    p.x_step = rows.x.stride * sx;
    p.y_step = rows.y.stride * sy;
    bool xd, xa, yd, ya;
    row_alignment(rows, rows.x, rows.x_rows, xd, xa);
    row_alignment(rows, rows.y, rows.y_rows, yd, ya);
    p.dense = xd && yd;
    p.x_aligned = xa;
    p.y_aligned = ya;
    p.contiguous = rows.x.stride == 1 && rows.y.stride == 1 && xa && ya;
    const std::size_t count = rows.count;
    std::size_t tables = 0;
    if (rows.exact) {
        plan_exact_items(rows, exact_resident, plan);
        if (rows.layout == Rows::Layout::Segmented) tables = 2 * (count + 1) * sizeof(unsigned long long);
        // Each item's slot and, where a row has several parts, its spill slot.
        partial_bytes = kExactRowSlotBytes + (plan.joins ? kExactRowSpillBytes : 0);
    } else if (rows.layout != Rows::Layout::Segmented && rows.n <= kWarpRowsUpTo) {
        p.items = count;
        // Dense rows of the float and double pairs are staged through shared memory (rows_staged_kernel)
        // where that was measured faster: a warp a row from 129 elements on, and float rows of up to 128
        // elements, whose thread loads 16 bytes of each side a pass. Other short rows of up to 256
        // elements take rows_short_kernel's groups.
        const bool stageable = p.dense && rows_staged_kernel_for(rows.x.dtype, rows.y.dtype) != nullptr;
        const bool floats = rows.x.size() == 4 && rows.y.size() == 4;
        plan.kernel = stageable && (rows.n > 128 || floats) ? RowsKernel::Staged : RowsKernel::Short;
        // A group of threads a row: 4 lanes a thread up to 128 elements, 8 up to 256.
        if (rows.n <= 128 || (rows.n <= 256 && plan.kernel == RowsKernel::Short)) {
            p.sub = rows.n <= 128 ? 1 : 2;
            int group = 1;
            while (static_cast<std::size_t>(group) * 4 * p.sub < rows.n) group *= 2;
            p.group = group;
        }
    } else if (rows.layout != Rows::Layout::Segmented) {
        p.tiles_per_row = order::tile_count(rows.n);
        p.items = count * p.tiles_per_row;
        plan.joins = p.tiles_per_row > 1;
        // One operand repeated for every row: the rows' same tiles side by side, so that the repeated tile
        // is read from memory once and then from L2.
        p.tile_major = plan.joins && rows.layout == Rows::Layout::Strided &&
                       (rows.x_row_stride == 0 || rows.y_row_stride == 0);
    } else {
        plan_segment_items(rows, order::kTile, plan);
        tables = 2 * (count + 1) * sizeof(unsigned long long);
    }
    if (rows.layout == Rows::Layout::Pointers) tables = 2 * count * sizeof(void *);
    plan.tickets_at = kHeadBytes;
    plan.partials_at = plan.tickets_at + (plan.joins ? align_up(count * sizeof(unsigned), 256) : 0);
    plan.tables_at = plan.partials_at + (plan.joins ? align_up(p.items * partial_bytes, 256) : 0);
    plan.results_at = plan.tables_at + align_up(tables, 256);
    plan.bytes = plan.results_at + (results_in_workspace ? count * sizeof(double) : 0);
    if (rows.layout == Rows::Layout::Segmented) {
        plan.fill[0] = {plan.tables_at, rows.offsets, (count + 1) * sizeof(long long)};
        plan.fill[1] = {plan.tables_at + (count + 1) * sizeof(long long), plan.first_item.data(),
                        (count + 1) * sizeof(unsigned long long)};
        plan.fills = 2;
    } else if (rows.layout == Rows::Layout::Pointers) {
        plan.fill[0] = {plan.tables_at, rows.x_rows, count * sizeof(void *)};
        plan.fill[1] = {plan.tables_at + count * sizeof(void *), rows.y_rows, count * sizeof(void *)};
        plan.fills = 2;
    }
}

// Points the plan's launch at a workspace.
void aim_rows(RowsPlan &plan, void *workspace) {
    unsigned char *w = static_cast<unsigned char *>(workspace);
    RowsParams &p = plan.p;
    p.tickets = reinterpret_cast<unsigned *>(w + plan.tickets_at);
    p.partials = w + plan.partials_at;
    if (p.layout == kRowsSegmented) {
        p.offsets = reinterpret_cast<const long long *>(w + plan.tables_at);
        p.first_item = reinterpret_cast<const unsigned long long *>(w + plan.tables_at + (p.count + 1) * sizeof(long long));
    } else if (p.layout == kRowsPointers) {
        p.x_rows = reinterpret_cast<const unsigned char *const *>(w + plan.tables_at);
        p.y_rows = reinterpret_cast<const unsigned char *const *>(w + plan.tables_at + p.count * sizeof(void *));
    }
}

// The kernel a plan launches: a single row's dot (its result to `done`, or its partials to `partials`),
// or the batch kernels over every row.
void prepare_plan(const RowsPlan &plan, const Rows &rows, unsigned resident, void *workspace, Completion *done,
                  void *partials, KernelCall &kernel) {
    char *w = static_cast<char *>(workspace);
    if (plan.one && rows.exact) {
        exact_launcher_for(rows.x.dtype, rows.y.dtype)
            .prepare(exact_launch(plan.row, resident, workspace, done, partials), kernel);
    } else if (plan.one) {
        launcher_for(rows.x.dtype, rows.y.dtype)
            .prepare(dot_launch(plan.row, resident, partials ? partials : w + plan.partials_at,
                                static_cast<unsigned *>(workspace), done),
                     kernel);
    } else {
        unsigned long long work = plan.p.items;  // blocks of rows_tile_kernel; warps of rows_short_kernel
        if (plan.kernel != RowsKernel::Tile) {  // (exact_rows_kernel's groups: a warp takes 32 / group rows)
            const unsigned long long per_warp = plan.p.group > 0 ? 32 / plan.p.group : 1;
            work = ((plan.p.items + per_warp - 1) / per_warp + kWarps - 1) / kWarps;
        }
        const unsigned blocks =
            static_cast<unsigned>(std::max<unsigned long long>(1, std::min<unsigned long long>(resident, work)));
        if (rows.exact) prepare_exact_rows(plan.p, rows.x.dtype, rows.y.dtype, blocks, kernel);
        else prepare_rows(plan.p, rows.x.dtype, rows.y.dtype, plan.kernel, blocks, kernel);
    }
}

}  // namespace cuda
}  // namespace cudot
