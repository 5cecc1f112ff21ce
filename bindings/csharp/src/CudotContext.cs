// CudotContext.cs - one cudot context: input buffers exposed as Span views, and the dot product.
//
// Lifetime rule: the Spans returned by XAsFloat32() and friends point straight into the library's
// buffers, which cudot_deinit frees. A Span obtained before Dispose must not be used after it. C#
// keeps a Span on the stack (no fields, no boxing, no lambdas, no async), so in normal code it
// cannot silently outlive the `using` block that owns the context; only code that calls Dispose
// itself, or another thread, can break the rule. After Dispose every member (the Span getters
// included; DType and IsDisposed excepted) throws ObjectDisposedException; a Span obtained earlier
// cannot be checked.
using System;

namespace Cudot
{
    public sealed class CudotContext : IDisposable
    {
        /// <summary>Value of Device for a context computing on the CPU (CUDOT_DEVICE_NONE).</summary>
        public const int DeviceNone = -2;

        readonly CudotSafeHandle handle;
        readonly IntPtr x, y;       // stable until cudot_deinit, so fetched once
        readonly long capacity;
        volatile bool disposed;     // set by Dispose before the handle closes; see Lease

        /// <summary>Element type chosen at creation.</summary>
        public DType DType { get; }

        /// <summary>Creates a context for n elements (cudot_init). Throws CudotException on failure.</summary>
        public unsafe CudotContext(long n, DType dtype = DType.Float32, Memory memory = Memory.Auto, int device = 0)
        {
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "capacity cannot be negative");
            CudotLibrary.EnsureLoaded(); // must precede the first Api call (see Native.cs)

            var config = new NativeConfig { Size = (uint)sizeof(NativeConfig), DType = (int)dtype, Memory = (int)memory, Device = device };
            var h = new CudotSafeHandle(); // allocated before the call, so nothing can fail between init and Attach
            IntPtr raw;
            int status = Api.Init(out raw, (ulong)n, &config);
            if (status != 0)
            {
                // Thread-local message of the last failed init: read now, on this same thread.
                string message = Api.LastError(IntPtr.Zero);
                h.SetHandleAsInvalid();
                throw Error(status, message);
            }
            h.Attach(raw);
            handle = h;
            DType = dtype;
            capacity = n;
            try
            {
                using (var lease = Lease())
                    Check(Api.GetInputs(lease.Ptr, out x, out y), lease.Ptr);
            }
            catch
            {
                handle.Dispose(); // no object will be returned to dispose it later
                throw;
            }
        }

        /// <summary>The owning SafeHandle, for callers that need the raw cudot_ctx* (use DangerousAddRef).</summary>
        public CudotSafeHandle Handle { get { return handle; } }

        /// <summary>True once Dispose ran (or the handle was closed some other way).</summary>
        public bool IsDisposed { get { return disposed || handle.IsClosed; } }

        /// <summary>Capacity in elements, from cudot_get_capacity.</summary>
        public long Capacity
        {
            get
            {
                using (var lease = Lease())
                {
                    ulong n;
                    Check(Api.GetCapacity(lease.Ptr, out n), lease.Ptr);
                    return (long)n;
                }
            }
        }

        /// <summary>The strategy actually in use (never Auto), from cudot_get_memory.</summary>
        public Memory MemoryUsed
        {
            get { int m, d; QueryMemory(out m, out d); return (Memory)m; }
        }

        /// <summary>CUDA device ordinal, or DeviceNone (-2) on the CPU, from cudot_get_memory.</summary>
        public int Device
        {
            get { int m, d; QueryMemory(out m, out d); return d; }
        }

        void QueryMemory(out int memory, out int device)
        {
            using (var lease = Lease())
                Check(Api.GetMemory(lease.Ptr, out memory, out device), lease.Ptr);
        }

        /// <summary>x as float, all Capacity elements. Throws unless DType is Float32.</summary>
        public Span<float> XAsFloat32() { return View<float>(x, DType.Float32, 0, WholeLength()); }
        /// <summary>y as float, all Capacity elements. Throws unless DType is Float32.</summary>
        public Span<float> YAsFloat32() { return View<float>(y, DType.Float32, 0, WholeLength()); }
        /// <summary>x as double, all Capacity elements. Throws unless DType is Float64.</summary>
        public Span<double> XAsFloat64() { return View<double>(x, DType.Float64, 0, WholeLength()); }
        /// <summary>y as double, all Capacity elements. Throws unless DType is Float64.</summary>
        public Span<double> YAsFloat64() { return View<double>(y, DType.Float64, 0, WholeLength()); }

        // Windows for capacities beyond int.MaxValue, which a single Span cannot cover.
        public Span<float> XAsFloat32(long start, int length) { return View<float>(x, DType.Float32, start, length); }
        public Span<float> YAsFloat32(long start, int length) { return View<float>(y, DType.Float32, start, length); }
        public Span<double> XAsFloat64(long start, int length) { return View<double>(x, DType.Float64, start, length); }
        public Span<double> YAsFloat64(long start, int length) { return View<double>(y, DType.Float64, start, length); }

        int WholeLength()
        {
            if (capacity > int.MaxValue)
                throw new InvalidOperationException("capacity " + capacity + " exceeds what one Span can cover; use the (start, length) overloads");
            return (int)capacity;
        }

        unsafe Span<T> View<T>(IntPtr buffer, DType want, long start, int length)
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().FullName);
            // A float view of double data (or the reverse) would read garbage: refuse it.
            if (DType != want)
                throw new InvalidOperationException("this context holds " + DType + " elements, not " + want);
            if (start < 0 || length < 0 || start > capacity - length)
                throw new ArgumentOutOfRangeException("start", "window [" + start + ", +" + length + ") is outside capacity " + capacity);
            if (length == 0) return Span<T>.Empty; // with n == 0 the pointers must not be dereferenced
            int size = want == DType.Float32 ? sizeof(float) : sizeof(double);
            return new Span<T>((byte*)buffer + start * size, length);
        }

        /// <summary>Dot product of all Capacity elements (cudot_dot).</summary>
        public double Dot()
        {
            using (var lease = Lease())
            {
                double r;
                Check(Api.Dot(lease.Ptr, out r), lease.Ptr);
                return r;
            }
        }

        /// <summary>Dot product of the first n elements (cudot_dot_n); n beyond Capacity fails with InvalidArgument.</summary>
        public double Dot(long n)
        {
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            using (var lease = Lease())
            {
                double r;
                Check(Api.DotN(lease.Ptr, (ulong)n, out r), lease.Ptr);
                return r;
            }
        }

        /// <summary>Frees the context: at once, or, while native calls on other threads are in flight,
        /// when the last of them returns. Idempotent. Every later call throws ObjectDisposedException.</summary>
        public void Dispose()
        {
            disposed = true;
            handle.Dispose();
        }

        // A reference on the handle for one native call. SafeHandle alone still lets new references
        // be taken after Dispose while another thread holds one (the handle is only "closed" once the
        // count drops to zero), so the disposed flag is checked after taking ours: either it is clear
        // and our reference keeps the context alive, or we let go and throw.
        HandleLease Lease()
        {
            var lease = new HandleLease(handle); // throws ObjectDisposedException once closed
            if (disposed)
            {
                lease.Dispose();
                throw new ObjectDisposedException(GetType().FullName);
            }
            return lease;
        }

        // Called with the lease still held, so the context (and its message) is alive.
        static void Check(int status, IntPtr ctx)
        {
            if (status != 0) throw Error(status, Api.LastError(ctx));
        }

        static CudotException Error(int status, string message)
        {
            return new CudotException((Status)status, Api.StatusString(status), message);
        }
    }
}
