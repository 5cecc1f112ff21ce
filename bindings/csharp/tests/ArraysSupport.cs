// ArraysSupport.cs - the caller's own arrays for the CudotArrays tests: typed .NET arrays of random
// values (NaN and infinities where asked), their DotSpan views, and the HOST context that holds the same
// elements, copied bit for bit, whose Dot() every dot on the arrays must equal.
using System;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    // One operand's storage: float[], double[], ushort[] (both 16-bit types), sbyte[] or byte[].
    sealed class Elements
    {
        public readonly DType DType;
        public readonly Array Store;

        Elements(DType dtype, Array store) { DType = dtype; Store = store; }

        public int Length { get { return Store.Length; } }
        public int ElementSize { get { return CudotContext.ElementSize(DType); } }

        // Random elements: floats over about 2^-20..2^20 (so the summation order shows in the last bits),
        // random finite 16-bit patterns (subnormals included), integers over their whole range.
        public static Elements Random(DType d, int count, int seed)
        {
            var rng = new Random(seed);
            switch (d)
            {
                case DType.Float32: { var a = new float[count]; for (int i = 0; i < count; i++) a[i] = (float)Wide(rng); return new Elements(d, a); }
                case DType.Float64: { var a = new double[count]; for (int i = 0; i < count; i++) a[i] = Wide(rng); return new Elements(d, a); }
                case DType.Int8: { var a = new sbyte[count]; for (int i = 0; i < count; i++) a[i] = (sbyte)rng.Next(-128, 128); return new Elements(d, a); }
                case DType.UInt8: { var a = new byte[count]; for (int i = 0; i < count; i++) a[i] = (byte)rng.Next(0, 256); return new Elements(d, a); }
                default:
                {
                    var a = new ushort[count];
                    for (int i = 0; i < count; i++)
                    {
                        ushort b;
                        do b = (ushort)rng.Next(0, 65536); while (!IsFinite(Bits16.Decode(d, b)));
                        a[i] = b;
                    }
                    return new Elements(d, a);
                }
            }
        }

        static double Wide(Random rng) { return (rng.NextDouble() * 2 - 1) * Math.Pow(2, rng.Next(-20, 21)); }

        static bool IsFinite(double v) { return !double.IsNaN(v) && !double.IsInfinity(v); }

        // Writes a special value (NaN, +Inf or -Inf) at index i of a floating-point operand.
        public void SetSpecial(int i, double special)
        {
            switch (DType)
            {
                case DType.Float32: ((float[])Store)[i] = (float)special; break;
                case DType.Float64: ((double[])Store)[i] = special; break;
                case DType.Float16: ((ushort[])Store)[i] = double.IsNaN(special) ? (ushort)0x7E00 : special > 0 ? (ushort)0x7C00 : (ushort)0xFC00; break;
                case DType.BFloat16: ((ushort[])Store)[i] = double.IsNaN(special) ? (ushort)0x7FC0 : special > 0 ? (ushort)0x7F80 : (ushort)0xFF80; break;
                default: throw new ArgumentException(DType + " has no " + special);
            }
        }

        // Writes zero at index i (any type).
        public void SetZero(int i) { Array.Clear(Store, i, 1); }

        // Writes one at index i (any type).
        public void SetOne(int i)
        {
            switch (DType)
            {
                case DType.Float32: ((float[])Store)[i] = 1; break;
                case DType.Float64: ((double[])Store)[i] = 1; break;
                case DType.Int8: ((sbyte[])Store)[i] = 1; break;
                case DType.UInt8: ((byte[])Store)[i] = 1; break;
                default: ((ushort[])Store)[i] = Bits16.Encode(DType, 1); break;
            }
        }

        // The whole array as the binding's operand, through the conversion a user would write.
        public DotSpan Span()
        {
            switch (DType)
            {
                case DType.Float32: return (float[])Store;
                case DType.Float64: return (double[])Store;
                case DType.Int8: return (sbyte[])Store;
                case DType.UInt8: return (byte[])Store;
                case DType.Float16: return DotSpan.Float16((ushort[])Store);
                default: return DotSpan.BFloat16((ushort[])Store);
            }
        }

        // Element `index` as it sits in memory, for the pointer tests.
        public IntPtr AddressOf(GCHandle pinned, long index)
        {
            return new IntPtr(pinned.AddrOfPinnedObject().ToInt64() + index * ElementSize);
        }

        // A HOST context holding, bit for bit, elements start, start + stride, ... (n of them) of x and y.
        public static CudotContext HostHolding(Elements x, int xStart, long xStride, Elements y, int yStart, long yStride, int n)
        {
            var ctx = new CudotContext(n, x.DType, Memory.Host, yDType: y.DType);
            try
            {
                x.Gather(ctx, true, xStart, xStride, n);
                y.Gather(ctx, false, yStart, yStride, n);
                return ctx;
            }
            catch { ctx.Dispose(); throw; }
        }

        public static CudotContext HostHolding(Elements x, Elements y)
        {
            Assert.AreEqual(x.Length, y.Length);
            return HostHolding(x, 0, 1, y, 0, 1, x.Length);
        }

        void Gather(CudotContext ctx, bool isX, int start, long stride, int n)
        {
            switch (DType)
            {
                case DType.Float32: Gather((float[])Store, isX ? ctx.XAs<float>() : ctx.YAs<float>(), start, stride, n); break;
                case DType.Float64: Gather((double[])Store, isX ? ctx.XAs<double>() : ctx.YAs<double>(), start, stride, n); break;
                case DType.Int8: Gather((sbyte[])Store, isX ? ctx.XAs<sbyte>() : ctx.YAs<sbyte>(), start, stride, n); break;
                case DType.UInt8: Gather((byte[])Store, isX ? ctx.XAs<byte>() : ctx.YAs<byte>(), start, stride, n); break;
                default: Gather((ushort[])Store, isX ? ctx.XAs<ushort>() : ctx.YAs<ushort>(), start, stride, n); break;
            }
        }

        static void Gather<T>(T[] from, BufferView<T> to, int start, long stride, int n) where T : struct
        {
            var a = new T[n];
            for (int i = 0; i < n; i++) a[i] = from[start + i * stride];
            to.CopyFrom(a);
        }
    }

    static class Bits
    {
        // Every (x, y) pair of element types, for ValueSource.
        public static DType[][] AllPairs
        {
            get
            {
                var pairs = new DType[36][];
                int k = 0;
                foreach (DType x in Data.AllTypes)
                    foreach (DType y in Data.AllTypes)
                        pairs[k++] = new[] { x, y };
                return pairs;
            }
        }

        public static void AreSame(double expected, double actual, string what)
        {
            Assert.AreEqual(BitConverter.DoubleToInt64Bits(expected), BitConverter.DoubleToInt64Bits(actual),
                what + ": expected " + expected.ToString("R") + ", got " + actual.ToString("R"));
        }

        // A span length that holds n elements from `start` with `stride`, and that start (the last
        // element in memory for a negative stride), with `pad` spare elements before and after.
        public static int Extent(int n, long stride, int pad, out int start)
        {
            long reach = n == 0 ? 0 : (n - 1) * Math.Abs(stride);
            start = (int)(pad + (stride < 0 ? reach : 0));
            return (int)(2 * pad + reach + 1);
        }
    }
}
