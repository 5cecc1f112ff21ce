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
            // The Spans are views of the library's own buffers: writing them is the whole upload.
            Span<float> x = ctx.XAsFloat32();
            Span<float> y = ctx.YAsFloat32();
            for (int i = 0; i < n; i++)
            {
                x[i] = 1.0f;
                y[i] = i % 4;
            }
            double r = ctx.Dot();
            Console.WriteLine("memory " + ctx.MemoryUsed + ", device " + ctx.Device);
            Console.WriteLine("dot of " + n + " elements = " + r + " (expected " + 1.5 * n + ")");
            Console.WriteLine("dot of the first 10 = " + ctx.Dot(10));
            if (r != 1.5 * n) return 1;
        }

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
