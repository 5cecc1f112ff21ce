// RowsTests.cs - many dots in one call (CudotArrays.DotRows, DotSegments, cudot 1.9) on the CPU: strided
// rows (a row stride of 0 included), segments with empty ones, operands by address; every result bit for
// bit CudotArrays.Dot of that row alone. And the errors: the binding's checks and the library's.
using System;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class RowsTests
    {
        const int T = CudotLibrary.TileElements;

        // float, double, a mixed float pair, and integer and 16-bit pairs.
        static DType[][] Pairs
        {
            get
            {
                return new[]
                {
                    new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
                    new[] { DType.Float32, DType.Float64 }, new[] { DType.Int8, DType.UInt8 },
                    new[] { DType.Float16, DType.BFloat16 },
                };
            }
        }

        static int Seed(DType[] pair, long n) { return (int)pair[0] * 37 + (int)pair[1] * 5 + (int)(n % 10007); }

        // Result i against Dot of row i's two views alone, bit for bit.
        static void EachRowIsItsDot(double[] results, Func<int, double> rowDot, string what)
        {
            for (int i = 0; i < results.Length; i++)
                Bits.AreSame(rowDot(i), results[i], what + ", row " + i);
        }

        // count rows of n elements, rowStride apart (padding between rows when rowStride > n), element
        // stride 1; with rowStride < 0 row 0 is the last in memory.
        [Test, Combinatorial]
        public void StridedRowsMatchDotPerRow([ValueSource("Pairs")] DType[] pair, [Values(0, 1, 5, T + 3)] int n,
                                              [Values(1, 7)] int count, [Values(0, 1, -1)] int rowDirection)
        {
            long rowStride = (long)(n + 2) * rowDirection;                   // two spare elements between rows
            int rows = rowDirection == 0 ? 1 : count;
            int xLen = rows * (n + 2) + 1, yLen = count * (n + 2) + 1;
            var x = Elements.Random(pair[0], xLen, Seed(pair, n));
            var y = Elements.Random(pair[1], yLen, Seed(pair, n) + 1);
            int xStart = rowStride < 0 ? (rows - 1) * (n + 2) : 1;
            DotSpan x0 = x.Span().Strided(xStart, n, 1), y0 = y.Span().Strided(0, n, 1);
            double[] got = CudotArrays.DotRows(x0, y0, count, rowStride, n + 2);
            Assert.AreEqual(count, got.Length);
            EachRowIsItsDot(got, i => CudotArrays.Dot(x.Span().Strided((int)(xStart + i * rowStride), n, 1),
                                                      y.Span().Strided(i * (n + 2), n, 1)), "row stride " + rowStride);
            // Into a Span<double> of the caller's: the same bits.
            var into = new double[count + 2];
            into[0] = into[count + 1] = 42;
            CudotArrays.DotRows(x0, y0, rowStride, n + 2, new Span<double>(into, 1, count));
            Assert.AreEqual(42, into[0]);
            Assert.AreEqual(42, into[count + 1]);
            for (int i = 0; i < count; i++) Bits.AreSame(got[i], into[i + 1], "into a span, row " + i);
            if (n == 0) foreach (double r in got) Bits.AreSame(0.0, r, "rows of no elements give +0.0");
        }

        // One query against the rows of a table (x's row stride 0), row-major, and its columns (element
        // stride count, row stride 1), with element strides in the views: negative and zero.
        [Test, Combinatorial]
        public void OneQueryAgainstATable([ValueSource("Pairs")] DType[] pair, [Values(3, T + 1)] int n)
        {
            const int count = 6;
            var query = Elements.Random(pair[0], n, Seed(pair, n) + 2);
            var table = Elements.Random(pair[1], count * n, Seed(pair, n) + 3);
            // (Lambdas cannot hold a DotSpan, a ref struct: each one makes its views again.)
            DotSpan q = query.Span(), t = table.Span();
            double[] byRow = CudotArrays.DotRows(q, t.Strided(0, n, 1), count, 0, n);
            EachRowIsItsDot(byRow, i => CudotArrays.Dot(query.Span(), table.Span().Strided(i * n, n, 1)), "rows of the table");
            // The same query against another table read as n x count column-major (its columns are rows).
            var cols = Elements.Random(pair[1], count * n, Seed(pair, n) + 4);
            double[] byColumn = CudotArrays.DotRows(q, cols.Span().Strided(0, n, count), count, 0, 1);
            EachRowIsItsDot(byColumn, i => CudotArrays.Dot(query.Span(), cols.Span().Strided(i, n, count)), "columns");
            // The query backwards, and one element of it repeated (element strides -1 and 0).
            EachRowIsItsDot(CudotArrays.DotRows(q.Strided(n - 1, n, -1), t.Strided(0, n, 1), count, 0, n),
                            i => CudotArrays.Dot(query.Span().Strided(n - 1, n, -1), table.Span().Strided(i * n, n, 1)), "query backwards");
            EachRowIsItsDot(CudotArrays.DotRows(q.Strided(1, n, 0), t.Strided(0, n, 1), count, 0, n),
                            i => CudotArrays.Dot(query.Span().Strided(1, n, 0), table.Span().Strided(i * n, n, 1)), "one element repeated");
            // Both row strides 0: count copies of one dot.
            EachRowIsItsDot(CudotArrays.DotRows(q, t.Strided(0, n, 1), count, 0, 0),
                            i => CudotArrays.Dot(query.Span(), table.Span().Strided(0, n, 1)), "both row strides 0");
        }

        // Segments of every length around a tile, empty ones at the start, middle and end included.
        [Test, Combinatorial]
        public void SegmentsMatchDotPerSegment([ValueSource("Pairs")] DType[] pair, [Values(1, 2, -1)] long stride)
        {
            long[] offsets = { 0, 0, 1, 1, 4, T + 4, 2 * T + 5, 2 * T + 5, 2 * T + 9, 2 * T + 9 };
            int L = (int)offsets[offsets.Length - 1];
            int xStart;
            var x = Elements.Random(pair[0], Bits.Extent(L, stride, 1, out xStart), Seed(pair, stride) + 5);
            var y = Elements.Random(pair[1], L, Seed(pair, stride) + 6);
            DotSpan xs = x.Span().Strided(xStart, L, stride), ys = y.Span().Strided(0, L, 1);
            double[] got = CudotArrays.DotSegments(xs, ys, offsets);
            Assert.AreEqual(offsets.Length - 1, got.Length);
            EachRowIsItsDot(got, i =>
            {
                long from = offsets[i], length = offsets[i + 1] - offsets[i];
                return CudotArrays.Dot(x.Span().Strided((int)(xStart + from * stride), length, stride),
                                       y.Span().Strided((int)from, length, 1));
            }, "segments, x stride " + stride);
            foreach (int empty in new[] { 0, 2, 6, 8 }) Bits.AreSame(0.0, got[empty], "an empty segment gives +0.0");
            // Offsets that start late and end early: the elements outside are never part of a segment.
            var inner = new long[] { 3, T, T + 1 };
            double[] part = CudotArrays.DotSegments(xs, ys, inner);
            Bits.AreSame(CudotArrays.Dot(xs.Strided(0, 0, 1), ys.Strided(0, 0, 1)), 0.0, "sanity");
            Bits.AreSame(CudotArrays.Dot(x.Span().Strided((int)(xStart + 3 * stride), T - 3, stride), y.Span().Strided(3, T - 3, 1)),
                         part[0], "inner segment 0");
            var results = new double[2];
            CudotArrays.DotSegments(xs, ys, new ReadOnlySpan<long>(inner), results);
            Bits.AreSame(part[0], results[0], "into a span");
            Bits.AreSame(part[1], results[1], "into a span");
        }

        // NaN and infinities stay in their own row.
        [Test]
        public void NonFiniteValuesStayInTheirRow()
        {
            const int n = 4, count = 3;
            var x = new double[] { 1, 2, 3, 4, double.NaN, 1, 1, 1, double.PositiveInfinity, 0, 0, 0 };
            var y = new float[] { 1, 1, 1, 1 };
            double[] got = CudotArrays.DotRows(((DotSpan)x).Strided(0, n, 1), y, count, n, 0);
            Assert.AreEqual(10.0, got[0]);
            Assert.IsNaN(got[1]);
            Assert.AreEqual(double.PositiveInfinity, got[2]);
            EachRowIsItsDot(got, i => CudotArrays.Dot(((DotSpan)x).Strided(i * n, n, 1), y), "non-finite");
        }

        [Test]
        public void CountZeroReadsAndWritesNothing()
        {
            var x = new float[] { 1, 2 };
            Assert.AreEqual(0, CudotArrays.DotRows(x, x, 0, 2, 2).Length);
            CudotArrays.DotRows(x, x, 1000000, 1000000, Span<double>.Empty); // no rows: none leaves the span
            Assert.AreEqual(0, CudotArrays.DotSegments(x, x, new long[] { 1 }).Length);
            CudotArrays.DotSegments(x, x, new long[] { 2 }, Span<double>.Empty);
            var p = new DotPointer(IntPtr.Zero, DType.Float32);
            CudotArrays.DotRows(p, p, 5, 1, 1, Span<double>.Empty);
            CudotArrays.DotSegments(p, p, new long[] { 0 }, Span<double>.Empty);
        }

        // Pinned .NET memory by address (ordinary host memory: the CPU computes), strided and segmented,
        // with element strides and a negative row stride.
        [Test, Combinatorial]
        public void PointersToHostMemoryMatchDotPerRow([ValueSource("Pairs")] DType[] pair, [Values(1, -1)] long elementStride)
        {
            const int n = T + 5, count = 4, pitch = n + 3;
            var x = Elements.Random(pair[0], count * pitch, Seed(pair, elementStride) + 7);
            var y = Elements.Random(pair[1], count * pitch, Seed(pair, elementStride) + 8);
            GCHandle hx = GCHandle.Alloc(x.Store, GCHandleType.Pinned), hy = GCHandle.Alloc(y.Store, GCHandleType.Pinned);
            try
            {
                // x: rows from the last in memory to the first; y: in order. Element 0 of a row read
                // backwards is its last element in memory.
                int x0 = (count - 1) * pitch + (elementStride < 0 ? n - 1 : 0), y0 = elementStride < 0 ? n - 1 : 0;
                var px = new DotPointer(x.AddressOf(hx, x0), pair[0], elementStride);
                var py = new DotPointer(y.AddressOf(hy, y0), pair[1], elementStride);
                var got = new double[count];
                CudotArrays.DotRows(px, py, n, -pitch, pitch, got, CudotArrays.PerThreadStream);
                EachRowIsItsDot(got, i => CudotArrays.Dot(x.Span().Strided(x0 - i * pitch, n, elementStride),
                                                          y.Span().Strided(y0 + i * pitch, n, elementStride)), "pointers, strided");

                long[] offsets = { 0, 5, 5, T + 9, count * pitch };
                int first = elementStride < 0 ? count * pitch - 1 : 0;
                var sx = new DotPointer(x.AddressOf(hx, first), pair[0], elementStride);
                var sy = new DotPointer(y.AddressOf(hy, first), pair[1], elementStride);
                var seg = new double[offsets.Length - 1];
                CudotArrays.DotSegments(sx, sy, offsets, seg);
                EachRowIsItsDot(seg, i => CudotArrays.Dot(
                    x.Span().Strided((int)(first + offsets[i] * elementStride), offsets[i + 1] - offsets[i], elementStride),
                    y.Span().Strided((int)(first + offsets[i] * elementStride), offsets[i + 1] - offsets[i], elementStride)), "pointers, segments");
            }
            finally { hx.Free(); hy.Free(); }
        }

        // The struct the binding passes is cudot.h's cudot_rows, field for field (sizes for 64-bit).
        [Test]
        public void NativeLayoutIsTheHeaders()
        {
            if (IntPtr.Size != 8) Assert.Ignore("the sizes below are those of 64-bit platforms");
            Type rows = typeof(CudotContext).Assembly.GetType("Cudot.NativeRows", true);
            Assert.AreEqual(144, Marshal.SizeOf(rows), "sizeof(cudot_rows)");
            string[] fields = { "Layout", "Count", "N", "X", "Y", "XRowStride", "YRowStride", "Offsets", "XRows", "YRows", "Stream", "XReady", "YReady",
                                "Mode", "Reserved" };
            int[] offsets = { 4, 8, 16, 24, 48, 72, 80, 88, 96, 104, 112, 120, 128, 136, 140 };
            for (int i = 0; i < fields.Length; i++)
                Assert.AreEqual(offsets[i], Marshal.OffsetOf(rows, fields[i]).ToInt32(), fields[i]);
        }

        // ---- Errors: the binding's own checks, before any call.

        [Test]
        public void LengthsMustAgree()
        {
            var e = Assert.Throws<ArgumentException>(() => CudotArrays.DotRows(new float[3], new float[4], 2, 0, 0));
            StringAssert.Contains("x has 3 elements, y 4", e.Message);
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(new double[5], new double[4], new long[] { 0, 4 }));
            // Results for every segment, no more, no less.
            e = Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(new double[5], new double[5], new long[] { 0, 2, 5 }, new double[3]));
            StringAssert.Contains("3 offsets give 2 segments; results holds 3", e.Message);
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(new double[5], new double[5], new long[] { 0, 2, 5 }, new double[1]));
            var p = new DotPointer(new IntPtr(64), DType.Float64);
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(p, p, new long[] { 0, 2, 5 }, new double[1]));
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(new double[5], new double[5], new long[0]), "no offsets");
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegmentsAsync(p, p, new long[0], IntPtr.Zero, new IntPtr(64)), "no offsets");
        }

        [Test]
        public void OffsetsMustNotDecreaseAndStayInside()
        {
            var x = new float[8];
            foreach (long[] bad in new[] { new long[] { 0, 5, 3 }, new long[] { -1, 2 }, new long[] { 0, 9 }, new long[] { 9 }, new long[] { 4, 4, 2, 8 } })
            {
                var e = Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(x, x, bad), string.Join(",", bad));
                StringAssert.Contains("offsets must not decrease and lie in [0, 8]", e.Message);
            }
        }

        static DotSpan Row(double[] table) { return ((DotSpan)table).Strided(0, 4, 1); }      // row 0: elements 0..3
        static DotSpan Backwards(double[] table) { return ((DotSpan)table).Strided(11, 4, -1); } // elements 11..8

        [Test]
        public void RowsMustStayInsideTheirSpans()
        {
            var table = new double[12];
            Assert.AreEqual(3, CudotArrays.DotRows(Row(table), Row(table), 3, 4, 4).Length);     // exactly fits
            var e = Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Row(table), Row(table), 4, 4, 0));
            StringAssert.Contains("x: the last of 4 rows (row stride 4) leaves the span of 12 elements", e.Message);
            Assert.AreEqual("xRowStride", e.ParamName);
            e = Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Row(table), Row(table), 2, 0, -4));
            Assert.AreEqual("yRowStride", e.ParamName);
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Row(table), Row(table), 3, long.MaxValue / 2, 0), "overflow");
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Row(table), Row(table), 2, long.MinValue, 0), "long.MinValue");
            // A backwards view: element 0 is its last in memory; rows moving down must stay at index >= 0.
            Assert.AreEqual(3, CudotArrays.DotRows(Backwards(table), Row(table), 3, -4, 4).Length);
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Backwards(table), Row(table), 3, 1, 4));
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(Row(table), Row(table), -1, 0, 0), "negative count");
            var p = new DotPointer(new IntPtr(64), DType.Float32);
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(p, p, -1, 0, 0, new double[1]), "negative n");
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRowsAsync(p, p, 1, -1, 0, 0, IntPtr.Zero, new IntPtr(64)), "negative count");
        }

        // ---- Errors the library finds: CudotException with its status name and its own message.

        static CudotException Refused(Status expected, TestDelegate code, string call = "cudot_dot_rows")
        {
            var e = Assert.Throws<CudotException>(code);
            Assert.AreEqual(expected, e.Status, e.Message);
            StringAssert.Contains(call, e.NativeMessage, "the message must name the call");
            StringAssert.StartsWith(CudotLibrary.StatusName(expected) + ": ", e.Message);
            return e;
        }

        [Test]
        public void BadBatchesAreInvalidArgument()
        {
            var data = new double[64];
            GCHandle h = GCHandle.Alloc(data, GCHandleType.Pinned);
            try
            {
                var p = new DotPointer(h.AddrOfPinnedObject(), DType.Float64);
                var results = new double[3];
                // Offsets the binding passes on as they are: decreasing, negative.
                Refused(Status.InvalidArgument, () => CudotArrays.DotSegments(p, p, new long[] { 0, 5, 3, 8 }, results));
                Refused(Status.InvalidArgument, () => CudotArrays.DotSegments(p, p, new long[] { -1, 0, 3, 8 }, results));
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(new DotPointer(p.Data, (DType)9), p, 4, 4, 4, results));
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(new DotPointer(IntPtr.Zero, DType.Float64), p, 4, 4, 4, results));
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(p, p, 4, long.MaxValue / 2, 4, results));
                // Results overlapping a row: elements 2 and 3 of x's only row are the results' memory.
                var table = new double[16];
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(((DotSpan)table).Strided(0, 4, 1), new double[4], 0, 0, new Span<double>(table, 2, 2)));
                CudotArrays.DotRows(((DotSpan)table).Strided(0, 4, 1), new double[4], 0, 0, new Span<double>(table, 8, 2)); // beside it: fine
                // Results not 8-byte aligned.
                var bytes = new byte[8 * 4 + 4];
                Span<double> odd = MemoryMarshal.Cast<byte, double>(new Span<byte>(bytes, 4, 8 * 4));
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(new float[2], new float[2], 0, 0,
                                                                           MemoryMarshal.Cast<byte, double>(new Span<byte>(bytes, 4, 8 * 4))));
                Assert.AreEqual(4, odd.Length);
                // Memory nobody may read: a status, not a crash.
                Refused(Status.InvalidArgument, () => CudotArrays.DotRows(new DotPointer(new IntPtr(4096), DType.Float64), p, 4, 0, 4, results));
            }
            finally { h.Free(); }
        }

        // Async needs rows a GPU computes: host memory is refused (Unsupported), as is a library without
        // cudot_dot_rows_async; either way nothing is queued.
        [Test]
        public void AsyncOfHostRowsIsUnsupported()
        {
            IntPtr host = Marshal.AllocHGlobal(256);
            try
            {
                var p = new DotPointer(host, DType.Float64);
                var e = Assert.Throws<CudotException>(() => CudotArrays.DotRowsAsync(p, p, 4, 2, 4, 4, IntPtr.Zero, host + 128));
                Assert.AreEqual(Status.Unsupported, e.Status, e.Message);
                StringAssert.Contains("cudot_dot_rows_async", e.Message);
                e = Assert.Throws<CudotException>(() => CudotArrays.DotSegmentsAsync(p, p, new long[] { 0, 2, 4 }, IntPtr.Zero, host + 128));
                Assert.AreEqual(Status.Unsupported, e.Status, e.Message);
            }
            finally { Marshal.FreeHGlobal(host); }
        }
    }
}
