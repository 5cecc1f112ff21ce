// MixedTests.cs - the element types of 1.1 (Float16, BFloat16, Int8, UInt8) and every (x, y) pair.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class MixedTests
    {
        static DType[] Types { get { return Data.AllTypes; } }
        static long[] Sizes { get { return new long[] { 0, 1, 1000, (1 << 20) + 3 }; } }

        // All 36 pairs on integer data that every type holds exactly, so the result is known exactly
        // whatever the pair's arithmetic (double sums, Dot2 or 64-bit integers).
        [Test, Combinatorial]
        public void AllPairsExactIntegerData([ValueSource("Types")] DType xd, [ValueSource("Types")] DType yd, [ValueSource("Sizes")] long n)
        {
            using (var ctx = new CudotContext(n, xd, Memory.Host, yDType: yd))
            {
                Assert.AreEqual(xd, ctx.XDType, "cudot_get_dtypes x");
                Assert.AreEqual(yd, ctx.YDType, "cudot_get_dtypes y");
                Assert.AreEqual(n, ctx.Capacity);
                Data.FillInts(ctx);
                Assert.AreEqual((double)Data.ExactIntDot(xd, yd, n), ctx.Dot());
                foreach (long k in new[] { 0, n / 2, n - 1 })
                    if (k >= 0) Assert.AreEqual((double)Data.ExactIntDot(xd, yd, k), ctx.Dot(k), "prefix " + k);
                // The values as the buffers hold them, read back independently.
                for (int i = 0; i < Math.Min(n, 40); i++)
                {
                    Assert.AreEqual((double)Data.IntFor(xd, true, i), Data.Get(ctx, true, i), "x[" + i + "]");
                    Assert.AreEqual((double)Data.IntFor(yd, false, i), Data.Get(ctx, false, i), "y[" + i + "]");
                }
            }
        }

        // A float32 vector times a bool mask (UInt8 holding 0/1): the sum of the selected elements.
        // The x values are multiples of 2^-15 below 256 in magnitude, so every partial sum is exact.
        [Test]
        public void Float32TimesByteMask([Values(false, true)] bool maskIsX)
        {
            const int n = 300007;
            var rng = new Random(5);
            using (var ctx = new CudotContext(n, maskIsX ? DType.UInt8 : DType.Float32, Memory.Host,
                                              yDType: maskIsX ? DType.Float32 : DType.UInt8))
            {
                var v = maskIsX ? ctx.YAsFloat32() : ctx.XAsFloat32();
                var mask = maskIsX ? ctx.XAsBool() : ctx.YAsBool();
                long selected = 0, all = 0; // in units of 2^-15
                for (int i = 0; i < n; i++)
                {
                    int units = rng.Next(-(1 << 23), 1 << 23);
                    v[i] = (float)(units * Math.Pow(2, -15));
                    mask[i] = rng.Next(3) == 0;
                    all += units;
                    if (mask[i]) selected += units;
                }
                var bytes = maskIsX ? ctx.XAsUInt8() : ctx.YAsUInt8();
                for (int i = 0; i < n; i++)
                    if (bytes[i] != (mask[i] ? 1 : 0)) Assert.Fail("bool " + mask[i] + " stored as byte " + bytes[i] + " at " + i);
                Assert.AreEqual(selected * Math.Pow(2, -15), ctx.Dot(), "selected");
                for (int i = 0; i < n; i++) mask[i] = !mask[i];
                Assert.AreEqual((all - selected) * Math.Pow(2, -15), ctx.Dot(), "inverted mask");
                mask.Fill(false);
                Assert.AreEqual(0L, BitConverter.DoubleToInt64Bits(ctx.Dot()), "empty mask: +0.0");
            }
        }

        // Random finite bit patterns (subnormals included) against a compensated reference computed
        // from the tests' own decoding of the formats.
        [TestCase(DType.Float16, DType.Float16)]
        [TestCase(DType.BFloat16, DType.BFloat16)]
        [TestCase(DType.Float16, DType.BFloat16)]
        [TestCase(DType.BFloat16, DType.Float16)]
        [TestCase(DType.Float16, DType.Float32)]
        [TestCase(DType.Float32, DType.BFloat16)]
        [TestCase(DType.Float16, DType.Float64)]
        [TestCase(DType.Float64, DType.BFloat16)]
        [TestCase(DType.Float16, DType.Int8)]
        [TestCase(DType.UInt8, DType.BFloat16)]
        public void SixteenBitPatternsMatchReference(DType xd, DType yd)
        {
            const int n = 100003;
            using (var ctx = new CudotContext(n, xd, Memory.Host, yDType: yd))
            {
                Data.FillRandomAny(ctx, 17 + (int)xd * 7 + (int)yd);
                double sumAbs, reference = Reference.Dot2(ctx, n, out sumAbs);
                double r = ctx.Dot(), tol = Reference.Tolerance(xd, yd, n, reference, sumAbs);
                Assert.LessOrEqual(Math.Abs(r - reference), tol, "dot " + r.ToString("R") + " vs reference " + reference.ToString("R"));
                // Reading the patterns as the other 16-bit format (or not at all) would be far off.
                Assert.Less(tol, 1e-6 * sumAbs, "the tolerance must be tight enough to matter");
            }
        }

        // Hand-picked patterns with their values written out: y picks one element at a time, times 3.
        [TestCase(DType.Float16, DType.Float64, new ushort[] { 0x3C00, 0xC000, 0x0001, 0x7BFF, 0x0400, 0x3555 },
                  new[] { 1.0, -2.0, 5.9604644775390625e-8 /* 2^-24 */, 65504.0, 6.103515625e-05 /* 2^-14 */, 0.333251953125 })]
        [TestCase(DType.BFloat16, DType.Int8, new ushort[] { 0x3F80, 0x4049, 0x0001, 0xFF7F, 0x0080, 0x3EAB },
                  new[] { 1.0, 3.140625, 9.183549615799121e-41 /* 2^-133 */, -3.3895313892515355e+38, 1.1754943508222875e-38 /* 2^-126 */, 0.333984375 })]
        public void KnownSixteenBitValues(DType xd, DType yd, ushort[] patterns, double[] values)
        {
            int n = patterns.Length;
            using (var ctx = new CudotContext(n, xd, Memory.Host, yDType: yd))
            {
                (xd == DType.Float16 ? ctx.XAsFloat16Bits() : ctx.XAsBFloat16Bits()).CopyFrom(patterns);
                for (int j = 0; j < n; j++)
                {
                    for (int i = 0; i < n; i++) Data.Set(ctx, false, i, i == j ? 3 : 0);
                    Assert.AreEqual(3 * values[j], ctx.Dot(), "pattern 0x" + patterns[j].ToString("X4"));
                }
                for (int i = 0; i < n; i++) Data.Set(ctx, false, i, 1);
                double sum = 0;
                foreach (double v in values) sum += v; // these values sum exactly only for Float16
                if (xd == DType.Float16) Assert.AreEqual(sum, ctx.Dot(), "all together");
            }
        }

        [Test]
        public void SixteenBitSpecialValues([Values(DType.Float16, DType.BFloat16)] DType d)
        {
            ushort inf = d == DType.Float16 ? (ushort)0x7C00 : (ushort)0x7F80;
            ushort nan = d == DType.Float16 ? (ushort)0x7E00 : (ushort)0x7FC0;
            ushort one = d == DType.Float16 ? (ushort)0x3C00 : (ushort)0x3F80;
            using (var ctx = new CudotContext(3, d, Memory.Host, yDType: DType.UInt8))
            {
                var x = ctx.XAs<ushort>();
                var y = ctx.YAsUInt8();
                x.Fill(one);
                y.Fill(2);
                Assert.AreEqual(6.0, ctx.Dot());
                x[1] = inf;
                Assert.AreEqual(double.PositiveInfinity, ctx.Dot(), "lone infinity");
                x[1] = (ushort)(inf | 0x8000);
                Assert.AreEqual(double.NegativeInfinity, ctx.Dot(), "lone -infinity");
                y[1] = 0;
                Assert.IsNaN(ctx.Dot(), "Inf * 0");
                x[1] = nan;
                y[1] = 1;
                Assert.IsNaN(ctx.Dot(), "NaN input");
                Assert.AreEqual(2.0, ctx.Dot(1), "the prefix before the NaN is untouched");
            }
        }

        // Integer pairs: exact 64-bit sums, far beyond what 32-bit accumulators or a float could hold.
        [TestCase(DType.Int8, DType.Int8, -128, -128)]
        [TestCase(DType.Int8, DType.UInt8, -128, 255)]
        [TestCase(DType.UInt8, DType.Int8, 255, 127)]
        [TestCase(DType.UInt8, DType.UInt8, 255, 255)]
        public void IntegerPairsAreExact(DType xd, DType yd, int xv, int yv)
        {
            const int n = (1 << 20) + 3;
            using (var ctx = new CudotContext(n, xd, Memory.Host, yDType: yd))
            {
                for (int i = 0; i < n; i++) { Data.Set(ctx, true, i, xv); Data.Set(ctx, false, i, yv); }
                long big = (long)xv * yv * n;
                Assert.Greater(Math.Abs(big), (long)uint.MaxValue, "the sum must not fit in 32 bits");
                Assert.AreEqual((double)big, ctx.Dot(), "extreme values");
                // Random values over each whole range: the sum needs about 35 bits, beyond a float.
                var rng = new Random(99);
                long expected = 0;
                for (int i = 0; i < n; i++)
                {
                    int a = xd == DType.Int8 ? rng.Next(-128, 128) : rng.Next(0, 256);
                    int b = yd == DType.Int8 ? rng.Next(-128, 128) : rng.Next(0, 256);
                    Data.Set(ctx, true, i, a);
                    Data.Set(ctx, false, i, b);
                    expected += (long)a * b;
                }
                Assert.AreEqual((double)expected, ctx.Dot(), "random");
                long prefix = 0;
                for (int i = 0; i < 12345; i++) prefix += (long)Data.Get(ctx, true, i) * (long)Data.Get(ctx, false, i);
                Assert.AreEqual((double)prefix, ctx.Dot(12345), "prefix");
            }
        }

        // Mixed pairs with random data: repeated calls are bitwise equal, and equal a context of the
        // prefix's capacity (cudot.h's dot_n promise).
        [TestCase(DType.Float32, DType.UInt8)]
        [TestCase(DType.BFloat16, DType.Float64)]
        [TestCase(DType.Int8, DType.Float16)]
        public void MixedPairsAreDeterministic(DType xd, DType yd)
        {
            const int n = 200003, k = 70001;
            using (var big = new CudotContext(n, xd, Memory.Host, yDType: yd))
            using (var small = new CudotContext(k, xd, Memory.Host, yDType: yd))
            {
                Data.FillRandomAny(big, 8);
                long first = BitConverter.DoubleToInt64Bits(big.Dot());
                for (int i = 0; i < 3; i++) Assert.AreEqual(first, BitConverter.DoubleToInt64Bits(big.Dot()));
                for (int i = 0; i < k; i++)
                {
                    Data.Set(small, true, i, Data.Get(big, true, i));
                    Data.Set(small, false, i, Data.Get(big, false, i));
                }
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(small.Dot()), BitConverter.DoubleToInt64Bits(big.Dot(k)));
            }
        }
    }
}
