// Types.cs - the enums of cudot.h and the exception that carries a failed status.
using System;

namespace Cudot
{
    /// <summary>cudot_status. Values are fixed by the C ABI; unknown future values still convert.</summary>
    public enum Status
    {
        /// <summary>CUDOT_OK: success.</summary>
        Ok = 0,
        /// <summary>A bad argument: unknown enum value, n beyond capacity, a context that is not live, ...</summary>
        InvalidArgument = 1,
        /// <summary>Host, pinned, managed or device memory could not be had.</summary>
        OutOfMemory = 2,
        /// <summary>A GPU strategy was asked for and no usable GPU exists.</summary>
        NoDevice = 3,
        /// <summary>A valid request this library or device cannot serve.</summary>
        Unsupported = 4,
        /// <summary>A CUDA call failed; the message names the call and the error.</summary>
        Cuda = 5,
        /// <summary>A bug in cudot; please report the message.</summary>
        Internal = 6,
    }

    /// <summary>Element type of an input buffer (CUDOT_F32 ... CUDOT_U8). x and y may differ (yDType).
    /// Buffers hold the native representation; the view that fits each type:
    /// Float32 float, Float64 double, Float16 IEEE binary16 (System.Half on .NET 5+, else ushort bits),
    /// BFloat16 bfloat16 (ushort bits only), Int8 sbyte, UInt8 byte (also bool masks, stored as 0/1).</summary>
    public enum DType
    {
        /// <summary>CUDOT_F32: float.</summary>
        Float32 = 1,
        /// <summary>CUDOT_F64: double.</summary>
        Float64 = 2,
        /// <summary>CUDOT_F16: IEEE binary16, as ushort bit patterns (System.Half on .NET 5+).</summary>
        Float16 = 3,
        /// <summary>CUDOT_BF16: bfloat16, as ushort bit patterns.</summary>
        BFloat16 = 4,
        /// <summary>CUDOT_I8: sbyte.</summary>
        Int8 = 5,
        /// <summary>CUDOT_U8: byte, or a bool mask stored as 0/1.</summary>
        UInt8 = 6,
    }

    /// <summary>Memory strategy (CUDOT_MEMORY_*); see cudot.h for what each one does.</summary>
    public enum Memory
    {
        /// <summary>With a usable GPU: mapped buffers, large dots split between CPU and GPU; otherwise Host.</summary>
        Auto = 0,
        /// <summary>Page-locked host buffers copied to the GPU for each dot.</summary>
        Pinned = 1,
        /// <summary>Page-locked host buffers the GPU reads over the bus (zero-copy).</summary>
        Mapped = 2,
        /// <summary>Unified memory that migrates to the GPU and stays while the host leaves it alone.</summary>
        Managed = 3,
        /// <summary>Ordinary host memory, computed on the CPU; needs no GPU.</summary>
        Host = 4,
    }

    /// <summary>A cudot function returned a status other than Ok.</summary>
    public class CudotException : Exception
    {
        /// <summary>The status the library returned.</summary>
        public Status Status { get; }

        /// <summary>The library's own message (cudot_last_error); may be empty.</summary>
        public string NativeMessage { get; }

        /// <summary>An exception for status, with the library's name for it and its message.</summary>
        public CudotException(Status status, string statusName, string nativeMessage)
            : base(string.IsNullOrEmpty(nativeMessage) ? statusName : statusName + ": " + nativeMessage)
        {
            Status = status;
            NativeMessage = nativeMessage ?? "";
        }
    }
}
