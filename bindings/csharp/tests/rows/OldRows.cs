// OldRows.cs - run by test.sh with CUDOT_LIBRARY naming tests/fake_cudot.c built as a 1.13 library with
// -DFAKE_ROWS: canonical rows must reach it (the 144-byte cudot_rows with Mode and Reserved zero, which
// such a library accepts), and exact: true must be refused by the binding with Unsupported, naming what is
// missing, rather than give the old library's canonical result or its "fields newer" refusal.
// Prints one line per check; exit status 0 only when both behave.
using System;
using Cudot;

static class OldRows
{
    static int Main()
    {
        var x = new float[] { 2 };
        double canonical = CudotArrays.DotRows(x, x, 1, 0, 0)[0];
        Console.WriteLine("canonical rows: " + canonical);
        try
        {
            double exact = CudotArrays.DotRows(x, x, 1, 0, 0, exact: true)[0];
            Console.WriteLine("exact rows were not refused: " + exact);
            return 1;
        }
        catch (CudotException e)
        {
            Console.WriteLine("exact rows: " + e.Message);
            return canonical == 4.0 && e.Status == Status.Unsupported && e.Message.Contains("needs library 1.14") ? 0 : 1;
        }
    }
}
