// ViewTests.cs - the 1.1 API surface: yDType, XDType/YDType, per-side typed views and their checks.
using System;
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
                Span<ushort> generic = ctx.XAs<ushort>(); // a temporary: mcs cannot assign through a call's ref return
                generic[2] = 0x1234;
                Assert.AreEqual(0x1234, ctx.XAsFloat16Bits()[2], "the same memory");
            }
        }

        [Test]
        public void ByteAndBoolViewsShareUInt8Storage()
        {
            using (var ctx = new CudotContext(6, DType.UInt8, Memory.Host, yDType: DType.UInt8))
            {
                Span<bool> mask = ctx.XAsBool();
                Span<byte> bytes = ctx.XAsUInt8();
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
                // (Temporaries: mcs cannot assign through the ref a call returns.)
                Span<double> d = f64.XAsFloat64(7, 3);
                d[1] = 42;
                Assert.AreEqual(42.0, f64.XAsFloat64()[8]);
                Span<ushort> b = f64.YAsBFloat16Bits(3, 4);
                b[2] = 0xBEEF;
                Assert.AreEqual(0xBEEF, f64.YAsBFloat16Bits()[5]);
                b = f64.YAs<ushort>(9, 1);
                b[0] = 0xCAFE;
                Assert.AreEqual(0xCAFE, f64.YAs<ushort>()[9]);
                Span<sbyte> s = i8.XAsInt8(5, 5);
                s[4] = -7;
                Assert.AreEqual(-7, i8.XAs<sbyte>()[9]);
                b = i8.YAsFloat16Bits(1, 2);
                b[1] = 0x3C00;
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

        [Test]
        public void ElementSizes()
        {
            Assert.AreEqual(new[] { 4, 8, 2, 2, 1, 1 }, Array.ConvertAll(Data.AllTypes, CudotContext.ElementSize));
            Assert.AreEqual(0, CudotContext.ElementSize((DType)9));
        }
    }
}
