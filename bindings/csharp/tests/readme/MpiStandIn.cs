// MpiStandIn.cs - a stand-in for the few MPI.NET members the README's distributed-dot example uses, so
// that tests/readme/check.sh can compile that example (MPI.NET is not packaged in Debian) and run it
// as a one-rank job. The signatures are MPI.NET's (namespace MPI: Environment(ref string[] args),
// Communicator.world, Rank, Size, Intracommunicator.Gather<T>(T, int) and Broadcast<T>(ref T, int),
// with the array overload of Broadcast beside it so that overload resolution sees what it would see
// there); the bodies are those of a single process. Not an MPI implementation.
using System;

namespace MPI
{
    public class Environment : IDisposable
    {
        public Environment(ref string[] args) { }
        public void Dispose() { }
    }

    public abstract class Communicator
    {
        public static Intracommunicator world = new Intracommunicator();
        public int Rank { get { return 0; } }
        public int Size { get { return 1; } }
    }

    public class Intracommunicator : Communicator
    {
        // One rank: the root's array holds its own value; no other rank exists to get null.
        public T[] Gather<T>(T value, int root) { return new[] { value }; }
        public void Broadcast<T>(ref T value, int root) { }
        public void Broadcast<T>(ref T[] values, int root) { }
    }
}
