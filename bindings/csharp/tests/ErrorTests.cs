// ErrorTests.cs - failures surface as CudotException with the library's status and message.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ErrorTests
    {
        static void AssertStatus(Status expected, TestDelegate code)
        {
            var e = Assert.Throws<CudotException>(code);
            Assert.AreEqual(expected, e.Status, e.Message);
            Assert.IsNotEmpty(e.NativeMessage, "the library's message must come through");
            StringAssert.StartsWith(CudotLibrary.StatusName(expected), e.Message);
        }

        [Test]
        public void UnknownMemoryValueIsInvalidArgument()
        {
            AssertStatus(Status.InvalidArgument, () => new CudotContext(10, DType.Float32, (Memory)99));
        }

        [Test]
        public void UnknownDTypeIsInvalidArgument()
        {
            AssertStatus(Status.InvalidArgument, () => new CudotContext(10, (DType)7, Memory.Host));
        }

        [Test]
        public void UnknownYDTypeIsInvalidArgument()
        {
            AssertStatus(Status.InvalidArgument, () => new CudotContext(10, DType.Float32, Memory.Host, yDType: (DType)7));
            AssertStatus(Status.InvalidArgument, () => new CudotContext(10, DType.Float32, Memory.Host, yDType: (DType)(-1)));
        }

        // The byte count of each side follows its own type: 2^61 Int8 elements is merely too much
        // memory, but a Float64 y makes the same count overflow size_t.
        [Test]
        public void OverflowFollowsTheWiderSide()
        {
            AssertStatus(Status.OutOfMemory, () => new CudotContext(1L << 61, DType.Int8, Memory.Host));
            AssertStatus(Status.InvalidArgument, () => new CudotContext(1L << 61, DType.Int8, Memory.Host, yDType: DType.Float64));
        }

        // size_t must travel intact: a count whose byte size overflows is refused as such, and a
        // merely huge one as out of memory (not, say, truncated to 32 bits and accepted).
        [Test]
        public void OverflowingCapacityIsInvalidArgument()
        {
            AssertStatus(Status.InvalidArgument, () => new CudotContext(long.MaxValue, DType.Float64, Memory.Host));
        }

        [Test]
        public void CapacityBeyondPhysicalMemoryIsOutOfMemory()
        {
            AssertStatus(Status.OutOfMemory, () => new CudotContext(1L << 50, DType.Float32, Memory.Host));
        }

        [Test]
        public void NegativeSizesAreRejectedBeforeTheLibrary()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new CudotContext(-1));
            using (var ctx = new CudotContext(4, DType.Float32, Memory.Host))
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.Dot(-1));
        }

        [Test]
        public void DotBeyondCapacityIsInvalidArgumentAndContextSurvives()
        {
            using (var ctx = new CudotContext(100, DType.Float32, Memory.Host))
            {
                Data.FillInts(ctx);
                AssertStatus(Status.InvalidArgument, () => ctx.Dot(101));
                Assert.AreEqual((double)Data.ExactIntDot(100), ctx.Dot(100), "n == capacity is fine");
                Assert.AreEqual((double)Data.ExactIntDot(100), ctx.Dot());
            }
        }

        // Where AUTO picked HOST there is no usable GPU, so every GPU strategy must say NO_DEVICE.
        [TestCase(Memory.Pinned)]
        [TestCase(Memory.Mapped)]
        [TestCase(Memory.Managed)]
        public void GpuStrategyWithoutGpuIsNoDevice(Memory memory)
        {
            using (var auto = new CudotContext(16))
                if (auto.MemoryUsed != Memory.Host)
                    Assert.Ignore("a GPU is present (AUTO chose " + auto.MemoryUsed + "); GpuTests cover it");
            if (Gpu.Required) Assert.Fail("CUDOT_TEST_GPU=1 but AUTO chose Host");
            AssertStatus(Status.NoDevice, () => new CudotContext(16, DType.Float32, memory));
        }

        // The one negative device a config may hold is DeviceAll (-1); below it is InvalidArgument, and
        // the message says so. Host ignores the device.
        [TestCase(Memory.Pinned, -3)]
        [TestCase(Memory.Mapped, CudotContext.DeviceNone)]
        [TestCase(Memory.Auto, int.MinValue)]
        public void DeviceBelowDeviceAllIsInvalidArgument(Memory memory, int device)
        {
            var e = Assert.Throws<CudotException>(() => new CudotContext(8, DType.Float32, memory, device));
            Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
            StringAssert.Contains("CUDOT_DEVICE_ALL", e.NativeMessage);
        }

        [TestCase(CudotContext.DeviceAll)]
        [TestCase(-3)]
        public void HostIgnoresTheDevice(int device)
        {
            using (var ctx = new CudotContext(8, DType.Float32, Memory.Host, device))
            {
                Assert.AreEqual(Memory.Host, ctx.MemoryUsed);
                Assert.AreEqual(CudotContext.DeviceNone, ctx.Device);
            }
        }

        [Test]
        public void WindowOutsideCapacityIsRejected()
        {
            using (var ctx = new CudotContext(10, DType.Float32, Memory.Host))
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.XAsFloat32(8, 3));
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.YAsFloat32(-1, 2));
                Assert.AreEqual(2, ctx.XAsFloat32(8, 2).Length);
            }
        }
    }
}
