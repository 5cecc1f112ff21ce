# Contexts with rows (cudot 1.10): a context made with `rows` holds rows of n elements each, one
# after the other in its buffers (row-major), seen from Julia as the columns of n × rows matrices
# (inputs). cudot_dot_each_row dots them one by one, each result with the bits of that row's own dot.
# Included by Cudot.jl after the views and their dot methods.
#
# NOTE: never run (no Julia runtime where it was written); only syntax-checked (check_syntax.sh).

@static if _GC_SAFE_CALLS
    _c_dot_each_row(f, p, rows, n, results) =
        @ccall gc_safe=true $f(p::Ptr{Cvoid}, rows::Csize_t, n::Csize_t, results::Ptr{Cdouble})::Cint
else
    _c_dot_each_row(f, p, rows, n, results) =
        ccall(f, Cint, (Ptr{Cvoid}, Csize_t, Csize_t, Ptr{Cdouble}), p, rows, n, results)
end

# (rows, n) of a live context: cudot_get_rows, or (1, capacity) from a library older than 1.10,
# which makes one row and refuses more.
function _get_rows(ctx::CudotContext)
    return _locked(ctx) do h, p
        h.get_rows == C_NULL && return (1, getfield(ctx, :n))
        r = Ref{Csize_t}(0)
        m = Ref{Csize_t}(0)
        st = ccall(h.get_rows, Cint, (Ptr{Cvoid}, Ref{Csize_t}, Ref{Csize_t}), p, r, m)
        st == OK || _throw_ctx_error(h, p, st, "cudot_get_rows")
        (Int(r[]), Int(m[]))
    end
end

"""
    Cudot.nrows(ctx::CudotContext) -> Int

The rows of the context's buffers (`cudot_get_rows`): the `rows` given to the constructor, 1 for
a context made without it.
"""
nrows(ctx::CudotContext) = _get_rows(ctx)[1]

"""
    Cudot.row_length(ctx::CudotContext) -> Int

The elements of each row of the context's buffers (`cudot_get_rows`): the `n` given to the
constructor. `capacity(ctx) == Cudot.nrows(ctx) * Cudot.row_length(ctx)`.
"""
row_length(ctx::CudotContext) = _get_rows(ctx)[2]

"""
    Cudot.dot_each_row(ctx; rows=Cudot.nrows(ctx), n=Cudot.row_length(ctx)) -> Vector{Float64}
    Cudot.dot_each_row!(results, ctx, rows, n) -> results

The dot of the first `n` elements of each of the first `rows` rows of the context's buffers
(`cudot_dot_each_row`, cudot 1.10): result `j` is the dot of `x[1:n, j]` and `y[1:n, j]` of the
`n × rows` input matrices (see [`inputs`](@ref)), with the bits of [`Cudot.dot_arrays`](@ref) on
copies of those two columns, whatever the memory strategy; for an exact context
(`exact=true`), the bits of `Cudot.dot_arrays(...; exact=true)` on them: each row's correctly
rounded dot (cudot 1.14; a 1.13 library answers status 4, with its message). `dot_each_row!`
writes them into `results`, a `Vector{Float64}` of exactly `rows` elements, and returns it.

`rows = 0` writes nothing; `n = 0` gives `+0.0`s. `rows` beyond `Cudot.nrows(ctx)` or `n` beyond
`Cudot.row_length(ctx)` throw `CudotError` with status 1 (INVALID_ARGUMENT) and the library's
message, and nothing is written; so do a negative `rows` or `n`, and `results` of another length
(those before the library is called). A library older than 1.10 throws status 4 (UNSUPPORTED).
GC-safe on Julia 1.12+, like `dot`.
"""
function dot_each_row(ctx::CudotContext; rows::Union{Integer,Nothing}=nothing,
                      n::Union{Integer,Nothing}=nothing)
    all_rows, len = _get_rows(ctx)
    k = rows === nothing ? all_rows : rows
    m = n === nothing ? len : n
    # More rows than the context has (or a negative count): refused before anything is written,
    # by the library with its message, or by _each_row_call; no room is allocated for them all
    # first, one result's room is passed instead.
    results = Vector{Float64}(undef, 0 <= k <= all_rows ? Int(k) : 1)
    return _each_row_call(results, ctx, k, m)
end

function dot_each_row!(results::Vector{Float64}, ctx::CudotContext, rows::Integer, n::Integer)
    rows >= 0 || _throw_each_row("rows = ", rows, " is negative")
    length(results) == rows ||
        _throw_each_row("results has ", length(results), " elements for ", rows, " rows")
    return _each_row_call(results, ctx, rows, n)
end

@noinline _throw_each_row(msg...) =
    throw(CudotError(ERROR_INVALID_ARGUMENT, string("dot_each_row: ", msg...)))

# The C call into results, which has room for `rows` results, or for one where rows exceeds the
# context's rows (the library refuses those before it writes anything; see dot_each_row).
function _each_row_call(results::Vector{Float64}, ctx::CudotContext, rows::Integer, n::Integer)
    (0 <= rows <= typemax(Int) && 0 <= n <= typemax(Int)) ||
        _throw_each_row("rows = ", rows, " and n = ", n, " must lie in 0:typemax(Int)")
    k, m = Csize_t(rows), Csize_t(n)
    _locked(ctx) do h, p
        h.dot_each_row == C_NULL &&
            throw(CudotError(ERROR_UNSUPPORTED,
                             string("dot_each_row needs cudot_dot_each_row (cudot ", _CONTEXT_ROWS_SINCE,
                                    "); the loaded library (", h.path, ", ", h.version, ") lacks it")))
        st = GC.@preserve results begin
            dest = rows == 0 ? Ptr{Cdouble}(C_NULL) : pointer(results)
            _c_dot_each_row(h.dot_each_row, p, k, m, dest)
        end
        st == OK || _throw_ctx_error(h, p, st, "cudot_dot_each_row")
        length(results) >= rows ||   # only if the library broke its contract
            throw(CudotError(ERROR_INTERNAL, string("cudot_dot_each_row accepted ", rows,
                                                    " rows of a context with fewer")))
        nothing
    end
    return results
end

# ---------------------------------------------------------------------------------------------
# dot of the matrix views of a context with rows: refused, as for other pairs of views
# ---------------------------------------------------------------------------------------------

# The n × rows matrices of inputs, their column views and other views of them. LinearAlgebra's
# generic dot, which they would reach, sums in the element type and gives another number than
# the library: refused, pointing to dot(ctx) and Cudot.dot_each_row.
const _CudotRowsMatrix = Base.ReshapedArray{<:Any,2,<:CudotVector}
const _CudotRowsView = Union{_CudotRowsMatrix,SubArray{<:Any,<:Any,<:_CudotRowsMatrix}}
const _CudotColumnView = SubArray{<:Any,1,<:_CudotRowsMatrix}

@noinline function _refuse_rows_dot()
    throw(ArgumentError(string(
        "dot with the matrix views of a CudotContext with rows (or views of them) is not defined: ",
        "dot(ctx) is the dot of the whole buffers, and Cudot.dot_each_row(ctx) the dot of each row ",
        "(each column of the matrices), both computed by the cudot library. LinearAlgebra's ",
        "generic dot sums in the element type and gives a different number. For Julia arithmetic, ",
        "copy first: dot(collect(a), b).")))
end

LinearAlgebra.dot(::_CudotRowsView, ::AbstractArray) = _refuse_rows_dot()
LinearAlgebra.dot(::AbstractArray, ::_CudotRowsView) = _refuse_rows_dot()
LinearAlgebra.dot(::_CudotRowsView, ::_CudotRowsView) = _refuse_rows_dot()
# Where the methods of the one-row views meet these (a view of each kind), one method applies:
LinearAlgebra.dot(::_CudotOperand, ::_CudotRowsView) = _refuse_rows_dot()
LinearAlgebra.dot(::_CudotRowsView, ::_CudotOperand) = _refuse_rows_dot()
LinearAlgebra.dot(::_CudotOperand, ::_CudotColumnView) = _refuse_rows_dot()
LinearAlgebra.dot(::_CudotColumnView, ::_CudotOperand) = _refuse_rows_dot()
