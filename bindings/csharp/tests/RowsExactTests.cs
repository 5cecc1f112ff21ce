// RowsExactTests.cs - exact rows (library 1.14): CudotArrays.DotRows and DotSegments with exact: true,
// and DotEachRow of an exact context. Every result is bit for bit CudotArrays.DotExact of that row alone,
// float64 rows also the BigInteger sum of ExactReference (ExactContextTests.cs); the known answers show
// the mode arrived (a canonical batch gives other numbers on the same data).
using System;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class RowsExactTests
    {
        const int T = CudotLibrary.TileElements;

        static DType[][] Pairs
        {
            get
            {
                return new[]
                {
                    new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
                    new[] { DType.Float32, DType.Float64 }, new[] { DType.Int8, DType.BFloat16 },
                };
            }
        }

        static int Seed(DType[] pair, long n) { return (int)pair[0] * 41 + (int)pair[1] * 7 + (int)(n % 10007); }

        static void EachRowIsItsExactDot(double[] results, Func<int, double> rowExact, string what)
        {
            for (int i = 0; i < results.Length; i++)
                Bits.AreSame(rowExact(i), results[i], what + ", row " + i);
        }

        // Strided rows n + 2 apart (x forwards, y backwards from its last row), into a new array and into
        // the caller's span, and one query, read backwards, against the rows of a table (row stride 0).
        [Test, Combinatorial]
        public void StridedRowsMatchDotExactPerRow([ValueSource("Pairs")] DType[] pair, [Values(0, 1, 7, T + 3)] int n)
        {
            const int count = 6;
            int pitch = n + 2;
            var x = Elements.Random(pair[0], count * pitch + 1, Seed(pair, n));
            var y = Elements.Random(pair[1], count * pitch + 1, Seed(pair, n) + 1);
            int yLast = (count - 1) * pitch;
            DotSpan x0 = x.Span().Strided(1, n, 1), y0 = y.Span().Strided(yLast, n, 1);
            double[] got = CudotArrays.DotRows(x0, y0, count, pitch, -pitch, exact: true);
            EachRowIsItsExactDot(got, i => CudotArrays.DotExact(x.Span().Strided(1 + i * pitch, n, 1),
                                                                y.Span().Strided(yLast - i * pitch, n, 1)), "strided");
            var into = new double[count + 2];
            into[0] = into[count + 1] = 42;
            CudotArrays.DotRows(x0, y0, pitch, -pitch, new Span<double>(into, 1, count), exact: true);
            Assert.AreEqual(42, into[0]);
            Assert.AreEqual(42, into[count + 1]);
            for (int i = 0; i < count; i++) Bits.AreSame(got[i], into[i + 1], "into a span, row " + i);
            if (n == 0) foreach (double r in got) Bits.AreSame(0.0, r, "rows of no elements give +0.0");

            // One query against the table's rows: the query is x's first n elements, read backwards.
            DotSpan q = x.Span().Strided(Math.Max(n - 1, 0), n, -1);
            double[] table = CudotArrays.DotRows(q, y.Span().Strided(0, n, 1), count, 0, pitch, exact: true);
            EachRowIsItsExactDot(table, i => CudotArrays.DotExact(x.Span().Strided(Math.Max(n - 1, 0), n, -1),
                                                                  y.Span().Strided(i * pitch, n, 1)), "one query");
            if (pair[0] == DType.Float64 && pair[1] == DType.Float64)
            {
                var xv = (double[])x.Store;
                var yv = (double[])y.Store;
                var rev = new double[n];
                for (int k = 0; k < n; k++) rev[k] = xv[n - 1 - k];
                for (int i = 0; i < count; i++)
                    Bits.AreSame(ExactReference.Dot(rev, Slice(yv, i * pitch, n), 0, n), table[i], "one query against BigInteger, row " + i);
            }
        }

        static double[] Slice(double[] a, int start, int n)
        {
            var s = new double[n];
            Array.Copy(a, start, s, 0, n);
            return s;
        }

        [Test, Combinatorial]
        public void SegmentsMatchDotExactPerSegment([ValueSource("Pairs")] DType[] pair, [Values(1, -1)] long stride)
        {
            long[] offsets = { 0, 0, 1, 4, T + 4, T + 4, 2 * T + 9, 2 * T + 9 };
            int L = (int)offsets[offsets.Length - 1];
            int xStart;
            var x = Elements.Random(pair[0], Bits.Extent(L, stride, 1, out xStart), Seed(pair, stride) + 5);
            var y = Elements.Random(pair[1], L, Seed(pair, stride) + 6);
            DotSpan xs = x.Span().Strided(xStart, L, stride), ys = y.Span().Strided(0, L, 1);
            double[] got = CudotArrays.DotSegments(xs, ys, offsets, exact: true);
            EachRowIsItsExactDot(got, i =>
            {
                long from = offsets[i], length = offsets[i + 1] - offsets[i];
                return CudotArrays.DotExact(x.Span().Strided((int)(xStart + from * stride), length, stride),
                                            y.Span().Strided((int)from, length, 1));
            }, "segments, x stride " + stride);
            foreach (int empty in new[] { 0, 4, 6 }) Bits.AreSame(0.0, got[empty], "an empty segment gives +0.0");
            var into = new double[offsets.Length - 1];
            CudotArrays.DotSegments(xs, ys, offsets, into, exact: true);
            for (int i = 0; i < into.Length; i++) Bits.AreSame(got[i], into[i], "into a span, segment " + i);
        }

        // Pinned .NET memory by address: the CPU computes, as for spans.
        [Test, Combinatorial]
        public void PointersMatchDotExactPerRow([ValueSource("Pairs")] DType[] pair)
        {
            const int n = T + 5, count = 4, pitch = n + 3;
            var x = Elements.Random(pair[0], count * pitch, Seed(pair, n) + 7);
            var y = Elements.Random(pair[1], count * pitch, Seed(pair, n) + 8);
            GCHandle hx = GCHandle.Alloc(x.Store, GCHandleType.Pinned), hy = GCHandle.Alloc(y.Store, GCHandleType.Pinned);
            try
            {
                var px = new DotPointer(x.AddressOf(hx, 0), pair[0]);
                var py = new DotPointer(y.AddressOf(hy, 0), pair[1]);
                var got = new double[count];
                CudotArrays.DotRows(px, py, n, pitch, pitch, got, exact: true);
                EachRowIsItsExactDot(got, i => CudotArrays.DotExact(x.Span().Strided(i * pitch, n, 1), y.Span().Strided(i * pitch, n, 1)),
                                     "pointers, strided");
                long[] offsets = { 0, 5, 5, T + 9, count * pitch };
                var seg = new double[offsets.Length - 1];
                CudotArrays.DotSegments(px, py, offsets, seg, CudotArrays.PerThreadStream, exact: true);
                EachRowIsItsExactDot(seg, i => CudotArrays.DotExact(x.Span().Strided((int)offsets[i], offsets[i + 1] - offsets[i], 1),
                                                                    y.Span().Strided((int)offsets[i], offsets[i + 1] - offsets[i], 1)),
                                     "pointers, segments");
            }
            finally { hx.Free(); hy.Free(); }
        }

        // Values that break naive sums: [1e16, 1, -1e16] x 100 then [3] against ones is exactly 103 (the
        // canonical order gives 4); [1e308, 1e308] . [10, -10] is +0.0, its products past the double range.
        [Test]
        public void KnownAnswers()
        {
            const int n = 301;
            var table = new float[3 * n];
            var ones = new float[n];
            for (int i = 0; i < 100; i++) { table[3 * i] = 1e16f; table[3 * i + 1] = 1; table[3 * i + 2] = -1e16f; }
            table[300] = 3;
            for (int i = 0; i < n; i++) { ones[i] = 1; table[2 * n - 1 - i] = table[i]; table[2 * n + i] = 0.5f; }
            DotSpan rows = table;
            double[] exact = CudotArrays.DotRows(ones, rows.Strided(0, n, 1), 3, 0, n, exact: true);
            double[] canonical = CudotArrays.DotRows(ones, rows.Strided(0, n, 1), 3, 0, n);
            CollectionAssert.AreEqual(new[] { 103.0, 103.0, 150.5 }, exact);
            Assert.AreEqual(4.0, canonical[0], "the canonical order on the same rows (the mode must matter)");

            var big = new[] { 1e308, 1e308, 2.0 };
            var ten = new[] { 10.0, -10, 0.5 };
            double[] seg = CudotArrays.DotSegments(big, ten, new long[] { 0, 2, 2, 3 }, exact: true);
            Bits.AreSame(0.0, seg[0], "1e309 - 1e309 is +0.0, the sign bit clear");
            Bits.AreSame(0.0, seg[1], "an empty segment");
            Bits.AreSame(1.0, seg[2], "2 * 0.5");
            double[] pair = CudotArrays.DotRows(((DotSpan)big).Strided(0, 2, 1), ((DotSpan)ten).Strided(0, 2, 1), 2, 0, 0, exact: true);
            Bits.AreSame(0.0, pair[0], "strided, row 0");
            Bits.AreSame(0.0, pair[1], "strided, row 1 (both row strides 0)");
            // Rows of no elements: +0.0 each, nothing read.
            foreach (double r in CudotArrays.DotRows(new float[0], new double[0], 4, 0, 0, exact: true))
                Bits.AreSame(0.0, r, "an empty row");
        }

        // The binding's checks come before the mode: the same exceptions with exact: true.
        [Test]
        public void ErrorsAreTheCanonicalOnes()
        {
            var table = new double[12];
            DotSpan row = ((DotSpan)table).Strided(0, 4, 1);
            Assert.AreEqual(3, CudotArrays.DotRows(row, row, 3, 4, 4, exact: true).Length);
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.DotRows(((DotSpan)table).Strided(0, 4, 1),
                                                                                 ((DotSpan)table).Strided(0, 4, 1), 4, 4, 0, exact: true));
            Assert.Throws<ArgumentException>(() => CudotArrays.DotSegments(new double[5], new double[5], new long[] { 0, 6 }, exact: true));
            var e = Assert.Throws<CudotException>(() => CudotArrays.DotRows(new DotPointer(new IntPtr(4096), DType.Float64),
                                                                            new DotPointer(new IntPtr(4096), DType.Float64), 4, 0, 4,
                                                                            new double[2], exact: true));
            Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
            // Host rows are the CPU's: the async calls refuse them in the exact mode too.
            IntPtr host = Marshal.AllocHGlobal(256);
            try
            {
                var p = new DotPointer(host, DType.Float64);
                e = Assert.Throws<CudotException>(() => CudotArrays.DotRowsAsync(p, p, 4, 2, 4, 4, IntPtr.Zero, host + 128, exact: true));
                Assert.AreEqual(Status.Unsupported, e.Status, e.Message);
                e = Assert.Throws<CudotException>(() => CudotArrays.DotSegmentsAsync(p, p, new long[] { 0, 2, 4 }, IntPtr.Zero, host + 128, exact: true));
                Assert.AreEqual(Status.Unsupported, e.Status, e.Message);
            }
            finally { Marshal.FreeHGlobal(host); }
        }

        // The public calls take only the two modes; a value the library does not know, or a non-zero
        // reserved, written into the binding's own NativeRows where the header has those fields, is the
        // library's InvalidArgument naming the field (and so shows that Mode and Reserved lie where it
        // reads them), not a crash.
        // Api.DotRows (internal) as a delegate of two addresses. Reflection cannot pass its pointer
        // parameters on mono (MethodInfo.Invoke refuses a boxed Pointer), so a dynamic method calls it: at
        // the IL level both are native ints.
        static Func<IntPtr, IntPtr, int> ApiDotRows()
        {
            MethodInfo target = typeof(CudotArrays).Assembly.GetType("Cudot.Api", true)
                                                   .GetMethod("DotRows", BindingFlags.Static | BindingFlags.NonPublic);
            var call = new DynamicMethod("ApiDotRows", typeof(int), new[] { typeof(IntPtr), typeof(IntPtr) }, typeof(RowsExactTests).Module, true);
            ILGenerator il = call.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(OpCodes.Call, target);
            il.Emit(OpCodes.Ret);
            return (Func<IntPtr, IntPtr, int>)call.CreateDelegate(typeof(Func<IntPtr, IntPtr, int>));
        }

        [TestCase(2, 0)]
        [TestCase(-1, 0)]
        [TestCase(7, 0)]
        [TestCase(1, 1)]
        public unsafe void UnknownModeAndReservedAreRefused(int mode, int reserved)
        {
            Assembly cudot = typeof(CudotArrays).Assembly;
            Type rowsType = cudot.GetType("Cudot.NativeRows", true), arrayType = cudot.GetType("Cudot.NativeArray", true);
            var x = new double[] { 1, 2, 3, 4 };
            var results = new double[] { 42, 42 };
            fixed (double* px = x)
            fixed (double* pr = results)
            {
                object operand = Activator.CreateInstance(arrayType);
                arrayType.GetField("Data").SetValue(operand, new IntPtr(px));
                arrayType.GetField("DType").SetValue(operand, (int)DType.Float64);
                arrayType.GetField("Stride").SetValue(operand, 1L);
                object rows = Activator.CreateInstance(rowsType);
                rowsType.GetField("Size").SetValue(rows, (uint)Marshal.SizeOf(rowsType));
                rowsType.GetField("Count").SetValue(rows, new UIntPtr(2));
                rowsType.GetField("N").SetValue(rows, new UIntPtr(2));
                rowsType.GetField("X").SetValue(rows, operand);
                rowsType.GetField("Y").SetValue(rows, operand);
                rowsType.GetField("XRowStride").SetValue(rows, 2L);
                rowsType.GetField("YRowStride").SetValue(rows, 2L);
                rowsType.GetField("Mode").SetValue(rows, mode);
                rowsType.GetField("Reserved").SetValue(rows, reserved);
                IntPtr r = Marshal.AllocHGlobal(Marshal.SizeOf(rowsType));
                try
                {
                    Marshal.StructureToPtr(rows, r, false);
                    CudotLibrary.EnsureLoaded();
                    Func<IntPtr, IntPtr, int> call = ApiDotRows();
                    int status = call(r, new IntPtr(pr));
                    Assert.AreEqual((int)Status.InvalidArgument, status);
                    MethodInfo lastError = cudot.GetType("Cudot.Api", true).GetMethod("LastError", BindingFlags.Static | BindingFlags.NonPublic);
                    string message = (string)lastError.Invoke(null, new object[] { IntPtr.Zero });
                    StringAssert.Contains(reserved == 1 ? "reserved" : "mode", message);
                    CollectionAssert.AreEqual(new double[] { 42, 42 }, results, "nothing written");
                    // The same struct with both fields as the binding sends them: accepted.
                    rowsType.GetField("Mode").SetValue(rows, 1);
                    rowsType.GetField("Reserved").SetValue(rows, 0);
                    Marshal.StructureToPtr(rows, r, false);
                    status = call(r, new IntPtr(pr));
                    Assert.AreEqual(0, status);
                    CollectionAssert.AreEqual(new double[] { 5, 25 }, results);
                }
                finally { Marshal.FreeHGlobal(r); }
            }
        }

        // DotEachRow of an exact context: each row's exact dot, the bits of DotExact on a copy of its first
        // n elements; the triples' row gives 103.
        [Test, Combinatorial]
        public void ExactContextDotEachRowMatchesDotExact([Values(Memory.Host, Memory.Auto)] Memory memory,
                                                         [Values(DType.Float32, DType.Float64)] DType dtype)
        {
            const int rows = 4, n = 301;
            var x = Elements.Random(dtype, rows * n, 900 + (int)dtype);
            var y = Elements.Random(dtype, rows * n, 901 + (int)dtype);
            for (int i = 0; i < 100; i++) // row 1: the triples, against ones
            {
                Put(x, n + 3 * i, 1e16); Put(x, n + 3 * i + 1, 1); Put(x, n + 3 * i + 2, -1e16);
            }
            Put(x, n + 300, 3);
            for (int i = 0; i < n; i++) y.SetOne(n + i);
            using (var ctx = new CudotContext(n, dtype, memory, rows: rows, exact: true))
            {
                Copy(x, ctx, true);
                Copy(y, ctx, false);
                double[] all = ctx.DotEachRow();
                Assert.AreEqual(rows, all.Length);
                EachRowIsItsExactDot(all, i => CudotArrays.DotExact(x.Span().Strided(i * n, n, 1), y.Span().Strided(i * n, n, 1)), "whole rows");
                Bits.AreSame(103.0, all[1], "the triples' row");
                var part = new double[] { -1, -1, -1, -1 };
                ctx.DotEachRow(3, 7, part);
                for (int i = 0; i < 3; i++)
                    Bits.AreSame(CudotArrays.DotExact(x.Span().Strided(i * n, 7, 1), y.Span().Strided(i * n, 7, 1)), part[i], "7 elements, row " + i);
                Assert.AreEqual(-1.0, part[3], "a fourth result was written");
                foreach (double r in ctx.DotEachRow(2, 0)) Bits.AreSame(0.0, r, "n = 0 gives +0.0");
                Bits.AreSame(CudotArrays.DotExact(x.Span(), y.Span()), ctx.Dot(), "Dot still sees one vector");
            }
        }

        static void Put(Elements e, int i, double v)
        {
            if (e.DType == DType.Float32) ((float[])e.Store)[i] = (float)v;
            else ((double[])e.Store)[i] = v;
        }

        static void Copy(Elements e, CudotContext ctx, bool isX)
        {
            if (e.DType == DType.Float32) (isX ? ctx.XAsFloat32() : ctx.YAsFloat32()).CopyFrom((float[])e.Store);
            else (isX ? ctx.XAsFloat64() : ctx.YAsFloat64()).CopyFrom((double[])e.Store);
        }
    }
}
