// LibraryTests.cs - the loaded library: version, CUDOT_LIBRARY override, status names.
using System;
using System.Reflection;
using System.Runtime.InteropServices;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class LibraryTests
    {
        [Test]
        public void MajorVersionIsOneAndStringAgrees()
        {
            uint v = CudotLibrary.Version;
            Assert.AreEqual(1u, v / 10000);
            Assert.AreEqual(string.Format("{0}.{1}.{2}", v / 10000, v / 100 % 100, v % 100), CudotLibrary.VersionString);
        }

        [Test]
        public void OverridePathIsTheEnvironmentVariable()
        {
            string env = Environment.GetEnvironmentVariable("CUDOT_LIBRARY");
            CudotLibrary.EnsureLoaded();
            Assert.AreEqual(string.IsNullOrEmpty(env) ? null : env, CudotLibrary.OverridePath);
        }

        // The file loaded by path is the override when there is one (test.sh always sets it).
        [Test]
        public void LibraryPathIsTheOverride()
        {
            string env = Environment.GetEnvironmentVariable("CUDOT_LIBRARY");
            if (string.IsNullOrEmpty(env)) Assert.Ignore("CUDOT_LIBRARY is not set");
            CudotLibrary.EnsureLoaded();
            Assert.AreEqual(env, CudotLibrary.LibraryPath);
        }

        // Every import uses the portable name "cudot"; the loader maps it to the platform's file.
        [Test]
        public void EveryImportIsNamedCudot()
        {
            Type native = typeof(CudotContext).Assembly.GetType("Cudot.Native", true);
            int imports = 0;
            foreach (MethodInfo m in native.GetMethods(BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public))
                foreach (DllImportAttribute a in m.GetCustomAttributes(typeof(DllImportAttribute), false))
                {
                    Assert.AreEqual("cudot", a.Value, m.Name);
                    imports++;
                }
            Assert.GreaterOrEqual(imports, 14);
        }

        [Test]
        public void StatusNamesComeFromTheLibrary()
        {
            Assert.AreEqual("CUDOT_OK", CudotLibrary.StatusName(Status.Ok));
            Assert.AreEqual("CUDOT_ERROR_INVALID_ARGUMENT", CudotLibrary.StatusName(Status.InvalidArgument));
            Assert.AreEqual("CUDOT_ERROR_NO_DEVICE", CudotLibrary.StatusName(Status.NoDevice));
            Assert.AreEqual("CUDOT_ERROR_INTERNAL", CudotLibrary.StatusName(Status.Internal));
            Assert.AreEqual("CUDOT_ERROR_UNKNOWN", CudotLibrary.StatusName((Status)99));
        }
    }
}
