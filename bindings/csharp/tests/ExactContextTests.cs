// ExactContextTests.cs - contexts in the exact mode (library 1.13: the constructor's exact) and exact
// partials (TilePartials of such a context, CudotArrays.ExactPartial, CudotLibrary.JoinExactPartials).
// Every result is compared bit for bit with CudotArrays.DotExact on the same spans and with an
// independent exact sum computed here in BigInteger (ExactReference below), which shares nothing with
// the library but IEEE doubles' layout.
using System;
using System.Numerics;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ExactContextTests
    {
        // AUTO is HOST on a machine without a GPU, and its CPU + GPU split where there is one: both must
        // give the correctly rounded dot.
        static Memory[] Memories { get { return new[] { Memory.Host, Memory.Auto }; } }

        static DType[][] Pairs
        {
            get { return new[] { new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 }, new[] { DType.Float32, DType.Float64 } }; }
        }

        [Test, Combinatorial]
        public void ContextEqualsDotExact([ValueSource("Memories")] Memory memory, [ValueSource("Pairs")] DType[] pair,
                                         [Values(0, 1, 7, 5000, 100003)] int n)
        {
            int seed = n * 7 + (int)pair[0] * 3 + (int)pair[1];
            var x = Operand.Random(pair[0], n, seed, true);
            var y = Operand.Random(pair[1], n, seed + 1, false);
            using (var ctx = x.ContextWith(y, memory, true))
            {
                Assert.IsTrue(ctx.Exact, "cudot_get_mode reports the exact mode");
                double want = CudotArrays.DotExact(x.Span(0, n), y.Span(0, n));
                Bits.AreSame(ExactReference.Dot(x.Values, y.Values, 0, n), want, "DotExact against the BigInteger sum");
                Bits.AreSame(want, ctx.Dot(), "Dot()");
                int half = n / 2;
                Bits.AreSame(CudotArrays.DotExact(x.Span(0, half), y.Span(0, half)), ctx.Dot(half), "Dot(n / 2)");
                Bits.AreSame(ExactReference.Dot(x.Values, y.Values, 0, half), ctx.Dot(half), "Dot(n / 2) against the BigInteger sum");
                if (n == 0) Bits.AreSame(0.0, ctx.Dot(), "an empty dot is +0.0");
            }
        }

        // The GPU strategies, on one GPU and on every GPU (each GPU one run, joined exactly): the bits of
        // DotExact, for the whole, prefixes and exact partials. Ignored without a usable GPU, unless
        // CUDOT_TEST_GPU=1 demands one.
        [Test, Combinatorial]
        public void GpuContextEqualsDotExact([Values(Memory.Pinned, Memory.Mapped, Memory.Managed)] Memory memory,
                                            [ValueSource("Pairs")] DType[] pair, [Values(0, CudotContext.DeviceAll)] int device)
        {
            const int n = (1 << 20) + 3;
            var x = Operand.Random(pair[0], n, 77, true);
            var y = Operand.Random(pair[1], n, 78, false);
            using (var gpu = Gpu.OpenOrSkip(n, pair[0], memory, pair[1], device, exact: true))
            {
                Assert.AreEqual(memory, gpu.MemoryUsed);
                Assert.IsTrue(gpu.Exact);
                x.Fill(gpu, true, 0, n);
                y.Fill(gpu, false, 0, n);
                foreach (int k in new[] { n, n / 3, 8193, 1, 0 })
                    Bits.AreSame(CudotArrays.DotExact(x.Span(0, k), y.Span(0, k)), gpu.Dot(k), memory + ", first " + k);
                double whole = gpu.Dot();
                Bits.AreSame(CudotArrays.DotExact(x.Span(0, n), y.Span(0, n)), whole, memory + ", all");
                const int cut = 12345;
                var both = new byte[2 * CudotLibrary.ExactPartialBytes];
                gpu.TilePartials(cut, n - cut, new Span<byte>(both, 0, CudotLibrary.ExactPartialBytes));
                CudotArrays.ExactPartial(x.Span(0, cut), y.Span(0, cut), new Span<byte>(both, CudotLibrary.ExactPartialBytes, CudotLibrary.ExactPartialBytes));
                Bits.AreSame(whole, CudotLibrary.JoinExactPartials(both), memory + ": a GPU window's partial joined with an array's");
            }
        }

        [Test]
        public void KnownAnswers([ValueSource("Memories")] Memory memory)
        {
            // Cancellation: 100 times 1e16 + 1 - 1e16, then 3. Exactly 103; the canonical order's bound allows
            // it to lose the ones (it gives 4), so a mode that did not arrive would show here.
            var x32 = new float[301];
            var ones = new float[301];
            for (int i = 0; i < 100; i++) { x32[3 * i] = 1e16f; x32[3 * i + 1] = 1; x32[3 * i + 2] = -1e16f; }
            x32[300] = 3;
            for (int i = 0; i < ones.Length; i++) ones[i] = 1;
            using (var exact = new CudotContext(301, DType.Float32, memory, exact: true))
            using (var canonical = new CudotContext(301, DType.Float32, memory))
            {
                foreach (var ctx in new[] { exact, canonical })
                {
                    ctx.XAsFloat32().CopyFrom(x32);
                    ctx.YAsFloat32().CopyFrom(ones);
                }
                Bits.AreSame(103.0, exact.Dot(), "f32 cancellation");
                Assert.AreNotEqual(103.0, canonical.Dot(), "the canonical context on the same data (the mode must matter)");
                Assert.IsFalse(canonical.Exact, "a context made without exact");
            }
            // Products beyond the double range: their exact sum 1e310 rounds past the largest double.
            Bits.AreSame(double.PositiveInfinity,
                         F64(memory, new[] { 1e300, 1e300, -1e300 }, new[] { 1e10, 1e10, 1e10 }), "f64 past the largest double");
            // 1e309 - 1e309: an exact zero, +0.0 with the sign bit clear.
            double zero = F64(memory, new[] { 1e308, 1e308 }, new[] { 10.0, -10 });
            Assert.AreEqual(0L, BitConverter.DoubleToInt64Bits(zero), "an exact zero is +0.0 (bits 0), got " + zero.ToString("R"));
        }

        static double F64(Memory memory, double[] x, double[] y)
        {
            using (var ctx = new CudotContext(x.Length, DType.Float64, memory, exact: true))
            {
                ctx.XAsFloat64().CopyFrom(x);
                ctx.YAsFloat64().CopyFrom(y);
                double r = ctx.Dot();
                Bits.AreSame(CudotArrays.DotExact(x, y), r, "the context against DotExact");
                return r;
            }
        }

        // Random cuts of one vector into pieces (empty ones included), each piece's exact partial from
        // another source, shuffled: joined, they give the whole context's Dot().
        [Test, Combinatorial]
        public void ShuffledPartialsOfRandomCutsJoinToTheWhole([ValueSource("Pairs")] DType[] pair, [Values(1, 2, 3)] int seed)
        {
            const int n = 100003;
            var rng = new Random(seed);
            var x = Operand.Random(pair[0], n, seed * 11, true);
            var y = Operand.Random(pair[1], n, seed * 11 + 1, false);
            int pieces = rng.Next(2, 9);
            var cuts = new int[pieces + 1];
            cuts[pieces] = n;
            for (int i = 1; i < pieces; i++) cuts[i] = rng.Next(3) == 0 ? cuts[i - 1] : rng.Next(cuts[i - 1], n + 1);
            using (var whole = x.ContextWith(y, Memory.Host, true))
            {
                double want = whole.Dot();
                Bits.AreSame(ExactReference.Dot(x.Values, y.Values, 0, n), want, "the whole context");
                var partials = new byte[pieces][];
                for (int p = 0; p < pieces; p++)
                {
                    int start = cuts[p], len = cuts[p + 1] - cuts[p];
                    switch ((p + seed) % 4)
                    {
                        case 0: // a window of the whole context, starting anywhere
                            partials[p] = whole.TilePartials(start, len);
                            break;
                        case 1: // a context of its own holding only the piece, HOST or AUTO
                            using (var ctx = x.ContextWith(y, p % 2 == 0 ? Memory.Host : Memory.Auto, true, start, len))
                                partials[p] = ctx.TilePartials(0, len);
                            break;
                        case 2: // slices of the caller's arrays
                            partials[p] = CudotArrays.ExactPartial(x.Span(start, len), y.Span(start, len));
                            break;
                        default: // the same values as doubles: partials of other element types join too
                            partials[p] = CudotArrays.ExactPartial(new ReadOnlySpan<double>(x.Values, start, len),
                                                                   new ReadOnlySpan<double>(y.Values, start, len));
                            break;
                    }
                    Assert.AreEqual(CudotLibrary.ExactPartialBytes, partials[p].Length, "one exact partial, whatever the length " + len);
                }
                for (int i = pieces - 1; i > 0; i--)
                {
                    int j = rng.Next(i + 1);
                    byte[] t = partials[i]; partials[i] = partials[j]; partials[j] = t;
                }
                var gathered = new byte[pieces * CudotLibrary.ExactPartialBytes];
                for (int p = 0; p < pieces; p++)
                    Buffer.BlockCopy(partials[p], 0, gathered, p * CudotLibrary.ExactPartialBytes, CudotLibrary.ExactPartialBytes);
                Bits.AreSame(want, CudotLibrary.JoinExactPartials(gathered), pieces + " pieces, cut at " + string.Join(",", cuts));

                // The Span overloads write into slots of one gather buffer; the ReadOnlySpan join reads a slice.
                var slots = new byte[2 * CudotLibrary.ExactPartialBytes + 5];
                int mid = cuts[1];
                int a = CudotArrays.ExactPartial(x.Span(mid, n - mid), y.Span(mid, n - mid), new Span<byte>(slots, 5, CudotLibrary.ExactPartialBytes));
                int b = whole.TilePartials(0, mid, new Span<byte>(slots, 5 + a, slots.Length - 5 - a));
                Assert.AreEqual(CudotLibrary.ExactPartialBytes, a);
                Assert.AreEqual(CudotLibrary.ExactPartialBytes, b);
                Bits.AreSame(want, CudotLibrary.JoinExactPartials(new ReadOnlySpan<byte>(slots, 5, a + b)), "slots of one buffer");
            }
        }

        [Test]
        public void PartialSizesAndEmptySums()
        {
            using (var ctx = new CudotContext(10, DType.Float64, Memory.Host, exact: true))
            {
                ctx.XAsFloat64().Fill(2);
                ctx.YAsFloat64().Fill(3);
                byte[] empty = ctx.TilePartials(4, 0);
                Assert.AreEqual(CudotLibrary.ExactPartialBytes, empty.Length, "n = 0 writes the partial of an empty sum");
                Bits.AreSame(0.0, CudotLibrary.JoinExactPartials(empty), "an empty sum is +0.0");
                Bits.AreSame(0.0, CudotLibrary.JoinExactPartials(new byte[0]), "no partials are +0.0");
                Bits.AreSame(60.0, CudotLibrary.JoinExactPartials(ctx.TilePartials(0, 10)), "the whole");
                Bits.AreSame(18.0, CudotLibrary.JoinExactPartials(ctx.TilePartials(7, 3)), "a window at 7");
                Assert.AreEqual(CudotLibrary.ExactPartialBytes, CudotArrays.ExactPartial(new double[0], new double[0]).Length);

                var small = new byte[CudotLibrary.ExactPartialBytes - 1];
                Assert.Throws<ArgumentException>(() => ctx.TilePartials(0, 10, small), "a destination one byte short");
                Assert.Throws<ArgumentException>(() => CudotArrays.ExactPartial(new double[1], new double[1], small));
                var e = Assert.Throws<CudotException>(() => ctx.TilePartials(5, 6));
                Assert.AreEqual(Status.InvalidArgument, e.Status, "first + n beyond the capacity: " + e.Message);
                Assert.Throws<ArgumentException>(() => CudotLibrary.JoinExactPartials(new byte[CudotLibrary.ExactPartialBytes + 16]),
                                                 "a length that is not a multiple of ExactPartialBytes");
                Assert.Throws<ArgumentNullException>(() => CudotLibrary.JoinExactPartials((byte[])null));
            }
        }

        // A partial that no cudot wrote, here the middle one of three with every byte inverted, is refused
        // with the library's message, which names its index; the bytes are not read as a sum.
        [Test]
        public void CorruptedPartialIsRefused([Values(false, true)] bool allZero)
        {
            var x = new[] { 1.5, 2.0, -3.0 };
            var y = new[] { 2.0, 0.25, 1.0 };
            var three = new byte[3 * CudotLibrary.ExactPartialBytes];
            for (int p = 0; p < 3; p++)
                CudotArrays.ExactPartial(x, y, new Span<byte>(three, p * CudotLibrary.ExactPartialBytes, CudotLibrary.ExactPartialBytes));
            Bits.AreSame(3 * CudotArrays.DotExact(x, y), CudotLibrary.JoinExactPartials(three), "intact");
            for (int i = CudotLibrary.ExactPartialBytes; i < 2 * CudotLibrary.ExactPartialBytes; i++)
                three[i] = allZero ? (byte)0 : (byte)~three[i];
            var e = Assert.Throws<CudotException>(() => CudotLibrary.JoinExactPartials(three));
            Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
            StringAssert.Contains("partial 1", e.Message);
            StringAssert.Contains("partial", e.NativeMessage);
        }

        // Rows of an exact context (library 1.14): each row its exact dot, the bits of DotExact on a copy of
        // it (RowsExactTests.cs compares them on random data and on the known answers); what lies beyond the
        // context's rows is still refused, with nothing written.
        [Test]
        public void RowsOfAnExactContextAreExact([ValueSource("Memories")] Memory memory)
        {
            using (var ctx = new CudotContext(4, DType.Float32, memory, rows: 3, exact: true))
            {
                var x = new float[] { 1e16f, 1, -1e16f, 3,   1, 2, 3, 4,   0.5f, 0.25f, 0, 0 };
                ctx.XAsFloat32().CopyFrom(x);
                ctx.YAsFloat32().Fill(1);
                var results = new double[3];
                ctx.DotEachRow(3, 4, results);
                for (int r = 0; r < 3; r++)
                    Bits.AreSame(CudotArrays.DotExact(new ReadOnlySpan<float>(x, 4 * r, 4), new float[] { 1, 1, 1, 1 }), results[r], "row " + r);
                CollectionAssert.AreEqual(new[] { 4.0, 10.0, 0.75 }, results);
                CollectionAssert.AreEqual(results, ctx.DotEachRow());
                var more = new double[] { -1, -1, -1, -1 };
                var e = Assert.Throws<CudotException>(() => ctx.DotEachRow(4, 4, more));
                Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
                CollectionAssert.AreEqual(new double[] { -1, -1, -1, -1 }, more, "nothing written");
                Bits.AreSame(14.75, ctx.Dot(), "Dot sees the rows as one vector, exactly");
                Assert.IsTrue(ctx.Exact);
                Assert.AreEqual(3L, ctx.Rows);
            }
        }

        [Test]
        public void ExactAfterDisposeThrows()
        {
            var ctx = new CudotContext(1, DType.Float32, Memory.Host, exact: true);
            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.Exact.ToString());
            Assert.Throws<ObjectDisposedException>(() => ctx.TilePartials(0, 0));
        }

        // One operand: its element type, the exact values of its elements as doubles (float converts to
        // double exactly), and its storage of that type.
        sealed class Operand
        {
            public readonly DType DType;
            public readonly double[] Values;
            readonly float[] f32;

            Operand(DType d, double[] values)
            {
                DType = d;
                Values = values;
                if (d == DType.Float32)
                {
                    f32 = new float[values.Length];
                    for (int i = 0; i < values.Length; i++) f32[i] = (float)values[i];
                }
            }

            // Elements in threes: a small one (magnitude 2^-range..2^-range/2), a large one (2^range/2..2^range),
            // and one that cancels the large one's product exactly (its negation in x, the same value in y).
            // The sum is then that of the small products, far below the large ones, which a sum in rounded
            // steps, in any order, loses in part; range is 40 for double, 20 for float.
            public static Operand Random(DType d, int n, int seed, bool isX)
            {
                var rng = new Random(seed);
                bool single = d == DType.Float32;
                int range = single ? 20 : 40;
                var v = new double[n];
                for (int i = 0; i < n; i++)
                {
                    int exponent = i % 3 == 0 ? rng.Next(-range, -range / 2 + 1) : rng.Next(range / 2, range + 1);
                    double r = (1 + rng.NextDouble()) * Math.Pow(2, exponent) * (rng.Next(2) == 0 ? 1 : -1);
                    if (i % 3 == 2) r = isX ? -v[i - 1] : v[i - 1];
                    v[i] = single ? (float)r : r;
                }
                return new Operand(d, v);
            }

            public DotSpan Span(int start, int length)
            {
                if (DType == DType.Float32) return new ReadOnlySpan<float>(f32, start, length);
                return new ReadOnlySpan<double>(Values, start, length);
            }

            // A context of `memory` holding elements [start, start + length) of this (x) and y.
            public CudotContext ContextWith(Operand y, Memory memory, bool exact, int start = 0, int length = -1)
            {
                if (length < 0) length = Values.Length - start;
                var ctx = new CudotContext(length, DType, memory, yDType: y.DType, exact: exact);
                try
                {
                    Fill(ctx, true, start, length);
                    y.Fill(ctx, false, start, length);
                    return ctx;
                }
                catch { ctx.Dispose(); throw; }
            }

            // Elements [start, start + length) into x (isX) or y of ctx, from its element 0.
            public void Fill(CudotContext ctx, bool isX, int start, int length)
            {
                if (DType == DType.Float32)
                    (isX ? ctx.XAsFloat32() : ctx.YAsFloat32()).CopyFrom(new ReadOnlySpan<float>(f32, start, length));
                else
                    (isX ? ctx.XAsFloat64() : ctx.YAsFloat64()).CopyFrom(new ReadOnlySpan<double>(Values, start, length));
            }
        }
    }

    // The correctly rounded dot of finite doubles, computed without the library: each element is
    // m * 2^e with an integer m, so every product is an integer times a power of two; the products are
    // summed exactly as BigIntegers over the smallest power, and the sum is rounded once to the nearest
    // double, ties to even (an exact zero is +0.0, a sum past the largest double an infinity).
    static class ExactReference
    {
        public static double Dot(double[] x, double[] y, int start, int length)
        {
            var m = new BigInteger[length];
            var e = new int[length];
            int low = int.MaxValue;
            for (int i = 0; i < length; i++)
            {
                long mx, my;
                int ex, ey;
                Split(x[start + i], out mx, out ex);
                Split(y[start + i], out my, out ey);
                m[i] = new BigInteger(mx) * my;
                e[i] = ex + ey;
                if (!m[i].IsZero) low = Math.Min(low, e[i]);
            }
            BigInteger sum = BigInteger.Zero;
            for (int i = 0; i < length; i++)
                if (!m[i].IsZero) sum += m[i] << (e[i] - low);
            return Round(sum, low);
        }

        // d = m * 2^e, m signed, for a finite d.
        static void Split(double d, out long m, out int e)
        {
            long bits = BitConverter.DoubleToInt64Bits(d);
            int biased = (int)((bits >> 52) & 0x7FF);
            if (biased == 0x7FF) throw new ArgumentException("ExactReference takes finite values only, not " + d);
            long fraction = bits & ((1L << 52) - 1);
            m = biased == 0 ? fraction : fraction | (1L << 52);
            e = biased == 0 ? -1074 : biased - 1075;
            if (bits < 0) m = -m;
        }

        // n * 2^e rounded to the nearest double, ties to even.
        static double Round(BigInteger n, int e)
        {
            if (n.IsZero) return 0.0;
            bool negative = n.Sign < 0;
            BigInteger a = BigInteger.Abs(n);
            int length = BitLength(a);
            int lsb = Math.Max(length - 53 + e, -1074); // the exponent of the result's last bit
            int shift = lsb - e;
            BigInteger q;
            if (shift <= 0)
                q = a << -shift;
            else
            {
                q = a >> shift;
                BigInteger rest = a - (q << shift), half = BigInteger.One << (shift - 1);
                if (rest > half || (rest == half && !q.IsEven)) q += 1;
            }
            double r = Scale((double)(long)q, lsb); // q <= 2^53: exact as a double
            return negative ? -r : r;
        }

        // d * 2^k, in steps that stay exact: the result is a double (or past the range: an infinity), and
        // every step before the last keeps a normal number.
        static double Scale(double d, int k)
        {
            while (k > 1000) { d *= Pow2(1000); k -= 1000; }
            while (k < -1000) { d *= Pow2(-1000); k += 1000; }
            return d * Pow2(k);
        }

        static double Pow2(int k) { return BitConverter.Int64BitsToDouble((long)(k + 1023) << 52); }

        static int BitLength(BigInteger a)
        {
            byte[] b = a.ToByteArray(); // little-endian, with a zero byte on top where the sign bit would be set
            int top = b.Length - 1;
            while (top > 0 && b[top] == 0) top--;
            int bits = top * 8;
            for (int v = b[top]; v != 0; v >>= 1) bits++;
            return bits;
        }
    }
}
