// ArraysGpuTests.cs - dots on the caller's own GPU memory (CudotArrays with DotPointer): device, managed
// and registered host memory, streams, the async result, partials; each bit for bit the Dot() of a
// HOST context holding the same elements. The memory and streams come from the CUDA driver API
// (libcuda.so.1, which every driver installs; cudot links the runtime statically, so libcudart may be
// absent), in device 0's primary context, the one cudot works in. Without a driver, a GPU, or a cudot
// built with CUDA, every test here is reported as ignored (never passed), unless CUDOT_TEST_GPU=1.
using System;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    // The few driver API calls the tests need to own memory and streams the way a CUDA program would.
    static class Driver
    {
        const string Lib = "libcuda.so.1";
        [DllImport(Lib)] static extern int cuInit(uint flags);
        [DllImport(Lib)] static extern int cuDeviceGet(out int device, int ordinal);
        [DllImport(Lib)] static extern int cuDevicePrimaryCtxRetain(out IntPtr ctx, int device);
        [DllImport(Lib)] static extern int cuCtxSetCurrent(IntPtr ctx);
        [DllImport(Lib)] static extern int cuMemAlloc_v2(out IntPtr ptr, UIntPtr bytes);
        [DllImport(Lib)] static extern int cuMemAllocManaged(out IntPtr ptr, UIntPtr bytes, uint flags);
        [DllImport(Lib)] static extern int cuMemFree_v2(IntPtr ptr);
        [DllImport(Lib)] static extern int cuMemcpyHtoD_v2(IntPtr dst, IntPtr src, UIntPtr bytes);
        [DllImport(Lib)] static extern int cuMemcpyDtoH_v2(IntPtr dst, IntPtr src, UIntPtr bytes);
        [DllImport(Lib)] static extern int cuMemcpyHtoDAsync_v2(IntPtr dst, IntPtr src, UIntPtr bytes, IntPtr stream);
        [DllImport(Lib)] static extern int cuStreamCreate(out IntPtr stream, uint flags);
        [DllImport(Lib)] static extern int cuStreamSynchronize(IntPtr stream);
        [DllImport(Lib)] static extern int cuStreamDestroy_v2(IntPtr stream);

        static IntPtr primary;

        // Makes device 0's primary context current on this thread, or ignores the test (fails it with
        // CUDOT_TEST_GPU=1) when cudot has no usable GPU (no driver, no GPU, or a build without CUDA).
        public static void RequireGpu()
        {
            Gpu.OpenOrSkip(1, DType.Float32, Memory.Pinned).Dispose();
            int status;
            try
            {
                status = cuInit(0);
                int device = 0;
                if (status == 0) status = cuDeviceGet(out device, 0);
                if (status == 0 && primary == IntPtr.Zero) status = cuDevicePrimaryCtxRetain(out primary, device);
                if (status == 0) status = cuCtxSetCurrent(primary);
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                Skip("no CUDA driver (" + Lib + "): " + e.Message);
                return;
            }
            if (status != 0) Skip("no usable GPU: the CUDA driver says " + status);
        }

        static void Skip(string why)
        {
            if (Gpu.Required) Assert.Fail("CUDOT_TEST_GPU=1 but " + why);
            Assert.Ignore(why);
        }

        static void Ok(int status, string call) { if (status != 0) Assert.Fail(call + " failed with CUDA driver error " + status); }

        public static IntPtr Alloc(long bytes) { IntPtr p; Ok(cuMemAlloc_v2(out p, new UIntPtr((ulong)Math.Max(bytes, 1))), "cuMemAlloc"); return p; }
        public static IntPtr AllocManaged(long bytes) { IntPtr p; Ok(cuMemAllocManaged(out p, new UIntPtr((ulong)Math.Max(bytes, 1)), 1), "cuMemAllocManaged"); return p; }
        public static void Free(IntPtr p) { Ok(cuMemFree_v2(p), "cuMemFree"); }
        public static IntPtr NewStream() { IntPtr s; Ok(cuStreamCreate(out s, 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate"); return s; }
        public static void Synchronize(IntPtr stream) { Ok(cuStreamSynchronize(stream), "cuStreamSynchronize"); }
        public static void DestroyStream(IntPtr stream) { Ok(cuStreamDestroy_v2(stream), "cuStreamDestroy"); }

        // Copies a .NET array (pinned for the copy) to device memory of the same size, allocated here.
        public static IntPtr Upload(Array data, int elementSize, IntPtr stream = default(IntPtr))
        {
            long bytes = (long)data.Length * elementSize;
            IntPtr d = Alloc(bytes);
            GCHandle h = GCHandle.Alloc(data, GCHandleType.Pinned);
            try
            {
                if (bytes > 0)
                {
                    if (stream == IntPtr.Zero) Ok(cuMemcpyHtoD_v2(d, h.AddrOfPinnedObject(), new UIntPtr((ulong)bytes)), "cuMemcpyHtoD");
                    else { Ok(cuMemcpyHtoDAsync_v2(d, h.AddrOfPinnedObject(), new UIntPtr((ulong)bytes), stream), "cuMemcpyHtoDAsync"); Synchronize(stream); }
                }
            }
            finally { h.Free(); }
            return d;
        }

        public static void Fill(IntPtr device, double value)
        {
            var one = new[] { value };
            GCHandle h = GCHandle.Alloc(one, GCHandleType.Pinned);
            try { Ok(cuMemcpyHtoD_v2(device, h.AddrOfPinnedObject(), new UIntPtr(8)), "cuMemcpyHtoD"); }
            finally { h.Free(); }
        }

        public static double ReadDouble(IntPtr device)
        {
            var one = new double[1];
            GCHandle h = GCHandle.Alloc(one, GCHandleType.Pinned);
            try { Ok(cuMemcpyDtoH_v2(h.AddrOfPinnedObject(), device, new UIntPtr(8)), "cuMemcpyDtoH"); }
            finally { h.Free(); }
            return one[0];
        }
    }

    [TestFixture]
    public class ArraysGpuTests
    {
        const int T = CudotLibrary.TileElements;
        static DType[][] Pairs { get { return Bits.AllPairs; } }

        [Test, Combinatorial]
        public void DeviceMemoryMatchesHost([ValueSource("Pairs")] DType[] pair, [Values(0, 1, T - 1, T + 1, 100000)] int n)
        {
            Driver.RequireGpu();
            var x = Elements.Random(pair[0], n, 300 + n + (int)pair[0]);
            var y = Elements.Random(pair[1], n, 400 + n + (int)pair[1]);
            IntPtr dx = Driver.Upload(x.Store, x.ElementSize), dy = Driver.Upload(y.Store, y.ElementSize);
            IntPtr stream = Driver.NewStream(), result = Driver.Alloc(8);
            try
            {
                var px = new DotPointer(dx, pair[0]);
                var py = new DotPointer(dy, pair[1]);
                using (var host = Elements.HostHolding(x, y))
                {
                    double expected = host.Dot();
                    Bits.AreSame(expected, CudotArrays.Dot(px, py, n, stream), "blocking, own stream");
                    Bits.AreSame(expected, CudotArrays.Dot(px, py, n), "legacy default stream");
                    Bits.AreSame(expected, CudotArrays.Dot(px, py, n, CudotArrays.PerThreadStream), "per-thread stream");
                    Driver.Fill(result, double.NaN);
                    CudotArrays.DotAsync(px, py, n, stream, result);
                    Driver.Synchronize(stream);
                    Bits.AreSame(expected, Driver.ReadDouble(result), "async");
                    if (n > 0)
                        Bits.AreSame(expected, CudotLibrary.JoinPartials(pair[0], pair[1], CudotArrays.TilePartials(px, py, n, stream)), "partials");
                }
            }
            finally
            {
                Driver.Free(dx); Driver.Free(dy); Driver.Free(result); Driver.DestroyStream(stream);
            }
        }

        [Test, Combinatorial]
        public void StridedDeviceMemoryMatchesHost([Values(DType.Float32, DType.Float64, DType.BFloat16, DType.Int8)] DType xd,
                                                   [Values(DType.Float16, DType.UInt8, DType.Float64)] DType yd,
                                                   [Values(-1, 3)] long xStride, [Values(0, -2, 1)] long yStride)
        {
            Driver.RequireGpu();
            const int n = 3 * T + 11;
            int xStart, yStart;
            var x = Elements.Random(xd, Bits.Extent(n, xStride, 2, out xStart), 51);
            var y = Elements.Random(yd, Bits.Extent(n, yStride, 2, out yStart), 52);
            IntPtr dx = Driver.Upload(x.Store, x.ElementSize), dy = Driver.Upload(y.Store, y.ElementSize);
            IntPtr stream = Driver.NewStream();
            try
            {
                var px = new DotPointer(dx + xStart * x.ElementSize, xd, xStride);
                var py = new DotPointer(dy + yStart * y.ElementSize, yd, yStride);
                using (var host = Elements.HostHolding(x, xStart, xStride, y, yStart, yStride, n))
                    Bits.AreSame(host.Dot(), CudotArrays.Dot(px, py, n, stream), "strides " + xStride + ", " + yStride);
            }
            finally { Driver.Free(dx); Driver.Free(dy); Driver.DestroyStream(stream); }
        }

        // Managed memory, written by the host in place; and x written on another stream, named as Ready.
        [Test]
        public void ManagedMemoryAndReadyStreams()
        {
            Driver.RequireGpu();
            const int n = 5 * T + 3;
            var x = Elements.Random(DType.Float32, n, 61);
            var y = Elements.Random(DType.Float64, n, 62);
            IntPtr mx = Driver.AllocManaged(4L * n), producer = Driver.NewStream(), stream = Driver.NewStream();
            IntPtr dy = IntPtr.Zero;
            try
            {
                Marshal.Copy((float[])x.Store, 0, mx, n);
                dy = Driver.Upload(y.Store, 8, producer);
                using (var host = Elements.HostHolding(x, y))
                {
                    double r = CudotArrays.Dot(new DotPointer(mx, DType.Float32),
                                                            new DotPointer(dy, DType.Float64, 1, producer), n, stream);
                    Bits.AreSame(host.Dot(), r, "managed x, device y ready on another stream");
                }
            }
            finally
            {
                Driver.Free(mx);
                if (dy != IntPtr.Zero) Driver.Free(dy);
                Driver.DestroyStream(producer); Driver.DestroyStream(stream);
            }
        }

        // Registered host memory of 2^20 elements or more is read by the GPU in place, also asynchronously;
        // mixed with device memory it is read by the device's GPU.
        [Test]
        public void RegisteredHostMemory()
        {
            Driver.RequireGpu();
            const int n = (1 << 20) + 3;
            var x = Elements.Random(DType.BFloat16, n, 71);
            var y = Elements.Random(DType.Float32, n, 72);
            IntPtr hx = Marshal.AllocHGlobal(2 * n), hy = Marshal.AllocHGlobal(4 * n);
            IntPtr stream = Driver.NewStream(), result = Driver.Alloc(8), dy = IntPtr.Zero;
            bool xRegistered = false, yRegistered = false;
            try
            {
                Marshal.Copy(ToShorts((ushort[])x.Store), 0, hx, n);
                Marshal.Copy((float[])y.Store, 0, hy, n);
                CudotArrays.RegisterHost(hx, 2L * n);
                xRegistered = true;
                CudotArrays.RegisterHost(hy, 4L * n);
                yRegistered = true;
                dy = Driver.Upload(y.Store, 4);
                var px = new DotPointer(hx, DType.BFloat16);
                using (var host = Elements.HostHolding(x, y))
                {
                    double expected = host.Dot();
                    Bits.AreSame(expected, CudotArrays.Dot(px, new DotPointer(hy, DType.Float32), n, stream), "both registered");
                    Driver.Fill(result, double.NaN);
                    CudotArrays.DotAsync(px, new DotPointer(hy, DType.Float32), n, stream, result);
                    Driver.Synchronize(stream);
                    Bits.AreSame(expected, Driver.ReadDouble(result), "async, both registered");
                    Bits.AreSame(expected, CudotArrays.Dot(px, new DotPointer(dy, DType.Float32), n, stream), "registered x, device y");
                }
            }
            finally
            {
                if (xRegistered) CudotArrays.UnregisterHost(hx);
                if (yRegistered) CudotArrays.UnregisterHost(hy);
                if (dy != IntPtr.Zero) Driver.Free(dy);
                Driver.Free(result); Driver.DestroyStream(stream);
                Marshal.FreeHGlobal(hx); Marshal.FreeHGlobal(hy);
            }
        }

        // The page-locked buffers of Pinned and Mapped contexts, as spans of 2^20 elements or more, are
        // read by the GPU; no driver API needed.
        [Test]
        public void PageLockedContextBuffersAsSpans([Values(Memory.Pinned, Memory.Mapped)] Memory memory)
        {
            const int n = (1 << 20) + 3;
            using (var gpu = Gpu.OpenOrSkip(n, DType.Float32, memory, DType.Float16))
            using (var host = new CudotContext(n, DType.Float32, Memory.Host, yDType: DType.Float16))
            {
                Data.FillRandomAny(host, 81);
                Data.CopyInputs(host, gpu);
                using (var x = gpu.LeaseX<float>())
                using (var y = gpu.LeaseY<ushort>())
                    Bits.AreSame(host.Dot(), CudotArrays.Dot(x.Span, DotSpan.Float16(y.Span)), memory + " buffers");
            }
        }

        static short[] ToShorts(ushort[] bits)
        {
            var s = new short[bits.Length];
            Buffer.BlockCopy(bits, 0, s, 0, 2 * bits.Length);
            return s;
        }

        // CUDA knows device allocations: an operand running past its own is refused, not read.
        [Test]
        public void DeviceOperandPastItsAllocationIsInvalidArgument()
        {
            Driver.RequireGpu();
            IntPtr d = Driver.Alloc(4 * 1000);
            try
            {
                var p = new DotPointer(d, DType.Float32);
                CudotArrays.Dot(p, p, 1000);
                var e = Assert.Throws<CudotException>(() => CudotArrays.Dot(p, p, 1001));
                Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
                Assert.IsNotEmpty(e.NativeMessage);
                e = Assert.Throws<CudotException>(() => CudotArrays.Dot(new DotPointer(d + 4 * 999, DType.Float32, -1), p, 1001));
                Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
            }
            finally { Driver.Free(d); }
        }
    }
}
