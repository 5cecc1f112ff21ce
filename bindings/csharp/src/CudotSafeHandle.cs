// CudotSafeHandle.cs - owns one cudot_ctx*. SafeHandle gives three things a raw IntPtr cannot:
// a critical finalizer (the context is freed even if Dispose is forgotten), reference counting
// (Dispose during a native call on another thread is deferred until that call returns), and
// release exactly once (Dispose twice, or Dispose racing the finalizer, frees once).
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    /// <summary>Owns one cudot_ctx*: frees it exactly once, when the last reference (Dispose, a native call
    /// in flight, an open BufferLease) is gone, or from its finalizer.</summary>
    public sealed class CudotSafeHandle : SafeHandle
    {
        /// <summary>An empty handle; CudotContext attaches the context.</summary>
        public CudotSafeHandle() : base(IntPtr.Zero, true) { }

        /// <summary>True while no context is attached.</summary>
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        internal void Attach(IntPtr ctx) { SetHandle(ctx); }

        // Runs from Dispose or from the finalizer thread, so it must never throw or print. The status
        // is dropped: per cudot.h the context is destroyed even when freeing GPU memory reports an
        // error, and there is nobody to tell from a finalizer.
        /// <summary>Calls cudot_deinit; never throws.</summary>
        protected override bool ReleaseHandle()
        {
            Api.Deinit(handle);
            return true;
        }
    }

    // Holds a reference on the handle for the duration of one native call:
    //     using (var h = new HandleLease(safeHandle)) { Api.Dot(h.Ptr, out r); }
    // Taking it on a disposed handle throws ObjectDisposedException instead of passing a freed pointer.
    internal struct HandleLease : IDisposable
    {
        readonly SafeHandle owner;
        bool added;

        internal HandleLease(SafeHandle handle)
        {
            owner = handle;
            added = false;
            handle.DangerousAddRef(ref added);
        }

        internal IntPtr Ptr { get { return owner.DangerousGetHandle(); } }

        public void Dispose()
        {
            if (added) { added = false; owner.DangerousRelease(); }
        }
    }
}
