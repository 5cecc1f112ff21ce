// WriteAfterDispose.cs - writes through every kind of view of a context after that context is
// disposed, then checks that a context created meanwhile (which malloc or mmap is free to place at
// the old buffers' addresses) still holds its own values. test.sh runs it in a child process per size
// (1000 elements: buffers on malloc's heap; 2^22: mmap()ed, unmapped on free), because a write into
// freed memory need not throw: it may corrupt the heap (mono aborts later), fault (SIGSEGV), or land in
// the newer context in silence. So the verdict is the exit status and the last line, and a crash or a
// hang is a failure too.
//
// What each kind must do:
//  - checked views (XAs<T>, YAs<T>, XAsFloat32, ..., and their windows): every write refused with
//    ObjectDisposedException;
//  - a lease (and its Memory<T>) disposed before the context: refused the same way;
//  - a lease, or a pin of one, still open when the context is disposed: the write is accepted, into
//    the old buffers, which the lease keeps alive; the newer context is untouched.
// Kept out of tests/*.cs (the NUnit build): it is a program, run on its own.
using System;
using System.Buffers;
using System.Collections.Generic;
using Cudot;

static class WriteAfterDispose
{
    static int n, kinds;
    static double expected = -1; // the dot of every intact newer context
    static readonly List<string> failures = new List<string>();

    static int Main(string[] args)
    {
        n = int.Parse(args[0]);
        foreach (DType d in new[] { DType.Float32, DType.Float64, DType.Float16, DType.BFloat16, DType.Int8, DType.UInt8 })
        {
            switch (d)
            {
                case DType.Float32:
                    CheckedViews<float>(d, "float", -1f, c => c.XAsFloat32(), c => c.YAsFloat32(), (c, s, l) => c.XAsFloat32(s, l), (c, s, l) => c.YAsFloat32(s, l));
                    Leases<float>(d, "float", -1f);
                    break;
                case DType.Float64:
                    CheckedViews<double>(d, "double", -1.0, c => c.XAsFloat64(), c => c.YAsFloat64(), (c, s, l) => c.XAsFloat64(s, l), (c, s, l) => c.YAsFloat64(s, l));
                    Leases<double>(d, "double", -1.0);
                    break;
                case DType.Float16:
                    CheckedViews<ushort>(d, "ushort", 0xBC00, c => c.XAsFloat16Bits(), c => c.YAsFloat16Bits(), (c, s, l) => c.XAsFloat16Bits(s, l), (c, s, l) => c.YAsFloat16Bits(s, l));
                    Leases<ushort>(d, "ushort", 0xBC00);
                    break;
                case DType.BFloat16:
                    CheckedViews<ushort>(d, "ushort", 0xBF80, c => c.XAsBFloat16Bits(), c => c.YAsBFloat16Bits(), (c, s, l) => c.XAsBFloat16Bits(s, l), (c, s, l) => c.YAsBFloat16Bits(s, l));
                    Leases<ushort>(d, "ushort", 0xBF80);
                    break;
                case DType.Int8:
                    CheckedViews<sbyte>(d, "sbyte", -1, c => c.XAsInt8(), c => c.YAsInt8(), (c, s, l) => c.XAsInt8(s, l), (c, s, l) => c.YAsInt8(s, l));
                    Leases<sbyte>(d, "sbyte", -1);
                    break;
                default:
                    CheckedViews<byte>(d, "byte", 0xEE, c => c.XAsUInt8(), c => c.YAsUInt8(), (c, s, l) => c.XAsUInt8(s, l), (c, s, l) => c.YAsUInt8(s, l));
                    CheckedViews<bool>(d, "bool", true, c => c.XAsBool(), c => c.YAsBool(), (c, s, l) => c.XAsBool(s, l), (c, s, l) => c.YAsBool(s, l));
                    Leases<byte>(d, "byte", 0xEE);
                    Leases<bool>(d, "bool", true);
                    break;
            }
        }
        foreach (string f in failures) Console.WriteLine("FAIL " + f);
        Console.WriteLine("write after Dispose, n = " + n + ": " + kinds + " view kinds, " + failures.Count + " failed");
        return failures.Count == 0 ? 0 : 1;
    }

    // ---- checked views: the generic ones (XAs<T>, YAs<T>) and the named ones, whole and as windows.

    static void CheckedViews<T>(DType d, string t, T stale,
                                Func<CudotContext, BufferView<T>> namedX, Func<CudotContext, BufferView<T>> namedY,
                                Func<CudotContext, long, int, BufferView<T>> namedXWindow,
                                Func<CudotContext, long, int, BufferView<T>> namedYWindow) where T : struct
    {
        int w = n - 2; // a window that leaves out the first and the last element
        Checked(d, "XAs<" + t + ">()", stale, c => c.XAs<T>());
        Checked(d, "YAs<" + t + ">()", stale, c => c.YAs<T>());
        Checked(d, "XAs<" + t + ">(1, n - 2)", stale, c => c.XAs<T>(1, w));
        Checked(d, "YAs<" + t + ">(1, n - 2)", stale, c => c.YAs<T>(1, w));
        Checked(d, d + " named x view", stale, namedX);
        Checked(d, d + " named y view", stale, namedY);
        Checked(d, d + " named x window", stale, c => namedXWindow(c, 1, w));
        Checked(d, d + " named y window", stale, c => namedYWindow(c, 1, w));
    }

    static void Checked<T>(DType d, string kind, T stale, Func<CudotContext, BufferView<T>> take) where T : struct
    {
        kinds++;
        var old = new CudotContext(n, d, Memory.Host);
        BufferView<T> view = take(old);
        old.Dispose();
        using (var now = Reference(d))
        {
            Refused(kind + ": this[0] = ", () => view[0] = stale);
            Refused(kind + ": this[Length - 1] = ", () => view[view.Length - 1] = stale);
            Refused(kind + ": Fill", () => view.Fill(stale));
            Refused(kind + ": Clear", () => view.Clear());
            Refused(kind + ": CopyFrom", () => view.CopyFrom(new T[1]));
            Intact(now, d, kind);
        }
    }

    // ---- leases, their Memory<T> and their pins.

    static unsafe void Leases<T>(DType d, string t, T stale) where T : struct
    {
        // Disposed before the context: every later use refused.
        kinds++;
        string kind = "LeaseX<" + t + ">() disposed, then the context";
        var old = new CudotContext(n, d, Memory.Host);
        BufferLease<T> lease = old.LeaseX<T>();
        Memory<T> memory = lease.Memory;
        lease.Dispose();
        old.Dispose();
        using (var now = Reference(d))
        {
            Refused(kind + ": Span", () => lease.Span.Fill(stale));
            Refused(kind + ": GetSpan()", () => lease.GetSpan().Fill(stale));
            Refused(kind + ": Memory.Span", () => memory.Span.Fill(stale));
            Refused(kind + ": Pin()", () => lease.Pin().Dispose());
            Intact(now, d, kind);
        }

        // Open across the context's Dispose: the write goes to the old buffers, which it keeps.
        kinds++;
        kind = "LeaseY<" + t + ">(1, n - 2) open across the context's Dispose";
        old = new CudotContext(n, d, Memory.Host);
        lease = old.LeaseY<T>(1, n - 2);
        old.Dispose();
        using (var now = Reference(d))
        {
            Accepted(kind, () => { lease.Span.Fill(stale); lease.Memory.Span.Slice(0, 1).Fill(stale); });
            lease.Dispose();
            Intact(now, d, kind);
        }

        // A pin outlives both its lease and the context: writes through it stay in the old buffers.
        kinds++;
        kind = "a pin of LeaseX<" + t + ">() held past the lease and the context";
        old = new CudotContext(n, d, Memory.Host);
        lease = old.LeaseX<T>();
        MemoryHandle pin = lease.Memory.Pin();
        lease.Dispose();
        old.Dispose();
        using (var now = Reference(d))
        {
            Accepted(kind, () => new Span<T>(pin.Pointer, n).Fill(stale));
            pin.Dispose();
            Intact(now, d, kind);
        }
    }

    // ---- the newer context and its checks

    // A context of n elements of d on both sides, element i holding Value(i) on x and Value(i + 1) on y.
    static CudotContext Reference(DType d)
    {
        var ctx = new CudotContext(n, d, Memory.Host);
        Fill(ctx, d, true);
        Fill(ctx, d, false);
        return ctx;
    }

    static int Value(int i) { return i % 5 + 1; }

    static void Fill(CudotContext ctx, DType d, bool isX)
    {
        int o = isX ? 0 : 1;
        switch (d)
        {
            case DType.Float32: using (var l = isX ? ctx.LeaseX<float>() : ctx.LeaseY<float>()) { Span<float> s = l.Span; for (int i = 0; i < n; i++) s[i] = Value(i + o); } break;
            case DType.Float64: using (var l = isX ? ctx.LeaseX<double>() : ctx.LeaseY<double>()) { Span<double> s = l.Span; for (int i = 0; i < n; i++) s[i] = Value(i + o); } break;
            case DType.Int8: using (var l = isX ? ctx.LeaseX<sbyte>() : ctx.LeaseY<sbyte>()) { Span<sbyte> s = l.Span; for (int i = 0; i < n; i++) s[i] = (sbyte)Value(i + o); } break;
            case DType.UInt8: using (var l = isX ? ctx.LeaseX<byte>() : ctx.LeaseY<byte>()) { Span<byte> s = l.Span; for (int i = 0; i < n; i++) s[i] = (byte)Value(i + o); } break;
            default:
                using (var l = isX ? ctx.LeaseX<ushort>() : ctx.LeaseY<ushort>())
                {
                    Span<ushort> s = l.Span;
                    for (int i = 0; i < n; i++) s[i] = Bits(d, Value(i + o));
                }
                break;
        }
    }

    static readonly ushort[] half = { 0, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500 };    // 0 to 5 as IEEE binary16
    static readonly ushort[] bfloat = { 0, 0x3F80, 0x4000, 0x4040, 0x4080, 0x40A0 };  // 0 to 5 as bfloat16

    static ushort Bits(DType d, int v) { return d == DType.Float16 ? half[v] : bfloat[v]; }

    // Every element of both buffers as Reference wrote it, and the dot the library computes from them.
    static void Intact(CudotContext ctx, DType d, string kind)
    {
        for (int side = 0; side < 2; side++)
        {
            bool isX = side == 0;
            int o = isX ? 0 : 1, bad = -1;
            switch (d)
            {
                case DType.Float32: using (var l = isX ? ctx.LeaseX<float>() : ctx.LeaseY<float>()) { Span<float> s = l.Span; for (int i = 0; i < n && bad < 0; i++) if (s[i] != Value(i + o)) bad = i; } break;
                case DType.Float64: using (var l = isX ? ctx.LeaseX<double>() : ctx.LeaseY<double>()) { Span<double> s = l.Span; for (int i = 0; i < n && bad < 0; i++) if (s[i] != Value(i + o)) bad = i; } break;
                case DType.Int8: using (var l = isX ? ctx.LeaseX<sbyte>() : ctx.LeaseY<sbyte>()) { Span<sbyte> s = l.Span; for (int i = 0; i < n && bad < 0; i++) if (s[i] != Value(i + o)) bad = i; } break;
                case DType.UInt8: using (var l = isX ? ctx.LeaseX<byte>() : ctx.LeaseY<byte>()) { Span<byte> s = l.Span; for (int i = 0; i < n && bad < 0; i++) if (s[i] != Value(i + o)) bad = i; } break;
                default: using (var l = isX ? ctx.LeaseX<ushort>() : ctx.LeaseY<ushort>()) { Span<ushort> s = l.Span; for (int i = 0; i < n && bad < 0; i++) if (s[i] != Bits(d, Value(i + o))) bad = i; } break;
            }
            if (bad >= 0) failures.Add(kind + ": the newer context's " + (isX ? "x" : "y") + "[" + bad + "] was overwritten");
        }
        if (expected < 0)
        {
            expected = 0;
            for (int i = 0; i < n; i++) expected += Value(i) * Value(i + 1);
        }
        double got = ctx.Dot();
        if (got != expected) failures.Add(kind + ": the newer context's dot is " + got + ", not " + expected);
    }

    static void Refused(string what, Action write)
    {
        try
        {
            write();
            failures.Add(what + ": accepted after Dispose");
        }
        catch (ObjectDisposedException) { }
        catch (Exception e) { failures.Add(what + ": " + e.GetType().Name + " instead of ObjectDisposedException"); }
    }

    static void Accepted(string what, Action write)
    {
        try { write(); }
        catch (Exception e) { failures.Add(what + ": " + e.GetType().Name + ": " + e.Message); }
    }
}
