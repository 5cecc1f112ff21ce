// DotTests.cs - results: exact cases, accuracy against an independent reference, determinism.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class DotTests
    {
        // Properties, not fields: NUnit reads them by name, which the compiler cannot see.
        static long[] Sizes { get { return new long[] { 0, 1, 1000, 8193, (1 << 20) + 3 }; } }
        static DType[] Types { get { return new[] { DType.Float32, DType.Float64 }; } }

        [Test, Combinatorial]
        public void ExactIntegerData([ValueSource("Sizes")] long n, [ValueSource("Types")] DType dtype)
        {
            using (var ctx = new CudotContext(n, dtype, Memory.Host))
            {
                Assert.AreEqual(n, ctx.Capacity);
                Data.FillInts(ctx);
                Assert.AreEqual((double)Data.ExactIntDot(n), ctx.Dot());
                // Prefixes: cudot_dot_n reads only the first k elements.
                foreach (long k in new[] { 0, n / 2, n - 1, n })
                    if (k >= 0) Assert.AreEqual((double)Data.ExactIntDot(k), ctx.Dot(k), "prefix " + k);
            }
        }

        [Test]
        public void EmptyDotIsPositiveZero([ValueSource("Types")] DType dtype)
        {
            using (var ctx = new CudotContext(0, dtype, Memory.Host))
            {
                Assert.AreEqual(0, ctx.XAsFloat64Or32Length());
                Assert.AreEqual(0L, BitConverter.DoubleToInt64Bits(ctx.Dot()), "+0.0, not -0.0");
            }
        }

        [TestCase(DType.Float32, 1000)]
        [TestCase(DType.Float32, 100003)]
        [TestCase(DType.Float64, 1000)]
        [TestCase(DType.Float64, 100003)]
        public void RandomDataMatchesCompensatedReference(DType dtype, int n)
        {
            using (var ctx = new CudotContext(n, dtype, Memory.Host))
            {
                Data.FillRandom(ctx, 42 + n);
                double sumAbs, reference = Reference.Dot2(ctx, n, out sumAbs);
                double r = ctx.Dot();
                double tol;
                if (dtype == DType.Float32)
                    tol = Reference.Gamma(n) * sumAbs + 2 * Reference.Eps * Math.Abs(reference); // products exact, sums in double, any order
                else
                {
                    // Dot2 bound (eps|s| + gamma_n^2 sum|p|) for both the library and the reference.
                    tol = 2 * (Reference.Eps * Math.Abs(reference) + Math.Pow(Reference.Gamma(n), 2) * sumAbs);
                    // The data must defeat a plain double sum, or this test could not tell them apart.
                    Assert.Greater(Math.Abs(Reference.Naive(ctx, n) - reference), tol, "data not ill-conditioned enough");
                }
                Assert.LessOrEqual(Math.Abs(r - reference), tol, "dot " + r.ToString("R") + " vs reference " + reference.ToString("R"));
            }
        }

        [Test]
        public void RepeatedCallsAreBitwiseEqual([ValueSource("Types")] DType dtype)
        {
            const int n = (1 << 20) + 3;
            using (var ctx = new CudotContext(n, dtype, Memory.Host))
            {
                Data.FillRandom(ctx, 7);
                long first = BitConverter.DoubleToInt64Bits(ctx.Dot());
                for (int i = 0; i < 5; i++)
                    Assert.AreEqual(first, BitConverter.DoubleToInt64Bits(ctx.Dot()), "call " + i);
                long half = BitConverter.DoubleToInt64Bits(ctx.Dot(n / 2));
                Assert.AreEqual(half, BitConverter.DoubleToInt64Bits(ctx.Dot(n / 2)));
            }
        }

        // cudot.h: dot_n(k) equals what a context of capacity k returns for the same values.
        [Test]
        public void PrefixEqualsSmallerContext([ValueSource("Types")] DType dtype)
        {
            const int n = 50000, k = 20001;
            using (var big = new CudotContext(n, dtype, Memory.Host))
            using (var small = new CudotContext(k, dtype, Memory.Host))
            {
                Data.FillRandom(big, 3);
                for (int i = 0; i < k; i++)
                {
                    Data.Set(small, true, i, Data.Get(big, true, i));
                    Data.Set(small, false, i, Data.Get(big, false, i));
                }
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(small.Dot()), BitConverter.DoubleToInt64Bits(big.Dot(k)));
            }
        }

        // Writes through the views reach the library with no copy and no caching between calls.
        [Test]
        public void SpansAreLiveViewsOfTheBuffers()
        {
            using (var ctx = new CudotContext(4, DType.Float64, Memory.Host))
            {
                var x = ctx.XAsFloat64();
                var y = ctx.YAsFloat64();
                for (int i = 0; i < 4; i++) { x[i] = i + 1; y[i] = 1; }
                Assert.AreEqual(10.0, ctx.Dot());
                y[3] = 0;                       // write after a dot
                Assert.AreEqual(6.0, ctx.Dot());
                Assert.AreEqual(4.0, ctx.XAsFloat64()[3], "a second view sees the same memory");
                Assert.AreEqual(1.0, ctx.YAsFloat64()[2], "x and y are distinct buffers");
                var window = ctx.XAsFloat64(2, 2); // elements 2 and 3
                window[0] = 10;
                Assert.AreEqual(10.0, x[2]);
                Assert.AreEqual(13.0, ctx.Dot());
            }
        }

        [TestCase(DType.Float32)]
        [TestCase(DType.Float64)]
        public void SpecialValues(DType dtype)
        {
            using (var ctx = new CudotContext(3, dtype, Memory.Host))
            {
                Action<double, double> set = (a, b) => { for (int i = 0; i < 3; i++) { Data.Set(ctx, true, i, 1); Data.Set(ctx, false, i, 2); } Data.Set(ctx, true, 1, a); Data.Set(ctx, false, 1, b); };
                set(double.PositiveInfinity, 1);
                Assert.AreEqual(double.PositiveInfinity, ctx.Dot(), "lone infinity");
                set(double.PositiveInfinity, 0);
                Assert.IsNaN(ctx.Dot(), "Inf * 0");
                set(double.NaN, 1);
                Assert.IsNaN(ctx.Dot(), "NaN input");
                Assert.AreEqual(2.0, ctx.Dot(1), "the prefix before the NaN is untouched");
            }
        }
    }

    static class ContextTestExtensions
    {
        public static int XAsFloat64Or32Length(this CudotContext ctx)
        {
            return ctx.DType == DType.Float32 ? ctx.XAsFloat32().Length : ctx.XAsFloat64().Length;
        }
    }
}
