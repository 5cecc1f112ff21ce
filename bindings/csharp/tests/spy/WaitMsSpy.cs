// WaitMsSpy.cs - run by test.sh with CUDOT_LIBRARY naming bindings/testing/config_spy.c built as a library:
// creates a context (n 1, Int8 x Float16, Host, device 0, waitMs from the first argument, rows from the
// second, 1 without it), which the spy refuses with a message that spells out the cudot_config it
// received, and prints that message.
// Exit status 0 only when the spy refused it as expected.
using System;
using Cudot;

static class WaitMsSpy
{
    static int Main(string[] args)
    {
        uint waitMs = uint.Parse(args[0]);
        long rows = args.Length > 1 ? long.Parse(args[1]) : 1;
        try
        {
            using (new CudotContext(1, DType.Int8, Memory.Host, 0, DType.Float16, waitMs, rows))
                Console.WriteLine("the context was created: the library in use is not the config spy");
            return 1;
        }
        catch (CudotException e)
        {
            Console.WriteLine(e.NativeMessage);
            return e.Status == Status.Unsupported ? 0 : 1;
        }
    }
}
