// Partials.cs - the building blocks of a distributed dot (cudot_tile_partials, cudot_join_partials).
//
// The canonical order cuts a vector into tiles of TileElements elements, takes one partial sum per
// tile and joins them in tile order. Whoever holds some whole tiles (plus, at the very end, a short
// last one) can compute their partials; one process joins all of them in tile order and gets the
// same bits as a single context holding the whole vector. The partials are opaque bytes, only for a
// library of the same major version on a machine of the same byte order: send them, never decode them.
//
// The exact mode (library 1.13) has no tiles: its sum is the same in any order, so whatever elements a
// process holds make one exact partial of ExactPartialBytes, and JoinExactPartials joins any number of
// them, in any order, into the correctly rounded dot of all their elements.
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    public static partial class CudotLibrary
    {
        /// <summary>Elements per tile (CUDOT_TILE_ELEMENTS): element i of a vector belongs to tile i / TileElements.</summary>
        public const int TileElements = 8192;

        /// <summary>Bytes of one tile's partial sum (CUDOT_PARTIAL_BYTES).</summary>
        public const int PartialBytes = 16;

        /// <summary>Bytes of one exact partial (CUDOT_EXACT_PARTIAL_BYTES): what TilePartials of an exact
        /// context, or CudotArrays.ExactPartial, gives for any number of elements.</summary>
        public const int ExactPartialBytes = 1120;

        /// <summary>The number of tiles, and so of partials, that n elements make: ceil(n / TileElements).</summary>
        public static long TileCount(long n)
        {
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            return n / TileElements + (n % TileElements != 0 ? 1 : 0);
        }

        /// <summary>The dot product of a vector from the partials of all its tiles, in tile order
        /// (cudot_join_partials): bitwise what one context holding the whole vector returns from Dot().
        /// xDType and yDType are the element types the partials were computed for. Throws
        /// ArgumentException when the length is not a multiple of PartialBytes, CudotException for an
        /// element type the library does not know, or Unsupported before library 1.2.</summary>
        public static double JoinPartials(DType xDType, DType yDType, byte[] partials)
        {
            if (partials == null) throw new ArgumentNullException("partials");
            return JoinPartials(xDType, yDType, new ReadOnlySpan<byte>(partials));
        }

        /// <summary>JoinPartials over a span, e.g. a slice of a receive buffer, without copying.</summary>
        public static unsafe double JoinPartials(DType xDType, DType yDType, ReadOnlySpan<byte> partials)
        {
            if (partials.Length % PartialBytes != 0)
                throw new ArgumentException("partials hold " + partials.Length + " bytes, not a multiple of " +
                                            PartialBytes + " (one partial per tile)", "partials");
            EnsureLoaded();
            RequireVersion(10200, "cudot_join_partials");
            double r;
            int status;
            fixed (byte* p = &MemoryMarshal.GetReference(partials)) // null for an empty span, which the library accepts with 0 tiles
                status = Api.JoinPartials((int)xDType, (int)yDType, p, (ulong)(partials.Length / PartialBytes), out r);
            CheckWithoutContext(status);
            return r;
        }

        /// <summary>The exact mode's dot from exact partials placed back to back (cudot_join_exact_partials,
        /// library 1.13): the exact sum of all their elements' products, rounded once, in any order of the
        /// partials and whatever element types each came from; bitwise what one exact context, or
        /// CudotArrays.DotExact, gives for all those elements. No partials give +0.0. Throws
        /// ArgumentException when the length is not a multiple of ExactPartialBytes, CudotException
        /// (InvalidArgument, the library's message naming the index) for a partial that no cudot wrote,
        /// or Unsupported before library 1.13.</summary>
        public static double JoinExactPartials(byte[] partials)
        {
            if (partials == null) throw new ArgumentNullException("partials");
            return JoinExactPartials(new ReadOnlySpan<byte>(partials));
        }

        /// <summary>JoinExactPartials over a span, e.g. a slice of a receive buffer, without copying.</summary>
        public static unsafe double JoinExactPartials(ReadOnlySpan<byte> partials)
        {
            if (partials.Length % ExactPartialBytes != 0)
                throw new ArgumentException("partials hold " + partials.Length + " bytes, not a multiple of " +
                                            ExactPartialBytes + " (exact partials)", "partials");
            EnsureLoaded();
            RequireVersion(11300, "cudot_join_exact_partials");
            double r;
            int status;
            fixed (byte* p = &MemoryMarshal.GetReference(partials)) // null for an empty span, which the library accepts with count 0
                status = Api.JoinExactPartials(p, (ulong)(partials.Length / ExactPartialBytes), out r);
            CheckWithoutContext(status);
            return r;
        }

        // For calls whose failure message is thread-local (cudot_last_error(NULL), as after cudot_init):
        // read it now, on this thread, before anything else calls into the library.
        internal static void CheckWithoutContext(int status)
        {
            if (status != 0) throw CudotContext.Error(status, Api.LastError(IntPtr.Zero));
        }

        // A buffer for the partials of n elements, in one array; exact: one exact partial, whatever n.
        internal static byte[] NewPartials(long n, bool exact = false)
        {
            long bytes = exact ? ExactPartialBytes : TileCount(n) * PartialBytes;
            if (bytes > int.MaxValue)
                throw new ArgumentOutOfRangeException("n", n, "the partials would not fit one array; use the Span overload in pieces");
            return new byte[bytes];
        }

        // The bytes the partials of n elements take (exact: the one exact partial), after checking that a
        // destination of destinationLength bytes holds them.
        internal static int PartialsLength(long n, int destinationLength, bool exact = false)
        {
            long bytes = TileCount(n) * PartialBytes; // checks n >= 0
            if (exact) bytes = ExactPartialBytes;
            if (destinationLength < bytes)
                throw new ArgumentException("destination holds " + destinationLength + " bytes; " + bytes + " are needed", "destination");
            return (int)bytes;
        }

        // Library functions newer than 1.0 are looked up only at their first call; asking an older
        // library would end in EntryPointNotFoundException, so say what is missing instead.
        internal static void RequireVersion(uint needed, string function)
        {
            uint v = Version;
            if (v < needed)
                throw new CudotException(Status.Unsupported, StatusName(Status.Unsupported), string.Format(
                    "{0} needs library {1}.{2}, but the loaded one is {3}", function, needed / 10000, needed / 100 % 100, VersionString));
        }
    }

    public sealed partial class CudotContext
    {
        /// <summary>The partial sums of the tiles of elements [first, first + n) of this context's buffers,
        /// element `first` taken as the first element of a tile (only the last tile may be short):
        /// TileCount(n) * PartialBytes opaque bytes for CudotLibrary.JoinPartials (cudot_tile_partials).
        /// On an Exact context: one exact partial of the elements, CudotLibrary.ExactPartialBytes bytes
        /// whatever n (0 included), for CudotLibrary.JoinExactPartials; `first` need not start a tile.
        /// first + n beyond Capacity is InvalidArgument; ObjectDisposedException after Dispose.
        /// Do not write to the buffers meanwhile from another thread, as for Dot.</summary>
        public byte[] TilePartials(long first, long n)
        {
            byte[] partials = CudotLibrary.NewPartials(n, exact);
            TilePartials(first, n, partials);
            return partials;
        }

        /// <summary>TilePartials into a caller's buffer (e.g. its slot of a gather buffer), which must hold
        /// at least TileCount(n) * PartialBytes bytes (ExactPartialBytes on an Exact context). Returns the
        /// number of bytes written.</summary>
        public unsafe int TilePartials(long first, long n, Span<byte> destination)
        {
            if (first < 0) throw new ArgumentOutOfRangeException("first", first, "cannot be negative");
            int bytes = CudotLibrary.PartialsLength(n, destination.Length, exact);
            using (var lease = Lease())
            {
                CudotLibrary.RequireVersion(10200, "cudot_tile_partials");
                fixed (byte* p = &MemoryMarshal.GetReference(destination))
                    Check(Api.TilePartials(lease.Ptr, (ulong)first, (ulong)n, p), lease.Ptr);
            }
            return bytes;
        }
    }
}
