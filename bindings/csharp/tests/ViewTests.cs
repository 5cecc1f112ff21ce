// ViewTests.cs - the 1.1 API surface: yDType, XDType/YDType, per-side typed views and their checks.
using System;
using System.Collections.Generic;
using NUnit.Framework;
using Cudot;

namespace Cudot.Tests
{
    [TestFixture]
    public class ViewTests
    {
        [Test]
        public void YDTypeDefaultsToXDType()
        {
            using (var ctx = new CudotContext(10, DType.Int8, Memory.Host))
            {
                Assert.AreEqual(DType.Int8, ctx.XDType);
                Assert.AreEqual(DType.Int8, ctx.YDType);
                Assert.AreEqual(DType.Int8, ctx.DType);
            }
            using (var ctx = new CudotContext(10))
            {
                Assert.AreEqual(DType.Float32, ctx.XDType);
                Assert.AreEqual(DType.Float32, ctx.YDType);
            }
            using (var ctx = new CudotContext(10, DType.BFloat16, Memory.Host, yDType: DType.BFloat16))
                Assert.AreEqual(DType.BFloat16, ctx.YDType);
        }

        // The types come from cudot_get_dtypes, not from the arguments: dtype 0 means the library's default.
        [Test]
        public void DTypesAreTheLibrarysAnswer()
        {
            using (var ctx = new CudotContext(10, (DType)0, Memory.Host, yDType: DType.UInt8))
            {
                Assert.AreEqual(DType.Float32, ctx.XDType);
                Assert.AreEqual(DType.UInt8, ctx.YDType);
                Assert.AreEqual(10, ctx.XAsFloat32().Length);
            }
        }

        // The old four-argument constructor is still there and still means "y as x".
        [Test]
        public void OneZeroConstructorStillWorks()
        {
            using (var ctx = new CudotContext(10, DType.Float64, Memory.Host, 0))
            {
                Assert.AreEqual(DType.Float64, ctx.YDType);
                Assert.AreEqual(10, ctx.YAsFloat64().Length);
            }
        }

        // Each view checks the type of its own side: x and y of one context may differ.
        [Test]
        public void ViewsAreCheckedPerSide()
        {
            using (var ctx = new CudotContext(10, DType.Float32, Memory.Host, yDType: DType.Int8))
            {
                Assert.AreEqual(10, ctx.XAs<float>().Length);
                Assert.AreEqual(10, ctx.YAs<sbyte>().Length);
                Assert.AreEqual(10, ctx.XAsFloat32().Length);
                Assert.AreEqual(10, ctx.YAsInt8().Length);
                var e = Assert.Throws<InvalidOperationException>(() => ctx.YAs<float>());
                StringAssert.Contains("Int8", e.Message);
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<sbyte>());
                Assert.Throws<InvalidOperationException>(() => ctx.YAsFloat32());
                Assert.Throws<InvalidOperationException>(() => ctx.XAsInt8());
                Assert.Throws<InvalidOperationException>(() => ctx.YAsUInt8());
                Assert.Throws<InvalidOperationException>(() => ctx.YAs<byte>(), "signed data as bytes");
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<int>(), "same size, other type");
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<uint>());
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<ushort>());
                Assert.Throws<InvalidOperationException>(() => ctx.YAsFloat32(0, 1), "windows are checked too");
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<sbyte>(0, 1));
            }
        }

        [Test]
        public void SixteenBitViews()
        {
            using (var ctx = new CudotContext(4, DType.Float16, Memory.Host, yDType: DType.BFloat16))
            {
                Assert.AreEqual(4, ctx.XAsFloat16Bits().Length);
                Assert.AreEqual(4, ctx.YAsBFloat16Bits().Length);
                Assert.AreEqual(4, ctx.XAs<ushort>().Length, "ushort fits both 16-bit types");
                Assert.AreEqual(4, ctx.YAs<ushort>().Length);
                Assert.Throws<InvalidOperationException>(() => ctx.XAsBFloat16Bits(), "Float16 is not BFloat16");
                Assert.Throws<InvalidOperationException>(() => ctx.YAsFloat16Bits(), "BFloat16 is not Float16");
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<short>());
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<float>());
                ctx.XAs<ushort>()[2] = 0x1234;
                Assert.AreEqual(0x1234, ctx.XAsFloat16Bits()[2], "the same memory");
            }
        }

        [Test]
        public void ByteAndBoolViewsShareUInt8Storage()
        {
            using (var ctx = new CudotContext(6, DType.UInt8, Memory.Host, yDType: DType.UInt8))
            {
                var mask = ctx.XAsBool();
                var bytes = ctx.XAsUInt8();
                bytes.Fill(7);
                mask[1] = true;
                mask[4] = false;
                Assert.AreEqual(1, bytes[1]);
                Assert.AreEqual(0, bytes[4]);
                Assert.AreEqual(7, bytes[0]);
                bytes[2] = 1;
                Assert.IsTrue(ctx.XAs<bool>()[2]);
                Assert.AreEqual(6, ctx.YAs<bool>().Length);
                Assert.AreEqual(6, ctx.YAs<byte>().Length);
                Assert.Throws<InvalidOperationException>(() => ctx.XAs<sbyte>());
                Assert.Throws<InvalidOperationException>(() => ctx.XAsInt8());
                ctx.YAsUInt8().Fill(10);
                mask.Fill(false);
                mask[3] = true;
                Assert.AreEqual(10.0, ctx.Dot(), "the mask picks element 3");
            }
        }

        // Windows are measured in elements of their own side: 8, 2 and 1 byte here.
        [Test]
        public void WindowsUseEachSidesElementSize()
        {
            using (var f64 = new CudotContext(10, DType.Float64, Memory.Host, yDType: DType.BFloat16))
            using (var i8 = new CudotContext(10, DType.Int8, Memory.Host, yDType: DType.Float16))
            {
                f64.XAsFloat64(7, 3)[1] = 42;
                Assert.AreEqual(42.0, f64.XAsFloat64()[8]);
                f64.YAsBFloat16Bits(3, 4)[2] = 0xBEEF;
                Assert.AreEqual(0xBEEF, f64.YAsBFloat16Bits()[5]);
                f64.YAs<ushort>(9, 1)[0] = 0xCAFE;
                Assert.AreEqual(0xCAFE, f64.YAs<ushort>()[9]);
                i8.XAsInt8(5, 5)[4] = -7;
                Assert.AreEqual(-7, i8.XAs<sbyte>()[9]);
                i8.YAsFloat16Bits(1, 2)[1] = 0x3C00;
                Assert.AreEqual(0x3C00, i8.YAsFloat16Bits()[2]);
                Assert.Throws<ArgumentOutOfRangeException>(() => i8.YAsFloat16Bits(9, 2));
                Assert.Throws<ArgumentOutOfRangeException>(() => i8.XAs<sbyte>(-1, 1));
                Assert.AreEqual(0, i8.XAsInt8(10, 0).Length, "an empty window at the end is fine");
            }
        }

        [Test]
        public void ViewsAfterDisposeThrowButTypesRemain()
        {
            var ctx = new CudotContext(10, DType.Float16, Memory.Host, yDType: DType.UInt8);
            ctx.Dispose();
            Assert.Throws<ObjectDisposedException>(() => ctx.XAs<ushort>());
            Assert.Throws<ObjectDisposedException>(() => ctx.YAsBool());
            Assert.Throws<ObjectDisposedException>(() => ctx.XAsFloat16Bits(0, 1));
            Assert.Throws<ObjectDisposedException>(() => ctx.YAsUInt8());
            Assert.AreEqual(DType.Float16, ctx.XDType);
            Assert.AreEqual(DType.UInt8, ctx.YDType);
        }

        // A checked view taken before Dispose refuses every access after it, reads included: nothing
        // touches the freed buffers. (Up to 1.7.0 the views were bare Spans, which nothing could check;
        // tests/dispose/WriteAfterDispose.cs, run by test.sh in child processes, checks writes through
        // every kind of view against a newer context at 1000 and 2^22 elements.)
        [Test]
        public void CheckedViewRefusesEveryAccessAfterDispose([Values(1000, 1 << 22)] int n)
        {
            var ctx = new CudotContext(n, DType.Float64, Memory.Host, yDType: DType.UInt8);
            var x = ctx.XAsFloat64();
            var window = ctx.YAs<bool>(1, n - 2);
            x.Fill(2);
            x[n - 1] = 3;
            Assert.AreEqual(3.0, x[n - 1]);
            Assert.AreEqual(new[] { 2.0, 2.0 }, ctx.XAsFloat64(0, 2).ToArray());
            ctx.Dispose();
            var refused = new Dictionary<string, TestDelegate>
            {
                { "get", () => { double v = x[0]; } }, { "set", () => x[n - 1] = 1 },
                { "Fill", () => x.Fill(1) }, { "Clear", () => x.Clear() },
                { "CopyFrom", () => x.CopyFrom(new double[1]) }, { "CopyTo", () => x.CopyTo(new double[n]) },
                { "ToArray", () => x.ToArray() },
                { "window get", () => { bool b = window[0]; } }, { "window set", () => window[0] = true },
                { "window Fill", () => window.Fill(true) }, { "window CopyFrom", () => window.CopyFrom(new bool[n - 2]) },
            };
            foreach (var access in refused)
                Assert.Throws<ObjectDisposedException>(access.Value, access.Key);
            Assert.AreEqual(n, x.Length, "the length stays readable");
            Assert.AreEqual(1L, window.Start);
        }

        [Test]
        public void CheckedViewBulkOperations()
        {
            using (var ctx = new CudotContext(6, DType.Int8, Memory.Host))
            {
                ctx.XAs<sbyte>().Clear(); // the library does not zero its buffers
                var x = ctx.XAsInt8(1, 4);
                x.CopyFrom(new sbyte[] { 1, 2, 3 });
                Assert.AreEqual(new sbyte[] { 0, 1, 2, 3, 0, 0 }, ctx.XAs<sbyte>().ToArray(), "CopyFrom fills the start");
                var into = new sbyte[5];
                x.CopyTo(into);
                Assert.AreEqual(new sbyte[] { 1, 2, 3, 0, 0 }, into);
                Assert.Throws<ArgumentException>(() => x.CopyFrom(new sbyte[5]), "longer than the view");
                Assert.Throws<ArgumentException>(() => x.CopyTo(new sbyte[3]), "shorter than the view");
                Assert.Throws<IndexOutOfRangeException>(() => { sbyte v = x[4]; });
                Assert.Throws<IndexOutOfRangeException>(() => x[-1] = 0);
                ctx.XAs<sbyte>().Fill(9);
                x.Clear();
                Assert.AreEqual(new sbyte[] { 9, 0, 0, 0, 0, 9 }, ctx.XAs<sbyte>().ToArray(), "Clear zeroes the window only");
                Assert.AreEqual(0, ctx.XAsInt8(6, 0).ToArray().Length, "an empty window");
            }
        }

        // A type mismatch names the lease that fits the side's type, not another plain view.
        [Test]
        public void MismatchPointsToTheFittingLease()
        {
            using (var ctx = new CudotContext(4, DType.BFloat16, Memory.Host, yDType: DType.Int8))
            {
                var e = Assert.Throws<InvalidOperationException>(() => ctx.YAsFloat32());
                StringAssert.Contains("use ctx.LeaseY<sbyte>()", e.Message);
                e = Assert.Throws<InvalidOperationException>(() => ctx.XAs<float>());
                StringAssert.Contains("use ctx.LeaseX<ushort>()", e.Message);
                StringAssert.Contains("BFloat16Bits converts", e.Message);
                e = Assert.Throws<InvalidOperationException>(() => ctx.LeaseY<byte>());
                StringAssert.Contains("use ctx.LeaseY<sbyte>()", e.Message);
            }
            using (var ctx = new CudotContext(4, DType.UInt8, Memory.Host, yDType: DType.Float64))
            {
                var e = Assert.Throws<InvalidOperationException>(() => ctx.XAsFloat64());
                StringAssert.Contains("use ctx.LeaseX<byte>(), or ctx.LeaseX<bool>() for a 0/1 mask", e.Message);
                e = Assert.Throws<InvalidOperationException>(() => ctx.YAsFloat16Bits(0, 1));
                StringAssert.Contains("use ctx.LeaseY<double>()", e.Message);
            }
        }

        [Test]
        public void ElementSizes()
        {
            Assert.AreEqual(new[] { 4, 8, 2, 2, 1, 1 }, Array.ConvertAll(Data.AllTypes, CudotContext.ElementSize));
            Assert.AreEqual(0, CudotContext.ElementSize((DType)9));
        }
    }
}
