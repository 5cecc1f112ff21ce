// WaitMsTests.cs - the waitMs option (cudot_config.wait_ms, library 1.5): the bound on waits for the GPU.
//
// Without a GPU the library gives it no visible effect, so where the value lands in the config is checked
// by test.sh with tests/spy/WaitMsSpy.cs and bindings/testing/config_spy.c (a stand-in library that
// reports the config it received); here, the real library accepts every value and computes as before.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class WaitMsTests
    {
        // Every strategy, against a Host context holding the same values (the library promises their bits).
        // On a GPU, 2000 ms leaves a dot of 2^15 + 3 elements ample time (Auto measures the GPU at this size);
        // the GPU strategies are ignored without a usable GPU (failed with CUDOT_TEST_GPU=1).
        [TestCase(Memory.Host, 1u)]
        [TestCase(Memory.Host, uint.MaxValue)]
        [TestCase(Memory.Auto, 2000u)]
        [TestCase(Memory.Auto, uint.MaxValue)]
        [TestCase(Memory.Pinned, 2000u)]
        [TestCase(Memory.Mapped, CudotContext.DefaultWaitMs)]
        [TestCase(Memory.Managed, uint.MaxValue)]
        public void ContextsWithWaitMsComputeAsWithout(Memory memory, uint waitMs)
        {
            const int n = (1 << 15) + 3;
            var rng = new Random((int)(waitMs % 1000));
            var xs = new double[n];
            var ys = new double[n];
            for (int i = 0; i < n; i++) { xs[i] = rng.NextDouble() - 0.5; ys[i] = rng.NextDouble() * 8 - 4; }
            using (var bounded = memory == Memory.Host || memory == Memory.Auto
                       ? new CudotContext(n, DType.Float64, memory, waitMs: waitMs)
                       : Gpu.OpenOrSkip(n, DType.Float64, memory, waitMs: waitMs))
            using (var host = new CudotContext(n, DType.Float64, Memory.Host))
            {
                foreach (var ctx in new[] { host, bounded })
                {
                    ctx.XAsFloat64().CopyFrom(xs);
                    ctx.YAsFloat64().CopyFrom(ys);
                }
                if (memory != Memory.Auto) Assert.AreEqual(memory, bounded.MemoryUsed);
                foreach (long k in new long[] { n, n / 3, 1 })
                    for (int round = 0; round < 3; round++) // Auto times the CPU and the GPU on the first dots of a size
                        Assert.AreEqual(BitConverter.DoubleToInt64Bits(host.Dot(k)), BitConverter.DoubleToInt64Bits(bounded.Dot(k)),
                                        "the first " + k + " elements");
            }
        }

        // Code compiled against the 1.0 and 1.1 assemblies calls these constructors by their exact
        // parameter lists: adding waitMs must not have removed them.
        [Test]
        public void EarlierConstructorsStillExist()
        {
            Assert.IsNotNull(typeof(CudotContext).GetConstructor(new[] { typeof(long), typeof(DType), typeof(Memory), typeof(int) }));
            Assert.IsNotNull(typeof(CudotContext).GetConstructor(
                new[] { typeof(long), typeof(DType), typeof(Memory), typeof(int), typeof(DType?) }));
            using (var ctx = new CudotContext(5, DType.Int8, Memory.Host, 0, DType.Float16))
                Assert.AreEqual(DType.Float16, ctx.YDType);
        }
    }
}
