// TestSupport.cs - data generators and independent reference dot products for the tests.
using System;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    static class Data
    {
        // Every element type, in cudot.h's order.
        public static readonly DType[] AllTypes =
            { DType.Float32, DType.Float64, DType.Float16, DType.BFloat16, DType.Int8, DType.UInt8 };

        public static bool IsInt(DType d) { return d == DType.Int8 || d == DType.UInt8; }

        // Small integers: every product and every partial sum is exact in double, so any summation
        // order gives the same, exactly known result.
        public static int XInt(long i) { return (int)(i % 13) - 6; }
        public static int YInt(long i) { return (int)(i * 7 % 11) - 5; }

        // The same sequences shifted to be non-negative for UInt8 (0..12 and 0..10): exact in every type.
        public static int IntFor(DType d, bool isX, long i)
        {
            int v = isX ? XInt(i) : YInt(i);
            return d == DType.UInt8 ? v + (isX ? 6 : 5) : v;
        }

        public static long ExactIntDot(long n) { return ExactIntDot(DType.Float32, DType.Float32, n); }

        public static long ExactIntDot(DType xd, DType yd, long n)
        {
            long s = 0;
            for (long i = 0; i < n; i++) s += (long)IntFor(xd, true, i) * IntFor(yd, false, i);
            return s;
        }

        // Writes IntFor(...) into both buffers through the generic views XAs<T>/YAs<T>: an array filled
        // here, copied in with one CopyFrom (each indexer access of a checked view takes a reference on the
        // context; one call for the whole buffer takes one).
        public static void FillInts(CudotContext ctx)
        {
            FillIntsSide(ctx, true);
            FillIntsSide(ctx, false);
        }

        static void FillIntsSide(CudotContext ctx, bool isX)
        {
            DType d = isX ? ctx.XDType : ctx.YDType;
            int n = (int)ctx.Capacity;
            switch (d)
            {
                case DType.Float32: { var a = new float[n]; for (int i = 0; i < n; i++) a[i] = IntFor(d, isX, i); (isX ? ctx.XAs<float>() : ctx.YAs<float>()).CopyFrom(a); break; }
                case DType.Float64: { var a = new double[n]; for (int i = 0; i < n; i++) a[i] = IntFor(d, isX, i); (isX ? ctx.XAs<double>() : ctx.YAs<double>()).CopyFrom(a); break; }
                case DType.Int8: { var a = new sbyte[n]; for (int i = 0; i < n; i++) a[i] = (sbyte)IntFor(d, isX, i); (isX ? ctx.XAs<sbyte>() : ctx.YAs<sbyte>()).CopyFrom(a); break; }
                case DType.UInt8: { var a = new byte[n]; for (int i = 0; i < n; i++) a[i] = (byte)IntFor(d, isX, i); (isX ? ctx.XAs<byte>() : ctx.YAs<byte>()).CopyFrom(a); break; }
                default:
                {
                    // 16-bit types: the patterns come from this file's own table, not the binding's helpers.
                    var a = new ushort[n];
                    for (int i = 0; i < n; i++) a[i] = Bits16.Encode(d, IntFor(d, isX, i));
                    (isX ? ctx.XAs<ushort>() : ctx.YAs<ushort>()).CopyFrom(a);
                    break;
                }
            }
        }

        // Random values whose exponents span about 2^-20..2^20, with every other element the
        // negated product of its neighbour, so the true sum cancels heavily: a plain double sum of
        // the products loses most of its digits here, only a compensated one stays close.
        // Float32 and Float64 contexts only.
        public static void FillRandom(CudotContext ctx, int seed)
        {
            var rng = new Random(seed);
            int n = (int)ctx.Capacity;
            for (int i = 0; i < n; i++)
            {
                double a = Value(rng), b = Value(rng);
                if (i % 2 == 1) { a = -Get(ctx, true, i - 1) * (1 + 1e-7 * rng.NextDouble()); b = Get(ctx, false, i - 1); }
                Set(ctx, true, i, a);
                Set(ctx, false, i, b);
            }
        }

        static double Value(Random rng)
        {
            return (rng.NextDouble() * 2 - 1) * Math.Pow(2, rng.Next(-20, 21));
        }

        // Random data of any pair: floats as above (without the cancellation), 16-bit types as random
        // finite bit patterns (subnormals included), integers over their whole range.
        public static void FillRandomAny(CudotContext ctx, int seed)
        {
            var rng = new Random(seed);
            for (int side = 0; side < 2; side++)
            {
                bool isX = side == 0;
                DType d = isX ? ctx.XDType : ctx.YDType;
                int n = (int)ctx.Capacity;
                switch (d)
                {
                    case DType.Float32: { var a = new float[n]; for (int i = 0; i < n; i++) a[i] = (float)Value(rng); (isX ? ctx.XAsFloat32() : ctx.YAsFloat32()).CopyFrom(a); break; }
                    case DType.Float64: { var a = new double[n]; for (int i = 0; i < n; i++) a[i] = Value(rng); (isX ? ctx.XAsFloat64() : ctx.YAsFloat64()).CopyFrom(a); break; }
                    case DType.Int8: { var a = new sbyte[n]; for (int i = 0; i < n; i++) a[i] = (sbyte)rng.Next(-128, 128); (isX ? ctx.XAsInt8() : ctx.YAsInt8()).CopyFrom(a); break; }
                    case DType.UInt8: { var a = new byte[n]; for (int i = 0; i < n; i++) a[i] = (byte)rng.Next(0, 256); (isX ? ctx.XAsUInt8() : ctx.YAsUInt8()).CopyFrom(a); break; }
                    default:
                    {
                        var a = new ushort[n];
                        for (int i = 0; i < n; i++)
                        {
                            ushort b;
                            do b = (ushort)rng.Next(0, 65536); while (double.IsNaN(Bits16.Decode(d, b)) || double.IsInfinity(Bits16.Decode(d, b)));
                            a[i] = b;
                        }
                        (isX ? (d == DType.Float16 ? ctx.XAsFloat16Bits() : ctx.XAsBFloat16Bits())
                             : (d == DType.Float16 ? ctx.YAsFloat16Bits() : ctx.YAsBFloat16Bits())).CopyFrom(a);
                        break;
                    }
                }
            }
        }

        // Element access by index: the value as stored (already rounded for Float32), exactly as a double.
        public static double Get(CudotContext ctx, bool isX, int i)
        {
            switch (isX ? ctx.XDType : ctx.YDType)
            {
                case DType.Float32: return (isX ? ctx.XAsFloat32() : ctx.YAsFloat32())[i];
                case DType.Float64: return (isX ? ctx.XAsFloat64() : ctx.YAsFloat64())[i];
                case DType.Int8: return (isX ? ctx.XAsInt8() : ctx.YAsInt8())[i];
                case DType.UInt8: return (isX ? ctx.XAsUInt8() : ctx.YAsUInt8())[i];
                case DType.Float16: return Bits16.Decode(DType.Float16, (isX ? ctx.XAsFloat16Bits() : ctx.YAsFloat16Bits())[i]);
                default: return Bits16.Decode(DType.BFloat16, (isX ? ctx.XAsBFloat16Bits() : ctx.YAsBFloat16Bits())[i]);
            }
        }

        // Float32 rounds; the 16-bit and integer types need v to be exactly representable.
        public static void Set(CudotContext ctx, bool isX, int i, double v)
        {
            DType d = isX ? ctx.XDType : ctx.YDType;
            switch (d)
            {
                case DType.Float32: (isX ? ctx.XAsFloat32() : ctx.YAsFloat32())[i] = (float)v; break;
                case DType.Float64: (isX ? ctx.XAsFloat64() : ctx.YAsFloat64())[i] = v; break;
                case DType.Int8:
                    if (v != Math.Floor(v) || v < -128 || v > 127) throw new ArgumentException(v + " is not an int8");
                    (isX ? ctx.XAsInt8() : ctx.YAsInt8())[i] = (sbyte)v; break;
                case DType.UInt8:
                    if (v != Math.Floor(v) || v < 0 || v > 255) throw new ArgumentException(v + " is not a uint8");
                    (isX ? ctx.XAsUInt8() : ctx.YAsUInt8())[i] = (byte)v; break;
                default: (isX ? ctx.XAs<ushort>() : ctx.YAs<ushort>())[i] = Bits16.Encode(d, v); break;
            }
        }

        public static void CopyInputs(CudotContext from, CudotContext to)
        {
            Assert.AreEqual(from.XDType, to.XDType);
            Assert.AreEqual(from.YDType, to.YDType);
            CopySide(from, to, true);
            CopySide(from, to, false);
        }

        static void CopySide(CudotContext from, CudotContext to, bool isX)
        {
            switch (isX ? from.XDType : from.YDType)
            {
                case DType.Float32: (isX ? to.XAs<float>() : to.YAs<float>()).CopyFrom((isX ? from.XAs<float>() : from.YAs<float>()).ToArray()); break;
                case DType.Float64: (isX ? to.XAs<double>() : to.YAs<double>()).CopyFrom((isX ? from.XAs<double>() : from.YAs<double>()).ToArray()); break;
                case DType.Int8: (isX ? to.XAs<sbyte>() : to.YAs<sbyte>()).CopyFrom((isX ? from.XAs<sbyte>() : from.YAs<sbyte>()).ToArray()); break;
                case DType.UInt8: (isX ? to.XAs<byte>() : to.YAs<byte>()).CopyFrom((isX ? from.XAs<byte>() : from.YAs<byte>()).ToArray()); break;
                default: (isX ? to.XAs<ushort>() : to.YAs<ushort>()).CopyFrom((isX ? from.XAs<ushort>() : from.YAs<ushort>()).ToArray()); break;
            }
        }
    }

    // The tests' own reading of the 16-bit formats, written from their definitions with Math.Pow and no
    // bit tricks, so it shares nothing with the binding's Float16Bits/BFloat16Bits or the library.
    static class Bits16
    {
        // binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. bfloat16: 1, 8 (bias 127), 7.
        public static double Decode(DType d, ushort b)
        {
            int expBits = d == DType.Float16 ? 5 : 8, fracBits = d == DType.Float16 ? 10 : 7;
            int bias = (1 << (expBits - 1)) - 1, maxExp = (1 << expBits) - 1;
            double sign = (b >> 15) != 0 ? -1.0 : 1.0;
            int e = (b >> fracBits) & maxExp, f = b & ((1 << fracBits) - 1);
            if (e == maxExp) return f == 0 ? sign * double.PositiveInfinity : double.NaN;
            if (e == 0) return sign * f * Math.Pow(2, 1 - bias - fracBits);  // subnormal (and zeros, signed)
            return sign * ((1 << fracBits) + f) * Math.Pow(2, e - bias - fracBits);
        }

        static System.Collections.Generic.Dictionary<double, ushort> f16, bf16;

        // The pattern of an exactly representable value (zeros keep their sign); anything else throws.
        public static ushort Encode(DType d, double v)
        {
            if (v == 0) return (ushort)(1 / v < 0 ? 0x8000 : 0);
            var table = d == DType.Float16 ? (f16 ?? (f16 = Table(d))) : (bf16 ?? (bf16 = Table(d)));
            ushort b;
            if (!table.TryGetValue(v, out b)) throw new ArgumentException(v.ToString("R") + " is not exactly a " + d);
            return b;
        }

        static System.Collections.Generic.Dictionary<double, ushort> Table(DType d)
        {
            var t = new System.Collections.Generic.Dictionary<double, ushort>();
            for (int b = 0; b < 65536; b++)
            {
                double v = Decode(d, (ushort)b);
                if (!double.IsNaN(v) && v != 0) t.Add(v, (ushort)b);
            }
            return t;
        }
    }

    // A reference written here from the textbook algorithms (Ogita, Rump & Oishi 2005), sequential
    // and without fma, so it shares no code or order with the library.
    static class Reference
    {
        public const double Eps = 1.1102230246251565e-16; // 2^-53

        static void TwoSum(double a, double b, out double s, out double e)
        {
            s = a + b;
            double z = s - a;
            e = (a - (s - z)) + (b - z);
        }

        // Veltkamp split: a = hi + lo, each half fits in 26 bits, so hi*hi etc. are exact.
        static void Split(double a, out double hi, out double lo)
        {
            double c = 134217729.0 * a; // 2^27 + 1
            hi = c - (c - a);
            lo = a - hi;
        }

        static void TwoProduct(double a, double b, out double p, out double e)
        {
            p = a * b;
            double ah, al, bh, bl;
            Split(a, out ah, out al);
            Split(b, out bh, out bl);
            e = al * bl - (((p - ah * bh) - al * bh) - ah * bl);
        }

        // Dot2: as if computed in twice the working precision, then rounded.
        public static double Dot2(CudotContext ctx, int n, out double sumAbs)
        {
            double s = 0, c = 0;
            sumAbs = 0;
            for (int i = 0; i < n; i++)
            {
                double p, ep, t, es;
                TwoProduct(Data.Get(ctx, true, i), Data.Get(ctx, false, i), out p, out ep);
                sumAbs += Math.Abs(p);
                TwoSum(s, p, out t, out es);
                s = t;
                c += es + ep;
            }
            return s + c;
        }

        // Plain double summation, to show the random data really needs compensation.
        public static double Naive(CudotContext ctx, int n)
        {
            double s = 0;
            for (int i = 0; i < n; i++) s += Data.Get(ctx, true, i) * Data.Get(ctx, false, i);
            return s;
        }

        public static double Gamma(int n) { return n * Eps / (1 - n * Eps); }

        // The error bound cudot.h promises for a pair, plus the reference's own (Dot2) error.
        public static double Tolerance(DType xd, DType yd, int n, double reference, double sumAbs)
        {
            if (xd == DType.Float64 || yd == DType.Float64) // Dot2 bound for both the library and the reference
                return 2 * (Eps * Math.Abs(reference) + Math.Pow(Gamma(n), 2) * sumAbs);
            if (Data.IsInt(xd) && Data.IsInt(yd)) return 0; // exact integer sum
            return Gamma(n) * sumAbs + 2 * Eps * Math.Abs(reference); // products exact, sums in double
        }
    }

    static class Gpu
    {
        // CUDOT_TEST_GPU=1: a GPU is expected, so NO_DEVICE is a failure instead of a skip.
        public static bool Required { get { return Environment.GetEnvironmentVariable("CUDOT_TEST_GPU") == "1"; } }

        public static CudotContext OpenOrSkip(long n, DType dtype, Memory memory, DType? yDType = null, int device = 0, uint waitMs = 0,
                                              long rows = 1, bool exact = false)
        {
            try
            {
                return new CudotContext(n, dtype, memory, device, yDType, waitMs, rows, exact);
            }
            catch (CudotException e) when (e.Status == Status.NoDevice)
            {
                if (Required) NUnit.Framework.Assert.Fail("CUDOT_TEST_GPU=1 but " + memory + " gave " + e.Message);
                NUnit.Framework.Assert.Ignore("no usable GPU: " + e.Message);
                throw; // not reached: Ignore throws
            }
        }
    }

    static class Stack
    {
        // Mono scans thread stacks conservatively: a pointer that a returned method left in a stack slot
        // no frame has reused yet can keep its object reachable, so a test that waits for finalizers can
        // fail or pass with the stack layout of the code it calls. Tests that check what the finalizer
        // frees call this after the method that dropped the objects has returned and before
        // GC.Collect: it overwrites the stack below the caller's frame with zeros.
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        public static unsafe void Scrub()
        {
            const int bytes = 256 * 1024;
            byte* p = stackalloc byte[bytes];
            for (int i = 0; i < bytes; i += 8) *(long*)(p + i) = 0;
        }
    }

    static class Resident
    {
        // The resident set of this process, from /proc/self/statm (Linux only).
        public static long Bytes()
        {
            if (!System.IO.File.Exists("/proc/self/statm")) Assert.Ignore("needs Linux /proc");
            string[] fields = System.IO.File.ReadAllText("/proc/self/statm").Split(' ');
            return long.Parse(fields[1]) * Environment.SystemPageSize;
        }
    }
}
