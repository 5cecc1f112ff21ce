// ArraysTests.cs - dots on the caller's own arrays (CudotArrays, cudot 1.7) on the CPU: every type pair,
// strides, lengths around a tile, NaN and infinities, pointers, partials; each result bit for bit the
// Dot() of a HOST context holding the same elements. And the errors: the binding's checks and the
// library's, each as its exception with its message.
using System;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ArraysTests
    {
        const int T = CudotLibrary.TileElements;
        static DType[][] Pairs { get { return Bits.AllPairs; } }
        static DType[] FloatTypes { get { return new[] { DType.Float32, DType.Float64, DType.Float16, DType.BFloat16 }; } }

        static int Seed(DType[] pair, long n) { return (int)pair[0] * 131 + (int)pair[1] * 17 + (int)(n % 100003); }

        [Test]
        public void DotExactIsTheCorrectlyRoundedDot()
        {
            var x32 = new float[301];
            var ones = new float[301];
            for (int i = 0; i < 100; i++) { x32[3 * i] = 1e16f; x32[3 * i + 1] = 1; x32[3 * i + 2] = -1e16f; }
            x32[300] = 3;
            for (int i = 0; i < ones.Length; i++) ones[i] = 1;
            Assert.AreEqual(103.0, CudotArrays.DotExact(x32, ones), "cancellation: 103, where the canonical mode's bound allows 4");
            Bits.AreSame(1.0, CudotArrays.DotExact(new[] { 1e200, -1e200, 1 }, new[] { 1e200, 1e200, 1.0 }), "products beyond the range");
            Bits.AreSame(0.0, CudotArrays.DotExact(new[] { 1e308, 1e308 }, new[] { 10.0, -10 }), "an exact zero is +0.0");
            Bits.AreSame(double.PositiveInfinity, CudotArrays.DotExact(new[] { 1e300, 1e300, -1e300 }, new[] { 1e10, 1e10, 1e10 }), "past the largest double");
            Assert.IsTrue(double.IsNaN(CudotArrays.DotExact(new[] { double.PositiveInfinity, 1 }, new[] { 0.0, 1 })), "inf * 0");
            // Any permutation of wide values gives the same bits.
            var rng = new Random(5);
            int n = 20000;
            var x = new double[n];
            var y = new double[n];
            for (int i = 0; i < n; i++)
            {
                x[i] = (1 + rng.NextDouble()) * Math.Pow(2, rng.Next(-300, 300)) * (rng.Next(2) == 0 ? 1 : -1);
                y[i] = (1 + rng.NextDouble()) * Math.Pow(2, rng.Next(-300, 300));
            }
            double want = CudotArrays.DotExact(x, y);
            for (int round = 0; round < 3; round++)
            {
                for (int i = n - 1; i > 0; i--)
                {
                    int j = rng.Next(i + 1);
                    double t = x[i]; x[i] = x[j]; x[j] = t;
                    t = y[i]; y[i] = y[j]; y[j] = t;
                }
                Bits.AreSame(want, CudotArrays.DotExact(x, y), "a permutation");
            }
        }

        [Test, Combinatorial]
        public void EveryPairAndLengthMatchesHost([ValueSource("Pairs")] DType[] pair,
                                                 [Values(0, 1, T - 1, T + 1, 100000)] int n)
        {
            var x = Elements.Random(pair[0], n, Seed(pair, n));
            var y = Elements.Random(pair[1], n, Seed(pair, n) + 1);
            using (var host = Elements.HostHolding(x, y))
            {
                double expected = host.Dot();
                Bits.AreSame(expected, CudotArrays.Dot(x.Span(), y.Span()), "spans");
                Bits.AreSame(expected, CudotArrays.Dot(x.Span(), y.Span()), "again");
                if (n == 0) Bits.AreSame(0.0, expected, "an empty dot is +0.0");
            }
        }

        // (x stride, y stride): forwards, backwards, repeated, and both mixed; each against a HOST context
        // holding the elements the strides pick, in their order.
        static long[][] StridePairs
        {
            get { return new[] { new long[] { 2, -1 }, new long[] { -3, 0 }, new long[] { 0, 1 }, new long[] { -1, -1 }, new long[] { 5, 3 } }; }
        }

        [Test, Combinatorial]
        public void StridedViewsMatchHost([ValueSource("Pairs")] DType[] pair, [ValueSource("StridePairs")] long[] strides)
        {
            const int n = T + 1;
            int xStart, yStart;
            var x = Elements.Random(pair[0], Bits.Extent(n, strides[0], 3, out xStart), Seed(pair, strides[0]));
            var y = Elements.Random(pair[1], Bits.Extent(n, strides[1], 2, out yStart), Seed(pair, strides[1] + 9));
            using (var host = Elements.HostHolding(x, xStart, strides[0], y, yStart, strides[1], n))
            {
                double r = CudotArrays.Dot(x.Span().Strided(xStart, n, strides[0]), y.Span().Strided(yStart, n, strides[1]));
                Bits.AreSame(host.Dot(), r, "strides " + strides[0] + ", " + strides[1]);
            }
        }

        // A strided view of one element, and of none, at the span's edges.
        [Test]
        public void StridedEdges()
        {
            var x = new float[] { 1, 2, 3, 4, 5 };
            var y = new double[] { 10, 20, 30, 40, 50 };
            DotSpan xs = x, ys = y;
            Assert.AreEqual(5 * 10.0, CudotArrays.Dot(xs.Strided(4, 1, 1000), ys.Strided(0, 1, -1000)));
            Assert.AreEqual(1 * 50 + 3 * 40 + 5 * 30.0, CudotArrays.Dot(xs.Strided(0, 3, 2), ys.Strided(4, 3, -1)));
            Assert.AreEqual(4 * (10 + 20 + 30 + 40 + 50.0), CudotArrays.Dot(xs.Strided(3, 5, 0), ys));
            Bits.AreSame(0.0, CudotArrays.Dot(xs.Strided(5, 0, 7), ys.Strided(0, 0, 1)), "empty views at the ends");
            // Strided re-indexes the span the operand was made from, whatever view it was.
            DotSpan v = xs.Strided(1, 2, 1);
            Assert.AreEqual(5, v.SpanLength);
            Assert.AreEqual(1 * 10 + 2 * 20 + 3 * 30.0, CudotArrays.Dot(v.Strided(0, 3, 1), ys.Strided(0, 3, 1)));
        }

        // NaN, lone infinities, opposite infinities and Inf * 0, in the first tile and the second, for every
        // floating type on x against every type on y: the same bits as HOST (NaN included), non-finite.
        [Test, Combinatorial]
        public void NaNAndInfinitiesMatchHost([ValueSource("FloatTypes")] DType xd, [ValueSource("Types")] DType yd,
                                             [Values("nan", "inf", "-inf", "inf-inf", "inf*0")] string kind)
        {
            const int n = T + 7;
            var x = Elements.Random(xd, n, 5 + (int)xd);
            var y = Elements.Random(yd, n, 6 + (int)yd);
            switch (kind)
            {
                case "nan": x.SetSpecial(5, double.NaN); break;
                case "inf": x.SetSpecial(T + 2, double.PositiveInfinity); y.SetOne(T + 2); break;
                case "-inf": x.SetSpecial(3, double.NegativeInfinity); y.SetOne(3); break;
                case "inf-inf":
                    x.SetSpecial(1, double.PositiveInfinity); y.SetOne(1);
                    x.SetSpecial(T + 3, double.NegativeInfinity); y.SetOne(T + 3);
                    break;
                default: x.SetSpecial(T, double.PositiveInfinity); y.SetZero(T); break;
            }
            using (var host = Elements.HostHolding(x, y))
            {
                double expected = host.Dot(), r = CudotArrays.Dot(x.Span(), y.Span());
                Bits.AreSame(expected, r, kind);
                if (kind == "inf") Assert.AreEqual(double.PositiveInfinity, r);
                else if (kind == "-inf") Assert.AreEqual(double.NegativeInfinity, r);
                else Assert.IsNaN(r, kind);
            }
        }

        static DType[] Types { get { return Data.AllTypes; } }

        // Every way a user hands over memory: arrays, Span, ReadOnlySpan, slices, Create, bool masks.
        [Test]
        public void ConversionsReadTheCallersElements()
        {
            var x = new float[] { 1.5f, -2, 4, 8 };
            var y = new double[] { 2, 3, 0.25, -1 };
            double expected = 1.5 * 2 - 2 * 3 + 4 * 0.25 - 8;
            Assert.AreEqual(expected, CudotArrays.Dot(x, y));
            Assert.AreEqual(expected, CudotArrays.Dot(new Span<float>(x), new ReadOnlySpan<double>(y)));
            Assert.AreEqual(-2 * 3 + 4 * 0.25, CudotArrays.Dot(new Span<float>(x, 1, 2), new ReadOnlySpan<double>(y, 1, 2)));
            Assert.AreEqual(expected, CudotArrays.Dot(DotSpan.Create(new ReadOnlySpan<float>(x), DType.Float32), y));
            var mask = new[] { true, false, true, true };
            Assert.AreEqual(1.5 + 4 + 8, CudotArrays.Dot(x, mask));
            Assert.AreEqual(1.5 + 4 + 8, CudotArrays.Dot(new Span<bool>(mask), new ReadOnlySpan<float>(x)));
            var s8 = new sbyte[] { -128, 127, 0, 1 };
            var u8 = new byte[] { 255, 255, 9, 200 };
            Assert.AreEqual(-128 * 255 + 127 * 255 + 200, CudotArrays.Dot(s8, u8));
            Assert.AreEqual(-128 * 255 + 127 * 255 + 200, CudotArrays.Dot(new Span<sbyte>(s8), new ReadOnlySpan<byte>(u8)));
            // One ushort array, read as each 16-bit type: 0x3C00 is 1.0 in binary16, 2^-7 in bfloat16.
            var bits = new ushort[] { 0x3C00 };
            var one = new byte[] { 1 };
            Assert.AreEqual(1.0, CudotArrays.Dot(DotSpan.Float16(bits), one));
            Assert.AreEqual(0.0078125, CudotArrays.Dot(DotSpan.BFloat16(bits), one));
            Assert.AreEqual(0.0078125, CudotArrays.Dot(DotSpan.Create(new ReadOnlySpan<ushort>(bits), DType.BFloat16), one));
            // x and y may be the same memory.
            Assert.AreEqual(1.5 * 1.5 + 4 + 16 + 64, CudotArrays.Dot(x, x));
            // A null array is an empty span, as everywhere in .NET.
            Bits.AreSame(0.0, CudotArrays.Dot((float[])null, new double[0]), "null and empty");
            DotSpan view = x;
            Assert.AreEqual(DType.Float32, view.DType);
            Assert.AreEqual(4, view.Length);
            Assert.AreEqual(1, view.Stride);
            Assert.AreEqual(0, view.Start);
        }

        // A context's own buffers, leased as spans, are operands like any other.
        [Test]
        public void ContextBuffersAsOperands([Values(DType.Float32, DType.Int8)] DType yd)
        {
            const int n = 2 * T + 5;
            using (var ctx = new CudotContext(n, DType.Float64, Memory.Host, yDType: yd))
            {
                Data.FillRandomAny(ctx, 12);
                using (var x = ctx.LeaseX<double>())
                using (var yf = yd == DType.Float32 ? ctx.LeaseY<float>() : null)
                using (var yi = yd == DType.Int8 ? ctx.LeaseY<sbyte>() : null)
                {
                    double r = yd == DType.Float32 ? CudotArrays.Dot(x.Span, yf.Span) : CudotArrays.Dot(x.Span, yi.Span);
                    Bits.AreSame(ctx.Dot(), r, "leased buffers");
                }
            }
        }

        // The library reads the caller's memory in place: a change between two dots is seen by the second.
        [Test]
        public void ReadsInPlace()
        {
            var x = new double[3 * T];
            var y = new double[3 * T];
            for (int i = 0; i < x.Length; i++) { x[i] = 1; y[i] = 2; }
            Assert.AreEqual(6.0 * T, CudotArrays.Dot(x, y));
            y[2 * T + 1] = 1002;
            Assert.AreEqual(6.0 * T + 1000, CudotArrays.Dot(x, y));
        }

        // Pointers to pinned .NET memory (ordinary host memory: the CPU computes), with strides.
        [Test, Combinatorial]
        public void PointersToHostMemoryMatchHost([ValueSource("Pairs")] DType[] pair, [Values(1, -2)] long xStride, [Values(1, 0, -1)] long yStride)
        {
            const int n = 2 * T + 3;
            int xStart, yStart;
            var x = Elements.Random(pair[0], Bits.Extent(n, xStride, 1, out xStart), Seed(pair, 77));
            var y = Elements.Random(pair[1], Bits.Extent(n, yStride, 1, out yStart), Seed(pair, 78));
            GCHandle hx = GCHandle.Alloc(x.Store, GCHandleType.Pinned), hy = GCHandle.Alloc(y.Store, GCHandleType.Pinned);
            try
            {
                var px = new DotPointer(x.AddressOf(hx, xStart), pair[0], xStride);
                var py = new DotPointer(y.AddressOf(hy, yStart), pair[1], yStride);
                using (var host = Elements.HostHolding(x, xStart, xStride, y, yStart, yStride, n))
                {
                    Bits.AreSame(host.Dot(), CudotArrays.Dot(px, py, n), "pointers");
                    Bits.AreSame(host.Dot(T + 1), CudotArrays.Dot(px, py, T + 1, CudotArrays.PerThreadStream), "the first T + 1");
                    Bits.AreSame(0.0, CudotArrays.Dot(px, py, 0), "n = 0");
                    Bits.AreSame(host.Dot(), CudotLibrary.JoinPartials(pair[0], pair[1], CudotArrays.TilePartials(px, py, n)), "partials");
                }
            }
            finally { hx.Free(); hy.Free(); }
        }

        // Partials of spans: the bytes a HOST context holding the same elements gives, and pieces of whole
        // tiles joined in order give the whole dot.
        [Test]
        public void PartialsOfSpansJoinToTheDot([ValueSource("Pairs")] DType[] pair)
        {
            const int n = 3 * T + 5;
            var x = Elements.Random(pair[0], n, Seed(pair, 3));
            var y = Elements.Random(pair[1], n, Seed(pair, 4));
            using (var host = Elements.HostHolding(x, y))
            {
                byte[] partials = CudotArrays.TilePartials(x.Span(), y.Span());
                CollectionAssert.AreEqual(host.TilePartials(0, n), partials, "the context's partials");
                Bits.AreSame(host.Dot(), CudotLibrary.JoinPartials(pair[0], pair[1], partials), "joined");

                var gathered = new byte[partials.Length];
                int at = 0;
                foreach (int[] piece in new[] { new[] { 0, 2 * T }, new[] { 2 * T, T }, new[] { 3 * T, 5 } })
                {
                    DotSpan xs = x.Span().Strided(piece[0], piece[1], 1), ys = y.Span().Strided(piece[0], piece[1], 1);
                    at += CudotArrays.TilePartials(xs, ys, new Span<byte>(gathered, at, gathered.Length - at));
                }
                Assert.AreEqual(gathered.Length, at);
                Bits.AreSame(host.Dot(), CudotLibrary.JoinPartials(pair[0], pair[1], gathered), "pieces");
                Assert.AreEqual(0, CudotArrays.TilePartials(x.Span().Strided(0, 0, 1), y.Span().Strided(0, 0, 1)).Length);
            }
        }

        [Test]
        public void StridedPartialsMatchHost()
        {
            const int n = 2 * T + 9;
            int xStart, yStart;
            var x = Elements.Random(DType.Float64, Bits.Extent(n, -3, 0, out xStart), 40);
            var y = Elements.Random(DType.BFloat16, Bits.Extent(n, 0, 0, out yStart), 41);
            using (var host = Elements.HostHolding(x, xStart, -3, y, yStart, 0, n))
            {
                byte[] partials = CudotArrays.TilePartials(x.Span().Strided(xStart, n, -3), y.Span().Strided(yStart, n, 0));
                CollectionAssert.AreEqual(host.TilePartials(0, n), partials);
            }
        }

        // The struct the binding passes is cudot.h's cudot_arrays, field for field (sizes for 64-bit).
        [Test]
        public void NativeLayoutIsTheHeaders()
        {
            if (IntPtr.Size != 8) Assert.Ignore("cudot.h states the sizes for 64-bit platforms");
            Type arrays = typeof(CudotContext).Assembly.GetType("Cudot.NativeArrays", true);
            Type array = typeof(CudotContext).Assembly.GetType("Cudot.NativeArray", true);
            Assert.AreEqual(96, Marshal.SizeOf(arrays), "sizeof(cudot_arrays)");
            Assert.AreEqual(24, Marshal.SizeOf(array), "sizeof(cudot_array)");
            string[] fields = { "N", "X", "Y", "Stream", "XReady", "YReady", "Mode", "Reserved2" };
            int[] offsets = { 8, 16, 40, 64, 72, 80, 88, 92 };
            for (int i = 0; i < fields.Length; i++)
                Assert.AreEqual(offsets[i], Marshal.OffsetOf(arrays, fields[i]).ToInt32(), fields[i]);
            Assert.AreEqual(12, Marshal.OffsetOf(array, "Reserved").ToInt32());
            Assert.AreEqual(16, Marshal.OffsetOf(array, "Stride").ToInt32());
        }

        // ---- Errors: the binding's own checks.

        [Test]
        public void LengthsMustAgree()
        {
            var e = Assert.Throws<ArgumentException>(() => CudotArrays.Dot(new float[3], new float[4]));
            StringAssert.Contains("x has 3 elements, y 4", e.Message);
            Assert.Throws<ArgumentException>(() => CudotArrays.TilePartials(new float[3], new double[2]));
            Assert.Throws<ArgumentException>(() => CudotArrays.Dot(((DotSpan)new float[9]).Strided(0, 3, 3), new float[4]));
        }

        [Test]
        public void StridedViewsStayInsideTheSpan()
        {
            var a = new double[10];
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(-1, 1, 1), "start before");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(10, 1, 1), "start past the end");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(11, 0, 1), "empty, past the end");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(0, 11, 1), "too long");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(1, 4, 3), "last element at 10");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(8, 3, -5), "last element at -2");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(0, -1, 1), "negative length");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(9, 2, long.MinValue), "long.MinValue");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(0, 2, long.MaxValue), "long.MaxValue");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(a).Strided(0, long.MaxValue, 1), "long.MaxValue elements");
            Assert.Throws<ArgumentOutOfRangeException>(() => View(new float[0]).Strided(0, 1, 0), "nothing to repeat");
            // Exactly fitting views are fine; stride 0 may repeat one element beyond the span's length.
            DotSpan s = a;
            Assert.AreEqual(4, s.Strided(0, 4, 3).Length);
            Assert.AreEqual(3, s.Strided(8, 3, -4).Length);
            Assert.AreEqual(1L << 40, s.Strided(9, 1L << 40, 0).Length);
            Assert.AreEqual(1, s.Strided(9, 1, long.MinValue).Length);
            Assert.AreEqual(0, s.Strided(10, 0, 1).Length);
        }

        static DotSpan View(double[] a) { return a; }
        static DotSpan View(float[] a) { return a; }

        [Test]
        public void CreateRefusesATypeThatDoesNotFit()
        {
            var e = Assert.Throws<ArgumentException>(() => DotSpan.Create(new ReadOnlySpan<float>(new float[2]), DType.Float64));
            StringAssert.Contains("Single", e.Message);
            Assert.Throws<ArgumentException>(() => DotSpan.Create(new ReadOnlySpan<short>(new short[2]), DType.Float16));
            Assert.Throws<ArgumentException>(() => DotSpan.Create(new ReadOnlySpan<byte>(new byte[2]), (DType)9));
        }

        [Test]
        public void NegativeCountsAreRefusedHere()
        {
            var p = new DotPointer(new IntPtr(64), DType.Float32);
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.Dot(p, p, -1));
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.TilePartials(p, p, -1));
            Assert.Throws<ArgumentOutOfRangeException>(() => CudotArrays.RegisterHost(new IntPtr(64), -1));
            Assert.Throws<ArgumentException>(() => CudotArrays.TilePartials(p, p, T + 1, IntPtr.Zero, new byte[16]), "destination too small");
        }

        // ---- Errors the library finds: CudotException with its status name and its own message.

        // The library's own message comes through: it names the failing call.
        static CudotException Refused(Status expected, TestDelegate code, string call = "cudot_dot_arrays")
        {
            var e = Assert.Throws<CudotException>(code);
            Assert.AreEqual(expected, e.Status, e.Message);
            StringAssert.Contains(call, e.NativeMessage, "the library's message must come through");
            StringAssert.StartsWith(CudotLibrary.StatusName(expected) + ": ", e.Message);
            return e;
        }

        [Test]
        public void BadOperandsAreInvalidArgument()
        {
            var data = new float[16];
            GCHandle h = GCHandle.Alloc(data, GCHandleType.Pinned);
            try
            {
                IntPtr p = h.AddrOfPinnedObject();
                var ok = new DotPointer(p, DType.Float32);
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(new DotPointer(p, (DType)0), ok, 4));
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(ok, new DotPointer(p, (DType)7), 4));
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(new DotPointer(IntPtr.Zero, DType.Float32), ok, 4));
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(ok, new DotPointer(p, DType.Float32, long.MaxValue / 2), 4));
                Refused(Status.InvalidArgument, () => CudotArrays.TilePartials(new DotPointer(p, (DType)99), ok, 4), "cudot_tile_partials_arrays");
            }
            finally { h.Free(); }
        }

        // Memory nobody may read: a status, not a crash (the library checks the first and last element).
        [Test]
        public void UnreadableHostMemoryIsInvalidArgument()
        {
            var ok = new double[4];
            GCHandle h = GCHandle.Alloc(ok, GCHandleType.Pinned);
            try
            {
                var good = new DotPointer(h.AddrOfPinnedObject(), DType.Float64);
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(new DotPointer(new IntPtr(4096), DType.Float64), good, 4));
                Refused(Status.InvalidArgument, () => CudotArrays.Dot(good, new DotPointer(new IntPtr(8), DType.Float64), 1));
            }
            finally { h.Free(); }
        }

        [Test]
        public void AsyncNeedsADeviceResultAndGpuOperands()
        {
            IntPtr host = Marshal.AllocHGlobal(64);
            try
            {
                var p = new DotPointer(host, DType.Float64);
                Refused(Status.InvalidArgument, () => CudotArrays.DotAsync(p, p, 4, IntPtr.Zero, IntPtr.Zero), "cudot_dot_arrays_async");
                // Ordinary host memory: only the CPU reads it, so there is nothing to queue.
                Refused(Status.Unsupported, () => CudotArrays.DotAsync(p, p, 4, IntPtr.Zero, host + 32), "cudot_dot_arrays_async");
            }
            finally { Marshal.FreeHGlobal(host); }
        }

        [Test]
        public void RegisterHostRanges()
        {
            const int n = 3 * T + 1;
            IntPtr block = Marshal.AllocHGlobal(2 * n * sizeof(float));
            try
            {
                Refused(Status.InvalidArgument, () => CudotArrays.RegisterHost(IntPtr.Zero, 64), "cudot_register_host");
                Refused(Status.InvalidArgument, () => CudotArrays.RegisterHost(block, 0), "cudot_register_host");
                Refused(Status.InvalidArgument, () => CudotArrays.UnregisterHost(block), "cudot_unregister_host");
                CudotArrays.RegisterHost(block, 2L * n * sizeof(float));
                try
                {
                    Refused(Status.InvalidArgument, () => CudotArrays.RegisterHost(block + 64, 64), "cudot_register_host"); // overlaps
                    Refused(Status.InvalidArgument, () => CudotArrays.UnregisterHost(block + 64), "cudot_unregister_host"); // not its start
                    var x = Elements.Random(DType.Float32, n, 1);
                    var y = Elements.Random(DType.Float32, n, 2);
                    Marshal.Copy((float[])x.Store, 0, block, n);
                    Marshal.Copy((float[])y.Store, 0, block + n * sizeof(float), n);
                    using (var host = Elements.HostHolding(x, y))
                        Bits.AreSame(host.Dot(), CudotArrays.Dot(new DotPointer(block, DType.Float32),
                                                                 new DotPointer(block + n * sizeof(float), DType.Float32), n), "registered memory");
                }
                finally { CudotArrays.UnregisterHost(block); }
                Refused(Status.InvalidArgument, () => CudotArrays.UnregisterHost(block), "cudot_unregister_host"); // released already
                CudotArrays.RegisterHost(block, 64); // free again
                CudotArrays.UnregisterHost(block);
            }
            finally { Marshal.FreeHGlobal(block); }
        }
    }
}
