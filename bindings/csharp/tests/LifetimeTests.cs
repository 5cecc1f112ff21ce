// LifetimeTests.cs - Dispose, use after Dispose, wrong element type, finalizers, threads.
using System;
using System.Collections.Generic;
using System.Threading;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class LifetimeTests
    {
        [Test]
        public void DisposeTwiceIsHarmless()
        {
            var ctx = new CudotContext(10, DType.Float32, Memory.Host);
            Assert.IsFalse(ctx.IsDisposed);
            ctx.Dispose();
            Assert.IsTrue(ctx.IsDisposed);
            ctx.Dispose();
            Assert.IsTrue(ctx.IsDisposed);
        }

        [Test]
        public void UseAfterDisposeThrows()
        {
            var ctx = new CudotContext(10, DType.Float32, Memory.Host);
            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.Dot());
            Assert.Throws<ObjectDisposedException>(() => ctx.Dot(5));
            Assert.Throws<ObjectDisposedException>(() => { long c = ctx.Capacity; });
            Assert.Throws<ObjectDisposedException>(() => { Memory m = ctx.MemoryUsed; });
            Assert.Throws<ObjectDisposedException>(() => { int d = ctx.Device; });
            Assert.Throws<ObjectDisposedException>(() => ctx.XAsFloat32());
            Assert.Throws<ObjectDisposedException>(() => ctx.YAsFloat32(0, 1));
        }

        [Test]
        public void WrongElementTypeThrows()
        {
            using (var f32 = new CudotContext(10, DType.Float32, Memory.Host))
            {
                Assert.Throws<InvalidOperationException>(() => f32.XAsFloat64());
                Assert.Throws<InvalidOperationException>(() => f32.YAsFloat64());
                Assert.Throws<InvalidOperationException>(() => f32.XAsFloat64(0, 1));
                Assert.AreEqual(10, f32.XAsFloat32().Length);
            }
            using (var f64 = new CudotContext(10, DType.Float64, Memory.Host))
            {
                Assert.Throws<InvalidOperationException>(() => f64.XAsFloat32());
                Assert.Throws<InvalidOperationException>(() => f64.YAsFloat32());
                Assert.AreEqual(10, f64.YAsFloat64().Length);
            }
        }

        [Test]
        public void HostContextReportsNoDevice()
        {
            using (var ctx = new CudotContext(10, DType.Float64, Memory.Host))
            {
                Assert.AreEqual(Memory.Host, ctx.MemoryUsed);
                Assert.AreEqual(CudotContext.DeviceNone, ctx.Device);
                Assert.AreEqual(DType.Float64, ctx.DType);
            }
        }

        // Contexts that are never disposed are freed by SafeHandle's finalizer; disposed ones are
        // not freed a second time. Either mistake would crash or corrupt the heap here.
        [Test]
        public void FinalizerReleasesForgottenContexts()
        {
            var handles = new List<WeakReference>();
            MakeGarbage(handles);
            Stack.Scrub();
            for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
            foreach (var w in handles) Assert.IsFalse(w.IsAlive, "handle still reachable: its finalizer never ran");
            using (var ctx = new CudotContext(1000, DType.Float32, Memory.Host))
            {
                Data.FillInts(ctx);
                Assert.AreEqual((double)Data.ExactIntDot(1000), ctx.Dot(), "the library still works afterwards");
            }
        }

        // A separate method, so no local of the caller keeps the contexts alive.
        static void MakeGarbage(List<WeakReference> handles)
        {
            for (int i = 0; i < 40; i++)
            {
                var ctx = new CudotContext(100000, i % 2 == 0 ? DType.Float32 : DType.Float64, Memory.Host);
                ctx.Dot();
                if (i % 4 == 0) ctx.Dispose();
                handles.Add(new WeakReference(ctx.Handle));
            }
        }

        // The finalizer really calls cudot_deinit: buffers of this size are mmap()ed by malloc and
        // returned to the system when freed, so the resident set shrinks by about their size.
        [Test]
        public void ReleaseReturnsNativeMemory([Values(true, false)] bool dispose)
        {
            const int n = 12 << 20;               // 48 MiB per float buffer: well above malloc's mmap threshold
            const long bytes = 4L * 2 * 4 * n;    // 4 contexts, x and y each
            long before = Resident.Bytes();
            long peak = Allocate(n, dispose);
            Stack.Scrub();
            for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
            long after = Resident.Bytes();
            Assert.Greater(peak - before, bytes * 9 / 10, "the buffers were not resident: the measurement is void");
            Assert.Greater(peak - after, bytes * 9 / 10, "native buffers were not freed");
        }

        // What makes Dispose safe during a call on another thread: while a reference is held (each
        // native call holds one), Dispose closes the context for new calls but frees nothing; the
        // last release frees it. Checked on the resident set, as above.
        [Test]
        public void DisposeDefersFreeWhileAReferenceIsHeld()
        {
            const int n = 12 << 20;
            const long bytes = 2L * 4 * n;
            var ctx = new CudotContext(n, DType.Float32, Memory.Host);
            ctx.XAsFloat32().Fill(1);
            ctx.YAsFloat32().Fill(2);
            bool added = false;
            ctx.Handle.DangerousAddRef(ref added);
            long held = Resident.Bytes();
            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.Dot(), "closed for new calls at once");
            Assert.Less(held - Resident.Bytes(), bytes / 10, "freed while a reference was still held");
            ctx.Handle.DangerousRelease();
            Assert.Greater(held - Resident.Bytes(), bytes * 9 / 10, "not freed by the last release");
        }

        static long Allocate(int n, bool dispose)
        {
            var contexts = new List<CudotContext>();
            for (int i = 0; i < 4; i++)
            {
                var ctx = new CudotContext(n, DType.Float32, Memory.Host);
                ctx.XAsFloat32().Fill(1);         // touch every page
                ctx.YAsFloat32().Fill(2);
                contexts.Add(ctx);
            }
            long peak = Resident.Bytes();
            if (dispose) foreach (var c in contexts) c.Dispose();
            return peak;
        }

        // Dispose while another thread is inside cudot_dot: the SafeHandle reference count defers the
        // free until that call returns, and the next call sees ObjectDisposedException.
        [Test]
        public void DisposeDuringDotOnAnotherThread()
        {
            for (int round = 0; round < 5; round++)
            {
                var ctx = new CudotContext((1 << 22) + 5, DType.Float64, Memory.Host);
                Data.FillInts(ctx);
                double expected = Data.ExactIntDot(ctx.Capacity);
                Exception unexpected = null;
                var started = new ManualResetEventSlim();
                var worker = new Thread(() =>
                {
                    try
                    {
                        while (true)
                        {
                            started.Set();
                            double r = ctx.Dot();
                            if (r != expected) throw new Exception("wrong result " + r);
                        }
                    }
                    catch (ObjectDisposedException) { }
                    catch (Exception e) { unexpected = e; }
                });
                worker.Start();
                started.Wait();
                Thread.Sleep(round);
                ctx.Dispose();
                Assert.IsTrue(worker.Join(TimeSpan.FromSeconds(60)), "worker hung");
                Assert.IsNull(unexpected, unexpected == null ? "" : unexpected.ToString());
            }
        }

        // One context from several threads: the library serializes the calls; results stay exact.
        [Test]
        public void SharedContextAcrossThreads()
        {
            using (var ctx = new CudotContext(100003, DType.Float32, Memory.Host))
            {
                Data.FillRandom(ctx, 11);
                long expected = BitConverter.DoubleToInt64Bits(ctx.Dot());
                var failures = 0;
                var threads = new Thread[4];
                for (int t = 0; t < threads.Length; t++)
                {
                    threads[t] = new Thread(() =>
                    {
                        for (int i = 0; i < 50; i++)
                            if (BitConverter.DoubleToInt64Bits(ctx.Dot()) != expected) Interlocked.Increment(ref failures);
                    });
                    threads[t].Start();
                }
                foreach (var t in threads) t.Join();
                Assert.AreEqual(0, failures);
            }
        }
    }
}
