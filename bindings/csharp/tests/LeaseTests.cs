// LeaseTests.cs - BufferLease: views that keep the buffers alive while another thread disposes the
// context, or while the context (and even the lease) is unreachable and finalized.
//
// Buffers here are 36 MiB: glibc serves such sizes with mmap and unmaps them on free, so a write into a
// freed buffer faults at once instead of corrupting the heap quietly. With plain Spans (XAsFloat32)
// instead of leases, DisposeRacingFills and ViewOfUnreachableLeaseStaysValid both died with SIGSEGV.
using System;
using System.Buffers;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class LeaseTests
    {
        const int Big = 9 << 20; // floats: 36 MiB per buffer, above glibc's largest mmap threshold (32 MiB)

        // Dispose on one thread while another fills through leases, many times, the Dispose landing at
        // different moments of a fill. Each fill must finish into live memory and read back whole; the
        // next lease must be refused; the context must be freed once the last lease ends.
        [Test]
        public void DisposeRacingFills()
        {
            int deferred = 0; // rounds whose Dispose came while a lease was open: the case under test
            for (int round = 0; round < 24; round++)
            {
                var ctx = new CudotContext(Big, DType.Float32, Memory.Host);
                Exception unexpected = null;
                var started = new ManualResetEventSlim();
                var worker = new Thread(() =>
                {
                    try
                    {
                        for (float v = 1; ; v++)
                        {
                            using (var lease = ctx.LeaseX<float>())
                            {
                                started.Set();
                                Span<float> x = lease.Span;
                                x.Fill(v);
                                if (x[0] != v || x[x.Length / 2] != v || x[x.Length - 1] != v) throw new Exception("a write was lost");
                            }
                        }
                    }
                    catch (ObjectDisposedException) { }
                    catch (Exception e) { unexpected = e; }
                });
                worker.Start();
                started.Wait();
                Thread.Sleep(round % 4);
                ctx.Dispose();
                if (!ctx.Handle.IsClosed) deferred++;
                Assert.IsTrue(worker.Join(TimeSpan.FromSeconds(60)), "worker hung");
                Assert.IsNull(unexpected, unexpected == null ? "" : unexpected.ToString());
                Assert.IsTrue(ctx.Handle.IsClosed, "not freed after the last lease ended");
            }
            Assert.Greater(deferred, 0, "no Dispose landed during a fill: the race was never run");
        }

        // A lease held across Dispose: the buffers stay, Dot and new leases are refused at once, and
        // disposing the lease frees the context (resident set drops by the buffers' size).
        [Test]
        public void DisposeDefersFreeUntilTheLeaseEnds()
        {
            const long bytes = 2L * 4 * Big;
            var ctx = new CudotContext(Big, DType.Float32, Memory.Host);
            ctx.YAsFloat32().Fill(1); // touch y too, so that both buffers count
            var lease = ctx.LeaseX<float>();
            lease.Span.Fill(2);
            long held = Resident.Bytes();
            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.Dot());
            Assert.Throws<ObjectDisposedException>(() => ctx.LeaseY<float>());
            Assert.IsFalse(ctx.Handle.IsClosed, "freed under an open lease");
            lease.Span.Fill(3);
            Assert.AreEqual(3f, lease.Span[Big - 1]);
            Assert.Less(held - Resident.Bytes(), bytes / 10, "memory returned under an open lease");
            lease.Dispose();
            Assert.IsTrue(ctx.Handle.IsClosed);
            Assert.Greater(held - Resident.Bytes(), bytes * 9 / 10, "not freed when the lease ended");
        }

        // The context object is unreachable from the start (no GC.KeepAlive, no using on it); only the
        // lease is held. Collections and finalizers run while the view is written and read.
        [Test]
        public void LeaseOfUnreachableContextStaysValid()
        {
            var weak = new List<WeakReference>();
            using (var lease = LeaseOfNewContext(weak))
            {
                Span<float> x = lease.Span;
                for (int r = 1; r <= 3; r++)
                {
                    Collect();
                    x.Fill(r);
                    Assert.AreEqual((float)r, x[Big - 1]);
                }
                Assert.IsFalse(weak[0].IsAlive, "the context object was still reachable: the test proves nothing");
            }
        }

        // Stronger: the lease is unreachable too; only its Span is in use. The SafeHandle is finalized,
        // but the lease's reference keeps the buffers. The price, by design: a lease never disposed
        // leaks its context (72 MiB here) for the life of the process.
        [Test]
        public void ViewOfUnreachableLeaseStaysValid()
        {
            var weak = new List<WeakReference>();
            Span<float> x = ViewOfUnreachableLease(weak);
            for (int r = 1; r <= 3; r++)
            {
                Collect();
                x.Fill(r);
                Assert.AreEqual((float)r, x[0]);
                Assert.AreEqual((float)r, x[Big - 1]);
            }
            if (weak[1].IsAlive) Assert.Inconclusive("the SafeHandle stayed reachable (a stale stack slot?): its finalizer never ran");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static BufferLease<float> LeaseOfNewContext(List<WeakReference> weak)
        {
            var ctx = new CudotContext(Big, DType.Float32, Memory.Host);
            weak.Add(new WeakReference(ctx));
            weak.Add(new WeakReference(ctx.Handle));
            return ctx.LeaseX<float>();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Span<float> ViewOfUnreachableLease(List<WeakReference> weak) { return LeaseOfNewContext(weak).Span; }

        static void Collect()
        {
            Stack.Scrub();
            for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        }

        // Memory<T> and Pin, the MemoryManager side: a pin holds the buffers past the lease's Dispose
        // and the context's; after the lease's Dispose its Span, Memory and new pins are refused.
        [Test]
        public unsafe void PinOutlivesLeaseAndContext()
        {
            var ctx = new CudotContext(1000, DType.Float64, Memory.Host);
            var lease = ctx.LeaseY<double>(10, 100);
            Memory<double> memory = lease.Memory;
            memory.Span.Fill(0.5);
            MemoryHandle pin = memory.Slice(5).Pin();
            lease.Dispose();
            ctx.Dispose();
            Assert.IsFalse(ctx.Handle.IsClosed, "freed under a pin");
            Assert.AreEqual(0.5, ((double*)pin.Pointer)[0]);
            Assert.Throws<ObjectDisposedException>(() => { var s = lease.Span; });
            Assert.Throws<ObjectDisposedException>(() => { var s = memory.Span; });
            Assert.Throws<ObjectDisposedException>(() => memory.Pin());
            pin.Dispose();
            Assert.IsTrue(ctx.Handle.IsClosed, "not freed by the last unpin");
            pin.Dispose(); // a second Dispose of the same handle must not release twice
        }

        // MemoryHandle is a struct: disposing two copies of one pin must release that pin once, not
        // another pin's share too (each pin releases exactly once, whichever copy is disposed).
        [Test]
        public unsafe void DisposingCopiesOfOnePinReleasesItOnce()
        {
            var ctx = new CudotContext(1000, DType.Float32, Memory.Host);
            var lease = ctx.LeaseX<float>();
            lease.Span.Fill(4);
            MemoryHandle p1 = lease.Memory.Pin();
            MemoryHandle p2 = lease.Memory.Pin();
            MemoryHandle copy = p1;
            p1.Dispose();
            copy.Dispose(); // the same pin again
            lease.Dispose();
            ctx.Dispose();
            Assert.IsFalse(ctx.Handle.IsClosed, "freed while p2 still pins the buffers");
            Assert.AreEqual(4f, ((float*)p2.Pointer)[999]);
            p2.Dispose();
            Assert.IsTrue(ctx.Handle.IsClosed, "not freed by the last unpin");
        }

        // Leases see and feed the same buffers as Dot; windows, types and checks as the plain views.
        [Test]
        public void LeasesAreViewsOfTheBuffers()
        {
            using (var ctx = new CudotContext(1000, DType.BFloat16, Memory.Host, yDType: DType.UInt8))
            {
                using (var x = ctx.LeaseX<ushort>())
                using (var mask = ctx.LeaseY<bool>(500, 500))
                using (var low = ctx.LeaseY<byte>(0, 500))
                {
                    x.Span.Fill(BFloat16Bits.FromSingle(2));
                    low.Span.Fill(0);
                    mask.Span.Fill(true);
                    Assert.AreEqual(500, mask.Start);
                    Assert.AreEqual(500, mask.Length);
                }
                Assert.AreEqual(1000.0, ctx.Dot());
                Assert.Throws<InvalidOperationException>(() => ctx.LeaseX<float>());
                Assert.Throws<ArgumentOutOfRangeException>(() => ctx.LeaseY<byte>(900, 101));
                using (var empty = ctx.LeaseX<ushort>(1000, 0)) Assert.AreEqual(0, empty.Span.Length);
            }
            using (var none = new CudotContext(0, DType.Float32, Memory.Host))
            using (var lease = none.LeaseX<float>())
                Assert.AreEqual(0, lease.Span.Length);
        }

        // Disposing a lease twice, or from several threads, releases its reference once: the context
        // stays usable, and is freed by its own Dispose.
        [Test]
        public void LeaseDisposeIsIdempotent()
        {
            var ctx = new CudotContext(100, DType.Float32, Memory.Host);
            var lease = ctx.LeaseX<float>();
            var threads = new Thread[8];
            for (int t = 0; t < threads.Length; t++) { threads[t] = new Thread(() => lease.Dispose()); threads[t].Start(); }
            foreach (var t in threads) t.Join();
            lease.Dispose();
            Assert.IsTrue(lease.IsDisposed);
            Assert.AreEqual(0.0, ctx.Dot(0));
            ctx.Dispose();
            Assert.IsTrue(ctx.Handle.IsClosed);
        }
    }
}
