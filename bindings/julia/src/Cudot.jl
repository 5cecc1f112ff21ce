"""
    Cudot

Julia binding of cudot, a C library that computes dot products on the CPU or a CUDA GPU with
bitwise-reproducible results. See `include/cudot.h` for the C contract this module follows.

Basic use:

    using Cudot
    CudotContext(1000; eltype=Float64) do ctx
        x, y = inputs(ctx)
        x .= 1.0
        y .= 2.0
        dot(ctx)            # 2000.0
    end

The C library is found at run time: `ENV["CUDOT_LIBRARY"]` (full path) first, otherwise
`Libdl.find_library(["libcudot", "cudot"])`, otherwise the soname `libcudot.so.1`.
"""
module Cudot

using Libdl
import LinearAlgebra
using LinearAlgebra: dot

export CudotContext, CudotError, CudotVector, inputs, memory, capacity, dot

# ---------------------------------------------------------------------------------------------
# Constants mirrored from cudot.h
# ---------------------------------------------------------------------------------------------

"Status values of `cudot_status` (the C enum is passed as a `Cint`)."
const OK = 0
const ERROR_INVALID_ARGUMENT = 1
const ERROR_OUT_OF_MEMORY = 2
const ERROR_NO_DEVICE = 3
const ERROR_UNSUPPORTED = 4
const ERROR_CUDA = 5
const ERROR_INTERNAL = 6

# Names used when the C library is not loaded; index = status.
const _STATUS_NAMES = (:CUDOT_ERROR_INVALID_ARGUMENT, :CUDOT_ERROR_OUT_OF_MEMORY,
                       :CUDOT_ERROR_NO_DEVICE, :CUDOT_ERROR_UNSUPPORTED, :CUDOT_ERROR_CUDA,
                       :CUDOT_ERROR_INTERNAL)

const _F32 = Int32(1)
const _F64 = Int32(2)

# Memory strategies; the C value is the index in this tuple minus one (CUDOT_MEMORY_AUTO = 0, ...).
const _MEMORY = (:auto, :pinned, :mapped, :managed, :host)

"Device value reported for a context that computes on the CPU (`CUDOT_DEVICE_NONE`)."
const DEVICE_NONE = -2

# The major version of the C ABI this binding was written for.
const _ABI_MAJOR = 1

# struct cudot_config, first version: four 32-bit fields, 16 bytes.
struct _Config
    size::UInt32
    dtype::Int32
    memory::Int32
    device::Int32
end

# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

"""
    CudotError(status, msg)

A failure reported by cudot (or detected by this binding before calling it).

Fields:
- `status::Int`: the `cudot_status` value, e.g. `Cudot.ERROR_INVALID_ARGUMENT` (1).
- `name::Symbol`: its C name, e.g. `:CUDOT_ERROR_INVALID_ARGUMENT`.
- `msg::String`: the message from `cudot_last_error`, or the binding's own explanation.
"""
struct CudotError <: Exception
    status::Int
    name::Symbol
    msg::String
end

CudotError(status::Integer, msg::AbstractString) =
    CudotError(Int(status), _status_name(status), String(msg))

function Base.showerror(io::IO, e::CudotError)
    print(io, "CudotError: ", e.name, " (status ", e.status, ")")
    isempty(e.msg) || print(io, ": ", e.msg)
    return nothing
end

# ---------------------------------------------------------------------------------------------
# Loading the C library (at run time, never at precompile time)
# ---------------------------------------------------------------------------------------------

# Everything resolved from the loaded library. Function pointers are looked up once, so every call
# below is `ccall(pointer, ...)` on a pointer found in this process, never a path baked in earlier.
struct _Library
    path::String
    handle::Ptr{Cvoid}
    version::VersionNumber
    init::Ptr{Cvoid}
    get_inputs::Ptr{Cvoid}
    dot::Ptr{Cvoid}
    dot_n::Ptr{Cvoid}
    deinit::Ptr{Cvoid}
    get_memory::Ptr{Cvoid}
    get_capacity::Ptr{Cvoid}
    status_string::Ptr{Cvoid}
    last_error::Ptr{Cvoid}
end

const _LIB = Ref{Union{Nothing,_Library}}(nothing)
const _LOAD_LOCK = ReentrantLock()

function _default_name()
    Sys.iswindows() && return "cudot.dll"
    Sys.isapple() && return "libcudot.1.dylib"
    return "libcudot.so.1"
end

function _load_failed(path, how, detail)
    error("Cudot: cannot use the cudot C library \"", path, "\" (", how, "): ", detail,
          ". Build cudot, then set ENV[\"CUDOT_LIBRARY\"] to the full path of libcudot.so.1 ",
          "before `using Cudot`, or put its folder on the system library path.")
end

function _sym(handle::Ptr{Cvoid}, name::Symbol, path, how)
    p = try
        Libdl.dlsym(handle, name)
    catch err
        _load_failed(path, how, string("symbol ", name, " not found: ", sprint(showerror, err)))
    end
    return convert(Ptr{Cvoid}, p)
end

function _open_library()
    override = get(ENV, "CUDOT_LIBRARY", "")
    if !isempty(override)
        path = override
        how = "from ENV[\"CUDOT_LIBRARY\"]"
    else
        path = Libdl.find_library(["libcudot", "cudot"])
        how = "found by Libdl.find_library"
        if isempty(path)
            path = _default_name()
            how = "default name"
        end
    end
    handle = try
        Libdl.dlopen(path, Libdl.RTLD_LAZY | Libdl.RTLD_LOCAL)
    catch err
        _load_failed(path, how, sprint(showerror, err))
    end
    handle = convert(Ptr{Cvoid}, handle)

    # Check the major version before looking up anything else: another major version may lack
    # or change the other functions.
    version_fn = _sym(handle, :cudot_version, path, how)
    vnum = Int(ccall(version_fn, UInt32, ()))
    major, minor, patch = vnum ÷ 10000, (vnum ÷ 100) % 100, vnum % 100
    if major != _ABI_MAJOR
        Libdl.dlclose(handle)
        _load_failed(path, how, string("it is cudot ", major, ".", minor, ".", patch,
                                       " but this binding needs major version ", _ABI_MAJOR))
    end
    fullpath = try
        Libdl.dlpath(handle)
    catch
        String(path)
    end
    return _Library(fullpath, handle, VersionNumber(major, minor, patch),
                    _sym(handle, :cudot_init, path, how),
                    _sym(handle, :cudot_get_inputs, path, how),
                    _sym(handle, :cudot_dot, path, how),
                    _sym(handle, :cudot_dot_n, path, how),
                    _sym(handle, :cudot_deinit, path, how),
                    _sym(handle, :cudot_get_memory, path, how),
                    _sym(handle, :cudot_get_capacity, path, how),
                    _sym(handle, :cudot_status_string, path, how),
                    _sym(handle, :cudot_last_error, path, how))
end

function _load!()
    lock(_LOAD_LOCK)
    try
        h = _LIB[]
        h === nothing || return h
        h = _open_library()
        _LIB[] = h
        return h
    finally
        unlock(_LOAD_LOCK)
    end
end

# The loaded library; loads it on first use if __init__ did not (while precompiling).
@inline function _lib()
    h = _LIB[]
    return h === nothing ? _load!() : h
end

function __init__()
    _LIB[] = nothing
    # While a package that depends on Cudot is being precompiled, leave the C library alone;
    # it is loaded on first use instead. Otherwise load it now and fail loudly if it is missing
    # or has the wrong major version.
    ccall(:jl_generating_output, Cint, ()) == 1 && return nothing
    _load!()
    return nothing
end

"""
    Cudot.version() -> VersionNumber

Version of the loaded C library (from `cudot_version()`).
"""
version() = _lib().version

"""
    Cudot.library_path() -> String

Path of the loaded C library.
"""
library_path() = _lib().path

function _status_name(status::Integer)
    h = _LIB[]
    if h !== nothing && typemin(Cint) <= status <= typemax(Cint)
        s = ccall(h.status_string, Cstring, (Cint,), Cint(status))
        return Symbol(unsafe_string(s))
    end
    status == OK && return :CUDOT_OK
    return 1 <= status <= length(_STATUS_NAMES) ? _STATUS_NAMES[status] : :CUDOT_ERROR_UNKNOWN
end

# ---------------------------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------------------------

_dtype_code(::Type{Float32}) = _F32
_dtype_code(::Type{Float64}) = _F64

function _checked_eltype(T)
    (T === Float32 || T === Float64) && return T
    throw(CudotError(ERROR_INVALID_ARGUMENT,
                     string("unsupported element type ", T, ": use Float32 or Float64")))
end

function _memory_code(m::Symbol)
    for (i, s) in enumerate(_MEMORY)
        s === m && return Int32(i - 1)
    end
    throw(CudotError(ERROR_INVALID_ARGUMENT,
                     string("unknown memory strategy :", m,
                            "; use :auto, :pinned, :mapped, :managed or :host")))
end

# cudot_init, and on failure the thread-local message of cudot_last_error(NULL). That message lives
# in storage of the OS thread that ran cudot_init. A Julia task moves to another thread only at a
# yield point; there is none between the two foreign calls below, so the message read is the one
# this call left.
@noinline function _init(h::_Library, n::Csize_t, cfg::_Config)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    cref = Ref(cfg)
    st = ccall(h.init, Cint, (Ref{Ptr{Cvoid}}, Csize_t, Ref{_Config}), out, n, cref)
    if st != OK
        cmsg = ccall(h.last_error, Cstring, (Ptr{Cvoid},), C_NULL)
        return (Int(st), C_NULL, unsafe_string(cmsg))
    end
    p = out[]
    p == C_NULL && return (ERROR_INTERNAL, C_NULL, "cudot_init returned CUDOT_OK and a NULL context")
    return (OK, p, "")
end

"""
    CudotContext(n; eltype=Float32, memory=:auto, device=0)
    CudotContext{T}(n; memory=:auto, device=0)
    CudotContext(f, n; kwargs...)        # do-block form: closes the context when f returns

A cudot context: two input buffers of capacity `n` elements of `eltype` (`Float32` or `Float64`),
owned by the C library, and what is needed to compute their dot product.

- `memory`: `:auto` (a GPU strategy when a usable GPU exists, otherwise `:host`), `:pinned`,
  `:mapped`, `:managed` or `:host`. [`memory(ctx)`](@ref) tells what `:auto` chose.
- `device`: CUDA device ordinal; ignored by `:host` (and by `:auto` without a GPU).

Fill the buffers through [`inputs`](@ref), then call [`dot`](@ref). Release the context with
`close(ctx)` (idempotent) or use the do-block form. A finalizer releases a context that was never
closed once nothing refers to it any more (neither the context nor one of its input views), but
it runs at an unpredictable time: close contexts explicitly, especially GPU ones.

Failures throw [`CudotError`](@ref), e.g. status `Cudot.ERROR_NO_DEVICE` (3) for a GPU strategy
without a GPU. Using a closed context throws `CudotError` with status 1 (INVALID_ARGUMENT).

Thread safety: a context may be used from several tasks/threads; calls on it are serialized by a
lock, and `close` waits for calls in flight. Do not write into its input views while a `dot` on
the same context runs in another task.
"""
mutable struct CudotContext{T<:Union{Float32,Float64}}
    ptr::Ptr{Cvoid}          # C_NULL once closed or finalized
    n::Int                   # capacity
    x::Vector{T}             # the C buffers, wrapped without ownership
    y::Vector{T}
    lock::ReentrantLock      # serializes calls and keeps close from racing them

    function CudotContext{T}(n::Integer; memory::Union{Symbol,AbstractString}=:auto,
                             device::Integer=0) where {T<:Union{Float32,Float64}}
        mcode = _memory_code(Symbol(memory))
        0 <= n <= typemax(Int) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: capacity n = ", n,
                                                            " is out of range")))
        typemin(Int32) <= device <= typemax(Int32) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: device = ", device,
                                                            " is out of range")))
        h = _lib()
        cfg = _Config(UInt32(sizeof(_Config)), _dtype_code(T), mcode, Int32(device))
        st, p, msg = _init(h, Csize_t(n), cfg)
        st == OK || throw(CudotError(st, msg))

        # Own the C context (finalizer registered) before anything else can throw.
        ctx = new{T}(p, Int(n), T[], T[], ReentrantLock())
        finalizer(_finalize, ctx)

        xr = Ref{Ptr{Cvoid}}(C_NULL)
        yr = Ref{Ptr{Cvoid}}(C_NULL)
        st2 = ccall(h.get_inputs, Cint, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}, Ref{Ptr{Cvoid}}), p, xr, yr)
        if st2 != OK
            err = CudotError(st2, _last_error(h, p, "cudot_get_inputs"))
            _close_quietly(ctx)
            throw(err)
        end
        # The buffers stay at these addresses until cudot_deinit. With n == 0 the pointers must
        # not be dereferenced; an empty wrap never does.
        ctx.x = unsafe_wrap(Array, Ptr{T}(xr[]), Int(n); own=false)
        ctx.y = unsafe_wrap(Array, Ptr{T}(yr[]), Int(n); own=false)
        return ctx
    end
end

function CudotContext(n::Integer; eltype=Float32, memory::Union{Symbol,AbstractString}=:auto,
                      device::Integer=0)
    T = _checked_eltype(eltype)
    return CudotContext{T}(n; memory=memory, device=device)
end

function CudotContext(f::Function, n::Integer; kwargs...)
    return _with_context(f, CudotContext(n; kwargs...))
end

function CudotContext{T}(f::Function, n::Integer; kwargs...) where {T<:Union{Float32,Float64}}
    return _with_context(f, CudotContext{T}(n; kwargs...))
end

function _with_context(f, ctx::CudotContext)
    result = try
        f(ctx)
    catch
        _close_quietly(ctx)     # the body's error is the one worth reporting
        rethrow()
    end
    close(ctx)
    return result
end

# Finalizer: a backstop for contexts that were never closed. It runs only once nothing refers to
# the context (every call below holds it with GC.@preserve, every input view refers to it), so no
# call can be in flight. It takes no lock (finalizers must not wait), never throws, never prints.
function _finalize(ctx::CudotContext)
    p = ctx.ptr
    p == C_NULL && return nothing
    ctx.ptr = C_NULL
    h = _LIB[]
    h === nothing && return nothing
    try
        ccall(h.deinit, Cint, (Ptr{Cvoid},), p)   # status ignored: nobody to tell
    catch
    end
    return nothing
end

function _close_quietly(ctx::CudotContext)
    try
        close(ctx)
    catch
    end
    return nothing
end

@noinline _throw_closed() =
    throw(CudotError(ERROR_INVALID_ARGUMENT, "the CudotContext is closed"))

@inline function _live_ptr(ctx::CudotContext)
    p = ctx.ptr
    p == C_NULL && _throw_closed()
    return p
end

function _last_error(h::_Library, p::Ptr{Cvoid}, what::AbstractString)
    s = unsafe_string(ccall(h.last_error, Cstring, (Ptr{Cvoid},), p))
    return isempty(s) ? string(what, " failed") : s
end

@noinline _throw_ctx_error(h::_Library, p::Ptr{Cvoid}, st, what) =
    throw(CudotError(st, _last_error(h, p, what)))

# Run f(library, pointer) with the context locked, open and kept alive for the whole call.
# The message of a failed call is read inside f, still under the lock, so no other call on this
# context can overwrite it first.
@inline function _locked(f, ctx::CudotContext)
    h = _lib()
    lock(ctx.lock)
    try
        p = _live_ptr(ctx)
        return GC.@preserve ctx f(h, p)
    finally
        unlock(ctx.lock)
    end
end

"""
    isopen(ctx::CudotContext) -> Bool

`false` once the context was closed (or finalized).
"""
Base.isopen(ctx::CudotContext) = ctx.ptr != C_NULL

"""
    close(ctx::CudotContext)

Destroy the C context and free its buffers (`cudot_deinit`). Idempotent: closing a closed context
does nothing. Waits for calls on the context that are in flight in other tasks. Afterwards every
use of the context or of its input views throws `CudotError` (status 1). Throws `CudotError`
(status 5, CUDA) if freeing GPU memory reported an error; the context is closed anyway.
"""
function Base.close(ctx::CudotContext)
    h = _lib()
    lock(ctx.lock)
    try
        p = ctx.ptr
        p == C_NULL && return nothing
        ctx.ptr = C_NULL
        st = GC.@preserve ctx ccall(h.deinit, Cint, (Ptr{Cvoid},), p)
        # The context is gone now, so cudot_last_error(ctx) can no longer be asked.
        st == OK || throw(CudotError(st, "cudot_deinit reported an error while freeing the " *
                                         "context (it is destroyed anyway)"))
    finally
        unlock(ctx.lock)
    end
    return nothing
end

"""
    dot(ctx::CudotContext) -> Float64
    dot(ctx::CudotContext, n::Integer) -> Float64

The dot product of the context's two input buffers over all `capacity(ctx)` elements, or over the
first `n` only (`cudot_dot` / `cudot_dot_n`). Always a `Float64`, also for `Float32` inputs.

These are methods of `LinearAlgebra.dot` (re-exported by Cudot, so `using Cudot` is enough and
`using LinearAlgebra` alongside causes no conflict). The result is bitwise identical on every call
for the same values, for every memory strategy. `n > capacity(ctx)` throws `CudotError` with
status 1 (INVALID_ARGUMENT).
"""
function LinearAlgebra.dot(ctx::CudotContext)
    return _locked(ctx) do h, p
        r = Ref{Cdouble}(0.0)
        st = ccall(h.dot, Cint, (Ptr{Cvoid}, Ref{Cdouble}), p, r)
        st == OK || _throw_ctx_error(h, p, st, "cudot_dot")
        r[]
    end
end

function LinearAlgebra.dot(ctx::CudotContext, n::Integer)
    0 <= n <= typemax(Int) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("dot: n = ", n, " is out of range")))
    m = Csize_t(n)
    return _locked(ctx) do h, p
        r = Ref{Cdouble}(0.0)
        st = ccall(h.dot_n, Cint, (Ptr{Cvoid}, Csize_t, Ref{Cdouble}), p, m, r)
        st == OK || _throw_ctx_error(h, p, st, "cudot_dot_n")
        r[]
    end
end

function _get_memory(ctx::CudotContext)
    return _locked(ctx) do h, p
        m = Ref{Int32}(0)
        d = Ref{Int32}(0)
        st = ccall(h.get_memory, Cint, (Ptr{Cvoid}, Ref{Int32}, Ref{Int32}), p, m, d)
        st == OK || _throw_ctx_error(h, p, st, "cudot_get_memory")
        (m[], d[])
    end
end

"""
    memory(ctx::CudotContext) -> Symbol

The memory strategy the context actually uses (`cudot_get_memory`): `:pinned`, `:mapped`,
`:managed` or `:host`, never `:auto`.
"""
function memory(ctx::CudotContext)
    m, _ = _get_memory(ctx)
    return 0 <= m < length(_MEMORY) ? _MEMORY[m + 1] : Symbol("unknown_", m)
end

"""
    Cudot.device(ctx::CudotContext) -> Union{Int,Nothing}

The CUDA device ordinal the context computes on, or `nothing` for the CPU (`:host`).
"""
function device(ctx::CudotContext)
    _, d = _get_memory(ctx)
    return d == DEVICE_NONE ? nothing : Int(d)
end

"""
    capacity(ctx::CudotContext) -> Int

The capacity given at construction (`cudot_get_capacity`).
"""
function capacity(ctx::CudotContext)
    return _locked(ctx) do h, p
        n = Ref{Csize_t}(0)
        st = ccall(h.get_capacity, Cint, (Ptr{Cvoid}, Ref{Csize_t}), p, n)
        st == OK || _throw_ctx_error(h, p, st, "cudot_get_capacity")
        Int(n[])
    end
end

Base.eltype(::Type{CudotContext{T}}) where {T} = T

function Base.show(io::IO, ctx::CudotContext{T}) where {T}
    print(io, "CudotContext{", T, "}(")
    if isopen(ctx)
        print(io, "capacity=", ctx.n)
        m = try
            memory(ctx)
        catch
            nothing
        end
        m === nothing || print(io, ", memory=:", m)
    else
        print(io, "closed")
    end
    print(io, ")")
    return nothing
end

# ---------------------------------------------------------------------------------------------
# Input views
# ---------------------------------------------------------------------------------------------

"""
    CudotVector{T} <: AbstractVector{T}

A view of one input buffer of a [`CudotContext`](@ref), returned by [`inputs`](@ref). It holds the
context, so the context (and its buffer) stays alive as long as the view is reachable. Every
element access checks that the context is still open and throws `CudotError` (status 1) otherwise,
so a view used after `close` throws instead of touching freed memory. (The check does not protect
against another task closing the context in the middle of an access: do not close a context that
other tasks are still using.)

`pointer(v)` gives the raw address; keep `v` alive (`GC.@preserve v`) while using it.
"""
struct CudotVector{T<:Union{Float32,Float64}} <: AbstractVector{T}
    data::Vector{T}            # unsafe_wrap'ed C buffer; does not own or keep anything alive
    ctx::CudotContext{T}       # keeps the context, hence the buffer, alive
end

"""
    x, y = inputs(ctx::CudotContext{T})

The context's two input buffers as `CudotVector{T}` views of length `capacity(ctx)`. Write the
data into them in place (`x .= ...`, `copyto!(x, v)`, `x[i] = ...`), then call `dot(ctx)`. The
buffers keep their contents between calls. They become unusable (accesses throw) once the context
is closed.
"""
function inputs(ctx::CudotContext{T}) where {T}
    _live_ptr(ctx)
    return (CudotVector{T}(ctx.x, ctx), CudotVector{T}(ctx.y, ctx))
end

"""
    Cudot.context(v::CudotVector) -> CudotContext

The context a view belongs to.
"""
context(v::CudotVector) = v.ctx

Base.size(v::CudotVector) = (length(v.data),)
Base.IndexStyle(::Type{<:CudotVector}) = IndexLinear()

@inline function Base.getindex(v::CudotVector, i::Int)
    ctx = v.ctx
    _live_ptr(ctx)
    @boundscheck checkbounds(v, i)
    return GC.@preserve ctx @inbounds v.data[i]
end

@inline function Base.setindex!(v::CudotVector{T}, val, i::Int) where {T}
    ctx = v.ctx
    _live_ptr(ctx)
    @boundscheck checkbounds(v, i)
    t = convert(T, val)
    GC.@preserve ctx begin
        @inbounds v.data[i] = t
    end
    return v
end

function Base.fill!(v::CudotVector{T}, val) where {T}
    ctx = v.ctx
    _live_ptr(ctx)
    t = convert(T, val)
    GC.@preserve ctx fill!(v.data, t)
    return v
end

function Base.copyto!(dest::CudotVector{T}, src::Vector{T}) where {T}
    ctx = dest.ctx
    _live_ptr(ctx)
    GC.@preserve ctx copyto!(dest.data, src)
    return dest
end

function Base.pointer(v::CudotVector)
    _live_ptr(v.ctx)
    return pointer(v.data)
end

Base.unsafe_convert(::Type{Ptr{T}}, v::CudotVector{T}) where {T} = pointer(v)

Base.dataids(v::CudotVector) = Base.dataids(v.data)

function Base.show(io::IO, ::MIME"text/plain", v::CudotVector{T}) where {T}
    if isopen(v.ctx)
        invoke(show, Tuple{IO,MIME"text/plain",AbstractArray}, io, MIME"text/plain"(), v)
    else
        print(io, length(v), "-element CudotVector{", T, "} of a closed CudotContext")
    end
    return nothing
end

function Base.show(io::IO, v::CudotVector{T}) where {T}
    if isopen(v.ctx)
        invoke(show, Tuple{IO,AbstractArray}, io, v)
    else
        print(io, "CudotVector{", T, "}(<closed context>)")
    end
    return nothing
end

end # module Cudot
