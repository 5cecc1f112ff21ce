// TestSupport.cs - data generators and independent reference dot products for the tests.
using System;
using Cudot;

namespace Cudot.Tests
{
    static class Data
    {
        // Small integers: every product and every partial sum is exact in double, so any summation
        // order gives the same, exactly known result.
        public static int XInt(long i) { return (int)(i % 13) - 6; }
        public static int YInt(long i) { return (int)(i * 7 % 11) - 5; }

        public static long ExactIntDot(long n)
        {
            long s = 0;
            for (long i = 0; i < n; i++) s += (long)XInt(i) * YInt(i);
            return s;
        }

        public static void FillInts(CudotContext ctx)
        {
            int n = (int)ctx.Capacity;
            if (ctx.DType == DType.Float32)
            {
                Span<float> x = ctx.XAsFloat32(), y = ctx.YAsFloat32();
                for (int i = 0; i < n; i++) { x[i] = XInt(i); y[i] = YInt(i); }
            }
            else
            {
                Span<double> x = ctx.XAsFloat64(), y = ctx.YAsFloat64();
                for (int i = 0; i < n; i++) { x[i] = XInt(i); y[i] = YInt(i); }
            }
        }

        // Random values whose exponents span about 2^-20..2^20, with every other element the
        // negated product of its neighbour, so the true sum cancels heavily: a plain double sum of
        // the products loses most of its digits here, only a compensated one stays close.
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

        // Element access by index (the values as stored, i.e. already rounded to float for F32).
        public static double Get(CudotContext ctx, bool isX, int i)
        {
            if (ctx.DType == DType.Float32) return (isX ? ctx.XAsFloat32() : ctx.YAsFloat32())[i];
            return (isX ? ctx.XAsFloat64() : ctx.YAsFloat64())[i];
        }

        public static void Set(CudotContext ctx, bool isX, int i, double v)
        {
            if (ctx.DType == DType.Float32) (isX ? ctx.XAsFloat32() : ctx.YAsFloat32())[i] = (float)v;
            else (isX ? ctx.XAsFloat64() : ctx.YAsFloat64())[i] = v;
        }

        public static void CopyInputs(CudotContext from, CudotContext to)
        {
            if (from.DType == DType.Float32)
            {
                from.XAsFloat32().CopyTo(to.XAsFloat32());
                from.YAsFloat32().CopyTo(to.YAsFloat32());
            }
            else
            {
                from.XAsFloat64().CopyTo(to.XAsFloat64());
                from.YAsFloat64().CopyTo(to.YAsFloat64());
            }
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
    }

    static class Gpu
    {
        // CUDOT_TEST_GPU=1: a GPU is expected, so NO_DEVICE is a failure instead of a skip.
        public static bool Required { get { return Environment.GetEnvironmentVariable("CUDOT_TEST_GPU") == "1"; } }

        public static CudotContext OpenOrSkip(long n, DType dtype, Memory memory)
        {
            try
            {
                return new CudotContext(n, dtype, memory);
            }
            catch (CudotException e) when (e.Status == Status.NoDevice)
            {
                if (Required) NUnit.Framework.Assert.Fail("CUDOT_TEST_GPU=1 but " + memory + " gave " + e.Message);
                NUnit.Framework.Assert.Ignore("no usable GPU: " + e.Message);
                throw; // not reached: Ignore throws
            }
        }
    }
}
