// PartialsTests.cs - TilePartials / JoinPartials: one vector split over several contexts (as ranks of a
// distributed job would hold it) must give exactly the bits of one context holding all of it.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class PartialsTests
    {
        const int T = CudotLibrary.TileElements;

        // Pieces as ranks would hold them: whole tiles each, in different counts, and a short last piece.
        static readonly int[] Pieces = { 2 * T, 3 * T, T, 777 };
        static readonly int Total = 6 * T + 777;

        // Random values of a wide range of magnitudes (so that the summation order shows in the last
        // bits), and random bytes for the integer types; element i is the same wherever it is stored.
        static readonly double[] Reals = new double[Total];
        static readonly int[] Bytes = new int[Total];

        static PartialsTests()
        {
            var rng = new Random(2024);
            for (int i = 0; i < Total; i++)
            {
                Reals[i] = (rng.NextDouble() * 2 - 1) * Math.Pow(2, rng.Next(-12, 12));
                Bytes[i] = rng.Next(256);
            }
        }

        // A property, not a field: NUnit reads it by name, which mcs would call an unused field.
        static DType[][] Pairs { get { return pairs; } }
        static readonly DType[][] pairs =
        {
            new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
            new[] { DType.Float16, DType.Float16 }, new[] { DType.BFloat16, DType.BFloat16 },
            new[] { DType.Int8, DType.Int8 }, new[] { DType.Float32, DType.UInt8 },
            new[] { DType.BFloat16, DType.Int8 }, new[] { DType.Float64, DType.Float16 },
        };

        [Test]
        public void PiecesOverContextsEqualOneContext([ValueSource("Pairs")] DType[] pair)
        {
            double whole;
            using (var ctx = Holding(pair, 0, Total)) whole = ctx.Dot();

            var gathered = new byte[CudotLibrary.TileCount(Total) * CudotLibrary.PartialBytes];
            int offset = 0, at = 0;
            foreach (int len in Pieces)
            {
                using (var ctx = Holding(pair, offset, len))
                {
                    byte[] mine = ctx.TilePartials(0, len);
                    Assert.AreEqual(CudotLibrary.TileCount(len) * CudotLibrary.PartialBytes, mine.Length);
                    Buffer.BlockCopy(mine, 0, gathered, at, mine.Length);
                    at += mine.Length;
                }
                offset += len;
            }
            Assert.AreEqual(gathered.Length, at);
            AssertSameBits(whole, CudotLibrary.JoinPartials(pair[0], pair[1], gathered));
        }

        // Within one context: windows that start on a tile (written into slices of one gather buffer
        // by the Span overload), and a prefix whose last tile is short, as Dot(n) sees it.
        [Test]
        public void WindowsOfOneContext([ValueSource("Pairs")] DType[] pair)
        {
            using (var ctx = Holding(pair, 0, Total))
            {
                var gathered = new byte[CudotLibrary.TileCount(Total) * CudotLibrary.PartialBytes];
                int head = ctx.TilePartials(0, 4 * T, new Span<byte>(gathered));
                int tail = ctx.TilePartials(4 * T, Total - 4 * T, new Span<byte>(gathered, head, gathered.Length - head));
                Assert.AreEqual(gathered.Length, head + tail);
                AssertSameBits(ctx.Dot(), CudotLibrary.JoinPartials(pair[0], pair[1], gathered));

                const int prefix = 2 * T + 5;
                AssertSameBits(ctx.Dot(prefix), CudotLibrary.JoinPartials(pair[0], pair[1], ctx.TilePartials(0, prefix)));
            }
        }

        // GPU contexts compute partials on the GPU; joined, they must give HOST's bits. A start off every
        // 16-byte boundary makes MAPPED and MANAGED copy through their staging buffer. Ignored without a GPU.
        [Test, Combinatorial]
        public void GpuPartialsEqualHost(
            [Values(Memory.Pinned, Memory.Mapped, Memory.Managed)] Memory memory,
            [ValueSource("GpuPairs")] DType[] pair)
        {
            using (var gpu = Gpu.OpenOrSkip(Total, pair[0], memory, pair[1]))
            using (var host = Holding(pair, 0, Total))
            {
                Store(gpu, true, 0);
                Store(gpu, false, 0);
                foreach (int first in new[] { 0, T + 3 })
                    AssertSameBits(CudotLibrary.JoinPartials(pair[0], pair[1], host.TilePartials(first, Total - first)),
                                   CudotLibrary.JoinPartials(pair[0], pair[1], gpu.TilePartials(first, Total - first)));
                AssertSameBits(host.Dot(), CudotLibrary.JoinPartials(pair[0], pair[1], gpu.TilePartials(0, Total)));
            }
        }

        static DType[][] GpuPairs { get { return new[] { pairs[0], pairs[1], pairs[6] }; } }

        [Test]
        public void NoTilesJoinToPositiveZero()
        {
            using (var ctx = new CudotContext(10, DType.Float32, Memory.Host))
                Assert.AreEqual(0, ctx.TilePartials(3, 0).Length);
            AssertSameBits(0.0, CudotLibrary.JoinPartials(DType.Float32, DType.Float32, new byte[0]));
        }

        [Test]
        public void Errors()
        {
            var ctx = new CudotContext(100, DType.Float32, Memory.Host);
            var beyond = Assert.Throws<CudotException>(() => ctx.TilePartials(50, 51));
            Assert.AreEqual(Status.InvalidArgument, beyond.Status);
            Assert.IsNotEmpty(beyond.NativeMessage);
            Assert.AreEqual(Status.InvalidArgument, Assert.Throws<CudotException>(() => ctx.TilePartials(101, 0)).Status);
            Assert.Throws<ArgumentOutOfRangeException>(() => ctx.TilePartials(-1, 10));
            Assert.Throws<ArgumentOutOfRangeException>(() => ctx.TilePartials(0, -1));
            Assert.Throws<ArgumentException>(() => ctx.TilePartials(0, 100, new byte[15]));

            Assert.Throws<ArgumentException>(() => CudotLibrary.JoinPartials(DType.Float32, DType.Float32, new byte[17]));
            Assert.Throws<ArgumentException>(() => CudotLibrary.JoinPartials(DType.Float32, DType.Float32, new byte[8]));
            Assert.Throws<ArgumentNullException>(() => CudotLibrary.JoinPartials(DType.Float32, DType.Float32, (byte[])null));
            var unknown = Assert.Throws<CudotException>(() => CudotLibrary.JoinPartials((DType)99, DType.Float32, new byte[16]));
            Assert.AreEqual(Status.InvalidArgument, unknown.Status);
            Assert.IsNotEmpty(unknown.NativeMessage, "the thread-local message of cudot_join_partials");

            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.TilePartials(0, 10));
            Assert.Throws<ObjectDisposedException>(() => ctx.TilePartials(0, 0, Span<byte>.Empty));
        }

        static void AssertSameBits(double expected, double actual)
        {
            Assert.AreEqual(BitConverter.DoubleToInt64Bits(expected), BitConverter.DoubleToInt64Bits(actual),
                            "expected " + expected.ToString("R") + ", got " + actual.ToString("R"));
        }

        // A context of len elements holding elements [offset, offset + len) of the global vector.
        static CudotContext Holding(DType[] pair, int offset, int len)
        {
            var ctx = new CudotContext(len, pair[0], Memory.Host, yDType: pair[1]);
            Store(ctx, true, offset);
            Store(ctx, false, offset);
            return ctx;
        }

        // Writes element offset + i of the global vector to element i of one side, through a lease.
        static void Store(CudotContext ctx, bool isX, int offset)
        {
            switch (isX ? ctx.XDType : ctx.YDType)
            {
                case DType.Float32: Put(ctx, isX, i => (float)Reals[offset + i]); break;
                case DType.Float64: Put(ctx, isX, i => Reals[offset + i]); break;
                case DType.Float16: Put(ctx, isX, i => Float16Bits.FromSingle((float)Reals[offset + i])); break;
                case DType.BFloat16: Put(ctx, isX, i => BFloat16Bits.FromSingle((float)Reals[offset + i])); break;
                case DType.Int8: Put(ctx, isX, i => (sbyte)(Bytes[offset + i] - 128)); break;
                default: Put(ctx, isX, i => (byte)Bytes[offset + i]); break;
            }
        }

        static void Put<T>(CudotContext ctx, bool isX, Func<int, T> value) where T : struct
        {
            using (var lease = isX ? ctx.LeaseX<T>() : ctx.LeaseY<T>())
            {
                Span<T> s = lease.Span;
                for (int i = 0; i < s.Length; i++) s[i] = value(i);
            }
        }
    }
}
