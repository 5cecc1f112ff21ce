// CudotContext.cs - one cudot context: input buffers exposed as views, and the dot product.
//
// Two kinds of views onto the library's buffers, which cudot_deinit frees:
//  - leases (LeaseX<T>, LeaseY<T>: BufferLease.cs) hold a reference on the SafeHandle until disposed,
//    so their Spans stay valid whatever other threads or the GC do to the context meanwhile;
//  - checked views (XAs<T>, XAsFloat32, ...: BufferView.cs) hold the context and take a reference on
//    the SafeHandle for each access, so an access after Dispose throws ObjectDisposedException. They
//    used to return a bare Span<T>, which nothing could check after Dispose (README.md, Changes).
// After Dispose every member (views and leases included; DType, XDType, YDType and IsDisposed
// excepted) throws ObjectDisposedException.
using System;

namespace Cudot
{
    /// <summary>A cudot context (cudot_init): two input buffers of Capacity elements, owned by the library
    /// and filled in place through views, and the dot product of what they hold. Dispose it.</summary>
    public sealed partial class CudotContext : IDisposable
    {
        /// <summary>Device value (CUDOT_DEVICE_ALL) asking for one context over every visible GPU: each dot is
        /// split between them and gives the same bits as on one GPU; Device then reports DeviceAll. Needs
        /// library 1.3 (older ones answer Unsupported).</summary>
        public const int DeviceAll = -1;

        /// <summary>Value of Device for a context computing on the CPU (CUDOT_DEVICE_NONE).</summary>
        public const int DeviceNone = -2;

        /// <summary>CUDOT_DEFAULT_WAIT_MS: the fixed part, in milliseconds, of the library's default bound on
        /// waits for the GPU (what waitMs 0 asks for), to which it adds 2 s per GiB the call reads.</summary>
        public const uint DefaultWaitMs = 60000;

        readonly CudotSafeHandle handle;
        readonly IntPtr x, y;       // stable until cudot_deinit, so fetched once
        readonly long capacity;     // rows * rowLength
        readonly long rows, rowLength;
        readonly DType xType, yType;   // as the library reports them (cudot_get_dtypes)
        readonly bool exact;        // as the library reports it (cudot_get_mode): sizes TilePartials' output
        volatile bool disposed;     // set by Dispose before the handle closes; see Lease

        /// <summary>Element type of x (the same as XDType; kept from the 1.0 binding).</summary>
        public DType DType { get { return xType; } }

        /// <summary>Element type of x, as the library reports it. Readable after Dispose.</summary>
        public DType XDType { get { return xType; } }

        /// <summary>Element type of y, as the library reports it. Readable after Dispose.</summary>
        public DType YDType { get { return yType; } }

        /// <summary>The 1.0 binding's constructor, kept so that code compiled against it still binds.</summary>
        public CudotContext(long n, DType dtype, Memory memory, int device) : this(n, dtype, memory, device, null) { }

        /// <summary>The 1.1 binding's constructor, kept so that code compiled against it still binds.</summary>
        public CudotContext(long n, DType dtype, Memory memory, int device, DType? yDType) : this(n, dtype, memory, device, yDType, 0) { }

        /// <summary>The 1.5 binding's constructor, kept so that code compiled against it still binds.</summary>
        public CudotContext(long n, DType dtype, Memory memory, int device, DType? yDType, uint waitMs)
            : this(n, dtype, memory, device, yDType, waitMs, 1) { }

        /// <summary>The 1.10 binding's constructor, kept so that code compiled against it still binds.</summary>
        public CudotContext(long n, DType dtype, Memory memory, int device, DType? yDType, uint waitMs, long rows)
            : this(n, dtype, memory, device, yDType, waitMs, rows, false) { }

        /// <summary>Creates a context for n elements (cudot_init): x of dtype, y of yDType (null: the same
        /// as dtype). waitMs bounds, in milliseconds, how long one call of a GPU strategy waits for the GPU
        /// (0: the library's default, DefaultWaitMs plus 2 s per GiB the call reads); a call that waits
        /// longer throws with Status.Cuda, and the context can then only be disposed. A non-zero waitMs
        /// needs library 1.5 (older ones throw Unsupported). rows (library 1.10 when above 1; older ones
        /// throw Unsupported) makes buffers of rows rows of n elements each, row-major: Capacity is rows * n,
        /// row r is the window (r * n, n) of the views, and DotEachRow dots the rows one by one, while Dot
        /// sees each buffer as one vector of rows * n elements. exact (library 1.13; older ones throw
        /// Unsupported) makes a context in the exact mode: Dot and Dot(n) give the correctly rounded dot, as
        /// CudotArrays.DotExact does, TilePartials one exact partial for CudotLibrary.JoinExactPartials, and
        /// DotEachRow each row's exact dot (library 1.14; a 1.13 library throws Unsupported for it). Throws
        /// CudotException on failure.</summary>
        public unsafe CudotContext(long n, DType dtype = DType.Float32, Memory memory = Memory.Auto, int device = 0, DType? yDType = null,
                                   uint waitMs = 0, long rows = 1, bool exact = false)
        {
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "capacity cannot be negative");
            if (rows < 1) throw new ArgumentOutOfRangeException("rows", rows, "a context has at least one row");
            if (n > 0 && rows > long.MaxValue / n)
                throw new ArgumentOutOfRangeException("rows", rows, rows + " rows of " + n + " elements overflow a long");
            CudotLibrary.EnsureLoaded(); // must precede the first Api call (see Native.cs)

            // y_dtype 0 means "as dtype"; sending 0 for an equal pair also lets a 1.0 library (which
            // knows only the first 16 bytes and refuses non-zero ones beyond) serve it. WaitMs 0 likewise
            // keeps the config valid for a library older than 1.5, Rows 0 (one row) for one older than 1.10,
            // and Mode 0 (canonical) for one older than 1.13.
            int yWire = yDType == null || yDType.Value == dtype ? 0 : (int)yDType.Value;
            var config = new NativeConfig
            {
                Size = (uint)sizeof(NativeConfig), DType = (int)dtype, Memory = (int)memory, Device = device, YDType = yWire,
                WaitMs = waitMs, Rows = rows == 1 ? 0 : (ulong)rows, Mode = exact ? (int)Mode.Exact : (int)Mode.Canonical,
            };
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
            capacity = n * rows;
            this.rows = rows;
            rowLength = n;
            try
            {
                using (var lease = Lease())
                {
                    Check(Api.GetInputs(lease.Ptr, out x, out y), lease.Ptr);
                    int xd, yd;
                    if (CudotLibrary.Version >= 10100)
                        Check(Api.GetDTypes(lease.Ptr, out xd, out yd), lease.Ptr);
                    else
                        xd = yd = dtype == 0 ? (int)DType.Float32 : (int)dtype; // 1.0: no cudot_get_dtypes, no mixed pairs
                    xType = (DType)xd;
                    yType = (DType)yd;
                    this.exact = QueryExact(lease.Ptr);
                }
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

        /// <summary>Capacity in elements (rows * n for a context with rows), from cudot_get_capacity.</summary>
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

        /// <summary>CUDA device ordinal, DeviceAll (-1) for a context on every visible GPU, or DeviceNone (-2)
        /// on the CPU, from cudot_get_memory.</summary>
        public int Device
        {
            get { int m, d; QueryMemory(out m, out d); return d; }
        }

        /// <summary>True for a context in the exact mode (the constructor's exact), from cudot_get_mode.
        /// A library older than 1.13 makes only canonical contexts: false.</summary>
        public bool Exact
        {
            get
            {
                using (var lease = Lease())
                    return QueryExact(lease.Ptr);
            }
        }

        static bool QueryExact(IntPtr ctx)
        {
            if (CudotLibrary.Version < 11300) return false; // no cudot_get_mode, and no exact contexts
            int mode;
            Check(Api.GetMode(ctx, out mode), ctx);
            return mode == (int)Mode.Exact;
        }

        void QueryMemory(out int memory, out int device)
        {
            using (var lease = Lease())
                Check(Api.GetMemory(lease.Ptr, out memory, out device), lease.Ptr);
        }

        // ---- Checked views (BufferView.cs: every access checks the context; prefer leases for loops).
        // Each checks the element type of its side (XDType or YDType) and throws
        // InvalidOperationException on a mismatch: a float view of int8 data would read garbage.
        // The (start, length) overloads give a window, for capacities beyond int.MaxValue (the longest
        // a view can be); the others cover all Capacity elements.

        /// <summary>x as T, all Capacity elements. T must fit XDType: float (Float32), double (Float64),
        /// System.Half (Float16, .NET 5+ only) or ushort bit patterns (Float16, BFloat16), sbyte (Int8),
        /// byte or bool (UInt8). A checked view: each access takes a reference on this context, and throws
        /// ObjectDisposedException once it is disposed. For loops, LeaseX gives a Span.</summary>
        public BufferView<T> XAs<T>() where T : struct { return View<T>(true, null, 0, WholeLength()); }
        /// <summary>y as T, all Capacity elements; T must fit YDType (see XAs).</summary>
        public BufferView<T> YAs<T>() where T : struct { return View<T>(false, null, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as T; see XAs.</summary>
        public BufferView<T> XAs<T>(long start, int length) where T : struct { return View<T>(true, null, start, length); }
        /// <summary>Elements [start, start + length) of y as T; see XAs.</summary>
        public BufferView<T> YAs<T>(long start, int length) where T : struct { return View<T>(false, null, start, length); }

        /// <summary>x as float. Throws unless XDType is Float32 (YAsFloat32: YDType).</summary>
        public BufferView<float> XAsFloat32() { return View<float>(true, DType.Float32, 0, WholeLength()); }
        /// <summary>y as float; see XAsFloat32.</summary>
        public BufferView<float> YAsFloat32() { return View<float>(false, DType.Float32, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as float; see XAsFloat32.</summary>
        public BufferView<float> XAsFloat32(long start, int length) { return View<float>(true, DType.Float32, start, length); }
        /// <summary>Elements [start, start + length) of y as float; see XAsFloat32.</summary>
        public BufferView<float> YAsFloat32(long start, int length) { return View<float>(false, DType.Float32, start, length); }

        /// <summary>x as double. Throws unless XDType is Float64 (YAsFloat64: YDType).</summary>
        public BufferView<double> XAsFloat64() { return View<double>(true, DType.Float64, 0, WholeLength()); }
        /// <summary>y as double; see XAsFloat64.</summary>
        public BufferView<double> YAsFloat64() { return View<double>(false, DType.Float64, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as double; see XAsFloat64.</summary>
        public BufferView<double> XAsFloat64(long start, int length) { return View<double>(true, DType.Float64, start, length); }
        /// <summary>Elements [start, start + length) of y as double; see XAsFloat64.</summary>
        public BufferView<double> YAsFloat64(long start, int length) { return View<double>(false, DType.Float64, start, length); }

        /// <summary>x as sbyte. Throws unless XDType is Int8 (YAsInt8: YDType).</summary>
        public BufferView<sbyte> XAsInt8() { return View<sbyte>(true, DType.Int8, 0, WholeLength()); }
        /// <summary>y as sbyte; see XAsInt8.</summary>
        public BufferView<sbyte> YAsInt8() { return View<sbyte>(false, DType.Int8, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as sbyte; see XAsInt8.</summary>
        public BufferView<sbyte> XAsInt8(long start, int length) { return View<sbyte>(true, DType.Int8, start, length); }
        /// <summary>Elements [start, start + length) of y as sbyte; see XAsInt8.</summary>
        public BufferView<sbyte> YAsInt8(long start, int length) { return View<sbyte>(false, DType.Int8, start, length); }

        /// <summary>x as byte. Throws unless XDType is UInt8 (YAsUInt8: YDType).</summary>
        public BufferView<byte> XAsUInt8() { return View<byte>(true, DType.UInt8, 0, WholeLength()); }
        /// <summary>y as byte; see XAsUInt8.</summary>
        public BufferView<byte> YAsUInt8() { return View<byte>(false, DType.UInt8, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as byte; see XAsUInt8.</summary>
        public BufferView<byte> XAsUInt8(long start, int length) { return View<byte>(true, DType.UInt8, start, length); }
        /// <summary>Elements [start, start + length) of y as byte; see XAsUInt8.</summary>
        public BufferView<byte> YAsUInt8(long start, int length) { return View<byte>(false, DType.UInt8, start, length); }

        /// <summary>x as a bool mask over UInt8 storage: writing true stores 1, false 0. Throws unless
        /// XDType is UInt8. Reading an element that the byte view set to anything but 0 or 1 gives a bool
        /// whose behaviour .NET leaves undefined; keep such buffers to 0/1 (YAsBool: YDType).</summary>
        public BufferView<bool> XAsBool() { return View<bool>(true, DType.UInt8, 0, WholeLength()); }
        /// <summary>y as bool; see XAsBool.</summary>
        public BufferView<bool> YAsBool() { return View<bool>(false, DType.UInt8, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as bool; see XAsBool.</summary>
        public BufferView<bool> XAsBool(long start, int length) { return View<bool>(true, DType.UInt8, start, length); }
        /// <summary>Elements [start, start + length) of y as bool; see XAsBool.</summary>
        public BufferView<bool> YAsBool(long start, int length) { return View<bool>(false, DType.UInt8, start, length); }

        /// <summary>x as IEEE binary16 bit patterns (Float16Bits converts). Throws unless XDType is Float16.</summary>
        public BufferView<ushort> XAsFloat16Bits() { return View<ushort>(true, DType.Float16, 0, WholeLength()); }
        /// <summary>y as ushort; see XAsFloat16Bits.</summary>
        public BufferView<ushort> YAsFloat16Bits() { return View<ushort>(false, DType.Float16, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as ushort; see XAsFloat16Bits.</summary>
        public BufferView<ushort> XAsFloat16Bits(long start, int length) { return View<ushort>(true, DType.Float16, start, length); }
        /// <summary>Elements [start, start + length) of y as ushort; see XAsFloat16Bits.</summary>
        public BufferView<ushort> YAsFloat16Bits(long start, int length) { return View<ushort>(false, DType.Float16, start, length); }

        /// <summary>x as bfloat16 bit patterns (BFloat16Bits converts). Throws unless XDType is BFloat16.</summary>
        public BufferView<ushort> XAsBFloat16Bits() { return View<ushort>(true, DType.BFloat16, 0, WholeLength()); }
        /// <summary>y as ushort; see XAsBFloat16Bits.</summary>
        public BufferView<ushort> YAsBFloat16Bits() { return View<ushort>(false, DType.BFloat16, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as ushort; see XAsBFloat16Bits.</summary>
        public BufferView<ushort> XAsBFloat16Bits(long start, int length) { return View<ushort>(true, DType.BFloat16, start, length); }
        /// <summary>Elements [start, start + length) of y as ushort; see XAsBFloat16Bits.</summary>
        public BufferView<ushort> YAsBFloat16Bits(long start, int length) { return View<ushort>(false, DType.BFloat16, start, length); }

        // ---- Leases: views that keep the buffers alive until disposed (BufferLease.cs says why).

        /// <summary>A lease on all of x as T (T as for XAs): its Span stays valid until the lease is disposed,
        /// even if this context is disposed on another thread or becomes unreachable meanwhile. Use with
        /// `using`. ObjectDisposedException once this context is disposed.</summary>
        public BufferLease<T> LeaseX<T>() where T : struct { return LeaseView<T>(true, 0, WholeLength()); }
        /// <summary>A lease on all of y as T; see LeaseX.</summary>
        public BufferLease<T> LeaseY<T>() where T : struct { return LeaseView<T>(false, 0, WholeLength()); }
        /// <summary>A lease on elements [start, start + length) of x as T; see LeaseX.</summary>
        public BufferLease<T> LeaseX<T>(long start, int length) where T : struct { return LeaseView<T>(true, start, length); }
        /// <summary>A lease on elements [start, start + length) of y as T; see LeaseX.</summary>
        public BufferLease<T> LeaseY<T>(long start, int length) where T : struct { return LeaseView<T>(false, start, length); }

#if NET5_0_OR_GREATER
        /// <summary>x as System.Half (.NET 5+ only; on Mono use XAsFloat16Bits). Throws unless XDType is Float16.</summary>
        public BufferView<Half> XAsFloat16() { return View<Half>(true, DType.Float16, 0, WholeLength()); }
        /// <summary>y as Half; see XAsFloat16.</summary>
        public BufferView<Half> YAsFloat16() { return View<Half>(false, DType.Float16, 0, WholeLength()); }
        /// <summary>Elements [start, start + length) of x as Half; see XAsFloat16.</summary>
        public BufferView<Half> XAsFloat16(long start, int length) { return View<Half>(true, DType.Float16, start, length); }
        /// <summary>Elements [start, start + length) of y as Half; see XAsFloat16.</summary>
        public BufferView<Half> YAsFloat16(long start, int length) { return View<Half>(false, DType.Float16, start, length); }
#endif

        int WholeLength()
        {
            if (capacity > int.MaxValue)
                throw new InvalidOperationException("capacity " + capacity + " exceeds what one Span can cover; use the (start, length) overloads");
            return (int)capacity;
        }

        // exact: the one dtype a named view needs; null for XAs/YAs and leases, which accept any dtype T fits.
        BufferView<T> View<T>(bool isX, DType? exact, long start, int length) where T : struct
        {
            return new BufferView<T>(this, Locate<T>(isX, exact, start, length), start, length);
        }

        // The address of element `start` of one side, after every check a view makes; IntPtr.Zero for an
        // empty window (with n == 0 the pointers must not be dereferenced).
        unsafe IntPtr Locate<T>(bool isX, DType? exact, long start, int length) where T : struct
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().FullName);
            DType have = isX ? xType : yType;
            if (exact != null ? have != exact.Value : !Fits(typeof(T), have))
                throw new InvalidOperationException((isX ? "x" : "y") + " of this context holds " + have + " elements, not " +
                    (exact != null ? exact.Value.ToString() : "elements a Span<" + typeof(T).Name + "> can view") +
                    LeaseHint(isX, have));
            if (start < 0 || length < 0 || start > capacity - length)
                throw new ArgumentOutOfRangeException("start", "window [" + start + ", +" + length + ") is outside capacity " + capacity);
            if (length == 0) return IntPtr.Zero;
            // Fits (or exact) guarantees that T has the dtype's size.
            return new IntPtr((byte*)(isX ? x : y) + start * ElementSize(have));
        }

        // A lease takes its own reference on the handle, kept until the lease is disposed. The disposed
        // flag is checked after taking it, for the same reason as in Lease() below.
        BufferLease<T> LeaseView<T>(bool isX, long start, int length) where T : struct
        {
            IntPtr p = Locate<T>(isX, null, start, length);
            bool added = false;
            handle.DangerousAddRef(ref added); // throws ObjectDisposedException once closed
            try
            {
                if (disposed) throw new ObjectDisposedException(GetType().FullName);
                var lease = new BufferLease<T>(handle, p, start, length, ElementSize(isX ? xType : yType));
                added = false; // the lease owns the reference now
                return lease;
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        // Whether a Span<t> can view elements of d (also DotSpan.Create's check).
        internal static bool Fits(Type t, DType d)
        {
            switch (d)
            {
                case DType.Float32: return t == typeof(float);
                case DType.Float64: return t == typeof(double);
                case DType.Float16: return t == typeof(ushort) || IsHalf(t);
                case DType.BFloat16: return t == typeof(ushort);
                case DType.Int8: return t == typeof(sbyte);
                case DType.UInt8: return t == typeof(byte) || t == typeof(bool);
                default: return false; // a type newer than this binding
            }
        }

        static bool IsHalf(Type t)
        {
#if NET5_0_OR_GREATER
            return t == typeof(Half);
#else
            return false; // Mono has no System.Half
#endif
        }

        // What to use instead, for a type mismatch: the lease that fits the side's type.
        static string LeaseHint(bool isX, DType d)
        {
            string lease = isX ? "ctx.LeaseX" : "ctx.LeaseY";
            switch (d)
            {
                case DType.Float32: return " (use " + lease + "<float>())";
                case DType.Float64: return " (use " + lease + "<double>())";
#if NET5_0_OR_GREATER
                case DType.Float16: return " (use " + lease + "<Half>(), or " + lease + "<ushort>() for IEEE binary16 bit patterns)";
#else
                case DType.Float16: return " (use " + lease + "<ushort>(), IEEE binary16 bit patterns: Float16Bits converts)";
#endif
                case DType.BFloat16: return " (use " + lease + "<ushort>(), bfloat16 bit patterns: BFloat16Bits converts)";
                case DType.Int8: return " (use " + lease + "<sbyte>())";
                case DType.UInt8: return " (use " + lease + "<byte>(), or " + lease + "<bool>() for a 0/1 mask)";
                default: return ""; // a type newer than this binding
            }
        }

        /// <summary>Bytes per element of a dtype as stored in the buffers (0 for an unknown value).</summary>
        public static int ElementSize(DType dtype)
        {
            switch (dtype)
            {
                case DType.Float64: return 8;
                case DType.Float32: return 4;
                case DType.Float16: case DType.BFloat16: return 2;
                case DType.Int8: case DType.UInt8: return 1;
                default: return 0;
            }
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

        /// <summary>Frees the context: at once, or, while native calls on other threads are in flight or
        /// leases are open, when the last of them ends. Never waits. Idempotent. Every later call, and
        /// every new view or lease, throws ObjectDisposedException.</summary>
        public void Dispose()
        {
            disposed = true;
            handle.Dispose();
        }

        // A reference on the handle for one native call. SafeHandle alone still lets new references
        // be taken after Dispose while another thread holds one (the handle is only "closed" once the
        // count drops to zero), so the disposed flag is checked after taking ours: either it is clear
        // and our reference keeps the context alive, or we let go and throw.
        internal HandleLease Lease()
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

        internal static CudotException Error(int status, string message)
        {
            return new CudotException((Status)status, Api.StatusString(status), message);
        }
    }
}
