// BufferLease.cs - a view of one input buffer that keeps the buffer alive while it is held.
//
// Why: a Span<T> cannot hold a reference to anything, so a Span straight onto the library's buffer
// dangles as soon as the context is freed: by Dispose on another thread, or by the SafeHandle's
// finalizer once the context is unreachable (the runtime does not count a Span as a use). A lease
// holds a reference on the context's SafeHandle (DangerousAddRef) from creation until it is disposed,
// and the SafeHandle frees the context only when its last reference goes. So while a lease is open:
//  - Dispose of the context on any thread closes it for new calls and new leases at once, but the
//    buffers stay valid until this lease (and every pin taken from it) is released;
//  - the context object may become unreachable and be finalized: the buffers stay valid all the same.
// It is a MemoryManager<T>, the .NET type for memory someone else owns: Memory gives a Memory<T>
// that may be kept in fields and used across await, and Memory.Pin() holds the buffers too.
//
// The rule for users: a Span from a lease is valid until that lease is disposed. A lease that is never
// disposed keeps the context's buffers for the life of the process (deliberately no finalizer: a
// finalizer cannot know whether a Span from the lease is still in use).
using System;
using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading;

namespace Cudot
{
    /// <summary>A view of one input buffer of a CudotContext (from LeaseX / LeaseY) that keeps the buffer
    /// valid until the lease is disposed, even if the context is disposed on another thread or collected
    /// meanwhile. Use it with `using`; a Span from Span, GetSpan() or Memory.Span is valid until then.</summary>
    public sealed class BufferLease<T> : MemoryManager<T>, IDisposable where T : struct
    {
        readonly SafeHandle owner;  // its reference was taken by CudotContext.LeaseView, for this lease
        readonly IntPtr first;      // the window's first element (IntPtr.Zero when Length is 0)
        readonly int length, elementSize;
        int disposed, pins, released;

        internal BufferLease(SafeHandle owner, IntPtr first, long start, int length, int elementSize)
        {
            this.owner = owner;
            this.first = first;
            this.length = length;
            this.elementSize = elementSize;
            Start = start;
        }

        /// <summary>Index, in elements of the buffer, of this view's first element.</summary>
        public long Start { get; }

        /// <summary>Number of elements in the view.</summary>
        public int Length { get { return length; } }

        /// <summary>True once Dispose ran.</summary>
        public bool IsDisposed { get { return Volatile.Read(ref disposed) != 0; } }

        /// <summary>The view as a Span (the same as GetSpan()). Valid until this lease is disposed.</summary>
        public Span<T> Span { get { return GetSpan(); } }

        /// <summary>The view as a Span; ObjectDisposedException once the lease is disposed.</summary>
        public override unsafe Span<T> GetSpan()
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().Name);
            return length == 0 ? Span<T>.Empty : new Span<T>((void*)first, length);
        }

        /// <summary>Pins element elementIndex (the buffers never move; the pin keeps them alive): the
        /// returned MemoryHandle holds the buffers until it is disposed, even past this lease's Dispose.</summary>
        public override unsafe MemoryHandle Pin(int elementIndex = 0)
        {
            if (elementIndex < 0 || elementIndex > length) throw new ArgumentOutOfRangeException("elementIndex");
            // Count the pin before looking at the flag; Dispose sets the flag before looking at the count.
            // Both are full fences, so one of the two sees the other and the buffers are never released
            // under a pin that was handed out.
            Interlocked.Increment(ref pins);
            if (IsDisposed)
            {
                ReleasePin();
                throw new ObjectDisposedException(GetType().Name);
            }
            byte* p = length == 0 ? null : (byte*)first + (long)elementIndex * elementSize;
            // Each pin gets its own release: MemoryHandle is a struct, and disposing two copies of one
            // handle must not also take away the share of another pin.
            return new MemoryHandle(p, default(GCHandle), new PinRelease(this));
        }

        /// <summary>Does nothing: a pin is released by disposing the MemoryHandle that Pin returned.</summary>
        public override void Unpin() { }

        void ReleasePin()
        {
            Interlocked.Decrement(ref pins);
            ReleaseIfUnused();
        }

        // The IPinnable behind one MemoryHandle from Pin: releases its pin once, however many copies of
        // the handle are disposed.
        sealed class PinRelease : IPinnable
        {
            readonly BufferLease<T> lease;
            int done;

            internal PinRelease(BufferLease<T> lease) { this.lease = lease; }

            public MemoryHandle Pin(int elementIndex) { throw new NotSupportedException(); }

            public void Unpin()
            {
                if (Interlocked.Exchange(ref done, 1) == 0) lease.ReleasePin();
            }
        }

        /// <summary>Ends the lease (idempotent, thread-safe). The buffers are freed now if the context was
        /// disposed and nothing else (another lease, a pin, a native call) holds them.</summary>
        public void Dispose() { Dispose(true); } // MemoryManager implements IDisposable explicitly only

        /// <summary>Ends the lease; see Dispose().</summary>
        protected override void Dispose(bool disposing)
        {
            if (Interlocked.Exchange(ref disposed, 1) == 0) ReleaseIfUnused();
        }

        void ReleaseIfUnused()
        {
            if (Volatile.Read(ref disposed) != 0 && Volatile.Read(ref pins) == 0 && Interlocked.Exchange(ref released, 1) == 0)
                owner.DangerousRelease();
        }
    }
}
