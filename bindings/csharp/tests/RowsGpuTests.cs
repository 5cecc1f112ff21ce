// RowsGpuTests.cs - many dots in one call on GPU memory (CudotArrays.DotRows, DotRowsAsync, DotSegments,
// DotSegmentsAsync with DotPointer): rows in device memory computed by their GPU, blocking into host
// results and queued into device results; every result bit for bit CudotArrays.Dot of the same row in
// host memory. Memory and streams come from the CUDA driver API (Driver, in ArraysGpuTests.cs). Without
// a driver, a GPU, or a cudot built with CUDA, every test here is ignored, unless CUDOT_TEST_GPU=1.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class RowsGpuTests
    {
        const int T = CudotLibrary.TileElements;

        static DType[][] Pairs
        {
            get
            {
                return new[]
                {
                    new[] { DType.Float32, DType.Float32 }, new[] { DType.Float64, DType.Float64 },
                    new[] { DType.Float32, DType.Float64 }, new[] { DType.BFloat16, DType.Int8 },
                };
            }
        }

        static IntPtr Results(int count)
        {
            IntPtr d = Driver.Alloc(8L * Math.Max(count, 1));
            for (int i = 0; i < count; i++) Driver.Fill(d + 8 * i, double.NaN);
            return d;
        }

        static void AreSameOnDevice(double[] expected, IntPtr device, string what)
        {
            for (int i = 0; i < expected.Length; i++)
                Bits.AreSame(expected[i], Driver.ReadDouble(device + 8 * i), what + ", row " + i);
        }

        // One query against a table in device memory (query row stride 0), and the table's rows against
        // themselves backwards, on an own stream: blocking and queued.
        [Test, Combinatorial]
        public void DeviceRowsMatchHost([ValueSource("Pairs")] DType[] pair, [Values(1, T + 3)] int n)
        {
            Driver.RequireGpu();
            const int count = 5;
            var query = Elements.Random(pair[0], n, 500 + n);
            var table = Elements.Random(pair[1], count * n, 600 + n);
            IntPtr dq = Driver.Upload(query.Store, query.ElementSize), dt = Driver.Upload(table.Store, table.ElementSize);
            IntPtr stream = Driver.NewStream(), results = Results(count);
            try
            {
                var expected = new double[count];
                for (int i = 0; i < count; i++) expected[i] = CudotArrays.Dot(query.Span(), table.Span().Strided(i * n, n, 1));
                var q = new DotPointer(dq, pair[0]);
                var t = new DotPointer(dt, pair[1]);
                var got = new double[count];
                CudotArrays.DotRows(q, t, n, 0, n, got, stream);
                for (int i = 0; i < count; i++) Bits.AreSame(expected[i], got[i], "blocking, row " + i);
                CudotArrays.DotRowsAsync(q, t, n, count, 0, n, stream, results);
                Driver.Synchronize(stream);
                AreSameOnDevice(expected, results, "async");
                // The table's rows backwards (row 0 the last in memory) against the query, on the legacy stream.
                var back = new DotPointer(dt + (count - 1) * n * table.ElementSize, pair[1]);
                CudotArrays.DotRows(q, back, n, 0, -n, got);
                for (int i = 0; i < count; i++) Bits.AreSame(expected[count - 1 - i], got[i], "rows backwards, row " + i);
            }
            finally { Driver.Free(dq); Driver.Free(dt); Driver.Free(results); Driver.DestroyStream(stream); }
        }

        [Test]
        public void DeviceSegmentsMatchHost()
        {
            Driver.RequireGpu();
            long[] offsets = { 0, 0, 7, T + 7, T + 7, 3 * T + 1 };
            int L = (int)offsets[offsets.Length - 1], count = offsets.Length - 1;
            var x = Elements.Random(DType.Float32, L, 701);
            var y = Elements.Random(DType.Float16, L, 702);
            IntPtr dx = Driver.Upload(x.Store, 4), dy = Driver.Upload(y.Store, 2);
            IntPtr stream = Driver.NewStream(), results = Results(count);
            try
            {
                double[] expected = CudotArrays.DotSegments(x.Span(), y.Span(), offsets);
                var got = new double[count];
                var px = new DotPointer(dx, DType.Float32);
                var py = new DotPointer(dy, DType.Float16);
                CudotArrays.DotSegments(px, py, offsets, got, stream);
                for (int i = 0; i < count; i++) Bits.AreSame(expected[i], got[i], "blocking, segment " + i);
                CudotArrays.DotSegmentsAsync(px, py, offsets, stream, results);
                Driver.Synchronize(stream);
                AreSameOnDevice(expected, results, "async");
            }
            finally { Driver.Free(dx); Driver.Free(dy); Driver.Free(results); Driver.DestroyStream(stream); }
        }

        // Exact rows (library 1.14) on the GPU: one query against a table in device memory, blocking and
        // queued, and segments; every result bit for bit DotExact of the same row in host memory.
        [Test, Combinatorial]
        public void DeviceExactRowsMatchHost([ValueSource("Pairs")] DType[] pair, [Values(1, T + 3)] int n)
        {
            Driver.RequireGpu();
            const int count = 5;
            var query = Elements.Random(pair[0], n, 800 + n);
            var table = Elements.Random(pair[1], count * n, 900 + n);
            IntPtr dq = Driver.Upload(query.Store, query.ElementSize), dt = Driver.Upload(table.Store, table.ElementSize);
            IntPtr stream = Driver.NewStream(), results = Results(count);
            try
            {
                var expected = new double[count];
                for (int i = 0; i < count; i++) expected[i] = CudotArrays.DotExact(query.Span(), table.Span().Strided(i * n, n, 1));
                var q = new DotPointer(dq, pair[0]);
                var t = new DotPointer(dt, pair[1]);
                var got = new double[count];
                CudotArrays.DotRows(q, t, n, 0, n, got, stream, exact: true);
                for (int i = 0; i < count; i++) Bits.AreSame(expected[i], got[i], "exact, blocking, row " + i);
                CudotArrays.DotRowsAsync(q, t, n, count, 0, n, stream, results, exact: true);
                Driver.Synchronize(stream);
                AreSameOnDevice(expected, results, "exact, async");
                // The table as one long vector cut into segments of n, one of them empty.
                long[] offsets = { 0, n, n, 2 * n, 3 * n };
                var seg = new double[offsets.Length - 1];
                CudotArrays.DotSegments(t, t, offsets, seg, stream, exact: true);
                double[] want = CudotArrays.DotSegments(table.Span(), table.Span(), offsets, exact: true);
                for (int i = 0; i < seg.Length; i++) Bits.AreSame(want[i], seg[i], "exact segments, " + i);
            }
            finally { Driver.Free(dq); Driver.Free(dt); Driver.Free(results); Driver.DestroyStream(stream); }
        }

        // CUDA knows device allocations: a row past its own is refused, not read.
        [Test]
        public void DeviceRowPastItsAllocationIsInvalidArgument()
        {
            Driver.RequireGpu();
            IntPtr d = Driver.Alloc(4 * 1000);
            try
            {
                var p = new DotPointer(d, DType.Float32);
                var got = new double[4];
                CudotArrays.DotRows(p, p, 250, 250, 250, got);
                var e = Assert.Throws<CudotException>(() => CudotArrays.DotRows(p, p, 250, 250, 251, new double[4]));
                Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
                e = Assert.Throws<CudotException>(() => CudotArrays.DotSegments(p, p, new long[] { 0, 500, 1001 }, new double[2]));
                Assert.AreEqual(Status.InvalidArgument, e.Status, e.Message);
            }
            finally { Driver.Free(d); }
        }
    }
}
