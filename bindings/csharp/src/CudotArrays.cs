// CudotArrays.cs - dots on the caller's own memory (cudot 1.7): no context, no copy. The library finds
// out where each operand lives (host, page-locked, managed, a GPU's) and computes there, with the bits
// a HOST context holding the same values gives. Operands.cs has the two kinds of operand.
//
// Every failure's message is thread-local in the library (cudot_last_error(NULL)); it is read right
// after the call, on the same thread, before anything else can call into the library.
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    /// <summary>Dot products of the caller's own arrays, spans and device memory (cudot_dot_arrays and
    /// friends, library 1.7 or newer): the same bits as a HOST CudotContext holding the same values.</summary>
    public static partial class CudotArrays
    {
        /// <summary>cudaStreamLegacy: the legacy default stream, named explicitly (IntPtr.Zero means it too).</summary>
        public static readonly IntPtr LegacyStream = new IntPtr(1);

        /// <summary>cudaStreamPerThread: the calling thread's per-thread default stream.</summary>
        public static readonly IntPtr PerThreadStream = new IntPtr(2);

        /// <summary>The dot of two spans or arrays (x.Length == y.Length), computed where they live (the CPU
        /// for the .NET heap), reading them in place: pinned for the call, never copied. x and y may
        /// overlap or be the same. An empty pair gives +0.0. Blocks until the result is there; where a GPU
        /// computes (page-locked memory of 2^20 elements or more) it does so on the legacy default stream.
        /// Throws ArgumentException when the lengths differ, CudotException for what the library refuses.</summary>
        public static double Dot(DotSpan x, DotSpan y) { return DotSpans(x, y, Mode.Canonical); }

        static unsafe double DotSpans(DotSpan x, DotSpan y, Mode mode)
        {
            long n = CommonLength(x, y);
            double r;
            int status;
            fixed (byte* px = &MemoryMarshal.GetReference(x.Memory))
            fixed (byte* py = &MemoryMarshal.GetReference(y.Memory))
            {
                NativeArrays a = Describe(n, Operand(x, px), Operand(y, py), IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, "cudot_dot_arrays");
                a.Mode = (int)mode;
                status = Api.DotArrays(&a, out r);
            }
            Check(status);
            return r;
        }

        /// <summary>The correctly rounded dot of two spans or arrays (library 1.11, CUDOT_MODE_EXACT): the exact
        /// sum of the exact products, rounded once to the nearest double, ties to even, whatever the order
        /// of the elements. Products beyond the double range count with their exact value; a sum that rounds
        /// past the largest double is an infinity, an exact zero +0.0; NaN for a NaN product, Inf * 0, or
        /// infinite products of both signs. Computed by the CPU; otherwise as Dot(DotSpan, DotSpan). A library
        /// older than 1.11 throws Unsupported.</summary>
        public static double DotExact(DotSpan x, DotSpan y) { return DotSpans(x, y, Mode.Exact); }

        /// <summary>The correctly rounded dot (see DotExact(DotSpan, DotSpan)) of n elements of two operands
        /// given by address: the GPU computes device and managed memory (library 1.12; 1.11 throws
        /// Unsupported for them). Otherwise as Dot(DotPointer, DotPointer, long, IntPtr).</summary>
        public static double DotExact(DotPointer x, DotPointer y, long n, IntPtr stream = default(IntPtr))
        {
            return DotPointers(x, y, n, stream, Mode.Exact);
        }

        /// <summary>The dot of n elements of two operands given by address (device, managed, page-locked
        /// or host memory), waiting for its result. Device and managed operands are computed by their GPU
        /// on `stream` (a cudaStream_t of that GPU; IntPtr.Zero: the legacy default stream), after the work
        /// queued on it before the call (and on each operand's Ready stream). Throws CudotException:
        /// InvalidArgument (an operand leaving its device allocation, a stream of another GPU, ...),
        /// NoDevice (device memory without a usable GPU), Unsupported (operands on two GPUs, a stream being
        /// captured into a graph), Cuda.</summary>
        public static double Dot(DotPointer x, DotPointer y, long n, IntPtr stream = default(IntPtr))
        {
            return DotPointers(x, y, n, stream, Mode.Canonical);
        }

        static unsafe double DotPointers(DotPointer x, DotPointer y, long n, IntPtr stream, Mode mode)
        {
            NativeArrays a = Describe(n, Operand(x), Operand(y), stream, x.Ready, y.Ready, "cudot_dot_arrays");
            a.Mode = (int)mode;
            double r;
            Check(Api.DotArrays(&a, out r));
            return r;
        }

        /// <summary>Queues the dot of n elements on `stream` and returns: the result (one double) is written
        /// in stream order to deviceResult, 8-byte aligned device, managed or mapped memory of the operands'
        /// GPU. The operands must be ones a GPU computes (device or managed memory, page-locked host memory);
        /// n = 0 queues a write of +0.0. May be captured into a CUDA graph. Host memory of the .NET heap is
        /// never such an operand. Throws CudotException as Dot does, plus InvalidArgument (deviceResult
        /// zero, misaligned, not writable by the GPU) and Unsupported (operands only the CPU can read);
        /// after an exception nothing was queued.</summary>
        public static unsafe void DotAsync(DotPointer x, DotPointer y, long n, IntPtr stream, IntPtr deviceResult)
        {
            NativeArrays a = Describe(n, Operand(x), Operand(y), stream, x.Ready, y.Ready, "cudot_dot_arrays_async");
            Check(Api.DotArraysAsync(&a, deviceResult));
        }

        /// <summary>The partial sums of the tiles of x and y (element 0 the first of a tile):
        /// CudotLibrary.TileCount(n) * PartialBytes opaque bytes for CudotLibrary.JoinPartials, exactly as
        /// CudotContext.TilePartials gives them for a context holding the same values.</summary>
        public static byte[] TilePartials(DotSpan x, DotSpan y)
        {
            byte[] partials = CudotLibrary.NewPartials(CommonLength(x, y));
            TilePartials(x, y, partials);
            return partials;
        }

        /// <summary>TilePartials into the caller's buffer, which must hold TileCount(n) * PartialBytes bytes
        /// at least; returns the number of bytes written.</summary>
        public static int TilePartials(DotSpan x, DotSpan y, Span<byte> destination)
        {
            return SpanPartials(x, y, destination, Mode.Canonical);
        }

        /// <summary>The exact partial of x and y (library 1.13, cudot_tile_partials_arrays in CUDOT_MODE_EXACT):
        /// CudotLibrary.ExactPartialBytes opaque bytes, whatever the length (0 included), for
        /// CudotLibrary.JoinExactPartials, which joins the partials of any pieces, in any order, into
        /// DotExact of all their elements. Throws as DotExact; a library older than 1.13 throws Unsupported.</summary>
        public static byte[] ExactPartial(DotSpan x, DotSpan y)
        {
            var partial = new byte[CudotLibrary.ExactPartialBytes];
            ExactPartial(x, y, partial);
            return partial;
        }

        /// <summary>ExactPartial into the caller's buffer (e.g. its slot of a gather buffer), which must hold
        /// ExactPartialBytes bytes at least; returns the number of bytes written.</summary>
        public static int ExactPartial(DotSpan x, DotSpan y, Span<byte> destination)
        {
            return SpanPartials(x, y, destination, Mode.Exact);
        }

        static unsafe int SpanPartials(DotSpan x, DotSpan y, Span<byte> destination, Mode mode)
        {
            long n = CommonLength(x, y);
            int bytes = CudotLibrary.PartialsLength(n, destination.Length, mode == Mode.Exact);
            int status;
            fixed (byte* px = &MemoryMarshal.GetReference(x.Memory))
            fixed (byte* py = &MemoryMarshal.GetReference(y.Memory))
            fixed (byte* pd = &MemoryMarshal.GetReference(destination))
            {
                NativeArrays a = Describe(n, Operand(x, px), Operand(y, py), IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, "cudot_tile_partials_arrays");
                a.Mode = (int)mode;
                status = Api.TilePartialsArrays(&a, pd);
            }
            Check(status);
            return bytes;
        }

        /// <summary>The partials of n elements of two operands given by address (see Dot(DotPointer, ...));
        /// a blocking call. Returns TileCount(n) * PartialBytes bytes.</summary>
        public static byte[] TilePartials(DotPointer x, DotPointer y, long n, IntPtr stream = default(IntPtr))
        {
            byte[] partials = CudotLibrary.NewPartials(n);
            TilePartials(x, y, n, stream, partials);
            return partials;
        }

        /// <summary>TilePartials of operands given by address into the caller's buffer; returns the bytes written.</summary>
        public static int TilePartials(DotPointer x, DotPointer y, long n, IntPtr stream, Span<byte> destination)
        {
            return PointerPartials(x, y, n, stream, destination, Mode.Canonical);
        }

        /// <summary>The exact partial (see ExactPartial(DotSpan, DotSpan)) of n elements of two operands given
        /// by address, computed where DotExact(DotPointer, ...) computes; a blocking call. Returns
        /// ExactPartialBytes bytes.</summary>
        public static byte[] ExactPartial(DotPointer x, DotPointer y, long n, IntPtr stream = default(IntPtr))
        {
            var partial = new byte[CudotLibrary.ExactPartialBytes];
            ExactPartial(x, y, n, stream, partial);
            return partial;
        }

        /// <summary>ExactPartial of operands given by address into the caller's buffer; returns the bytes written.</summary>
        public static int ExactPartial(DotPointer x, DotPointer y, long n, IntPtr stream, Span<byte> destination)
        {
            return PointerPartials(x, y, n, stream, destination, Mode.Exact);
        }

        static unsafe int PointerPartials(DotPointer x, DotPointer y, long n, IntPtr stream, Span<byte> destination, Mode mode)
        {
            int bytes = CudotLibrary.PartialsLength(n, destination.Length, mode == Mode.Exact);
            NativeArrays a = Describe(n, Operand(x), Operand(y), stream, x.Ready, y.Ready, "cudot_tile_partials_arrays");
            a.Mode = (int)mode;
            fixed (byte* pd = &MemoryMarshal.GetReference(destination))
                Check(Api.TilePartialsArrays(&a, pd));
            return bytes;
        }

        /// <summary>Page-locks `bytes` bytes of host memory from p once (cudaHostRegister: costly, never per
        /// dot) and maps them for every GPU, so that dots on operands inside run at the bus's speed or
        /// better; without a GPU the range is only recorded. The memory must not move: native memory
        /// (Marshal.AllocHGlobal, NativeMemory), or a .NET array pinned until UnregisterHost. Throws
        /// CudotException: InvalidArgument (p zero, bytes 0, a range overlapping one registered already,
        /// not host memory), OutOfMemory, Cuda.</summary>
        public static void RegisterHost(IntPtr p, long bytes)
        {
            if (bytes < 0) throw new ArgumentOutOfRangeException("bytes", bytes, "cannot be negative");
            Ready("cudot_register_host");
            Check(Api.RegisterHost(p, (ulong)bytes));
        }

        /// <summary>Releases the range RegisterHost(p, ...) registered. Wait for every dot reading it to end
        /// first. Throws CudotException: InvalidArgument (p does not start a registered range), Cuda.</summary>
        public static void UnregisterHost(IntPtr p)
        {
            Ready("cudot_unregister_host");
            Check(Api.UnregisterHost(p));
        }

        static long CommonLength(DotSpan x, DotSpan y)
        {
            if (x.Length != y.Length)
                throw new ArgumentException("x has " + x.Length + " elements, y " + y.Length + ": a dot needs as many of each", "y");
            return x.Length;
        }

        static unsafe NativeArray Operand(DotSpan s, byte* pinned)
        {
            return new NativeArray { Data = s.First(pinned), DType = (int)s.DType, Stride = s.Stride };
        }

        static NativeArray Operand(DotPointer p)
        {
            return new NativeArray { Data = p.Data, DType = (int)p.DType, Stride = p.Stride };
        }

        static unsafe NativeArrays Describe(long n, NativeArray x, NativeArray y, IntPtr stream, IntPtr xReady, IntPtr yReady, string function)
        {
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            Ready(function);
            return new NativeArrays
            {
                Size = (uint)sizeof(NativeArrays), N = new UIntPtr((ulong)n), X = x, Y = y,
                Stream = stream, XReady = xReady, YReady = yReady,
            };
        }

        static volatile bool ready; // the library is loaded and new enough: checked once

        static void Ready(string function)
        {
            if (ready) return;
            CudotLibrary.EnsureLoaded(); // must precede the first Api call (see Native.cs)
            CudotLibrary.RequireVersion(10700, function);
            ready = true;
        }

        static void Check(int status) { CudotLibrary.CheckWithoutContext(status); }
    }
}
