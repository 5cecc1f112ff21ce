# Many dots in one call (cudot 1.9): cudot_dot_rows and cudot_dot_rows_async, on the columns of
# matrices and on the segments of long vectors. Included by Cudot.jl, after arrays.jl (whose
# operand, stream and error code it uses, hooks included: the CUDA.jl extension's methods for
# CUDA.jl arrays serve these calls too).
#
# A column of a Julia matrix is contiguous (column-major), so the columns of X are the rows of a
# cudot CUDOT_ROWS_STRIDED batch: row j - 1 starts at pointer(X) + (j - 1) * stride(X, 2)
# elements, its elements stride(X, 1) apart. A vector against every column is the same batch
# with a row stride of 0. Nothing is copied: the library reads the caller's memory in place.
#
# Every call takes an `exact` keyword (cudot 1.14): with exact=true (cudot_rows.mode =
# CUDOT_MODE_EXACT) each result is the bits of dot_arrays(...; exact=true) on its own pair.

@static if _GC_SAFE_CALLS
    _c_dot_rows(f, r, results) = @ccall gc_safe=true $f(r::Ref{_Rows}, results::Ptr{Cdouble})::Cint
    _c_dot_rows_async(f, r, dest) = @ccall gc_safe=true $f(r::Ref{_Rows}, dest::Ptr{Cvoid})::Cint
else
    _c_dot_rows(f, r, results) = ccall(f, Cint, (Ref{_Rows}, Ptr{Cdouble}), r, results)
    _c_dot_rows_async(f, r, dest) = ccall(f, Cint, (Ref{_Rows}, Ptr{Cvoid}), r, dest)
end

# The library and the entry point of a batch (blocking or queued), or status 4 (UNSUPPORTED)
# naming what the loaded library lacks.
function _rows_library(async::Bool)
    h = _arrays_library()
    f = async ? h.dot_rows_async : h.dot_rows
    name = async ? "cudot_dot_rows_async" : "cudot_dot_rows"
    f == C_NULL &&
        throw(CudotError(ERROR_UNSUPPORTED,
                         string("many dots in one call need ", name, " (cudot 1.9); the loaded ",
                                "library (", h.path, ", ", h.version, ") lacks it")))
    return h, f
end

# The cudot_mode of a batch. A library from 1.9 to 1.13 has cudot_dot_rows but not cudot_rows.mode:
# it would refuse exact=true only as bytes it does not know (status 4, about the struct's size), so
# the version is checked here, before any shortcut, and the error says what is missing whatever the
# batch (an empty one too).
function _rows_mode(exact::Bool)
    exact || return _MODE_CANONICAL
    h = _lib()
    h.version >= _EXACT_ROWS_SINCE ||
        throw(CudotError(ERROR_UNSUPPORTED,
                         string("exact rows (exact=true) need cudot_rows.mode (cudot ", _EXACT_ROWS_SINCE,
                                "); the loaded library (", h.path, ", ", h.version, ") lacks it")))
    return _MODE_EXACT
end

# ---------------------------------------------------------------------------------------------
# Shapes and operands
# ---------------------------------------------------------------------------------------------

@noinline _throw_rows(msg...) = throw(CudotError(ERROR_INVALID_ARGUMENT, string(msg...)))

# (n, count): the elements of every column and the number of columns, of the operands of
# dot_columns: two matrices of one size, or a vector as long as the other's columns.
function _columns_shape(x::AbstractMatrix, y::AbstractMatrix)
    size(x) == size(y) || _throw_rows("x is ", join(size(x), "×"), " and y is ", join(size(y), "×"),
                                      ": dot_columns needs matrices of the same size")
    return size(x, 1), size(x, 2)
end
function _columns_shape(x::AbstractVector, y::AbstractMatrix)
    length(x) == size(y, 1) || _throw_rows("x has ", length(x), " elements and the columns of y ",
                                           size(y, 1))
    return length(x), size(y, 2)
end
function _columns_shape(x::AbstractMatrix, y::AbstractVector)
    length(y) == size(x, 1) || _throw_rows("the columns of x have ", size(x, 1), " elements and y ",
                                           length(y))
    return length(y), size(x, 2)
end
_columns_shape(x::AbstractVector, y::AbstractVector) =
    _throw_rows("dot_columns needs a matrix as x or y (for two vectors: Cudot.dot_arrays)")

# (cudot_array of column 1, row stride): a strided matrix's columns, or one vector for every
# column (row stride 0). Other matrices (a Transpose, a view with a vector of indices) are not
# one strided block of memory.
function _rows_operand(m::StridedMatrix, what::AbstractString)
    code = _array_dtype(eltype(m))
    code === nothing && _throw_array_eltype(eltype(m), what)
    a = _Array(_c_pointer(pointer(m)), code, Int32(0), Int64(stride(m, 1)))
    return a, Int64(stride(m, 2))
end
_rows_operand(v::AbstractVector, what::AbstractString) = (_operand(v, what), Int64(0))
_rows_operand(m::AbstractMatrix, what::AbstractString) =
    _throw_rows("a ", typeof(m), " is not strided memory that cudot can read in place; pass a ",
                "Matrix, a strided view of one (ranges as indices) or a CuMatrix, or copy it first")

# The 0-based offsets of the C call from dot_segments' 1-based ones (those of a
# SparseMatrixCSC's colptr): segment i is x[offsets[i]:offsets[i+1]-1].
function _c_offsets(offsets::AbstractVector{<:Integer}, len::Integer)
    isempty(offsets) && _throw_rows("offsets is empty: it needs one more value than there are segments")
    c = Vector{Int64}(undef, length(offsets))
    previous = 1
    for (k, o) in enumerate(offsets)
        (o >= previous && o <= len + 1) ||
            _throw_rows("offsets[", k, "] is ", o, ": offsets must not decrease and lie in [1, ",
                        len + 1, "]")
        c[k] = Int64(o) - 1
        previous = o
    end
    return c
end

# The address of `count` results in memory the GPU can write (dot_columns!, dot_segments!).
function _results_pointer(results::AbstractVector{Float64}, count::Integer)
    length(results) == count ||
        _throw_rows("results has ", length(results), " elements for ", count, " dots")
    p, s = _strided(results)
    (s == 1 || count <= 1) || _throw_rows("results must be contiguous (stride 1), not stride ", s)
    return p
end

# Builds the cudot_rows of one batch on `stream` (the caller's, or the operands' default) and runs
# the C call `call(Ref(rows))` under _on_stream, with x, y, `extra` (the results) and the offsets
# preserved and the operands' pointers taken there, as _arrays_call does for one dot. n is the
# elements of every row (strided), or the length of the long vectors (segmented); mode a cudot_mode
# (from _rows_mode).
function _rows_call(call, h::_Library, what::AbstractString, layout::Int32, x, y, extra,
                    count::Integer, n::Integer, offsets; stream, x_ready, y_ready,
                    mode::Int32=_MODE_CANONICAL)
    s = stream === nothing ? _default_stream(extra, x, y) : stream
    _on_stream(s) do
        GC.@preserve x y extra offsets begin
            xa, xstep = _rows_operand(x, "x")
            ya, ystep = _rows_operand(y, "y")
            if n == 0    # no element is read: no addresses, and no row strides to check
                xa = _Array(C_NULL, xa.dtype, Int32(0), xa.stride)
                ya = _Array(C_NULL, ya.dtype, Int32(0), ya.stride)
                xstep = ystep = Int64(0)
            end
            segmented = layout == _ROWS_SEGMENTED
            r = _Rows(UInt32(sizeof(_Rows)), layout, Csize_t(count), Csize_t(segmented ? 0 : n),
                      xa, ya, segmented ? Int64(0) : xstep, segmented ? Int64(0) : ystep,
                      segmented ? pointer(offsets) : Ptr{Int64}(C_NULL),
                      Ptr{Ptr{Cvoid}}(C_NULL), Ptr{Ptr{Cvoid}}(C_NULL),
                      _stream_handle(s), _ready_handle(x_ready), _ready_handle(y_ready),
                      mode, Int32(0))
            st = call(Ref(r))
            st == OK || _throw_global_error(h, st, what)
        end
    end
    return nothing
end

# ---------------------------------------------------------------------------------------------
# Columns
# ---------------------------------------------------------------------------------------------

"""
    Cudot.dot_columns(X, Y; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> Vector{Float64}

The dots of corresponding columns, in one call (`cudot_dot_rows`, cudot 1.9): result `j` is the
dot of `X[:, j]` and `Y[:, j]`, with the bits [`Cudot.dot_arrays`](@ref) gives for that pair of
columns alone (and so a `:host` context holding them), whatever the number of columns.

- `X` and `Y` two matrices of the same size; or
- one of them a vector as long as the other's columns: that vector against every column (one
  query against a table stored one entry per column), read in place once per column, never
  copied or broadcast into a matrix.

Matrices are strided: a `Matrix`, a view of one with ranges (`view(A, :, 2:2:n)`, reversed
`view(A, m:-1:1, :)`), and with CUDA.jl loaded a `CuMatrix` or a strided view of one (computed by
its GPU in one launch, on the task's stream by default; the results are copied to the host
before this returns). Vectors as for `dot_arrays`. Element types as for `dot_arrays`, and x and
y may differ. For the rows of row-major data, store it as the columns of its transpose
(`permutedims`), or use a strided view.

`stream`, `x_ready` and `y_ready` as for `dot_arrays`. This call waits for its results.

`exact=true` (cudot 1.14, `cudot_rows.mode = CUDOT_MODE_EXACT`) gives every column its correctly
rounded dot instead: the bits of `Cudot.dot_arrays(X[:, j], Y[:, j]; exact=true)`, `+0.0` for
columns of no elements, computed where the canonical batch would be.

    Cudot.dot_columns(q, T; exact=true)     # q against each column of T, each dot rounded once

Errors (`CudotError`): status 1 for sizes that do not match, two vectors, a matrix that is not
strided memory (a `Transpose`, a view with a vector of indices) and what the library refuses,
with its message; status 4 with a library that lacks `cudot_dot_rows` (older than 1.9), and for
`exact=true` with a library older than 1.14 (checked by the binding, whatever the sizes).
"""
function dot_columns(x::AbstractVecOrMat, y::AbstractVecOrMat; stream=nothing, x_ready=nothing,
                     y_ready=nothing, exact::Bool=false)
    mode = _rows_mode(exact)
    n, count = _columns_shape(x, y)
    results = Vector{Float64}(undef, count)
    count == 0 && return results
    h, f = _rows_library(false)
    _rows_call(r -> _c_dot_rows(f, r, pointer(results)), h, "cudot_dot_rows", _ROWS_STRIDED,
               x, y, results, count, n, nothing; stream=stream, x_ready=x_ready, y_ready=y_ready,
               mode=mode)
    return results
end

"""
    Cudot.dot_columns!(results, X, Y; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> results

Queues the dots of corresponding columns (as [`Cudot.dot_columns`](@ref) names them) on `stream`
and returns at once (`cudot_dot_rows_async`); `results[j]` receives, in stream order, the dot of
column `j`. `results` is a contiguous vector of `Float64` with one element per column, in memory
the GPU can write: a `CuVector{Float64}` (or a contiguous view of one), unified memory. The
columns must be in device or managed memory (CUDA.jl arrays); host arrays give status 4
(UNSUPPORTED) from the library, as does a library without `cudot_dot_rows_async`.

Stream rules, lifetimes and reading the results as for [`Cudot.dot_arrays!`](@ref): by default
the task's stream for CUDA.jl arrays; read the results after the stream has passed the batch
(`Array(results)` on the same task). May be captured into a CUDA graph. `exact` as for
`dot_columns`.
"""
function dot_columns!(results::AbstractVector{Float64}, x::AbstractVecOrMat, y::AbstractVecOrMat;
                      stream=nothing, x_ready=nothing, y_ready=nothing, exact::Bool=false)
    mode = _rows_mode(exact)
    n, count = _columns_shape(x, y)
    length(results) == count ||
        _throw_rows("results has ", length(results), " elements for ", count, " columns")
    count == 0 && return results
    h, f = _rows_library(true)
    _rows_call(r -> _c_dot_rows_async(f, r, _results_pointer(results, count)), h,
               "cudot_dot_rows_async", _ROWS_STRIDED, x, y, results, count, n, nothing;
               stream=stream, x_ready=x_ready, y_ready=y_ready, mode=mode)
    return results
end

# ---------------------------------------------------------------------------------------------
# Segments
# ---------------------------------------------------------------------------------------------

"""
    Cudot.dot_segments(x, y, offsets; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> Vector{Float64}

The dots of the segments of two vectors of the same length, in one call (`cudot_dot_rows`,
cudot 1.9): `offsets` holds one more value than there are segments, 1-based like the `colptr` of
a `SparseMatrixCSC`, and result `i` is the dot of `x[offsets[i]:offsets[i+1]-1]` and
`y[offsets[i]:offsets[i+1]-1]`, with the bits [`Cudot.dot_arrays`](@ref) gives for that pair of
segments alone; an empty segment gives `0.0`. `offsets` must not decrease and lie in
`1:length(x)+1` (they need not start at 1 nor end at `length(x)+1`).

    Cudot.dot_segments(x, y, [1, 4, 4, 9])   # [x[1:3]⋅y[1:3], 0.0, x[4:8]⋅y[4:8]]

`x` and `y` are vectors as for `dot_arrays` (strided host vectors, or with CUDA.jl `CuVector`s,
computed by their GPU); `offsets` is any vector of integers, copied (minus one) to the `Int64`
host array the library reads. This call waits for its results. `exact=true` (cudot 1.14) gives
every segment its correctly rounded dot, as for `dot_columns`. Errors as for `dot_columns`.
"""
function dot_segments(x::AbstractVector, y::AbstractVector, offsets::AbstractVector{<:Integer};
                      stream=nothing, x_ready=nothing, y_ready=nothing, exact::Bool=false)
    mode = _rows_mode(exact)
    len = _segments_length(x, y)
    c = _c_offsets(offsets, len)
    count = length(c) - 1
    results = Vector{Float64}(undef, count)
    count == 0 && return results
    h, f = _rows_library(false)
    _rows_call(r -> _c_dot_rows(f, r, pointer(results)), h, "cudot_dot_rows", _ROWS_SEGMENTED,
               x, y, results, count, len, c; stream=stream, x_ready=x_ready, y_ready=y_ready,
               mode=mode)
    return results
end

"""
    Cudot.dot_segments!(results, x, y, offsets; stream=nothing, x_ready=nothing, y_ready=nothing, exact=false) -> results

Queues the dots of the segments (as [`Cudot.dot_segments`](@ref) names them) on `stream` and
returns at once (`cudot_dot_rows_async`); `results[i]` receives the dot of segment `i` in stream
order. `results` (one `Float64` per segment), `x` and `y` as for [`Cudot.dot_columns!`](@ref):
GPU memory. The offsets are read before this returns. `exact` as for `dot_columns`.
"""
function dot_segments!(results::AbstractVector{Float64}, x::AbstractVector, y::AbstractVector,
                       offsets::AbstractVector{<:Integer}; stream=nothing, x_ready=nothing,
                       y_ready=nothing, exact::Bool=false)
    mode = _rows_mode(exact)
    len = _segments_length(x, y)
    c = _c_offsets(offsets, len)
    count = length(c) - 1
    length(results) == count ||
        _throw_rows("results has ", length(results), " elements for ", count, " segments")
    count == 0 && return results
    h, f = _rows_library(true)
    _rows_call(r -> _c_dot_rows_async(f, r, _results_pointer(results, count)), h,
               "cudot_dot_rows_async", _ROWS_SEGMENTED, x, y, results, count, len, c;
               stream=stream, x_ready=x_ready, y_ready=y_ready, mode=mode)
    return results
end

function _segments_length(x::AbstractVector, y::AbstractVector)
    length(x) == length(y) ||
        _throw_rows("x has ", length(x), " elements and y has ", length(y))
    return length(x)
end
