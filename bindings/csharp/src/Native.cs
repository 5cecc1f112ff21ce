// Native.cs - the raw P/Invoke declarations of cudot.h and the only code that calls them.
//
// Every signature is blittable (IntPtr, int, uint, UIntPtr for size_t, double, pointers), so no
// marshalling code runs and nothing is copied. Strings come back as IntPtr and are decoded by Utf8.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace Cudot
{
    // cudot_config as of 1.13: 40 bytes, fields in header order (scripts/check_bindings_abi.py compares
    // them with cudot.h). Size is sizeof(NativeConfig), so the library reads every field; an older library
    // accepts the fields it lacks only while they are zero (YDType for 1.0, WaitMs before 1.5, Rows before
    // 1.10, Mode before 1.13). Rows lies at offset 24, a multiple of 8, so no platform pads before it, and
    // Mode and Reserved fill the 8 bytes after it, so none pads after it either.
    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeConfig
    {
        public uint Size;
        public int DType;
        public int Memory;
        public int Device;
        public int YDType; // 0: the same as DType
        public uint WaitMs; // 0: the library's default bound on waits for the GPU
        public ulong Rows;  // rows of n elements each; 0: one row
        public int Mode;    // a Mode; 0: the canonical mode
        public int Reserved; // must be 0
    }

    // cudot_array: one operand of a dot on the caller's own memory (since 1.7).
    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeArray
    {
        public IntPtr Data;
        public int DType;
        public int Reserved; // must be 0
        public long Stride;  // in elements, signed
    }

    // cudot_arrays as of 1.11: 96 bytes on 64-bit platforms, fields in header order (a library before
    // 1.11 reads the first 88; Mode 0, the canonical mode, is what it knows).
    [StructLayout(LayoutKind.Sequential)]
    internal struct NativeArrays
    {
        public uint Size;
        public uint Reserved; // must be 0
        public UIntPtr N;
        public NativeArray X, Y;
        public IntPtr Stream, XReady, YReady;
        public int Mode, Reserved2; // a Mode; Reserved2 must be 0
    }

    // cudot_mode: how a dot is summed (since 1.11). CudotArrays.DotExact and ExactPartial, contexts made
    // with exact: true (library 1.13), and the rows calls with exact: true (library 1.14) use Exact; every
    // other call of this binding the canonical order.
    internal enum Mode
    {
        Canonical = 0, // cudot's canonical order: the same bits everywhere cudot runs
        Exact = 1,     // the exact sum of the exact products, rounded once
    }

    // cudot_rows_layout: how a batch of dots names its rows (since 1.9).
    internal enum RowsLayout
    {
        Strided = 0,   // row i of x at element i * XRowStride of X.Data; likewise y
        Segmented = 1, // one long x and y cut by Count + 1 Offsets
        Pointers = 2,  // row i of x at XRows[i], of y at YRows[i]
    }

    // cudot_rows as of 1.14: 144 bytes on 64-bit platforms, fields in header order. Fields a layout does
    // not use must be zero (the library refuses them otherwise), as new NativeRows { ... } leaves them. A
    // library from 1.9 to 1.13 reads the first 136 bytes and accepts the rest while it is zero (Mode 0,
    // the canonical mode); it would refuse another Mode only as bytes it does not know, so CudotRows.cs
    // asks for 1.14 before sending one.
    [StructLayout(LayoutKind.Sequential)]
    internal unsafe struct NativeRows
    {
        public uint Size;
        public int Layout;         // a RowsLayout
        public UIntPtr Count;      // rows
        public UIntPtr N;          // Strided and Pointers: elements of every row; Segmented: 0
        public NativeArray X, Y;   // dtype and element stride of every row; Data: row 0 (Strided), element 0 (Segmented)
        public long XRowStride;    // Strided: elements from row i's element 0 to row i + 1's; signed; 0 repeats
        public long YRowStride;
        public long* Offsets;      // Segmented: Count + 1 offsets, host memory
        public IntPtr* XRows, YRows; // Pointers: Count row addresses each, host memory
        public IntPtr Stream, XReady, YReady;
        public int Mode, Reserved; // a Mode: every row's dot in it (since 1.14); Reserved must be 0
    }

    internal static class Native
    {
        // The import name: portable, no platform's file name in it. CudotLibrary installs, before the
        // first call, what turns it into a file: on Linux the soname of every 1.x release,
        // libcudot.so.1 (not libcudot.so, the development symlink, which may be another major
        // version); on Windows cudot.dll, which the runtimes find from this name unaided.
        internal const string Lib = "cudot";

        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern unsafe int cudot_init(out IntPtr ctx, UIntPtr n, NativeConfig* config);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_get_inputs(IntPtr ctx, out IntPtr x, out IntPtr y);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_dot(IntPtr ctx, out double result);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_dot_n(IntPtr ctx, UIntPtr n, out double result);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_deinit(IntPtr ctx);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_get_memory(IntPtr ctx, out int memory, out int device);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_get_capacity(IntPtr ctx, out UIntPtr n);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern int cudot_get_dtypes(IntPtr ctx, out int xDType, out int yDType); // since 1.1
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.10
        internal static extern int cudot_get_rows(IntPtr ctx, out UIntPtr rows, out UIntPtr n);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.10
        internal static extern unsafe int cudot_dot_each_row(IntPtr ctx, UIntPtr rows, UIntPtr n, double* results);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.13
        internal static extern int cudot_get_mode(IntPtr ctx, out int mode);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr cudot_status_string(int status);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr cudot_last_error(IntPtr ctx);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern uint cudot_version();
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)]
        internal static extern IntPtr cudot_version_string();
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.2
        internal static extern unsafe int cudot_tile_partials(IntPtr ctx, UIntPtr first, UIntPtr n, byte* partials);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.2
        internal static extern unsafe int cudot_join_partials(int xDType, int yDType, byte* partials, UIntPtr tiles, out double result);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.13
        internal static extern unsafe int cudot_join_exact_partials(byte* partials, UIntPtr count, out double result);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.7
        internal static extern unsafe int cudot_dot_arrays(NativeArrays* a, out double result);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.7
        internal static extern unsafe int cudot_dot_arrays_async(NativeArrays* a, IntPtr deviceResult);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.7
        internal static extern unsafe int cudot_tile_partials_arrays(NativeArrays* a, byte* partials);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.7
        internal static extern int cudot_register_host(IntPtr p, UIntPtr bytes);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.7
        internal static extern int cudot_unregister_host(IntPtr p);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.9
        internal static extern unsafe int cudot_dot_rows(NativeRows* r, double* results);
        [DllImport(Lib, ExactSpelling = true, CallingConvention = CallingConvention.Cdecl)] // since 1.9
        internal static extern unsafe int cudot_dot_rows_async(NativeRows* r, IntPtr deviceResults);
    }

    // The forwarders through which all other code reaches Native. Why they exist: Mono resolves a
    // DllImport when it JIT-compiles the *calling* method, not when the call runs, and a failed
    // lookup is compiled into a wrapper that throws forever. Keeping every native call in its own
    // never-inlined method means the lookup happens at that method's first call, which comes after
    // CudotLibrary.EnsureLoaded has preloaded CUDOT_LIBRARY. Rule: call EnsureLoaded before any Api
    // method (a context exists only after it ran, so CudotContext members need not repeat it).
    internal static class Api
    {
        const MethodImplOptions NoInline = MethodImplOptions.NoInlining;

        [MethodImpl(NoInline)]
        internal static unsafe int Init(out IntPtr ctx, ulong n, NativeConfig* config)
        {
            return Native.cudot_init(out ctx, new UIntPtr(n), config);
        }
        [MethodImpl(NoInline)]
        internal static int GetInputs(IntPtr ctx, out IntPtr x, out IntPtr y) { return Native.cudot_get_inputs(ctx, out x, out y); }
        [MethodImpl(NoInline)]
        internal static int Dot(IntPtr ctx, out double r) { return Native.cudot_dot(ctx, out r); }
        [MethodImpl(NoInline)]
        internal static int DotN(IntPtr ctx, ulong n, out double r) { return Native.cudot_dot_n(ctx, new UIntPtr(n), out r); }
        [MethodImpl(NoInline)]
        internal static int Deinit(IntPtr ctx) { return Native.cudot_deinit(ctx); }
        [MethodImpl(NoInline)]
        internal static int GetMemory(IntPtr ctx, out int memory, out int device) { return Native.cudot_get_memory(ctx, out memory, out device); }
        [MethodImpl(NoInline)]
        internal static int GetDTypes(IntPtr ctx, out int x, out int y) { return Native.cudot_get_dtypes(ctx, out x, out y); }
        [MethodImpl(NoInline)]
        internal static int GetCapacity(IntPtr ctx, out ulong n)
        {
            UIntPtr v;
            int s = Native.cudot_get_capacity(ctx, out v);
            n = v.ToUInt64();
            return s;
        }
        // The two below exist from library 1.10 on: callers check CudotLibrary.Version first.
        [MethodImpl(NoInline)]
        internal static int GetRows(IntPtr ctx, out ulong rows, out ulong n)
        {
            UIntPtr r, l;
            int s = Native.cudot_get_rows(ctx, out r, out l);
            rows = r.ToUInt64();
            n = l.ToUInt64();
            return s;
        }
        [MethodImpl(NoInline)]
        internal static unsafe int DotEachRow(IntPtr ctx, ulong rows, ulong n, double* results)
        {
            return Native.cudot_dot_each_row(ctx, new UIntPtr(rows), new UIntPtr(n), results);
        }
        // The two below exist from library 1.13 on: callers check CudotLibrary.Version first.
        [MethodImpl(NoInline)]
        internal static int GetMode(IntPtr ctx, out int mode) { return Native.cudot_get_mode(ctx, out mode); }
        [MethodImpl(NoInline)]
        internal static unsafe int JoinExactPartials(byte* partials, ulong count, out double r)
        {
            return Native.cudot_join_exact_partials(partials, new UIntPtr(count), out r);
        }
        [MethodImpl(NoInline)]
        internal static unsafe int TilePartials(IntPtr ctx, ulong first, ulong n, byte* partials)
        {
            return Native.cudot_tile_partials(ctx, new UIntPtr(first), new UIntPtr(n), partials);
        }
        [MethodImpl(NoInline)]
        internal static unsafe int JoinPartials(int x, int y, byte* partials, ulong tiles, out double r)
        {
            return Native.cudot_join_partials(x, y, partials, new UIntPtr(tiles), out r);
        }
        [MethodImpl(NoInline)]
        internal static unsafe int DotArrays(NativeArrays* a, out double r) { return Native.cudot_dot_arrays(a, out r); }
        [MethodImpl(NoInline)]
        internal static unsafe int DotArraysAsync(NativeArrays* a, IntPtr deviceResult) { return Native.cudot_dot_arrays_async(a, deviceResult); }
        [MethodImpl(NoInline)]
        internal static unsafe int TilePartialsArrays(NativeArrays* a, byte* partials) { return Native.cudot_tile_partials_arrays(a, partials); }
        [MethodImpl(NoInline)]
        internal static int RegisterHost(IntPtr p, ulong bytes) { return Native.cudot_register_host(p, new UIntPtr(bytes)); }
        [MethodImpl(NoInline)]
        internal static int UnregisterHost(IntPtr p) { return Native.cudot_unregister_host(p); }
        // The two below may be missing from the library (older than 1.9, or one that has cudot_dot_rows
        // but not yet the async entry point): their callers turn EntryPointNotFoundException, which the
        // call to the forwarder raises on Mono and the first call inside it on .NET, into Unsupported.
        [MethodImpl(NoInline)]
        internal static unsafe int DotRows(NativeRows* r, double* results) { return Native.cudot_dot_rows(r, results); }
        [MethodImpl(NoInline)]
        internal static unsafe int DotRowsAsync(NativeRows* r, IntPtr deviceResults) { return Native.cudot_dot_rows_async(r, deviceResults); }
        [MethodImpl(NoInline)]
        internal static IntPtr StatusStringPtr(int status) { return Native.cudot_status_string(status); }
        [MethodImpl(NoInline)]
        internal static string StatusString(int status) { return Utf8(Native.cudot_status_string(status)); }
        [MethodImpl(NoInline)]
        internal static string LastError(IntPtr ctx) { return Utf8(Native.cudot_last_error(ctx)); }
        [MethodImpl(NoInline)]
        internal static uint Version() { return Native.cudot_version(); }
        [MethodImpl(NoInline)]
        internal static string VersionString() { return Utf8(Native.cudot_version_string()); }

        // NUL-terminated UTF-8 to string, without relying on Marshal.PtrToStringUTF8 (absent from
        // older Mono profiles) or PtrToStringAnsi (not UTF-8 on every platform).
        internal static unsafe string Utf8(IntPtr p)
        {
            if (p == IntPtr.Zero) return "";
            byte* b = (byte*)p;
            int len = 0;
            while (b[len] != 0) len++;
            return Encoding.UTF8.GetString(b, len);
        }
    }
}
