// Example.cs - fill a context's buffers in place, take the dot product, handle a failure.
// Run: CUDOT_LIBRARY=/path/to/libcudot.so mono Example.exe
using System;
using Cudot;

static class Example
{
    static int Main()
    {
        Console.WriteLine("cudot " + CudotLibrary.VersionString);

        const int n = 1000000;
        using (var ctx = new CudotContext(n, DType.Float32, Memory.Auto))
        {
            // Leases are views of the library's own buffers (writing them is the whole upload) that keep
            // the buffers alive until the lease is disposed, whatever happens to ctx meanwhile.
            using (var xLease = ctx.LeaseX<float>())
            using (var yLease = ctx.LeaseY<float>())
            {
                Span<float> x = xLease.Span, y = yLease.Span;
                for (int i = 0; i < n; i++)
                {
                    x[i] = 1.0f;
                    y[i] = i % 4;
                }
            }
            double r = ctx.Dot();
            Console.WriteLine("memory " + ctx.MemoryUsed + ", device " + ctx.Device);
            Console.WriteLine("dot of " + n + " elements = " + r + " (expected " + 1.5 * n + ")");
            Console.WriteLine("dot of the first 10 = " + ctx.Dot(10));
            if (r != 1.5 * n) return 1;
        }

        // x and y may have different element types. Here y is a bool mask, stored as UInt8 0/1 bytes.
        // The checked views (XAsFloat32, YAsBool, ...) need no `using`: each access checks the context
        // (after Dispose it throws ObjectDisposedException), which costs more per element than a lease's
        // Span. Fine for a few elements; fill large buffers through leases, as above.
        using (var ctx = new CudotContext(8, DType.Float32, Memory.Auto, yDType: DType.UInt8))
        {
            var x = ctx.XAsFloat32();
            var mask = ctx.YAsBool();
            for (int i = 0; i < 8; i++) { x[i] = i; mask[i] = i % 2 == 1; }
            double r = ctx.Dot();
            Console.WriteLine(ctx.XDType + " x " + ctx.YDType + ": sum of the odd elements = " + r);
            if (r != 16) return 1;
        }

        // bfloat16 (and float16 on Mono, which lacks System.Half) are views of ushort bit patterns.
        using (var ctx = new CudotContext(2, DType.BFloat16, Memory.Auto, yDType: DType.Int8))
        {
            var x = ctx.XAsBFloat16Bits();
            x[0] = BFloat16Bits.FromSingle(1.5f);
            x[1] = BFloat16Bits.FromSingle(0.1f); // rounds to 0.10009765625, bfloat16 keeps 8 bits
            ctx.YAsInt8().Fill(-2);
            Console.WriteLine("bfloat16 x int8 = " + ctx.Dot());
        }

        // Dots on your own arrays (cudot 1.7): no context, and nothing copied; the library reads the
        // arrays where they are, and the result has the bits a Host context holding them would give.
        float[] a = { 1, 2, 3, 4 };
        double[] b = { 0.5, 0.25, 2, -1 };
        double own = CudotArrays.Dot(a, b);
        Console.WriteLine("own arrays: float x double = " + own);
        DotSpan xa = a, yb = b; // strided views: every other element of a, against b backwards
        double strided = CudotArrays.Dot(xa.Strided(0, 2, 2), yb.Strided(3, 2, -1));
        Console.WriteLine("strided: a[0]*b[3] + a[2]*b[2] = " + strided);
        Span<sbyte> q = new sbyte[4]; // spans and slices of any origin, of each element type
        for (int i = 0; i < q.Length; i++) q[i] = (sbyte)(i % 2 == 0 ? 3 : -1);
        ushort[] bits = { BFloat16Bits.FromSingle(1.5f), BFloat16Bits.FromSingle(-2), BFloat16Bits.FromSingle(0.25f), BFloat16Bits.FromSingle(8) };
        bool[] keep = { true, false, true, true };
        Console.WriteLine("int8 x float = " + CudotArrays.Dot(q, new ReadOnlySpan<float>(a)) +
                          ", bfloat16 x bool mask = " + CudotArrays.Dot(DotSpan.BFloat16(bits), keep));
        if (own != 3 || strided != 5) return 1;

        // A failure is a CudotException carrying the status and the library's message.
        try
        {
            using (var gpu = new CudotContext(16, DType.Float64, Memory.Pinned))
                Console.WriteLine("pinned context on device " + gpu.Device);
        }
        catch (CudotException e) when (e.Status == Status.NoDevice)
        {
            Console.WriteLine("no GPU: " + e.Message);
        }
        return 0;
    }
}
