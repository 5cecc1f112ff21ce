// CudotLibrary.cs - finding, loading and version-checking the native library, once per process.
//
// CUDOT_LIBRARY (a full path) wins over the normal search:
//  - .NET Core 3.0+ / .NET 5+: a DllImportResolver hands that path to the runtime (untested here).
//  - Mono: no resolver API. The file is dlopen()ed by path first; glibc then answers Mono's later
//    dlopen("libcudot.so.1") with the already-loaded object whose SONAME matches. Two checks make
//    sure this really happened: the soname check below, and BoundToPreload, since Mono tries the
//    assembly's folder before the plain name and could find another copy there.
// Without CUDOT_LIBRARY the runtime's normal search for libcudot.so.1 applies (LD_LIBRARY_PATH,
// the ld.so cache, Mono's dllmap).
using System;
using System.Reflection;
using System.Runtime.InteropServices;

namespace Cudot
{
    /// <summary>Thrown when the native library cannot be loaded, or is not a 1.x release.</summary>
    public sealed class CudotLibraryException : Exception
    {
        public CudotLibraryException(string message, Exception inner = null) : base(message, inner) { }
    }

    /// <summary>The loaded native library: its version, and where it came from.</summary>
    public static class CudotLibrary
    {
        /// <summary>The major version this binding was written for.</summary>
        public const int SupportedMajor = 1;

        static readonly object gate = new object();
        static volatile bool loaded;
        static string failure; // set once loading failed: later calls fail the same way

        /// <summary>The CUDOT_LIBRARY path in use, or null when the normal search applied.</summary>
        public static string OverridePath { get; private set; }

        /// <summary>cudot_version(): major * 10000 + minor * 100 + patch.</summary>
        public static uint Version { get { EnsureLoaded(); return Api.Version(); } }

        /// <summary>cudot_version_string(), e.g. "1.0.0".</summary>
        public static string VersionString { get { EnsureLoaded(); return Api.VersionString(); } }

        /// <summary>cudot_status_string(): the library's constant name for a status.</summary>
        public static string StatusName(Status status) { EnsureLoaded(); return Api.StatusString((int)status); }

        /// <summary>Loads and checks the library if not yet done; throws CudotLibraryException.</summary>
        public static void EnsureLoaded()
        {
            if (loaded) return; // the common case, without the lock
            lock (gate)
            {
                if (loaded) return;
                if (failure == null)
                {
                    try { Load(); loaded = true; return; }
                    catch (CudotLibraryException e) { failure = e.Message; }
                    catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException || e is BadImageFormatException)
                    {
                        failure = "cudot: cannot load " + (OverridePath ?? Native.Lib) +
                                  " (set CUDOT_LIBRARY to its full path, or LD_LIBRARY_PATH to its folder): " + e.Message;
                    }
                }
                throw new CudotLibraryException(failure);
            }
        }

        static void Load()
        {
            string path = Environment.GetEnvironmentVariable("CUDOT_LIBRARY");
            if (!string.IsNullOrEmpty(path))
            {
                OverridePath = path;
                Preload(path);
            }
            uint v = Api.Version(); // first native call: binds every import from here on
            if (v / 10000 != SupportedMajor)
                throw new CudotLibraryException(string.Format(
                    "cudot: this binding needs major version {0}, but {1} is version {2}.{3}.{4}",
                    SupportedMajor, OverridePath ?? Native.Lib, v / 10000, v / 100 % 100, v % 100));
            if (OverridePath != null && !BoundToPreload())
                throw new CudotLibraryException("cudot: CUDOT_LIBRARY=" + OverridePath +
                    " was loaded, but the runtime bound " + Native.Lib + " to another copy (one next to Cudot.dll?)");
        }

#if NETCOREAPP3_0_OR_GREATER
        static IntPtr preloaded;

        static void Preload(string path)
        {
            try { preloaded = NativeLibrary.Load(path); }
            catch (DllNotFoundException e) { throw new CudotLibraryException("cudot: cannot load CUDOT_LIBRARY=" + path + ": " + e.Message, e); }
            NativeLibrary.SetDllImportResolver(typeof(CudotLibrary).Assembly,
                (name, asm, search) => name == Native.Lib ? preloaded : IntPtr.Zero);
        }

        // The resolver hands out exactly the preloaded handle.
        static bool BoundToPreload() { return true; }
#else
        const int RTLD_NOW = 2, RTLD_NOLOAD = 4, RTLD_GLOBAL = 0x100;

        [StructLayout(LayoutKind.Sequential)]
        struct DlInfo { public IntPtr FileName, FileBase, SymbolName, SymbolAddress; }

        // libdl.so.2 exists on every glibc (a stub forwarding to libc.so.6 since glibc 2.34).
        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        static extern IntPtr dlopen([MarshalAs(UnmanagedType.LPStr)] string file, int mode);
        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        static extern IntPtr dlerror();
        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        static extern IntPtr dlsym(IntPtr handle, [MarshalAs(UnmanagedType.LPStr)] string name);
        [DllImport("libdl.so.2", CallingConvention = CallingConvention.Cdecl)]
        static extern int dladdr(IntPtr address, out DlInfo info);

        static IntPtr preloaded;

        static void Preload(string path)
        {
            if (Environment.OSVersion.Platform != PlatformID.Unix)
                throw new CudotLibraryException("cudot: CUDOT_LIBRARY is only supported on Linux with this runtime");
            preloaded = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (preloaded == IntPtr.Zero)
                throw new CudotLibraryException("cudot: cannot load CUDOT_LIBRARY=" + path + ": " + Api.Utf8(dlerror()));
            // The plain name must now find this very object, i.e. the file's SONAME is libcudot.so.1.
            if (dlopen(Native.Lib, RTLD_NOW | RTLD_NOLOAD) != preloaded)
                throw new CudotLibraryException("cudot: CUDOT_LIBRARY=" + path + " is not " + Native.Lib +
                    " (its SONAME differs: another major version, or not cudot at all)");
        }

        // Whether the imports went to the preloaded file: a string the bound library returns must lie
        // in the same loaded object as a symbol looked up in the preloaded handle.
        static bool BoundToPreload()
        {
            DlInfo bound, mine;
            IntPtr sym = dlsym(preloaded, "cudot_status_string");
            return sym != IntPtr.Zero
                && dladdr(Api.StatusStringPtr(0), out bound) != 0
                && dladdr(sym, out mine) != 0
                && bound.FileBase == mine.FileBase;
        }
#endif
    }
}
