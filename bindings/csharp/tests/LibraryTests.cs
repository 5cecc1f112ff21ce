// LibraryTests.cs - the loaded library: version, CUDOT_LIBRARY override, status names.
using System;
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
