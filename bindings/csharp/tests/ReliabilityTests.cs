// ReliabilityTests.cs - the lifetime rules, on every element type: dispose (close) twice, use after
// dispose, views of the wrong element type, and contexts released by the finalizer alone. The binding
// must keep track of disposed contexts itself and never hand the library a freed pointer, whether or
// not the library would notice (cudot.h says it cannot promise to).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ReliabilityTests
    {
        // ---- close (Dispose) twice

        [Test]
        public void CloseTwiceIsHarmlessOnEveryPair()
        {
            foreach (DType xd in Data.AllTypes)
                foreach (DType yd in Data.AllTypes)
                {
                    var ctx = new CudotContext(8, xd, Memory.Host, yDType: yd);
                    using (ctx) ctx.Dispose();   // Dispose inside, then again at the end of the block
                    ctx.Dispose();
                    Assert.IsTrue(ctx.IsDisposed && ctx.Handle.IsClosed, xd + " x " + yd);
                }
        }

        // Many threads dispose one context at once: SafeHandle releases it exactly once and no call
        // throws. A double cudot_deinit would crash or corrupt the heap, which the work after it shows.
        [Test]
        public void CloseTwiceFromManyThreadsAtOnce()
        {
            for (int round = 0; round < 20; round++)
            {
                var ctx = new CudotContext(1 << 16, DType.Float64, Memory.Host, yDType: DType.Int8);
                var go = new ManualResetEventSlim();
                Exception failure = null;
                var threads = new Thread[8];
                for (int t = 0; t < threads.Length; t++)
                {
                    threads[t] = new Thread(() =>
                    {
                        go.Wait();
                        try { ctx.Dispose(); } catch (Exception e) { failure = e; }
                    });
                    threads[t].Start();
                }
                go.Set();
                foreach (var t in threads) t.Join();
                Assert.IsNull(failure, failure == null ? "" : failure.ToString());
                Assert.IsTrue(ctx.IsDisposed && ctx.Handle.IsClosed);
            }
            using (var ctx = new CudotContext(1000, DType.Float32, Memory.Host))
            {
                Data.FillInts(ctx);
                Assert.AreEqual((double)Data.ExactIntDot(1000), ctx.Dot(), "the library still works afterwards");
            }
        }

        // ---- use after close

        // Every member that needs the native context, on a context of each element type for x and y.
        static readonly Dictionary<string, Action<CudotContext>> Operations = new Dictionary<string, Action<CudotContext>>
        {
            { "Dot()", c => c.Dot() }, { "Dot(0)", c => c.Dot(0) }, { "Dot(3)", c => c.Dot(3) },
            { "Dot(beyond capacity)", c => c.Dot(1000) },
            { "Capacity", c => { long n = c.Capacity; } }, { "MemoryUsed", c => { Memory m = c.MemoryUsed; } },
            { "Device", c => { int d = c.Device; } },
            { "XAs<float>", c => c.XAs<float>() }, { "YAs<float>", c => c.YAs<float>() },
            { "XAs<double>", c => c.XAs<double>() }, { "YAs<double>", c => c.YAs<double>() },
            { "XAs<ushort>", c => c.XAs<ushort>() }, { "YAs<ushort>", c => c.YAs<ushort>() },
            { "XAs<sbyte>", c => c.XAs<sbyte>() }, { "YAs<sbyte>", c => c.YAs<sbyte>() },
            { "XAs<byte>", c => c.XAs<byte>() }, { "YAs<byte>", c => c.YAs<byte>() },
            { "XAs<bool>", c => c.XAs<bool>() }, { "YAs<bool>", c => c.YAs<bool>() },
            { "XAs<float>(0, 1)", c => c.XAs<float>(0, 1) }, { "YAs<byte>(0, 1)", c => c.YAs<byte>(0, 1) },
            { "XAsFloat32", c => c.XAsFloat32() }, { "YAsFloat32", c => c.YAsFloat32() },
            { "XAsFloat64", c => c.XAsFloat64() }, { "YAsFloat64", c => c.YAsFloat64() },
            { "XAsFloat16Bits", c => c.XAsFloat16Bits() }, { "YAsFloat16Bits", c => c.YAsFloat16Bits() },
            { "XAsBFloat16Bits", c => c.XAsBFloat16Bits() }, { "YAsBFloat16Bits", c => c.YAsBFloat16Bits() },
            { "XAsInt8", c => c.XAsInt8() }, { "YAsInt8", c => c.YAsInt8() },
            { "XAsUInt8", c => c.XAsUInt8() }, { "YAsUInt8", c => c.YAsUInt8() },
            { "XAsBool", c => c.XAsBool() }, { "YAsBool", c => c.YAsBool() },
            { "XAsFloat64(0, 1)", c => c.XAsFloat64(0, 1) }, { "YAsInt8(0, 1)", c => c.YAsInt8(0, 1) },
        };

        [Test]
        public void UseAfterCloseThrowsObjectDisposedOnEveryPair()
        {
            foreach (DType xd in Data.AllTypes)
                foreach (DType yd in Data.AllTypes)
                {
                    var ctx = new CudotContext(8, xd, Memory.Host, yDType: yd);
                    Data.FillInts(ctx);
                    Assert.AreEqual((double)Data.ExactIntDot(xd, yd, 8), ctx.Dot());
                    ctx.Dispose();
                    foreach (var op in Operations)
                        Assert.Throws<ObjectDisposedException>(() => op.Value(ctx), xd + " x " + yd + ": " + op.Key);
                    // No reference on the native pointer can be taken any more, so none can reach the library.
                    bool added = false;
                    Assert.Throws<ObjectDisposedException>(() => ctx.Handle.DangerousAddRef(ref added));
                    Assert.IsFalse(added);
                    // What needs no native call stays readable.
                    Assert.AreEqual(xd, ctx.XDType);
                    Assert.AreEqual(yd, ctx.YDType);
                    Assert.AreEqual(xd, ctx.DType);
                    Assert.IsTrue(ctx.IsDisposed);
                    ctx.Dispose();
                }
        }

        // ---- wrong element type

        // The length of one named view, chosen by its type: d and (for UInt8) asBool.
        static int NamedView(CudotContext c, bool isX, DType d, bool asBool)
        {
            switch (d)
            {
                case DType.Float32: return isX ? c.XAsFloat32().Length : c.YAsFloat32().Length;
                case DType.Float64: return isX ? c.XAsFloat64().Length : c.YAsFloat64().Length;
                case DType.Float16: return isX ? c.XAsFloat16Bits().Length : c.YAsFloat16Bits().Length;
                case DType.BFloat16: return isX ? c.XAsBFloat16Bits().Length : c.YAsBFloat16Bits().Length;
                case DType.Int8: return isX ? c.XAsInt8().Length : c.YAsInt8().Length;
                case DType.UInt8:
                    if (asBool) return isX ? c.XAsBool().Length : c.YAsBool().Length;
                    return isX ? c.XAsUInt8().Length : c.YAsUInt8().Length;
            }
            throw new ArgumentException("unknown dtype " + d);
        }

        // The length of a generic view XAs<T>/YAs<T>, T given by an index into GenericTypes.
        static readonly string[] GenericTypes = { "float", "double", "ushort", "sbyte", "byte", "bool", "int", "short", "long" };

        static int GenericView(CudotContext c, bool isX, string t)
        {
            switch (t)
            {
                case "float": return isX ? c.XAs<float>().Length : c.YAs<float>().Length;
                case "double": return isX ? c.XAs<double>().Length : c.YAs<double>().Length;
                case "ushort": return isX ? c.XAs<ushort>().Length : c.YAs<ushort>().Length;
                case "sbyte": return isX ? c.XAs<sbyte>().Length : c.YAs<sbyte>().Length;
                case "byte": return isX ? c.XAs<byte>().Length : c.YAs<byte>().Length;
                case "bool": return isX ? c.XAs<bool>().Length : c.YAs<bool>().Length;
                case "int": return isX ? c.XAs<int>().Length : c.YAs<int>().Length;
                case "short": return isX ? c.XAs<short>().Length : c.YAs<short>().Length;
                case "long": return isX ? c.XAs<long>().Length : c.YAs<long>().Length;
            }
            throw new ArgumentException(t);
        }

        static bool GenericFits(string t, DType d)
        {
            switch (d)
            {
                case DType.Float32: return t == "float";
                case DType.Float64: return t == "double";
                case DType.Float16: case DType.BFloat16: return t == "ushort";
                case DType.Int8: return t == "sbyte";
                case DType.UInt8: return t == "byte" || t == "bool";
            }
            return false;
        }

        // On all 36 pairs: every view of a type its side does not hold throws InvalidOperationException
        // (x's views judged by XDType alone, y's by YDType alone), the right ones cover the capacity,
        // and the context works normally afterwards.
        [Test]
        public void WrongElementTypeViewsThrowOnEveryPair()
        {
            const int n = 6;
            foreach (DType xd in Data.AllTypes)
                foreach (DType yd in Data.AllTypes)
                    using (var ctx = new CudotContext(n, xd, Memory.Host, yDType: yd))
                    {
                        string pair = xd + " x " + yd;
                        foreach (bool isX in new[] { true, false })
                        {
                            DType have = isX ? xd : yd;
                            string side = pair + (isX ? ", x as " : ", y as ");
                            foreach (DType want in Data.AllTypes)
                                foreach (bool asBool in want == DType.UInt8 ? new[] { false, true } : new[] { false })
                                {
                                    if (want == have)
                                        Assert.AreEqual(n, NamedView(ctx, isX, want, asBool), side + want);
                                    else
                                        Assert.Throws<InvalidOperationException>(() => NamedView(ctx, isX, want, asBool), side + want);
                                }
                            foreach (string t in GenericTypes)
                            {
                                if (GenericFits(t, have))
                                    Assert.AreEqual(n, GenericView(ctx, isX, t), side + t);
                                else
                                    Assert.Throws<InvalidOperationException>(() => GenericView(ctx, isX, t), side + t);
                            }
                        }
                        Data.FillInts(ctx);
                        Assert.AreEqual((double)Data.ExactIntDot(xd, yd, n), ctx.Dot(), pair + ": works after the refusals");
                    }
        }

        // ---- release by the finalizer alone

        // Each buffer is above glibc's largest dynamic mmap threshold (32 MiB on 64-bit, see mallopt(3)),
        // so malloc maps it on its own and free unmaps it at once: the resident set then shows exactly
        // which buffers are still allocated, whatever malloc kept from earlier tests. Only every 32nd page
        // is written: fast, and still 2.5 MiB resident per context.
        const int ForgetN = 5 << 20;              // double elements: 40 MiB per buffer
        const int ForgetStride = 32 * 4096 / 8;   // elements between two written ones

        // 200 contexts that are never disposed, dropped in rounds of 40, with GC.Collect and
        // WaitForPendingFinalizers between rounds: every handle must be finalized and reclaimed, and
        // the resident set must stay flat across rounds, where a leak would add 100 MiB a round.
        [Test]
        public void FinalizerReleases200UndisposedContexts()
        {
            const int rounds = 5, perRound = 40;
            const long roundBytes = (long)perRound * 2 * (ForgetN / ForgetStride) * 4096;
            Collect();
            long start = Resident.Bytes();
            var after = new List<long>();
            for (int r = 0; r < rounds; r++)
            {
                long pre = Resident.Bytes();
                var handles = new List<WeakReference>();
                long peak = MakeUndisposed(perRound, handles);
                Assert.Greater(peak - pre, roundBytes * 9 / 10, "pages not resident: the measurement is void");
                // Mono scans stacks conservatively: a stale stack slot or register can keep the last
                // context of a round reachable through one more collection (seen 1 run in 3 under the
                // bundled runner, never under nunit-console). So collect up to 10 times; a handle the
                // finalizers never release still fails.
                int alive = 0;
                for (int attempt = 0; attempt < 10; attempt++)
                {
                    Collect();
                    alive = 0;
                    foreach (var w in handles) if (w.IsAlive) alive++;
                    if (alive == 0) break;
                }
                Assert.AreEqual(0, alive, "round " + r + ": handles not finalized and reclaimed");
                after.Add(Resident.Bytes());
            }
            string mib = string.Join(" ", after.ConvertAll(a => (a >> 20).ToString()).ToArray());
            Console.WriteLine("FinalizerReleases200UndisposedContexts: resident MiB after each round: " + mib +
                              " (start " + (start >> 20) + ")");
            for (int r = 1; r < rounds; r++)
                Assert.Less(after[r] - after[0], roundBytes / 4, "resident set grew; MiB after each round: " + mib);
        }

        static void Collect()
        {
            Stack.Scrub();
            for (int i = 0; i < 3; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        }

        // A separate method, so that no local of the caller keeps a context reachable. The weak
        // references track resurrection: they stay alive until the handle's finalizer has run and the
        // object is reclaimed. Returns the resident set while all the contexts are still reachable.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long MakeUndisposed(int count, List<WeakReference> handles)
        {
            var contexts = new List<CudotContext>();
            for (int i = 0; i < count; i++)
            {
                var ctx = new CudotContext(ForgetN, DType.Float64, Memory.Host);
                var x = ctx.XAsFloat64();
                var y = ctx.YAsFloat64();
                for (int j = 0; j < ForgetN; j += ForgetStride) { x[j] = 1; y[j] = 2; }
                handles.Add(new WeakReference(ctx.Handle, true));
                contexts.Add(ctx);
            }
            long peak = Resident.Bytes();
            GC.KeepAlive(contexts);
            return peak;
        }
    }
}
