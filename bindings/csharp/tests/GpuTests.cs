// GpuTests.cs - GPU strategies must give bitwise the HOST result. Without a usable GPU each test is
// reported as ignored (never passed), unless CUDOT_TEST_GPU=1 demands a GPU.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class GpuTests
    {
        [Test, Combinatorial]
        public void BitwiseEqualToHost(
            [Values(Memory.Pinned, Memory.Mapped, Memory.Managed)] Memory memory,
            [Values(DType.Float32, DType.Float64)] DType dtype,
            [Values(1000, (1 << 20) + 3)] int n)
        {
            using (var gpu = Gpu.OpenOrSkip(n, dtype, memory))
            using (var host = new CudotContext(n, dtype, Memory.Host))
            {
                Assert.AreEqual(memory, gpu.MemoryUsed);
                Assert.AreEqual(0, gpu.Device);
                Data.FillRandom(host, 1234 + n);
                Data.CopyInputs(host, gpu);
                foreach (int k in new[] { n, n / 3, 1, 0 })
                    Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot(k)), BitConverter.DoubleToInt64Bits(gpu.Dot(k)), "first " + k);
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot()), BitConverter.DoubleToInt64Bits(gpu.Dot()));
                // Fresh data after a dot must reach the GPU too (PINNED copies, MANAGED migrates pages).
                Data.FillInts(gpu);
                Assert.AreEqual((double)Data.ExactIntDot(n), gpu.Dot());
            }
        }

        // DeviceAll: one context over every visible GPU, reported as DeviceAll, with HOST's bits. Without a
        // usable GPU it must be NoDevice (ignored; a failure with CUDOT_TEST_GPU=1), never Unsupported.
        [Test, Combinatorial]
        public void DeviceAllBitwiseEqualToHost(
            [Values(Memory.Pinned, Memory.Mapped, Memory.Managed)] Memory memory,
            [Values(DType.Float32, DType.Float64)] DType dtype)
        {
            const int n = 3 * 8192 * 40 + 5; // many tiles, so several GPUs each get a run; the last tile short
            using (var gpu = Gpu.OpenOrSkip(n, dtype, memory, device: CudotContext.DeviceAll))
            using (var host = new CudotContext(n, dtype, Memory.Host))
            {
                Assert.AreEqual(memory, gpu.MemoryUsed);
                Assert.AreEqual(CudotContext.DeviceAll, gpu.Device);
                Data.FillRandom(host, 2024);
                Data.CopyInputs(host, gpu);
                foreach (int k in new[] { n, n / 3, 8193, 1, 0, n - 1 })
                    Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot(k)), BitConverter.DoubleToInt64Bits(gpu.Dot(k)), "first " + k);
                Data.FillInts(gpu); // fresh data after a dot
                Assert.AreEqual((double)Data.ExactIntDot(n), gpu.Dot());
            }
        }

        // Mixed pairs, one of each arithmetic (double sums, Dot2, exact integers), on random data
        // of each type's whole range.
        static object[] MixedPairs
        {
            get
            {
                return new object[]
                {
                    new[] { DType.Float32, DType.UInt8 },
                    new[] { DType.Float16, DType.BFloat16 },
                    new[] { DType.Int8, DType.UInt8 },
                    new[] { DType.Float64, DType.Int8 },
                    new[] { DType.BFloat16, DType.Float64 },
                    new[] { DType.UInt8, DType.Float16 },
                };
            }
        }

        [Test, Combinatorial]
        public void MixedPairsBitwiseEqualToHost(
            [Values(Memory.Pinned, Memory.Mapped, Memory.Managed)] Memory memory,
            [ValueSource("MixedPairs")] DType[] pair,
            [Values(1000, (1 << 20) + 3)] int n)
        {
            using (var gpu = Gpu.OpenOrSkip(n, pair[0], memory, pair[1]))
            using (var host = new CudotContext(n, pair[0], Memory.Host, yDType: pair[1]))
            {
                Assert.AreEqual(memory, gpu.MemoryUsed);
                Assert.AreEqual(pair[0], gpu.XDType);
                Assert.AreEqual(pair[1], gpu.YDType);
                Data.FillRandomAny(host, 4321 + n);
                Data.CopyInputs(host, gpu);
                foreach (int k in new[] { n, n / 3, 1, 0 })
                    Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot(k)), BitConverter.DoubleToInt64Bits(gpu.Dot(k)), "first " + k);
                Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot()), BitConverter.DoubleToInt64Bits(gpu.Dot()));
                Data.FillInts(gpu);
                Assert.AreEqual((double)Data.ExactIntDot(pair[0], pair[1], n), gpu.Dot(), "fresh data after a dot");
            }
        }

        // AUTO with a GPU splits dots of 2^24 elements or more between CPU threads and the GPU; the
        // split must not change a bit either.
        [TestCase(DType.Float32, DType.BFloat16)]
        [TestCase(DType.Int8, DType.Float64)]
        public void AutoHybridMixedPairBitwiseEqualToHost(DType xd, DType yd)
        {
            const int n = (1 << 24) + 5;
            using (var auto = new CudotContext(n, xd, Memory.Auto, yDType: yd))
            {
                if (auto.MemoryUsed == Memory.Host)
                {
                    if (Gpu.Required) Assert.Fail("CUDOT_TEST_GPU=1 but AUTO chose Host");
                    Assert.Ignore("no usable GPU: AUTO chose Host");
                }
                using (var host = new CudotContext(n, xd, Memory.Host, yDType: yd))
                {
                    Data.FillRandomAny(host, 77);
                    Data.CopyInputs(host, auto);
                    Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot()), BitConverter.DoubleToInt64Bits(auto.Dot()), "all");
                    Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot(n - 1)), BitConverter.DoubleToInt64Bits(auto.Dot(n - 1)), "n - 1");
                }
            }
        }

        // AUTO picks a GPU strategy exactly when a GPU is usable; it reports which one.
        [Test]
        public void AutoResolvesToAConcreteStrategy()
        {
            using (var ctx = new CudotContext(100, DType.Float32, Memory.Auto))
            {
                Assert.AreNotEqual(Memory.Auto, ctx.MemoryUsed);
                if (ctx.MemoryUsed == Memory.Host)
                {
                    Assert.AreEqual(CudotContext.DeviceNone, ctx.Device);
                    if (Gpu.Required) Assert.Fail("CUDOT_TEST_GPU=1 but AUTO chose Host");
                    Assert.Ignore("no usable GPU: AUTO chose Host");
                }
                Assert.AreEqual(0, ctx.Device);
                Data.FillInts(ctx);
                Assert.AreEqual((double)Data.ExactIntDot(100), ctx.Dot());
            }
        }
    }
}
