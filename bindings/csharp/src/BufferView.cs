// BufferView.cs - a checked view of one input buffer: what the plain views (XAs<T>, XAsFloat32, ...)
// return.
//
// Those views used to return a Span<T> straight onto the library's buffer (README.md, Changes). A Span
// cannot be checked once handed out, and it cannot keep anything alive, so a write through one after
// Dispose (or after the finalizer freed a context that had become unreachable) went into freed memory:
// for a small buffer, heap corruption that aborted mono later; for a large one, a SIGSEGV, or the
// buffer of a newer context overwritten in silence.
//
// A BufferView<T> holds its context, so the context stays reachable while the view is, and every
// access takes a reference on the context's SafeHandle for its own duration, as a native call does:
//  - after Dispose, every access throws ObjectDisposedException; nothing touches the freed buffers;
//  - a Dispose on another thread during an access frees the buffers only when that access has ended.
// The price is that reference, two interlocked operations per access. Fill, Clear, CopyFrom, CopyTo
// and ToArray pay it once per call; for loops over many elements, take a lease (LeaseX/LeaseY), whose
// Span costs nothing per element.
using System;

namespace Cudot
{
    /// <summary>A checked view of elements [Start, Start + Length) of one input buffer of a CudotContext,
    /// as T (from XAs, YAs, XAsFloat32, ...). Every access checks the context: after its Dispose, each one
    /// throws ObjectDisposedException instead of touching freed memory. Each access costs two interlocked
    /// operations; for loops, LeaseX/LeaseY give a Span instead.</summary>
    public sealed class BufferView<T> where T : struct
    {
        readonly CudotContext owner;
        readonly IntPtr first; // the window's first element (IntPtr.Zero when Length is 0)
        readonly int length;

        internal BufferView(CudotContext owner, IntPtr first, long start, int length)
        {
            this.owner = owner;
            this.first = first;
            this.length = length;
            Start = start;
        }

        /// <summary>Index, in elements of the buffer, of this view's first element.</summary>
        public long Start { get; }

        /// <summary>Number of elements in the view. Readable after Dispose.</summary>
        public int Length { get { return length; } }

        /// <summary>Element index of the view. IndexOutOfRangeException outside [0, Length);
        /// ObjectDisposedException once the context is disposed.</summary>
        public T this[int index]
        {
            get
            {
                using (owner.Lease()) return Window()[index];
            }
            set
            {
                using (owner.Lease())
                {
                    Span<T> window = Window(); // a local: mcs cannot assign through a call's ref return
                    window[index] = value;
                }
            }
        }

        /// <summary>Sets every element to value.</summary>
        public void Fill(T value)
        {
            using (owner.Lease()) Window().Fill(value);
        }

        /// <summary>Sets every element to its zero bits.</summary>
        public void Clear()
        {
            using (owner.Lease()) Window().Clear();
        }

        /// <summary>Copies source to the first source.Length elements; ArgumentException if it is longer
        /// than the view.</summary>
        public void CopyFrom(ReadOnlySpan<T> source)
        {
            if (source.Length > length)
                throw new ArgumentException("source has " + source.Length + " elements, the view " + length, "source");
            using (owner.Lease()) source.CopyTo(Window());
        }

        /// <summary>Copies the view to the start of destination; ArgumentException if destination is
        /// shorter than the view.</summary>
        public void CopyTo(Span<T> destination)
        {
            if (destination.Length < length)
                throw new ArgumentException("destination has " + destination.Length + " elements, the view " + length, "destination");
            using (owner.Lease()) Window().CopyTo(destination);
        }

        /// <summary>A copy of the view's elements in a new array.</summary>
        public T[] ToArray()
        {
            using (owner.Lease()) return Window().ToArray();
        }

        // Only while a reference on the handle is held (owner.Lease()).
        unsafe Span<T> Window()
        {
            return length == 0 ? Span<T>.Empty : new Span<T>((void*)first, length);
        }
    }
}
