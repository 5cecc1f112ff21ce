# Cudot's extension for CUDA.jl (loaded by Julia 1.9+ when CUDA is loaded next to Cudot): dots on
# CUDA.jl arrays with Cudot.dot_arrays, Cudot.dot_arrays! and Cudot.tile_partials(x, y), and many
# dots in one call with Cudot.dot_columns, dot_columns!, dot_segments and dot_segments!. It only
# teaches the operand code of src/arrays.jl four things about CUDA.jl; the calls are the same.
#
# Nothing is copied: a CuVector (or a strided view of one, StridedCuVector) is passed as the device
# address of its element 1 and its stride, and the library reads the device memory in place. A
# CuMatrix (or a strided view of one) is a DenseArray, so a StridedMatrix to src/rows.jl: its
# columns go as the device address of element (1, 1), the element stride and the column stride,
# and its GPU dots them all in one launch.
module CudotCUDAExt

using Cudot
using CUDA: CUDA, CuPtr, CuStream, StridedCuArray

# pointer(v) of a CUDA.jl array is a CuPtr{T}: a device address, a primitive type of pointer size
# that CUDA.jl keeps apart from host pointers. The C call takes it as a void *, bit for bit.
# (Taking it also makes CUDA.jl record the current task's stream as the array's user, see below.)
Cudot._c_pointer(p::CuPtr) = reinterpret(Ptr{Cvoid}, p)

# The stream a dot of a CUDA.jl array runs on when the caller names none: the task's own stream on
# the current device, the one CUDA.jl queues the task's kernels and copies on. So the dot runs after
# what the task wrote into the array, and before what it does next. The current device
# (CUDA.device()) must be the arrays' (the library refuses a stream of another GPU).
Cudot._array_stream(::StridedCuArray) = CUDA.stream()

# cudaStream_t of a CuStream (CUDA.jl's default_stream(), legacy_stream() and per_thread_stream()
# hold CUDA's own special values 0, 1 and 2, which cudot reads the same way).
Cudot._stream_handle(s::CuStream) = Ptr{Cvoid}(s.handle)

# The pointers are taken, and the dot queued, with `s` as the task's stream: CUDA.jl's memory
# manager then records `s` as the stream that last used each array (waiting first for the stream
# that used it before, if another), so that frees and uses on other streams are ordered after the
# dot. For the default stream (CUDA.stream() itself) this changes nothing.
Cudot._on_stream(f, s::CuStream) = CUDA.stream!(f, s)

end # module CudotCUDAExt
