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
