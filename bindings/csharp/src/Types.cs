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

    /// <summary>Element type of an input buffer (CUDOT_F32 ... CUDOT_U8). x and y may differ (yDType).
    /// Buffers hold the native representation; the view that fits each type:
    /// Float32 float, Float64 double, Float16 IEEE binary16 (System.Half on .NET 5+, else ushort bits),
    /// BFloat16 bfloat16 (ushort bits only), Int8 sbyte, UInt8 byte (also bool masks, stored as 0/1).</summary>
    public enum DType
    {
        Float32 = 1,
        Float64 = 2,
        Float16 = 3,
        BFloat16 = 4,
        Int8 = 5,
        UInt8 = 6,
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
