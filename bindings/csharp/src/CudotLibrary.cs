// CudotLibrary.cs - loading and version-checking the native library, once per process, and the
// calls that need no context (status names, joining tile partials). How the file is found: Loader.cs.
using System;
using System.Reflection;
using System.Runtime.InteropServices;

namespace Cudot
{
    /// <summary>Thrown when the native library cannot be loaded, or is not a 1.x release.</summary>
    public sealed class CudotLibraryException : Exception
    {
        /// <summary>An exception with the message that says which file failed, and how.</summary>
        public CudotLibraryException(string message, Exception inner = null) : base(message, inner) { }
    }

    /// <summary>The loaded native library: its version, and where it came from.</summary>
    public static partial class CudotLibrary
    {
        /// <summary>The major version this binding was written for.</summary>
        public const int SupportedMajor = 1;

        static readonly object gate = new object();
        static volatile bool loaded;
        static string failure; // set once loading failed: later calls fail the same way

        /// <summary>The CUDOT_LIBRARY path in use, or null when it was not set.</summary>
        public static string OverridePath { get; private set; }

        /// <summary>The file the binding loaded by path: CUDOT_LIBRARY, or the copy in the NuGet package's
        /// runtimes/&lt;rid&gt;/native folder (found by the binding on Mono); null when the runtime's own search
        /// chose the file.</summary>
        public static string LibraryPath { get; private set; }

        /// <summary>cudot_version(): major * 10000 + minor * 100 + patch.</summary>
        public static uint Version { get { EnsureLoaded(); return Api.Version(); } }

        /// <summary>cudot_version_string(), e.g. "1.5.0".</summary>
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
                        failure = "cudot: cannot load " + (LibraryPath ?? Loader.FileName) +
                                  " (set CUDOT_LIBRARY to its full path, or LD_LIBRARY_PATH to its folder): " + e.Message;
                    }
                }
                throw new CudotLibraryException(failure);
            }
        }

        static void Load()
        {
            Loader.InstallResolver(); // before the first call, whatever happens next
            string path = Environment.GetEnvironmentVariable("CUDOT_LIBRARY");
            if (!string.IsNullOrEmpty(path))
            {
                OverridePath = path;
                Loader.Preload(path, "CUDOT_LIBRARY=" + path);
                LibraryPath = path;
            }
            else
            {
                string bundled = Loader.FindBundled();
                if (bundled != null)
                {
                    Loader.Preload(bundled, "the packaged " + bundled);
                    LibraryPath = bundled;
                }
            }
            uint v = Api.Version(); // first native call: binds every import from here on
            if (v / 10000 != SupportedMajor)
                throw new CudotLibraryException(string.Format(
                    "cudot: this binding needs major version {0}, but {1} is version {2}.{3}.{4}",
                    SupportedMajor, LibraryPath ?? Loader.FileName, v / 10000, v / 100 % 100, v % 100));
            if (LibraryPath != null && !Loader.BoundToPreload())
                throw new CudotLibraryException("cudot: " + LibraryPath + " was loaded, but the runtime bound " +
                    Loader.FileName + " to another copy (one next to Cudot.dll?)");
        }
    }
}
