// CudotRows.cs - many dots in one call (cudot_dot_rows and cudot_dot_rows_async, library 1.9): a batch
// of rows of the caller's own memory, each result with the bits of CudotArrays.Dot on that row's two
// operands alone, whatever the batch. Two layouts are offered:
//  - strided: row i of x is x's view moved by i * xRowStride elements of its span (likewise y); a row
//    stride of 0 repeats one view for every row (one query against the rows of a table);
//  - segmented: one long x and one long y cut by offsets into rows of any length.
// Spans are pinned for the call and checked here, so the library never reads outside them; operands
// given by address (DotPointer) are passed as they are, for the library to check.
// Every call takes exact (library 1.14, cudot_rows.mode = CUDOT_MODE_EXACT): each result is then bit for
// bit CudotArrays.DotExact of that row alone. The signatures of 1.9, without it, stay as overloads, so
// that code compiled against them still binds.
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    public static partial class CudotArrays
    {
        /// <summary>The dots of `count` pairs of rows (cudot_dot_rows), as a new array: result i is the dot of
        /// x's view moved by i * xRowStride elements and y's moved by i * yRowStride elements, within the span
        /// each was made from. x and y are the views of row 0 (the same number of elements n, any element
        /// stride); a row stride of 0 repeats that view for every row, so
        /// DotRows(query, table.Strided(0, n, 1), count, 0, n) dots one query against count rows of n
        /// elements of a row-major table. Each result has the bits of Dot on that row's two views alone.
        /// Throws ArgumentException: the views' lengths differ, a row leaves its span
        /// (ArgumentOutOfRangeException), count negative; CudotException for what the library refuses
        /// (Unsupported: a library older than 1.9). exact: each result is instead the row's correctly
        /// rounded dot, bit for bit CudotArrays.DotExact of its two views alone (+0.0 for rows of no
        /// elements); a library older than 1.14 throws Unsupported for it.</summary>
        public static double[] DotRows(DotSpan x, DotSpan y, int count, long xRowStride, long yRowStride, bool exact = false)
        {
            if (count < 0) throw new ArgumentOutOfRangeException("count", count, "cannot be negative");
            var results = new double[count];
            DotRows(x, y, xRowStride, yRowStride, results, exact);
            return results;
        }

        /// <summary>DotRows of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static double[] DotRows(DotSpan x, DotSpan y, int count, long xRowStride, long yRowStride)
        {
            return DotRows(x, y, count, xRowStride, yRowStride, false);
        }

        /// <summary>DotRows into the caller's results: one row per element of results (results.Length rows),
        /// result i the dot of row i (see DotRows(x, y, count, xRowStride, yRowStride)). results must not
        /// overlap x or y (CudotException, InvalidArgument). exact as there. On any exception nothing was
        /// written.</summary>
        public static unsafe void DotRows(DotSpan x, DotSpan y, long xRowStride, long yRowStride, Span<double> results, bool exact = false)
        {
            Mode mode = RowsMode(exact);
            long n = CommonLength(x, y);
            int count = results.Length;
            if (count == 0) return;
            if (n == 0)
                xRowStride = yRowStride = 0; // rows of no elements: nothing is read, every result is +0.0
            else
            {
                RowsInside(x, count, xRowStride, "x", "xRowStride");
                RowsInside(y, count, yRowStride, "y", "yRowStride");
            }
            int status;
            fixed (byte* px = &MemoryMarshal.GetReference(x.Memory))
            fixed (byte* py = &MemoryMarshal.GetReference(y.Memory))
            fixed (double* pr = &MemoryMarshal.GetReference(results))
            {
                NativeArray xa = Operand(x, px), ya = Operand(y, py);
                if (n == 0) xa.Data = ya.Data = IntPtr.Zero;
                NativeRows r = Strided(count, n, xa, ya, xRowStride, yRowStride, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, mode);
                status = CallRows(&r, pr);
            }
            Check(status);
        }

        /// <summary>DotRows into results of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotRows(DotSpan x, DotSpan y, long xRowStride, long yRowStride, Span<double> results)
        {
            DotRows(x, y, xRowStride, yRowStride, results, false);
        }

        /// <summary>The dots of the segments of x and y (the same number of elements L), as a new array of
        /// offsets.Length - 1 results: result i is the dot of their elements offsets[i] .. offsets[i + 1] - 1
        /// (indices of the views, whatever their element stride), with the bits of Dot on that segment
        /// alone; an empty segment gives +0.0. offsets must not decrease and lie in [0, L]. Throws
        /// ArgumentException (lengths differ, no offsets, offsets out of order or range) and CudotException
        /// for what the library refuses (Unsupported: a library older than 1.9). exact: each result is the
        /// segment's correctly rounded dot, bit for bit CudotArrays.DotExact of it alone (library 1.14,
        /// Unsupported before).</summary>
        public static double[] DotSegments(DotSpan x, DotSpan y, ReadOnlySpan<long> offsets, bool exact = false)
        {
            if (offsets.Length == 0) throw new ArgumentException("offsets must hold at least one value", "offsets");
            var results = new double[offsets.Length - 1];
            DotSegments(x, y, offsets, results, exact);
            return results;
        }

        /// <summary>DotSegments of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static double[] DotSegments(DotSpan x, DotSpan y, ReadOnlySpan<long> offsets)
        {
            return DotSegments(x, y, offsets, false);
        }

        /// <summary>DotSegments into the caller's results, which must hold exactly offsets.Length - 1
        /// doubles and not overlap x or y; exact as there. On any exception nothing was written.</summary>
        public static unsafe void DotSegments(DotSpan x, DotSpan y, ReadOnlySpan<long> offsets, Span<double> results, bool exact = false)
        {
            Mode mode = RowsMode(exact);
            long n = CommonLength(x, y);
            int count = SegmentCount(offsets, results.Length);
            for (int i = 0; i < offsets.Length; i++)
                if (offsets[i] < 0 || offsets[i] > n || (i > 0 && offsets[i] < offsets[i - 1]))
                    throw new ArgumentException("offsets[" + i + "] is " + offsets[i] + ": offsets must not decrease and lie in [0, " +
                                                n + "]", "offsets");
            if (count == 0) return;
            int status;
            fixed (byte* px = &MemoryMarshal.GetReference(x.Memory))
            fixed (byte* py = &MemoryMarshal.GetReference(y.Memory))
            fixed (long* po = &MemoryMarshal.GetReference(offsets))
            fixed (double* pr = &MemoryMarshal.GetReference(results))
            {
                NativeArray xa = Operand(x, px), ya = Operand(y, py);
                if (n == 0) xa.Data = ya.Data = IntPtr.Zero;
                NativeRows r = Segmented(count, xa, ya, po, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, mode);
                status = CallRows(&r, pr);
            }
            Check(status);
        }

        /// <summary>DotSegments into results of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotSegments(DotSpan x, DotSpan y, ReadOnlySpan<long> offsets, Span<double> results)
        {
            DotSegments(x, y, offsets, results, false);
        }

        /// <summary>The dots of results.Length rows of n elements of operands given by address (device,
        /// managed, page-locked or host memory), waiting for the results: row i of x starts at element
        /// i * xRowStride of x (x.Data + i * xRowStride elements; signed, 0 repeats row 0), its elements
        /// x.Stride apart; likewise y. Rows in device or managed memory are computed by their GPU in one
        /// launch on `stream` (IntPtr.Zero: the legacy default stream), after the work queued on it and on
        /// each operand's Ready stream; rows in host memory by the CPU. Nothing is checked here: the library
        /// refuses a device row leaving its allocation (InvalidArgument). Throws CudotException as Dot does,
        /// plus Unsupported for rows on two GPUs, a mix of device and host rows, or a library older than 1.9.
        /// exact: each row's correctly rounded dot, computed where the canonical one would be (library 1.14,
        /// Unsupported before).</summary>
        public static unsafe void DotRows(DotPointer x, DotPointer y, long n, long xRowStride, long yRowStride, Span<double> results,
                                          IntPtr stream = default(IntPtr), bool exact = false)
        {
            Mode mode = RowsMode(exact);
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            if (results.Length == 0) return;
            NativeRows r = Strided(results.Length, n, Operand(x), Operand(y), xRowStride, yRowStride, stream, x.Ready, y.Ready, mode);
            int status;
            fixed (double* pr = &MemoryMarshal.GetReference(results))
                status = CallRows(&r, pr);
            Check(status);
        }

        /// <summary>DotRows by address of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotRows(DotPointer x, DotPointer y, long n, long xRowStride, long yRowStride, Span<double> results,
                                   IntPtr stream)
        {
            DotRows(x, y, n, xRowStride, yRowStride, results, stream, false);
        }

        /// <summary>Queues the dots of `count` rows of n elements (as DotRows(DotPointer, ...) names them) on
        /// `stream` and returns (cudot_dot_rows_async): result i is written in stream order to
        /// deviceResults + i doubles, 8-byte aligned device, managed or mapped memory the rows' GPU can
        /// write, not overlapping any row. The rows must be in device or managed memory; count = 0 queues
        /// nothing. May be captured into a CUDA graph. Throws CudotException as DotRows does, plus
        /// InvalidArgument (deviceResults zero, misaligned, not writable by the GPU) and Unsupported (rows
        /// in host memory; a library without cudot_dot_rows_async); after an exception nothing was queued.
        /// exact: each row's correctly rounded dot (library 1.14, Unsupported before).</summary>
        public static unsafe void DotRowsAsync(DotPointer x, DotPointer y, long n, long count, long xRowStride, long yRowStride,
                                               IntPtr stream, IntPtr deviceResults, bool exact = false)
        {
            Mode mode = RowsMode(exact);
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            if (count < 0) throw new ArgumentOutOfRangeException("count", count, "cannot be negative");
            NativeRows r = Strided(count, n, Operand(x), Operand(y), xRowStride, yRowStride, stream, x.Ready, y.Ready, mode);
            Check(CallRowsAsync(&r, deviceResults));
        }

        /// <summary>DotRowsAsync of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotRowsAsync(DotPointer x, DotPointer y, long n, long count, long xRowStride, long yRowStride,
                                        IntPtr stream, IntPtr deviceResults)
        {
            DotRowsAsync(x, y, n, count, xRowStride, yRowStride, stream, deviceResults, false);
        }

        /// <summary>The dots of the segments of two long operands given by address, waiting for the results:
        /// result i (of offsets.Length - 1, which results must hold exactly) is the dot of their elements
        /// offsets[i] .. offsets[i + 1] - 1 (element k at Data + k * Stride elements). Who computes, and on
        /// which stream, as DotRows(DotPointer, ...). The offsets are passed as they are: the library refuses
        /// negative or decreasing ones, and segments leaving a device allocation (InvalidArgument). exact:
        /// each segment's correctly rounded dot (library 1.14, Unsupported before).</summary>
        public static unsafe void DotSegments(DotPointer x, DotPointer y, ReadOnlySpan<long> offsets, Span<double> results,
                                              IntPtr stream = default(IntPtr), bool exact = false)
        {
            Mode mode = RowsMode(exact);
            int count = SegmentCount(offsets, results.Length);
            if (count == 0) return;
            int status;
            fixed (long* po = &MemoryMarshal.GetReference(offsets))
            fixed (double* pr = &MemoryMarshal.GetReference(results))
            {
                NativeRows r = Segmented(count, Operand(x), Operand(y), po, stream, x.Ready, y.Ready, mode);
                status = CallRows(&r, pr);
            }
            Check(status);
        }

        /// <summary>DotSegments by address of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotSegments(DotPointer x, DotPointer y, ReadOnlySpan<long> offsets, Span<double> results, IntPtr stream)
        {
            DotSegments(x, y, offsets, results, stream, false);
        }

        /// <summary>Queues the dots of the segments of two long operands in device or managed memory on
        /// `stream` and returns (cudot_dot_rows_async): offsets.Length - 1 results, written in stream order
        /// to deviceResults as DotRowsAsync writes them. The offsets (host memory) are read before this
        /// returns; the caller may reuse them at once. exact as DotRowsAsync.</summary>
        public static unsafe void DotSegmentsAsync(DotPointer x, DotPointer y, ReadOnlySpan<long> offsets, IntPtr stream, IntPtr deviceResults,
                                                   bool exact = false)
        {
            Mode mode = RowsMode(exact);
            if (offsets.Length == 0) throw new ArgumentException("offsets must hold at least one value", "offsets");
            int status;
            fixed (long* po = &MemoryMarshal.GetReference(offsets))
            {
                NativeRows r = Segmented(offsets.Length - 1, Operand(x), Operand(y), po, stream, x.Ready, y.Ready, mode);
                status = CallRowsAsync(&r, deviceResults);
            }
            Check(status);
        }

        /// <summary>DotSegmentsAsync of 1.9 (canonical), kept so that code compiled against it still binds.</summary>
        public static void DotSegmentsAsync(DotPointer x, DotPointer y, ReadOnlySpan<long> offsets, IntPtr stream, IntPtr deviceResults)
        {
            DotSegmentsAsync(x, y, offsets, stream, deviceResults, false);
        }

        // ---- helpers

        // The mode of a batch. The exact one is checked first, before any shortcut, so that a library older
        // than 1.14 refuses it whatever the batch: such a library has cudot_dot_rows but not
        // cudot_rows.mode, and would refuse a non-zero Mode only as bytes it does not know.
        static Mode RowsMode(bool exact)
        {
            if (!exact) return Mode.Canonical;
            CudotLibrary.EnsureLoaded();
            CudotLibrary.RequireVersion(11400, "the exact mode of rows (cudot_rows.mode)");
            return Mode.Exact;
        }

        // Every row of a strided batch lies inside the span its view was made from: rows 0 and count - 1
        // are the extremes (a row's first and last elements move by the same row stride), and row 0 is
        // the view itself, inside by construction.
        static void RowsInside(DotSpan view, int count, long rowStride, string name, string parameter)
        {
            long last;
            try { last = checked(view.Start + (count - 1) * rowStride); }
            catch (OverflowException) { last = -1; }
            if (!Inside(view.SpanLength, last, view.Length, view.Stride))
                throw new ArgumentOutOfRangeException(parameter, rowStride, string.Format(
                    "{0}: the last of {1} rows (row stride {2}) leaves the span of {3} elements", name, count, rowStride, view.SpanLength));
        }

        // Whether `length` elements from index `start`, `stride` apart, lie inside a span of `span` elements.
        static bool Inside(long span, long start, long length, long stride)
        {
            if (length == 0) return start >= 0 && start <= span;
            if (start < 0 || start >= span) return false;
            if (length == 1 || stride == 0) return true;
            long room = stride > 0 ? span - 1 - start : start; // compared without overflow
            return stride != long.MinValue && length - 1 <= room / Math.Abs(stride);
        }

        static int SegmentCount(ReadOnlySpan<long> offsets, int results)
        {
            if (offsets.Length == 0) throw new ArgumentException("offsets must hold at least one value", "offsets");
            if (results != offsets.Length - 1)
                throw new ArgumentException(offsets.Length + " offsets give " + (offsets.Length - 1) + " segments; results holds " +
                                            results, "results");
            return results;
        }

        static NativeRows Strided(long count, long n, NativeArray x, NativeArray y, long xRowStride, long yRowStride,
                                  IntPtr stream, IntPtr xReady, IntPtr yReady, Mode mode)
        {
            NativeRows r = Rows(RowsLayout.Strided, count, x, y, stream, xReady, yReady, mode);
            r.N = new UIntPtr((ulong)n);
            r.XRowStride = xRowStride;
            r.YRowStride = yRowStride;
            return r;
        }

        static unsafe NativeRows Segmented(long count, NativeArray x, NativeArray y, long* offsets, IntPtr stream, IntPtr xReady, IntPtr yReady,
                                           Mode mode)
        {
            NativeRows r = Rows(RowsLayout.Segmented, count, x, y, stream, xReady, yReady, mode);
            r.Offsets = offsets;
            return r;
        }

        static unsafe NativeRows Rows(RowsLayout layout, long count, NativeArray x, NativeArray y, IntPtr stream, IntPtr xReady, IntPtr yReady,
                                      Mode mode)
        {
            Ready("cudot_dot_rows");
            return new NativeRows
            {
                Size = (uint)sizeof(NativeRows), Layout = (int)layout, Count = new UIntPtr((ulong)count), X = x, Y = y,
                Stream = stream, XReady = xReady, YReady = yReady, Mode = (int)mode,
            };
        }

        // The calls, with a library that lacks the entry point (older than 1.9) answered as Unsupported.
        static unsafe int CallRows(NativeRows* r, double* results)
        {
            try { return Api.DotRows(r, results); }
            catch (EntryPointNotFoundException) { throw Missing("cudot_dot_rows"); }
        }

        static unsafe int CallRowsAsync(NativeRows* r, IntPtr deviceResults)
        {
            try { return Api.DotRowsAsync(r, deviceResults); }
            catch (EntryPointNotFoundException) { throw Missing("cudot_dot_rows_async"); }
        }

        static CudotException Missing(string function)
        {
            return new CudotException(Status.Unsupported, CudotLibrary.StatusName(Status.Unsupported), string.Format(
                "the loaded library ({0}) lacks {1} (many dots in one call: library 1.9)", CudotLibrary.VersionString, function));
        }
    }
}
