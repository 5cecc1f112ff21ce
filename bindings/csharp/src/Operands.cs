// Operands.cs - the two kinds of operand a dot on the caller's own memory takes (cudot_array):
//  - DotSpan: elements of a span or array of the caller's, possibly strided, range-checked here
//    against the span, so the library never reads outside it; pinned for the call, never copied;
//  - DotPointer: a raw address (device, managed, page-locked or ordinary host memory) with its element
//    type and stride, passed as it is: the caller vouches for it, as BLAS callers do.
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    /// <summary>One operand of CudotArrays.Dot / TilePartials: elements of the caller's own span or array,
    /// read in place (pinned for the duration of the call, never copied). Arrays and spans of float
    /// (Float32), double (Float64), sbyte (Int8), byte and bool (UInt8) convert to it implicitly; 16-bit
    /// patterns come through Float16(...) and BFloat16(...), any fitting type through Create. A DotSpan
    /// covers its whole span, element i at index i; Strided(start, length, stride) picks elements
    /// start, start + stride, ... instead (negative strides run backwards, 0 repeats one element).</summary>
    public readonly ref struct DotSpan
    {
        readonly ReadOnlySpan<byte> memory; // the caller's whole span, as bytes
        readonly int elementSize;           // 0 only in default(DotSpan)

        /// <summary>The element type the library reads the memory as.</summary>
        public DType DType { get; }

        /// <summary>Index, in the span this operand was made from, of the dot's element 0.</summary>
        public int Start { get; }

        /// <summary>The number of elements this operand gives the dot (with stride 0, more than the span may hold).</summary>
        public long Length { get; }

        /// <summary>Elements from one element of the dot to the next, in the span (1 contiguous, -1
        /// backwards, 0 the same element every time).</summary>
        public long Stride { get; }

        /// <summary>Elements in the span this operand was made from.</summary>
        public int SpanLength { get { return elementSize == 0 ? 0 : memory.Length / elementSize; } }

        DotSpan(ReadOnlySpan<byte> memory, DType dtype, int elementSize, int start, long length, long stride)
        {
            this.memory = memory;
            this.elementSize = elementSize;
            DType = dtype;
            Start = start;
            Length = length;
            Stride = stride;
        }

        /// <summary>All of elements, read as dtype; T must fit it as for CudotContext.XAs (float: Float32,
        /// double: Float64, ushort: Float16 or BFloat16, sbyte: Int8, byte or bool: UInt8; System.Half:
        /// Float16 on .NET 5+). Throws ArgumentException for a T that does not.</summary>
        public static DotSpan Create<T>(ReadOnlySpan<T> elements, DType dtype) where T : struct
        {
            if (!CudotContext.Fits(typeof(T), dtype))
                throw new ArgumentException("a span of " + typeof(T).Name + " cannot hold " + dtype + " elements", "dtype");
            return new DotSpan(MemoryMarshal.AsBytes(elements), dtype, CudotContext.ElementSize(dtype), 0, elements.Length, 1);
        }

        /// <summary>IEEE binary16 bit patterns (Float16Bits converts), as Float16.</summary>
        public static DotSpan Float16(ReadOnlySpan<ushort> bits) { return Create(bits, DType.Float16); }

        /// <summary>bfloat16 bit patterns (BFloat16Bits converts), as BFloat16.</summary>
        public static DotSpan BFloat16(ReadOnlySpan<ushort> bits) { return Create(bits, DType.BFloat16); }

        /// <summary>The elements start, start + stride, ..., length of them, of the span this operand was
        /// made from (whatever view this one was). Every one of them must lie inside that span:
        /// ArgumentOutOfRangeException otherwise. Strided(n - 1, n, -1) is the span backwards,
        /// Strided(i, n, 0) its element i n times.</summary>
        public DotSpan Strided(int start, long length, long stride)
        {
            int span = SpanLength;
            if (length < 0) throw new ArgumentOutOfRangeException("length", length, "cannot be negative");
            if (start < 0 || start > span || (length > 0 && start == span))
                throw new ArgumentOutOfRangeException("start", start, "outside the span of " + span + " elements");
            if (length > 1 && stride != 0)
            {
                // The last element, start + (length - 1) * stride, must stay inside; compared without overflow.
                long room = stride > 0 ? span - 1 - start : start;
                if (stride == long.MinValue || length - 1 > room / Math.Abs(stride))
                    throw new ArgumentOutOfRangeException("stride", stride, length + " elements from index " + start +
                        " with stride " + stride + " leave the span of " + span + " elements");
            }
            return new DotSpan(memory, DType, elementSize, start, length, stride);
        }

        // The address of element 0, valid while `pinned` (the first byte of memory, fixed by the caller) is.
        internal unsafe IntPtr First(byte* pinned) { return new IntPtr(pinned + (long)Start * elementSize); }

        internal ReadOnlySpan<byte> Memory { get { return memory; } }

#pragma warning disable 1591 // the conversions are documented once, on the type
        public static implicit operator DotSpan(ReadOnlySpan<float> s) { return Create(s, DType.Float32); }
        public static implicit operator DotSpan(Span<float> s) { return Create((ReadOnlySpan<float>)s, DType.Float32); }
        public static implicit operator DotSpan(float[] a) { return Create(new ReadOnlySpan<float>(a), DType.Float32); }
        public static implicit operator DotSpan(ReadOnlySpan<double> s) { return Create(s, DType.Float64); }
        public static implicit operator DotSpan(Span<double> s) { return Create((ReadOnlySpan<double>)s, DType.Float64); }
        public static implicit operator DotSpan(double[] a) { return Create(new ReadOnlySpan<double>(a), DType.Float64); }
        public static implicit operator DotSpan(ReadOnlySpan<sbyte> s) { return Create(s, DType.Int8); }
        public static implicit operator DotSpan(Span<sbyte> s) { return Create((ReadOnlySpan<sbyte>)s, DType.Int8); }
        public static implicit operator DotSpan(sbyte[] a) { return Create(new ReadOnlySpan<sbyte>(a), DType.Int8); }
        public static implicit operator DotSpan(ReadOnlySpan<byte> s) { return Create(s, DType.UInt8); }
        public static implicit operator DotSpan(Span<byte> s) { return Create((ReadOnlySpan<byte>)s, DType.UInt8); }
        public static implicit operator DotSpan(byte[] a) { return Create(new ReadOnlySpan<byte>(a), DType.UInt8); }
        public static implicit operator DotSpan(ReadOnlySpan<bool> s) { return Create(s, DType.UInt8); }
        public static implicit operator DotSpan(Span<bool> s) { return Create((ReadOnlySpan<bool>)s, DType.UInt8); }
        public static implicit operator DotSpan(bool[] a) { return Create(new ReadOnlySpan<bool>(a), DType.UInt8); }
#if NET5_0_OR_GREATER
        public static implicit operator DotSpan(ReadOnlySpan<Half> s) { return Create(s, DType.Float16); }
        public static implicit operator DotSpan(Span<Half> s) { return Create((ReadOnlySpan<Half>)s, DType.Float16); }
        public static implicit operator DotSpan(Half[] a) { return Create(new ReadOnlySpan<Half>(a), DType.Float16); }
#endif
#pragma warning restore 1591
    }

    /// <summary>One operand of CudotArrays.Dot / DotAsync / TilePartials given by address: memory of any
    /// kind (a GPU's, managed, page-locked or ordinary host memory; the library asks CUDA which), element
    /// i at Data + i * Stride elements. Nothing is checked here: for device and managed memory the library
    /// refuses an operand that leaves its allocation; for host memory the caller vouches for the range.
    /// Memory of the .NET heap must stay pinned until the call (or, for DotAsync, the work) ends.</summary>
    public readonly struct DotPointer
    {
        /// <summary>Element 0 (with a negative stride the last in memory); IntPtr.Zero only when n is 0.</summary>
        public IntPtr Data { get; }

        /// <summary>The element type at Data.</summary>
        public DType DType { get; }

        /// <summary>In elements, signed: 1 contiguous, -1 backwards, 0 one value repeated.</summary>
        public long Stride { get; }

        /// <summary>IntPtr.Zero, or the cudaStream_t on which this operand was written: the dot first waits
        /// for the work queued on it so far. CudotArrays.LegacyStream and PerThreadStream name those streams.</summary>
        public IntPtr Ready { get; }

        /// <summary>An operand at data of dtype elements, stride elements apart, written on the stream
        /// `ready` (IntPtr.Zero: nothing to wait for).</summary>
        public DotPointer(IntPtr data, DType dtype, long stride = 1, IntPtr ready = default(IntPtr))
        {
            Data = data;
            DType = dtype;
            Stride = stride;
            Ready = ready;
        }
    }
}
