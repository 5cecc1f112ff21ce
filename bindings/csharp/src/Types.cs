// Types.cs - the enums of cudot.h and the exception that carries a failed status.
using System;

namespace Cudot
{
    /// <summary>cudot_status. Values are fixed by the C ABI; unknown future values still convert.</summary>
    public enum Status
    {
        Ok = 0,
        InvalidArgument = 1,
        OutOfMemory = 2,
        NoDevice = 3,
        Unsupported = 4,
        Cuda = 5,
        Internal = 6,
    }

    /// <summary>Element type of the input buffers (CUDOT_F32, CUDOT_F64).</summary>
    public enum DType
    {
        Float32 = 1,
        Float64 = 2,
    }

    /// <summary>Memory strategy (CUDOT_MEMORY_*); see cudot.h for what each one does.</summary>
    public enum Memory
    {
        Auto = 0,
        Pinned = 1,
        Mapped = 2,
        Managed = 3,
        Host = 4,
    }

    /// <summary>A cudot function returned a status other than Ok.</summary>
    public class CudotException : Exception
    {
        /// <summary>The status the library returned.</summary>
        public Status Status { get; }

        /// <summary>The library's own message (cudot_last_error); may be empty.</summary>
        public string NativeMessage { get; }

        public CudotException(Status status, string statusName, string nativeMessage)
            : base(string.IsNullOrEmpty(nativeMessage) ? statusName : statusName + ": " + nativeMessage)
        {
            Status = status;
            NativeMessage = nativeMessage ?? "";
        }
    }
}
