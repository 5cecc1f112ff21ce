// Loader.cs - how the import name "cudot" (Native.Lib) becomes a loaded file, per runtime.
//
// Order of search, the same on every runtime:
//  1. CUDOT_LIBRARY, a full path, when set;
//  2. the copy shipped in the NuGet package, runtimes/<rid>/native/<FileName>;
//  3. the system's own search (LD_LIBRARY_PATH, the ld.so cache; PATH on Windows).
//
// .NET Core 3.0+ / .NET 5+: a DllImportResolver, installed before the first call, answers "cudot"
// with the preloaded file (1) or with FileName through the runtime's probing, which covers (2) via
// the application's deps.json and then (3). Not tested: no .NET SDK was available.
//
// Mono: no resolver API, so two things stand in for it, both done before the first call:
//  - a dllmap entry "cudot" -> libcudot.so.1 on Linux, registered at run time with the runtime's own
//    mono_dllmap_insert, so no Cudot.dll.config has to travel with the assembly;
//  - for (1) and (2), the file is dlopen()ed by path first. glibc then answers Mono's later
//    dlopen("libcudot.so.1") with that already-loaded object, because its SONAME matches. The SONAME
//    is checked here, and BoundToPreload checks afterwards that the calls really went to it: Mono
//    tries the assembly's folder before the plain name and could find another copy there.
// On Windows (Mono or .NET Framework) "cudot" finds cudot.dll unaided; CUDOT_LIBRARY is refused there.
using System;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Cudot
{
    internal static class Loader
    {
        static IntPtr preloaded;

        static bool IsLinux { get { return RuntimeInformation.IsOSPlatform(OSPlatform.Linux); } }

        // The file this platform's 1.x library has: its soname on Linux, its DLL name on Windows.
        internal static string FileName
        {
            get
            {
                if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows)) return "cudot.dll";
                if (RuntimeInformation.IsOSPlatform(OSPlatform.OSX)) return "libcudot.1.dylib";
                return "libcudot.so.1";
            }
        }

        // The runtime identifier NuGet files native assets under (runtimes/<rid>/native).
        static string Rid()
        {
            string os = RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "win"
                      : RuntimeInformation.IsOSPlatform(OSPlatform.OSX) ? "osx" : "linux";
            switch (RuntimeInformation.ProcessArchitecture)
            {
                case Architecture.X64: return os + "-x64";
                case Architecture.Arm64: return os + "-arm64";
                case Architecture.X86: return os + "-x86";
                default: return os + "-arm";
            }
        }

#if NETCOREAPP3_0_OR_GREATER
        internal static void InstallResolver()
        {
            NativeLibrary.SetDllImportResolver(typeof(Loader).Assembly, Resolve);
        }

        // Never throws: a zero handle lets the runtime's default probing try, and the version check
        // in CudotLibrary then refuses whatever wrong file that may find.
        static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? search)
        {
            if (name != Native.Lib) return IntPtr.Zero;
            if (preloaded != IntPtr.Zero) return preloaded;
            IntPtr h;
            return NativeLibrary.TryLoad(FileName, assembly, search, out h) ? h : IntPtr.Zero;
        }

        // The host already searches the package's runtimes/<rid>/native folder (deps.json).
        internal static string FindBundled() { return null; }

        internal static void Preload(string path, string what)
        {
            IntPtr h;
            if (!NativeLibrary.TryLoad(path, out h))
                throw new CudotLibraryException("cudot: cannot load " + what);
            preloaded = h;
        }

        // The resolver hands out exactly the preloaded handle.
        internal static bool BoundToPreload() { return true; }
#else
        // Mono's public embedding API, exported by the mono executable (and libmonosgen). A null image
        // makes the entry global; the strings are copied.
        [DllImport("__Internal", CallingConvention = CallingConvention.Cdecl)]
        static extern void mono_dllmap_insert(IntPtr image, string dll, string func, string tdll, string tfunc);

        internal static void InstallResolver()
        {
            if (Type.GetType("Mono.Runtime") == null || !IsLinux) return; // Windows: "cudot" finds cudot.dll
            try { MapImportName(); }
            catch (EntryPointNotFoundException) { } // a host that hides Mono's symbols: the load error says the rest
            catch (DllNotFoundException) { }
        }

        [MethodImpl(MethodImplOptions.NoInlining)] // see Api in Native.cs: binding happens at JIT time
        static void MapImportName() { mono_dllmap_insert(IntPtr.Zero, Native.Lib, null, FileName, null); }

        // The package's copy: next to Cudot.dll in an SDK build's output (runtimes/<rid>/native/), or,
        // when Cudot.dll is used straight from the unpacked package (lib/<tfm>/Cudot.dll), two levels up.
        internal static string FindBundled()
        {
            if (!IsLinux) return null;
            string dir = Path.GetDirectoryName(typeof(Loader).Assembly.Location); // "" when loaded from bytes
            if (string.IsNullOrEmpty(dir)) return null;
            string tail = Path.Combine("runtimes", Rid(), "native", FileName);
            foreach (string candidate in new[] { Path.Combine(dir, tail), Path.Combine(dir, "..", "..", tail) })
                if (File.Exists(candidate)) return Path.GetFullPath(candidate);
            return null;
        }

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

        // what: how messages name the file, e.g. "CUDOT_LIBRARY=/x/libcudot.so".
        internal static void Preload(string path, string what)
        {
            if (!IsLinux)
                throw new CudotLibraryException("cudot: " + what + ": loading by path is only supported on Linux with this runtime");
            preloaded = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (preloaded == IntPtr.Zero)
                throw new CudotLibraryException("cudot: cannot load " + what + ": " + Api.Utf8(dlerror()));
            // The plain name must now find this very object, i.e. the file's SONAME is libcudot.so.1.
            if (dlopen(FileName, RTLD_NOW | RTLD_NOLOAD) != preloaded)
                throw new CudotLibraryException("cudot: " + what + " is not " + FileName +
                    " (its SONAME differs: another major version, or not cudot at all)");
        }

        // Whether the imports went to the preloaded file: a string the bound library returns must lie
        // in the same loaded object as a symbol looked up in the preloaded handle.
        internal static bool BoundToPreload()
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
