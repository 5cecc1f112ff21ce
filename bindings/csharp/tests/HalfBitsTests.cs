// HalfBitsTests.cs - Float16Bits and BFloat16Bits against the tests' own decoding (Bits16), over
// every 16-bit pattern and every rounding midpoint.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class HalfBitsTests
    {
        static Func<ushort, float> ToSingle(DType d)
        {
            return d == DType.Float16 ? (Func<ushort, float>)Float16Bits.ToSingle : BFloat16Bits.ToSingle;
        }

        static Func<float, ushort> FromSingle(DType d)
        {
            return d == DType.Float16 ? (Func<float, ushort>)Float16Bits.FromSingle : BFloat16Bits.FromSingle;
        }

        static unsafe float FromBits(int b) { return *(float*)&b; }
        static unsafe int ToBits(float f) { return *(int*)&f; }

        [Test]
        public void ToSingleIsExactForEveryPattern([Values(DType.Float16, DType.BFloat16)] DType d)
        {
            var to = ToSingle(d);
            for (int b = 0; b < 65536; b++)
            {
                double want = Bits16.Decode(d, (ushort)b);
                float got = to((ushort)b);
                if (double.IsNaN(want)) { if (!float.IsNaN(got)) Assert.Fail("0x{0:X4}: {1}, not NaN", b, got); continue; }
                if (BitConverter.DoubleToInt64Bits(want) != BitConverter.DoubleToInt64Bits(got))
                    Assert.Fail("0x{0:X4}: {1:R}, expected {2:R}", b, got, want);
            }
        }

        [Test]
        public void FromSingleRoundTripsEveryPattern([Values(DType.Float16, DType.BFloat16)] DType d)
        {
            var to = ToSingle(d);
            var from = FromSingle(d);
            for (int b = 0; b < 65536; b++)
            {
                float v = to((ushort)b);
                ushort back = from(v);
                if (float.IsNaN(v))
                {
                    if (!double.IsNaN(Bits16.Decode(d, back))) Assert.Fail("NaN 0x{0:X4} became 0x{1:X4}", b, back);
                    if ((back & 0x8000) != (b & 0x8000)) Assert.Fail("NaN 0x{0:X4} lost its sign", b);
                }
                else if (back != b) Assert.Fail("0x{0:X4} -> {1:R} -> 0x{2:X4}", b, v, back);
            }
        }

        // Between each two neighbouring finite values: the midpoint goes to the even pattern, anything
        // a float-ulp either side to the nearer one. Negative values mirror positive ones.
        [Test]
        public void FromSingleRoundsToNearestEven([Values(DType.Float16, DType.BFloat16)] DType d)
        {
            var from = FromSingle(d);
            int lastFinite = d == DType.Float16 ? 0x7BFF : 0x7F7F;
            for (int p = 0; p < lastFinite; p++)
            {
                double lo = Bits16.Decode(d, (ushort)p), hi = Bits16.Decode(d, (ushort)(p + 1));
                float mid = (float)((lo + hi) / 2);
                Assert.AreEqual((lo + hi) / 2, (double)mid, "a midpoint must be a float");
                int even = p % 2 == 0 ? p : p + 1;
                Check(from, mid, even);
                Check(from, FromBits(ToBits(mid) + 1), p + 1);
                Check(from, FromBits(ToBits(mid) - 1), p);
            }
        }

        static void Check(Func<float, ushort> from, float v, int expected)
        {
            int got = from(v), neg = from(-v);
            if (got != expected) Assert.Fail("{0:R} -> 0x{1:X4}, expected 0x{2:X4}", v, got, expected);
            if (neg != (expected | 0x8000)) Assert.Fail("{0:R} -> 0x{1:X4}, expected 0x{2:X4}", -v, neg, expected | 0x8000);
        }

        [Test]
        public void FromSingleOverflowAndSpecials()
        {
            Assert.AreEqual(0x7BFF, Float16Bits.FromSingle(65504f));
            Assert.AreEqual(0x7BFF, Float16Bits.FromSingle(FromBits(ToBits(65520f) - 1)), "just below the midpoint to 2^16");
            Assert.AreEqual(0x7C00, Float16Bits.FromSingle(65520f), "the midpoint rounds to even: infinity");
            Assert.AreEqual(0x7C00, Float16Bits.FromSingle(1e6f));
            Assert.AreEqual(0xFC00, Float16Bits.FromSingle(float.NegativeInfinity));
            Assert.AreEqual(0x0000, Float16Bits.FromSingle(FromBits(1)), "smallest float subnormal");
            Assert.AreEqual(0x8000, Float16Bits.FromSingle(-0.0f));
            Assert.AreEqual(0x0000, Float16Bits.FromSingle((float)Math.Pow(2, -25)), "half the smallest subnormal: ties to even zero");
            Assert.AreEqual(0x0001, Float16Bits.FromSingle(FromBits(ToBits((float)Math.Pow(2, -25)) + 1)));
            float bfMax = BFloat16Bits.ToSingle(0x7F7F);
            Assert.AreEqual(0x7F80, BFloat16Bits.FromSingle(float.MaxValue), "beyond the largest bfloat16 midpoint");
            Assert.AreEqual(0x7F7F, BFloat16Bits.FromSingle(FromBits(ToBits(bfMax) + 0x7FFF)));
            Assert.AreEqual(0x7F80, BFloat16Bits.FromSingle(FromBits(ToBits(bfMax) + 0x8000)), "midpoint to 2^128: even is infinity");
            Assert.AreEqual(0xFF80, BFloat16Bits.FromSingle(float.NegativeInfinity));
            Assert.IsTrue(float.IsNaN(Float16Bits.ToSingle(Float16Bits.FromSingle(float.NaN))));
            Assert.IsTrue(float.IsNaN(BFloat16Bits.ToSingle(BFloat16Bits.FromSingle(FromBits(0x7F800001)))), "a NaN with only low payload bits");
            Assert.IsTrue(float.IsNaN(Float16Bits.ToSingle(Float16Bits.FromSingle(FromBits(0x7F800001)))));
        }
    }
}
