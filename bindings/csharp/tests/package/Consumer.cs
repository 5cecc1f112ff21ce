// Consumer.cs - a program that knows cudot only through the NuGet package: test.sh installs the
// package from a local folder, compiles this against the package's lib/ assembly and runs it with
// CUDOT_LIBRARY unset, so the native library must come from the package's runtimes/ folder.
// Kept out of tests/*.cs (the NUnit build) on purpose: it must not see the source tree's build.
using System;
using Cudot;

static class Consumer
{
    static int Main()
    {
        using (var ctx = new CudotContext(100000, DType.Float64, Memory.Host))
        using (var x = ctx.LeaseX<double>())
        using (var y = ctx.LeaseY<double>())
        {
            Span<double> xs = x.Span, ys = y.Span;
            for (int i = 0; i < xs.Length; i++) { xs[i] = i; ys[i] = 0.5; }
            Console.WriteLine("library " + CudotLibrary.LibraryPath);
            Console.WriteLine("package dot = " + ctx.Dot());
        }
        return 0;
    }
}
