# Dots on the caller's own arrays (cudot 1.7): cudot_dot_arrays, cudot_dot_arrays_async,
# cudot_tile_partials_arrays, cudot_register_host, cudot_unregister_host. Included by Cudot.jl.
#
# Nothing is copied: each operand is passed to C as the address of its element 1 and its stride in
# elements, and the C library reads the caller's memory in place. The CUDA.jl extension
# (ext/CudotCUDAExt.jl) adds device arrays by adding methods to the hooks marked "hook" below; the
# BFloat16s.jl extension (ext/CudotBFloat16sExt.jl) adds the element type BFloat16.

# struct cudot_array: 24 bytes, no padding (pointer, two 32-bit fields, a 64-bit stride).
struct _Array
    data::Ptr{Cvoid}   # element 1 of the Julia vector (element 0 in C)
    dtype::Int32
    reserved::Int32    # must be 0
    stride::Int64      # in elements, signed
end

# struct cudot_arrays of 1.11: 96 bytes on 64-bit platforms (size, reserved, n at 8, x at 16, y at
# 40, stream at 64, x_ready at 72, y_ready at 80, mode at 88, reserved2 at 92), the layout Julia gives
# these isbits fields. A library before 1.11 reads the first 88 bytes; mode 0 is what it knows.
struct _Arrays
    size::UInt32       # sizeof(_Arrays)
    reserved::UInt32   # must be 0
    n::Csize_t
    x::_Array
    y::_Array
    stream::Ptr{Cvoid}
    x_ready::Ptr{Cvoid}
    y_ready::Ptr{Cvoid}
    mode::Int32        # _MODE_CANONICAL, or _MODE_EXACT (dot_arrays' exact=true)
    reserved2::Int32   # must be 0
end

# struct cudot_rows of 1.14: a batch of dots (src/rows.jl). 144 bytes on 64-bit platforms (size at
# 0, layout 4, count 8, n 16, x 24, y 48, x_row_stride 72, y_row_stride 80, offsets 88, x_rows 96,
# y_rows 104, stream 112, x_ready 120, y_ready 128, mode 136, reserved 140), the layout Julia gives
# these isbits fields. Fields a layout does not use must be zero. A library from 1.9 to 1.13 reads the
# first 136 bytes and accepts the rest while it is zero (mode 0, the canonical mode); it would refuse
# another mode only as bytes it does not know, so src/rows.jl asks for 1.14 before sending one.
struct _Rows
    size::UInt32                 # sizeof(_Rows)
    layout::Int32                # _ROWS_STRIDED, _ROWS_SEGMENTED or _ROWS_POINTERS
    count::Csize_t               # rows
    n::Csize_t                   # strided: elements of every row; segmented: 0
    x::_Array                    # dtype and element stride of every row; data: row 0 (strided),
    y::_Array                    # element 0 of the long vector (segmented)
    x_row_stride::Int64          # strided: elements from row i's element 0 to row i + 1's; signed
    y_row_stride::Int64
    offsets::Ptr{Int64}          # segmented: count + 1 offsets, 0-based, in host memory
    x_rows::Ptr{Ptr{Cvoid}}      # pointers layout: count row addresses (unused here)
    y_rows::Ptr{Ptr{Cvoid}}
    stream::Ptr{Cvoid}
    x_ready::Ptr{Cvoid}
    y_ready::Ptr{Cvoid}
    mode::Int32                  # _MODE_CANONICAL, or _MODE_EXACT (exact=true; since 1.14)
    reserved::Int32              # must be 0
end

# Long calls (a dot waits for its GPU; registration page-locks memory) are GC-safe on Julia 1.12+,
# as the context calls are (see _GC_SAFE_CALLS): C never calls back into Julia, and the memory it
# reads is preserved by the caller (GC.@preserve) and never moved by Julia's collector.
@static if _GC_SAFE_CALLS
    _c_dot_arrays(f, a, r) = @ccall gc_safe=true $f(a::Ref{_Arrays}, r::Ref{Cdouble})::Cint
    _c_dot_arrays_async(f, a, dest) =
        @ccall gc_safe=true $f(a::Ref{_Arrays}, dest::Ptr{Cvoid})::Cint
    _c_tile_partials_arrays(f, a, out) =
        @ccall gc_safe=true $f(a::Ref{_Arrays}, out::Ptr{UInt8})::Cint
    _c_register_host(f, p, bytes) = @ccall gc_safe=true $f(p::Ptr{Cvoid}, bytes::Csize_t)::Cint
    _c_unregister_host(f, p) = @ccall gc_safe=true $f(p::Ptr{Cvoid})::Cint
else
    _c_dot_arrays(f, a, r) = ccall(f, Cint, (Ref{_Arrays}, Ref{Cdouble}), a, r)
    _c_dot_arrays_async(f, a, dest) = ccall(f, Cint, (Ref{_Arrays}, Ptr{Cvoid}), a, dest)
    _c_tile_partials_arrays(f, a, out) = ccall(f, Cint, (Ref{_Arrays}, Ptr{UInt8}), a, out)
    _c_register_host(f, p, bytes) = ccall(f, Cint, (Ptr{Cvoid}, Csize_t), p, bytes)
    _c_unregister_host(f, p) = ccall(f, Cint, (Ptr{Cvoid},), p)
end

function _arrays_library()
    h = _lib()
    h.dot_arrays == C_NULL &&
        throw(CudotError(ERROR_UNSUPPORTED,
                         string("dots on your own arrays need cudot ", _ARRAYS_SINCE, " or later; ",
                                "the loaded library (", h.path, ") is ", h.version)))
    return h
end

# ---------------------------------------------------------------------------------------------
# Operands: element type, address, stride
# ---------------------------------------------------------------------------------------------

# hook: the C element type of a Julia element type, or nothing. The same as for contexts (Bool
# and UInt8 both CUDOT_U8, UInt16 bfloat16 bit patterns); the BFloat16s extension adds BFloat16.
_array_dtype(::Type{T}) where {T<:_Eltype} = _dtype_code(T)
_array_dtype(::Type) = nothing

@noinline function _throw_array_eltype(T, what)
    hint = _is_bfloat16_like(T) ?
        string(" (for bfloat16 data load BFloat16s.jl, whose BFloat16 Cudot takes as it is, ",
               "or pass reinterpret(UInt16, v), the bit patterns, without copying)") : ""
    throw(CudotError(ERROR_INVALID_ARGUMENT,
                     string(what, " has element type ", T, hint, ": use Float32, Float64, Float16, ",
                            "UInt16 (bfloat16 bit patterns), Int8, UInt8 or Bool")))
end

# hook: the address a Julia pointer holds, as the void * of the C call. A host array's pointer is a
# Ptr; the CUDA.jl extension converts its CuPtr (a device address, ABI-equal to a pointer).
_c_pointer(p::Ptr) = Ptr{Cvoid}(p)
_c_pointer(p) = throw(CudotError(ERROR_INVALID_ARGUMENT,
    string("cannot pass a pointer of type ", typeof(p), " to cudot (for CUDA.jl arrays, Cudot's ",
           "CUDA.jl extension is needed: Julia 1.9 or later, with CUDA.jl loaded)")))

# The address of element 1 and the stride in elements, of the vectors whose memory is strided.
#
# Negative strides: for a reversed view such as `view(v, n:-1:1)` (stride -1) or `v[end:-2:1]`,
# Julia's `pointer(w)` is the address of `w[1]` (for a SubArray, the parent's pointer plus the
# offset of the view's first index), which is the element with the HIGHEST address, and element i
# lies at pointer(w) + (i - 1) * stride(w, 1) elements. That is exactly cudot's convention ("data is
# element 0, the last in memory"), so the pointer is passed unchanged. LinearAlgebra's BLAS
# wrappers move such a pointer to the lowest address first (BLAS wants that for incx < 0); cudot
# must not get that adjustment.
_strided(v::StridedVector) = (_c_pointer(pointer(v)), stride(v, 1))
_strided(v::CudotVector) = (_c_pointer(pointer(v)), 1)    # a context's buffer, contiguous
_strided(v::AbstractVector) = throw(CudotError(ERROR_INVALID_ARGUMENT,
    string("a ", typeof(v), " is not strided memory that cudot can read in place (e.g. a ",
           "BitVector, a range, a view with a vector of indices); pass a Vector, a strided view of ",
           "one, or collect it first (a copy)")))

function _operand(v::AbstractVector, what::AbstractString)
    code = _array_dtype(eltype(v))
    code === nothing && _throw_array_eltype(eltype(v), what)
    p, s = _strided(v)
    return _Array(p, code, Int32(0), Int64(s))
end

# ---------------------------------------------------------------------------------------------
# Streams
# ---------------------------------------------------------------------------------------------

# hook: the stream a dot of this operand runs on when the caller names none: nothing for host
# memory; the CUDA.jl extension gives the task's stream (CUDA.stream()) for CUDA.jl arrays.
_array_stream(::Any) = nothing

function _default_stream(operands...)
    for v in operands
        s = _array_stream(v)
        s === nothing || return s
    end
    return nothing    # host memory only: NULL, the legacy default stream (used if the GPU reads it)
end

# hook: cudaStream_t of a stream argument. CUDA's own values: C_NULL the legacy default stream,
# 1 cudaStreamLegacy, 2 cudaStreamPerThread; the CUDA.jl extension adds CuStream.
_stream_handle(::Nothing) = C_NULL
_stream_handle(s::Ptr) = Ptr{Cvoid}(s)
function _stream_handle(s::Integer)
    0 <= s <= typemax(UInt) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("stream ", s, " is not a cudaStream_t")))
    return Ptr{Cvoid}(UInt(s))
end
_stream_handle(s) = throw(CudotError(ERROR_INVALID_ARGUMENT,
    string("a ", typeof(s), " is not a CUDA stream: pass nothing, a Ptr{Cvoid} (cudaStream_t), 1 ",
           "(cudaStreamLegacy), 2 (cudaStreamPerThread), or with CUDA.jl loaded a CuStream")))

# x_ready / y_ready: nothing means "no producer stream to wait for" (NULL in C). A stream whose
# handle is NULL is the legacy default stream, which x_ready names as 1 (NULL there means "none").
_ready_handle(::Nothing) = C_NULL
function _ready_handle(s)
    p = _stream_handle(s)
    return p == C_NULL ? Ptr{Cvoid}(1) : p
end

# hook: run f() with `stream` as the stream the operands' pointers are taken on. For a CuStream the
# CUDA.jl extension runs f under CUDA.stream!(stream): CUDA.jl then records that stream as the
# arrays' user, so that its later frees and uses on other streams wait for the dot.
_on_stream(f, ::Any) = f()

# ---------------------------------------------------------------------------------------------
# The calls
# ---------------------------------------------------------------------------------------------

# Builds the cudot_arrays of x and y on `stream` (the caller's, or the operands' default) and
# runs the C call `call(Ref(arrays))` under _on_stream, with x, y and `extra` (the async result)
# preserved and their pointers taken there. A failed status throws the library's message, read
# right after the call (no yield point between them).
function _arrays_call(call, h::_Library, what::AbstractString, x::AbstractVector,
                      y::AbstractVector, extra; stream, x_ready, y_ready, mode::Int32=_MODE_CANONICAL)
    s = stream === nothing ? _default_stream(extra, x, y) : stream
    _on_stream(s) do
        GC.@preserve x y extra begin
            n = length(x)
            length(y) == n ||
                throw(CudotError(ERROR_INVALID_ARGUMENT,
                                 string("x has ", n, " elements and y has ", length(y))))
            a = _Arrays(UInt32(sizeof(_Arrays)), UInt32(0), Csize_t(n), _operand(x, "x"),
                        _operand(y, "y"), _stream_handle(s), _ready_handle(x_ready),
                        _ready_handle(y_ready), mode, Int32(0))
            st = call(Ref(a))
            st == OK || _throw_global_error(h, st, what)
        end
    end
    return nothing
end

"""
    Cudot.dot_arrays(x, y; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> Float64

The dot product of two vectors the caller already has (`cudot_dot_arrays`), read in place: no
context, no copy. The result has the bits `dot(ctx)` of a `:host` context holding the same
values returns, for every pair of element types, every stride and wherever the arrays live.

`x` and `y` have the same length and each is
- a strided vector in host memory: a `Vector`, or a view of one with a step
  (`view(v, 1:2:n)`), reversed (`view(v, n:-1:1)`, stride -1), a row of a matrix, a
  `reinterpret`ed vector; or a context's view (`ctx.x`);
- with the CUDA.jl extension (Julia 1.9+, `using CUDA`): a `CuVector` or a strided view of one
  (`StridedCuVector`), device or unified memory, computed by its GPU;
of element type `Float32`, `Float64`, `Float16`, `UInt16` (bfloat16 bit patterns), `Int8`,
`UInt8` or `Bool` (with BFloat16s.jl loaded also `BFloat16`). x and y may differ in type.

Who computes: the CPU threads for pageable host memory; the arrays' GPU for device memory; for
page-locked host memory (see [`Cudot.register_host`](@ref)) the GPU from 2^20 elements on.
`stream` (a `CUDA.CuStream`, or a raw `cudaStream_t` as `Ptr{Cvoid}`) orders the GPU's work; by
default the task's stream `CUDA.stream()` for CUDA.jl arrays, the legacy default stream for host
arrays. `x_ready` / `y_ready` name a stream on which `x` / `y` were written (e.g. by another
task): the dot waits for what was queued there. This call waits for its result.

`exact=true` (library 1.11, `CUDOT_MODE_EXACT`) returns the correctly rounded dot: the exact sum
of the exact products, rounded once to the nearest `Float64`, ties to even, whatever the order of
the elements (products beyond the `Float64` range count with their exact value; an exact zero is
+0.0; NaN for a NaN product, `Inf * 0` or infinite products of both signs). The CPU computes host
arrays, the GPU device arrays (library 1.12; 1.11 refuses them with status 4).

Errors (`CudotError`): status 1 for lengths that differ, an unsupported element type, a vector
that is not strided memory (a `BitVector`, a range) or a bad stream argument (the binding's own
checks), and whatever the library refuses, with its message (`cudot_last_error(NULL)`); status 4
with a library older than 1.7.
"""
function dot_arrays(x::AbstractVector, y::AbstractVector; stream=nothing, x_ready=nothing,
                    y_ready=nothing, exact::Bool=false)
    h = _arrays_library()
    r = Ref{Cdouble}(0.0)
    _arrays_call(a -> _c_dot_arrays(h.dot_arrays, a, r), h, "cudot_dot_arrays", x, y, nothing;
                 stream=stream, x_ready=x_ready, y_ready=y_ready,
                 mode=exact ? _MODE_EXACT : _MODE_CANONICAL)
    return r[]
end

# The address of the async result: one Float64 in memory the GPU can write.
function _result_pointer(result::AbstractVector{Float64})
    length(result) == 1 ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("the result must have exactly one ",
                                                        "element, not ", length(result))))
    return _strided(result)[1]
end

"""
    Cudot.dot_arrays!(result, x, y; stream=nothing, x_ready=nothing, y_ready=nothing) -> result

Queues the dot of `x` and `y` on `stream` and returns at once (`cudot_dot_arrays_async`); the
result lands, in stream order, in `result[1]`. `result` is a one-element vector of `Float64` in
memory the GPU can write: a `CuVector{Float64}` of length 1 (or `view(results, k:k)` of a
larger one), unified memory, or a host vector registered with [`Cudot.register_host`](@ref).
The operands must be ones a GPU computes (CUDA.jl arrays, registered host memory); others give
status 4 (UNSUPPORTED) from the library. The same bits as [`Cudot.dot_arrays`](@ref).

Stream rules as for `dot_arrays`: by default the task's stream for CUDA.jl arrays. Read the result
after the stream has passed the dot (`Array(result)` on the same task's stream, or
`CUDA.synchronize()`). Keep `x`, `y` and `result` alive until then: CUDA.jl arrays are safe (their
memory is freed in the order of the stream the dot ran on), host vectors are not (hold a
reference, or `GC.@preserve`, until the stream is synchronized). May be captured into a CUDA graph.
"""
function dot_arrays!(result::AbstractVector{Float64}, x::AbstractVector, y::AbstractVector;
                     stream=nothing, x_ready=nothing, y_ready=nothing)
    h = _arrays_library()
    # The result's address is taken inside, like the operands', under the dot's stream.
    _arrays_call(a -> _c_dot_arrays_async(h.dot_arrays_async, a, _result_pointer(result)), h,
                 "cudot_dot_arrays_async", x, y, result;
                 stream=stream, x_ready=x_ready, y_ready=y_ready)
    return result
end

"""
    Cudot.tile_partials(x, y; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> Vector{UInt8}

The partial sums of the tiles of two of the caller's own vectors (`cudot_tile_partials_arrays`),
element 1 taken as the first element of a tile: `cld(length(x), Cudot.TILE_ELEMENTS)` partials of
`Cudot.PARTIAL_BYTES` bytes, the same bytes as [`Cudot.tile_partials`](@ref) of a context holding
the same values, for [`Cudot.join_partials`](@ref). The operands are as for
[`Cudot.dot_arrays`](@ref) (host or CUDA.jl arrays, any stride), read in place; a blocking call.

`exact=true` (library 1.13; an older one answers status 4) gives instead ONE exact partial of
[`Cudot.EXACT_PARTIAL_BYTES`](@ref) (1120) bytes, whatever the length (0 included), for
[`Cudot.join_exact_partials`](@ref): the exact sum of the products, not yet rounded, so that
partials of any pieces, joined in any order, give the bits of `Cudot.dot_arrays(x, y; exact=true)`
on the whole.
"""
function tile_partials(x::AbstractVector, y::AbstractVector; stream=nothing, x_ready=nothing,
                       y_ready=nothing, exact::Bool=false)
    h = _arrays_library()
    out = Vector{UInt8}(undef, exact ? EXACT_PARTIAL_BYTES :
                               cld(length(x), TILE_ELEMENTS) * PARTIAL_BYTES)
    _arrays_call(a -> _c_tile_partials_arrays(h.tile_partials_arrays, a, out), h,
                 "cudot_tile_partials_arrays", x, y, nothing;
                 stream=stream, x_ready=x_ready, y_ready=y_ready,
                 mode=exact ? _MODE_EXACT : _MODE_CANONICAL)
    return out
end

# ---------------------------------------------------------------------------------------------
# Registration of host memory
# ---------------------------------------------------------------------------------------------

# (address, bytes) of a host array's contiguous memory.
function _host_range(a::DenseArray)
    isbitstype(eltype(a)) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("cannot register an array of ", eltype(a),
                                                        ": its elements are not plain bits")))
    return (_c_pointer(pointer(a)), Csize_t(length(a) * Base.elsize(a)))
end
_host_range(a::AbstractArray) = throw(CudotError(ERROR_INVALID_ARGUMENT,
    string("cannot register a ", typeof(a), ": only a dense array (an Array) names one range of ",
           "memory")))

"""
    Cudot.register_host(a::Array) -> a
    Cudot.register_host(f, a::Array)      # do-block: registered while f(a) runs

Page-locks the memory of `a` once and maps it for every GPU (`cudot_register_host`), so that dots
on it (and on views of it) are read by the GPU at the bus's speed, and a one-element
`Vector{Float64}` in it can receive [`Cudot.dot_arrays!`](@ref). It costs about as much as reading
the memory several times: do it once, never per dot. Without a GPU it only records the range.

Release it with [`Cudot.unregister_host`](@ref) (the do-block form does) before `a` becomes
garbage, after the dots that read it have finished: Julia may free and reuse the memory of an
unreachable array, and the registration would still cover it.

Errors (`CudotError`, status 1): `a` empty, overlapping a range registered already, not host
memory, or not a dense array of plain bits; the library's other statuses with its message.
"""
function register_host(a::AbstractArray)
    h = _arrays_library()
    GC.@preserve a begin
        p, bytes = _host_range(a)
        st = _c_register_host(h.register_host, p, bytes)
        st == OK || _throw_global_error(h, st, "cudot_register_host")
    end
    return a
end

function register_host(f::Function, a::AbstractArray)
    register_host(a)
    try
        return f(a)
    finally
        unregister_host(a)
    end
end

"""
    Cudot.unregister_host(a::Array) -> a

Releases the registration [`Cudot.register_host`](@ref) made of `a`'s memory
(`cudot_unregister_host`). Wait for every dot that reads it first. Status 1 when `a` is not the
start of a registered range.
"""
function unregister_host(a::AbstractArray)
    h = _arrays_library()
    GC.@preserve a begin
        p, _ = _host_range(a)
        st = _c_unregister_host(h.unregister_host, p)
        st == OK || _throw_global_error(h, st, "cudot_unregister_host")
    end
    return a
end
