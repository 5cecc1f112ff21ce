// ContextRowsTests.cs - contexts with rows (cudot 1.10): the rows parameter, Rows, RowLength and DotEachRow.
// Every result bit for bit CudotArrays.Dot on a copy of that row's first n elements (the CPU); on HOST, and
// on Pinned, Mapped, Managed and Auto contexts where a GPU is usable (ignored without one, unless
// CUDOT_TEST_GPU=1 demands it).
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ContextRowsTests
    {
        static DType[][] Pairs
        {
            get
            {
                return new[]
                {
                    new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
                    new[] { DType.Float16, DType.Int8 }, new[] { DType.BFloat16, DType.Float32 },
                    new[] { DType.UInt8, DType.Int8 },
                };
            }
        }

        // The dot of copies of the first m elements of row r: the bits DotEachRow must give for that row.
        static double RowDot(CudotContext ctx, int r, int m)
        {
            long start = r * ctx.RowLength;
            return CudotArrays.Dot(RowCopy(ctx, true, start, m), RowCopy(ctx, false, start, m));
        }

        static DotSpan RowCopy(CudotContext ctx, bool isX, long start, int m)
        {
            DType d = isX ? ctx.XDType : ctx.YDType;
            switch (d)
            {
                case DType.Float32: return (isX ? ctx.XAsFloat32(start, m) : ctx.YAsFloat32(start, m)).ToArray();
                case DType.Float64: return (isX ? ctx.XAsFloat64(start, m) : ctx.YAsFloat64(start, m)).ToArray();
                case DType.Int8: return (isX ? ctx.XAsInt8(start, m) : ctx.YAsInt8(start, m)).ToArray();
                case DType.UInt8: return DotSpan.Create(new ReadOnlySpan<byte>((isX ? ctx.XAsUInt8(start, m) : ctx.YAsUInt8(start, m)).ToArray()), d);
                default: return DotSpan.Create(new ReadOnlySpan<ushort>((isX ? ctx.XAs<ushort>(start, m) : ctx.YAs<ushort>(start, m)).ToArray()), d);
            }
        }

        static void EachRowIsItsDot(CudotContext ctx, double[] got, int m, string what)
        {
            for (int r = 0; r < got.Length; r++)
                Bits.AreSame(RowDot(ctx, r, m), got[r], what + ", row " + r);
        }

        // The checks every context with rows must pass (filled by the caller).
        static void CheckRows(CudotContext ctx, int rows, int n)
        {
            Assert.AreEqual(rows, ctx.Rows);
            Assert.AreEqual(n, ctx.RowLength);
            Assert.AreEqual((long)rows * n, ctx.Capacity);
            double[] all = ctx.DotEachRow();
            Assert.AreEqual(rows, all.Length);
            EachRowIsItsDot(ctx, all, n, "DotEachRow()");
            // Prefixes: fewer rows, shorter rows, both; into a span, nothing written past its rows.
            foreach (int k in new[] { rows, rows / 2, 1, 0 })
                foreach (int m in new[] { n, n / 3, Math.Min(1, n), 0 })
                {
                    double[] got = ctx.DotEachRow(k, m);
                    Assert.AreEqual(k, got.Length);
                    EachRowIsItsDot(ctx, got, m, "DotEachRow(" + k + ", " + m + ")");
                    var into = new double[k + 2];
                    into[0] = into[k + 1] = 42;
                    ctx.DotEachRow(k, m, new Span<double>(into, 1, k + 1));
                    Assert.AreEqual(42, into[0]);
                    Assert.AreEqual(42, into[k + 1], "written past the rows");
                    for (int r = 0; r < k; r++) Bits.AreSame(got[r], into[r + 1], "into a span, row " + r);
                    if (m == 0)
                        foreach (double v in got) Assert.AreEqual(0L, BitConverter.DoubleToInt64Bits(v), "+0.0 for no elements");
                }
            // Beyond the context: the library's InvalidArgument, with its message, and nothing written.
            foreach (var c in new[] { new[] { rows + 1, n }, new[] { rows, n + 1 }, new[] { rows + 1, 0 } })
            {
                var results = new double[c[0]];
                for (int i = 0; i < results.Length; i++) results[i] = 42;
                var e = Assert.Throws<CudotException>(() => ctx.DotEachRow(c[0], c[1], results));
                Assert.AreEqual(Status.InvalidArgument, e.Status);
                StringAssert.Contains("exceed", e.Message);
                foreach (double v in results) Assert.AreEqual(42, v, "written by a refused call");
            }
        }

        [Test, Combinatorial]
        public void EachRowHasTheBitsOfItsOwnDot([ValueSource("Pairs")] DType[] pair,
                                                 [Values(new[] { 11, 37 }, new[] { 3, 8192 + 5 }, new[] { 1, 100 }, new[] { 4, 0 })] int[] shape)
        {
            int rows = shape[0], n = shape[1];
            using (var ctx = new CudotContext(n, pair[0], Memory.Host, 0, pair[1], rows: rows))
            {
                Data.FillRandomAny(ctx, rows * 1000 + n);
                CheckRows(ctx, rows, n);
                // Dot still sees one vector of rows * n elements.
                int all = rows * n;
                Bits.AreSame(CudotArrays.Dot(RowCopy(ctx, true, 0, all), RowCopy(ctx, false, 0, all)), ctx.Dot(), "Dot()");
            }
        }

        [Test]
        public void RowsAreWindowsOfTheViews()
        {
            using (var ctx = new CudotContext(5, DType.Float64, Memory.Host, rows: 3))
            {
                Assert.AreEqual(15, ctx.Capacity);
                Assert.AreEqual(15, ctx.XAsFloat64().Length);
                ctx.XAsFloat64().Fill(0);
                ctx.YAsFloat64().Fill(1);
                ctx.XAsFloat64(1 * ctx.RowLength, (int)ctx.RowLength)[2] = 7; // row 1, element 2: element 7
                Assert.AreEqual(7.0, ctx.Dot());
                Assert.AreEqual(0.0, ctx.Dot(7));
                CollectionAssert.AreEqual(new[] { 0.0, 7.0, 0.0 }, ctx.DotEachRow());
            }
        }

        [Test]
        public void AContextWithoutRowsHasOneRow()
        {
            using (var ctx = new CudotContext(9, DType.Float32, Memory.Host))
            {
                Assert.AreEqual(1, ctx.Rows);
                Assert.AreEqual(9, ctx.RowLength);
                var x = new float[9];
                for (int i = 0; i < 9; i++) x[i] = i;
                ctx.XAsFloat32().CopyFrom(x);
                ctx.YAsFloat32().Fill(2);
                CollectionAssert.AreEqual(new[] { 72.0 }, ctx.DotEachRow());
            }
            using (var ctx = new CudotContext(9, DType.Float32, Memory.Host, 0, null, 0)) // the 1.5 constructor
                Assert.AreEqual(1, ctx.Rows);
        }

        [Test]
        public void ArgumentsAreChecked()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new CudotContext(4, DType.Float32, Memory.Host, rows: 0));
            Assert.Throws<ArgumentOutOfRangeException>(() => new CudotContext(4, DType.Float32, Memory.Host, rows: -3));
            Assert.Throws<ArgumentOutOfRangeException>(() => new CudotContext(1L << 40, DType.Float32, Memory.Host, rows: 1L << 40));
            var e = Assert.Throws<CudotException>(() => new CudotContext(1L << 31, DType.Float64, Memory.Host, rows: 1L << 31));
            Assert.That(e.Status == Status.InvalidArgument || e.Status == Status.OutOfMemory, e.ToString());
            using (var ctx = new CudotContext(8, DType.Float32, Memory.Host, rows: 3))
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.DotEachRow(-1, 8));
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.DotEachRow(3, -1));
                Assert.Throws<ArgumentException>(() => ctx.DotEachRow(3, 8, new double[2]));
                ctx.DotEachRow(0, 8, Span<double>.Empty); // no rows: nothing written, nothing needed
                ctx.Dispose();
                Assert.Throws<ObjectDisposedException>(() => ctx.DotEachRow());
                Assert.Throws<ObjectDisposedException>(() => { var r = ctx.Rows; });
            }
        }

        // Code compiled against the 1.5 assembly calls its constructor by its exact parameter list.
        [Test]
        public void The15ConstructorStillExists()
        {
            Assert.IsNotNull(typeof(CudotContext).GetConstructor(
                new[] { typeof(long), typeof(DType), typeof(Memory), typeof(int), typeof(DType?), typeof(uint) }));
        }

        // The same checks on the GPU strategies, on one GPU and on every visible one.
        [Test, Combinatorial]
        public void GpuRowsHaveTheBitsOfTheirOwnDots(
            [Values(Memory.Pinned, Memory.Mapped, Memory.Managed, Memory.Auto)] Memory memory,
            [Values(0, CudotContext.DeviceAll)] int device,
            [ValueSource("GpuPairs")] DType[] pair,
            [Values(new[] { 64, 3000 }, new[] { 5, (1 << 15) + 3 }, new[] { 300, 17 })] int[] shape)
        {
            int rows = shape[0], n = shape[1];
            using (var ctx = Gpu.OpenOrSkip(n, pair[0], memory, pair[1], device, rows: rows))
            {
                if (memory == Memory.Auto && ctx.MemoryUsed == Memory.Host)
                {
                    if (Gpu.Required) Assert.Fail("CUDOT_TEST_GPU=1 but Auto resolved to Host");
                    Assert.Ignore("no usable GPU: Auto resolved to Host");
                }
                if (memory != Memory.Auto) Assert.AreEqual(memory, ctx.MemoryUsed);
                Data.FillRandomAny(ctx, rows + n);
                for (int round = 0; round < 3; round++) // Auto measures the CPU and the GPUs on the first calls
                    EachRowIsItsDot(ctx, ctx.DotEachRow(), n, "round " + round);
                CheckRows(ctx, rows, n);
                Data.FillRandomAny(ctx, rows + n + 7); // fresh data after a dot: Pinned copies it, Managed migrates it
                EachRowIsItsDot(ctx, ctx.DotEachRow(), n, "after a refill");
            }
        }

        static DType[][] GpuPairs
        {
            get
            {
                return new[]
                {
                    new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
                    new[] { DType.Float16, DType.BFloat16 },
                };
            }
        }
    }
}
