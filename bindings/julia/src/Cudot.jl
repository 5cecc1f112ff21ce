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
        dot(ctx)            # 2000.0; dot(x, y) and dot(ctx.x, ctx.y) are the same call
    end

Element types (x and y may differ): `Float32`, `Float64`, `Float16`, `Int8`, `UInt8`, `Bool`
(a byte buffer holding 0/1) and `UInt16` (bfloat16 bit patterns, see [`Cudot.bf16_bits`](@ref)).

    CudotContext(1000; eltype=Float32, y_eltype=Bool) do ctx
        x, mask = inputs(ctx)   # CudotVector{Float32}, CudotVector{Bool}
        x .= 1.5f0
        mask .= isodd.(1:1000)
        dot(ctx)                # 750.0: the sum of x over the mask
    end

Dots on vectors you already have (cudot 1.7), read in place with no context and no copy, strided
or reversed views included; with CUDA.jl loaded (Julia 1.9+) also `CuVector`s, on the task's
stream:

    Cudot.dot_arrays(x, y)                  # x::Vector{Float32}, y = view(v, n:-1:1), ...
    Cudot.dot_arrays!(r, dx, dy)            # async, into r::CuVector{Float64} of length 1

See [`Cudot.dot_arrays`](@ref), [`Cudot.dot_arrays!`](@ref), `Cudot.tile_partials(x, y)` and
[`Cudot.register_host`](@ref).

Many dots in one call (cudot 1.9), each with the bits of `dot_arrays` on its own pair: the columns
of two matrices, a vector against every column of a matrix, the segments of two long vectors:

    Cudot.dot_columns(X, Y)                 # X, Y::Matrix (or strided views, CuMatrix): one per column
    Cudot.dot_columns(q, T)                 # q against each column of T
    Cudot.dot_segments(x, y, [1, 4, 4, 9])  # x[1:3]⋅y[1:3], 0.0 (empty), x[4:8]⋅y[4:8]

See [`Cudot.dot_columns`](@ref), [`Cudot.dot_columns!`](@ref), [`Cudot.dot_segments`](@ref).

Exact contexts (cudot 1.13): `CudotContext(n; exact=true)` computes every `dot` as the correctly
rounded dot (the bits of `Cudot.dot_arrays(x, y; exact=true)`); `Cudot.tile_partials(ctx, ...)` of
such a context gives one exact partial of `Cudot.EXACT_PARTIAL_BYTES` bytes, and
`Cudot.join_exact_partials` joins such partials, in any order, to the bits of the whole. See
[`Cudot.isexact`](@ref), [`Cudot.join_exact_partials`](@ref).

Exact rows (cudot 1.14): `Cudot.dot_columns(q, T; exact=true)` (and `dot_segments`, and the `!`
forms) gives every column its correctly rounded dot, the bits of `dot_arrays(...; exact=true)` on it
alone; `Cudot.dot_each_row` of an exact context does the same for its rows.

The C library is found when the package loads: `ENV["CUDOT_LIBRARY"]` (a path) first, then the
`"library"` preference set by [`Cudot.set_library!`](@ref), otherwise the soname `libcudot.so.1`,
otherwise `Libdl.find_library(["libcudot", "cudot"])`; without an explicit path, a library of
another major version is passed over for the next name.
"""
module Cudot

using Libdl
import LinearAlgebra
using LinearAlgebra: dot
import TOML

export CudotContext, CudotError, CudotVector, inputs, memory, capacity, eltypes, dot

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

# Element types (cudot_config.dtype / .y_dtype); the C value is the index in _DTYPE_NAMES.
const _F32 = Int32(1)
const _F64 = Int32(2)
const _F16 = Int32(3)
const _BF16 = Int32(4)
const _I8 = Int32(5)
const _U8 = Int32(6)
const _DTYPE_NAMES = (:f32, :f64, :f16, :bf16, :i8, :u8)

"""
    Cudot.ELTYPES

The Julia element types a context can hold, for `x` and `y` independently:
`(Float32, Float64, Float16, UInt16, Int8, UInt8, Bool)`. `UInt16` stands for bfloat16 (its bit
patterns); `Bool` shares the C type `CUDOT_U8` with `UInt8`.
"""
const ELTYPES = (Float32, Float64, Float16, UInt16, Int8, UInt8, Bool)

# The same as a type, for the parameters of CudotContext and CudotVector.
const _Eltype = Union{Float32,Float64,Float16,UInt16,Int8,UInt8,Bool}

# The C element type of each Julia element type (a one-to-one match, except that Bool and UInt8
# are both CUDOT_U8: Julia stores a Bool as one byte holding 0 or 1).
_dtype_code(::Type{Float32}) = _F32
_dtype_code(::Type{Float64}) = _F64
_dtype_code(::Type{Float16}) = _F16
_dtype_code(::Type{UInt16}) = _BF16
_dtype_code(::Type{Int8}) = _I8
_dtype_code(::Type{UInt8}) = _U8
_dtype_code(::Type{Bool}) = _U8

_dtype_symbol(code::Integer) =
    1 <= code <= length(_DTYPE_NAMES) ? _DTYPE_NAMES[code] : Symbol("unknown_", code)

# The first library version with the types beyond F32/F64, mixed pairs and cudot_get_dtypes.
const _MIXED_SINCE = v"1.1.0"

# The first library version with cudot_tile_partials and cudot_join_partials.
const _PARTIALS_SINCE = v"1.2.0"

# The first library version with dots on the caller's own arrays (cudot_dot_arrays and the rest).
const _ARRAYS_SINCE = v"1.7.0"

# The first library version with contexts of several rows (cudot_config.rows, cudot_get_rows,
# cudot_dot_each_row; src/context_rows.jl).
const _CONTEXT_ROWS_SINCE = v"1.10.0"

# The first library version with exact contexts (cudot_config.mode, cudot_get_mode) and exact
# partials (cudot_join_exact_partials).
const _EXACT_CONTEXTS_SINCE = v"1.13.0"

# The first library version with exact rows (cudot_rows.mode; exact=true of src/rows.jl) and exact
# contexts' cudot_dot_each_row.
const _EXACT_ROWS_SINCE = v"1.14.0"

# How a batch of dots names its rows (cudot_rows_layout, library 1.9; src/rows.jl).
const _ROWS_STRIDED = Int32(0)      # row i of x at element i * x_row_stride of x.data; likewise y
const _ROWS_SEGMENTED = Int32(1)    # one long x and y cut by count + 1 offsets
const _ROWS_POINTERS = Int32(2)     # row i of x at x_rows[i], of y at y_rows[i] (not used here)
# cudot_mode (1.11): how a dot is summed. Since 1.13 also a context's (cudot_config.mode), since 1.14
# a batch of rows' (cudot_rows.mode).
const _MODE_CANONICAL = Int32(0)   # cudot's canonical order: the same bits everywhere cudot runs
const _MODE_EXACT = Int32(1)       # the exact sum of the exact products, rounded once (exact=true)

# Memory strategies; the C value is the index in this tuple minus one (CUDOT_MEMORY_AUTO = 0, ...).
const _MEMORY = (:auto, :pinned, :mapped, :managed, :host)

"""
    Cudot.DEVICE_ALL

The `device` value (`CUDOT_DEVICE_ALL`, -1) asking for one context over every visible GPU: each dot
is split between them, and the result is bitwise the same as on one GPU (or the CPU).
[`Cudot.device`](@ref) then reports `DEVICE_ALL`. Needs cudot 1.3 (older libraries answer status 4,
UNSUPPORTED).
"""
const DEVICE_ALL = -1

"Device value reported for a context that computes on the CPU (`CUDOT_DEVICE_NONE`)."
const DEVICE_NONE = -2

"""
    Cudot.DEFAULT_WAIT_MS

`CUDOT_DEFAULT_WAIT_MS` (60000): the fixed part, in milliseconds, of the library's default bound on
waits for the GPU (what `wait_ms=0` asks for), to which it adds 2 s for every GiB a call reads.
"""
const DEFAULT_WAIT_MS = 60000

"""
    Cudot.TILE_ELEMENTS

`CUDOT_TILE_ELEMENTS` (8192): the canonical summation order cuts a vector into tiles of this many
elements; element `i` (1-based) belongs to tile `(i - 1) ÷ TILE_ELEMENTS + 1`. See
[`Cudot.tile_partials`](@ref).
"""
const TILE_ELEMENTS = 8192

"`CUDOT_PARTIAL_BYTES` (16): the size of one tile's partial sum in [`Cudot.tile_partials`](@ref)."
const PARTIAL_BYTES = 16

"""
    Cudot.EXACT_PARTIAL_BYTES

`CUDOT_EXACT_PARTIAL_BYTES` (1120): the size of the one exact partial that
[`Cudot.tile_partials`](@ref) gives for an exact context (`CudotContext(n; exact=true)`) or for
`Cudot.tile_partials(x, y; exact=true)`, whatever the number of elements, for
[`Cudot.join_exact_partials`](@ref). Library 1.13.
"""
const EXACT_PARTIAL_BYTES = 1120

# The major version of the C ABI this binding was written for.
const _ABI_MAJOR = 1

# The package's UUID (Project.toml): Julia files preferences under the package, and finds them by it.
const _UUID = Base.UUID("0f56134a-f92d-4556-8e1b-7047de6221ec")

# struct cudot_config of version 1.13: six 32-bit fields, a 64-bit one at offset 24, then two
# 32-bit ones at 32 and 36: 40 bytes, no padding (the same layout as the C struct on every platform
# cudot supports; scripts/check_bindings_abi.py compares it with cudot.h). An older library accepts
# it as long as the fields it lacks are zero: it reads the bytes it knows and requires the rest to
# be zero (y_dtype for 1.0, wait_ms before 1.5, rows before 1.10, mode before 1.13).
struct _Config
    size::UInt32
    dtype::Int32
    memory::Int32
    device::Int32
    y_dtype::Int32     # 0: the same as dtype
    wait_ms::UInt32    # 0: the library's default bound on waits for the GPU
    rows::UInt64       # rows of n elements each; 0: one row
    mode::Int32        # _MODE_CANONICAL, or _MODE_EXACT (the constructor's exact=true)
    reserved::Int32    # must be 0
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
    get_dtypes::Ptr{Cvoid}     # C_NULL for a 1.0 library, which lacks cudot_get_dtypes
    tile_partials::Ptr{Cvoid}  # C_NULL before 1.2, like join_partials
    join_partials::Ptr{Cvoid}
    dot_arrays::Ptr{Cvoid}            # C_NULL before 1.7, like the four below (src/arrays.jl)
    dot_arrays_async::Ptr{Cvoid}
    tile_partials_arrays::Ptr{Cvoid}
    register_host::Ptr{Cvoid}
    unregister_host::Ptr{Cvoid}
    dot_rows::Ptr{Cvoid}              # C_NULL where the library lacks it (before 1.9), like the next
    dot_rows_async::Ptr{Cvoid}
    get_rows::Ptr{Cvoid}              # C_NULL before 1.10, like dot_each_row (src/context_rows.jl)
    dot_each_row::Ptr{Cvoid}
    get_mode::Ptr{Cvoid}              # C_NULL where the library lacks it (before 1.13), like the next
    join_exact_partials::Ptr{Cvoid}
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

# How to point the package at a library; every load failure ends with it.
const _HOW_TO_FIX = string(
    "Build cudot, then either set ENV[\"CUDOT_LIBRARY\"] to the full path of libcudot.so.1 before ",
    "`using Cudot`, or run `Cudot.set_library!(path)` once (a preference of the active project, ",
    "used from the next Julia session on; ENV[\"CUDOT_LIBRARY\"] takes precedence over it), or put ",
    "the library's folder on the system library path. A wrong preference is fixed by ",
    "`Cudot.set_library!(nothing)` (with CUDOT_LIBRARY set, so that Cudot loads) or by removing ",
    "`library` under [Cudot] in LocalPreferences.toml.")

function _load_failed(path, how, detail)
    error("Cudot: cannot use the cudot C library \"", path, "\" (", how, "): ", detail, ". ",
          _HOW_TO_FIX)
end

function _sym(handle::Ptr{Cvoid}, name::Symbol, path, how)
    p = try
        Libdl.dlsym(handle, name)
    catch err
        _load_failed(path, how, string("symbol ", name, " not found: ", sprint(showerror, err)))
    end
    return convert(Ptr{Cvoid}, p)
end

# Where to look when neither ENV["CUDOT_LIBRARY"] nor the preference names a library, in order, as
# (function giving a name, or "" for none; how it was found): the versioned soname of this binding's
# major first, so that a library of another major version found under the unversioned name never
# hides the right one. Each name is asked for only when those before it failed: Libdl.find_library
# opens what it finds, and a library of another major version is better left unopened.
const _CANDIDATES = ((_default_name, "versioned name"),
                     (() -> Libdl.find_library(["libcudot", "cudot"]), "found by Libdl.find_library"))

# The library the user asked for, as (path, how), or nothing: ENV["CUDOT_LIBRARY"] first, then the
# "library" preference (Cudot.set_library!). The preference is read at run time (from __init__),
# not while precompiling, so changing it needs no recompilation, only a new session.
# Base.get_preferences (Julia 1.6+) is what Preferences.jl reads with too: the [Cudot] tables of
# (Julia)LocalPreferences.toml and of Project.toml's [preferences], merged along LOAD_PATH.
function _requested_library()
    env = get(ENV, "CUDOT_LIBRARY", "")
    isempty(env) || return (env, "from ENV[\"CUDOT_LIBRARY\"]")
    pref = get(Base.get_preferences(_UUID), "library", nothing)
    pref === nothing && return nothing
    if !(pref isa AbstractString) || isempty(pref)
        error("Cudot: the \"library\" preference must be the path of the library as a string, ",
              "not ", repr(pref), ". ", _HOW_TO_FIX)
    end
    return (String(pref), "from the \"library\" preference, see Cudot.set_library!")
end

# Opens `path` and checks its major version before looking up anything else (another major version may
# lack or change the other functions). Returns (handle, version, "") or (nothing, nothing, reason).
function _try_open(path)
    handle = try
        convert(Ptr{Cvoid}, Libdl.dlopen(path, Libdl.RTLD_LAZY | Libdl.RTLD_LOCAL))
    catch err
        return nothing, nothing, sprint(showerror, err)
    end
    version_fn = try
        convert(Ptr{Cvoid}, Libdl.dlsym(handle, :cudot_version))
    catch
        Libdl.dlclose(handle)
        return nothing, nothing, "not a cudot library (no cudot_version)"
    end
    vnum = Int(ccall(version_fn, UInt32, ()))
    major, minor, patch = vnum ÷ 10000, (vnum ÷ 100) % 100, vnum % 100
    if major != _ABI_MAJOR
        Libdl.dlclose(handle)
        return nothing, nothing, string("it is cudot ", major, ".", minor, ".", patch,
                                        " but this binding needs major version ", _ABI_MAJOR)
    end
    return handle, VersionNumber(major, minor, patch), ""
end

function _open_library()
    requested = _requested_library()
    # A library named by the user is the only candidate: never another copy behind the user's back.
    candidates = requested === nothing ? _CANDIDATES : ((() -> requested[1], requested[2]),)
    tried = String[]
    seen = String[]
    for (name_of, how) in candidates
        path = String(name_of())
        (isempty(path) || path in seen) && continue     # find_library found nothing, or the same
        push!(seen, path)
        handle, version, why = _try_open(path)
        if handle === nothing
            push!(tried, string(path, " (", how, "): ", why))
            continue
        end
        return _bind_library(handle, version, path, how)
    end
    error("Cudot: no usable cudot C library; tried ", join(tried, "; "), ". ", _HOW_TO_FIX)
end

# A symbol that exists from library version `since` on; C_NULL in an older library.
_sym_since(handle, version, since, name, path, how) =
    version >= since ? _sym(handle, name, path, how) : C_NULL

# A symbol looked up by its presence, not by the library's version (a library may have
# cudot_dot_rows without cudot_dot_rows_async); C_NULL where it is missing.
function _sym_if_present(handle::Ptr{Cvoid}, name::Symbol)
    p = try
        Libdl.dlsym(handle, name)
    catch
        return C_NULL
    end
    return convert(Ptr{Cvoid}, p)
end

function _bind_library(handle::Ptr{Cvoid}, version::VersionNumber, path, how)
    fullpath = try
        Libdl.dlpath(handle)
    catch
        String(path)
    end
    arrays_sym(name) = _sym_since(handle, version, _ARRAYS_SINCE, name, path, how)
    return _Library(fullpath, handle, version,
                    _sym(handle, :cudot_init, path, how),
                    _sym(handle, :cudot_get_inputs, path, how),
                    _sym(handle, :cudot_dot, path, how),
                    _sym(handle, :cudot_dot_n, path, how),
                    _sym(handle, :cudot_deinit, path, how),
                    _sym(handle, :cudot_get_memory, path, how),
                    _sym(handle, :cudot_get_capacity, path, how),
                    _sym_since(handle, version, _MIXED_SINCE, :cudot_get_dtypes, path, how),
                    _sym_since(handle, version, _PARTIALS_SINCE, :cudot_tile_partials, path, how),
                    _sym_since(handle, version, _PARTIALS_SINCE, :cudot_join_partials, path, how),
                    arrays_sym(:cudot_dot_arrays),
                    arrays_sym(:cudot_dot_arrays_async),
                    arrays_sym(:cudot_tile_partials_arrays),
                    arrays_sym(:cudot_register_host),
                    arrays_sym(:cudot_unregister_host),
                    _sym_if_present(handle, :cudot_dot_rows),
                    _sym_if_present(handle, :cudot_dot_rows_async),
                    _sym_since(handle, version, _CONTEXT_ROWS_SINCE, :cudot_get_rows, path, how),
                    _sym_since(handle, version, _CONTEXT_ROWS_SINCE, :cudot_dot_each_row, path, how),
                    # By presence, as cudot_dot_rows: a library without them (before 1.13, or a
                    # stand-in such as the tests' config spy) still loads; only exact contexts and
                    # join_exact_partials need them, and they say so (status 4).
                    _sym_if_present(handle, :cudot_get_mode),
                    _sym_if_present(handle, :cudot_join_exact_partials),
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

# Set once Julia has begun to exit (by the atexit hook below). From then on finalizers free nothing:
# at exit Julia runs the finalizer of every object that still has one, reachable or not, possibly
# while a task on another thread is still inside a call on that very context (cudot_deinit must
# never race with another call on its context). The operating system reclaims the memory of the
# exiting process, GPU memory included. Explicit close() keeps working during exit.
const _EXITING = Threads.Atomic{Bool}(false)

# An atexit hook. Julia runs all atexit hooks before it runs the finalizers at exit.
_at_exit() = (_EXITING[] = true; nothing)

function __init__()
    _LIB[] = nothing
    _EXITING[] = false
    # Registered first, also in the deferred case below: a context can exist whenever Cudot is loaded.
    atexit(_at_exit)
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

"""
    Cudot.set_library!(path::AbstractString) -> String
    Cudot.set_library!(nothing)

Store `path` as Cudot's `"library"` preference, in `LocalPreferences.toml` next to the active
project (`JuliaLocalPreferences.toml` instead if that file exists there), and return what was
stored. The library is opened when Cudot loads, so the preference takes effect in the **next**
Julia session. Order of precedence at load time: `ENV["CUDOT_LIBRARY"]` first, then this
preference, then the default names (`libcudot.so.1`, then `Libdl.find_library`).

The file is the one Preferences.jl writes, in its format (`library` under a `[Cudot]` table), so
a preference set by an older Cudot still applies; every other table and key in it is kept (its
comments are not: the file is rewritten from its parsed contents).

A path with a folder in it is stored as an absolute path; a bare file name (`"libcudot.so.1"`) is
stored as given and found through the system library search path. The library is opened and its
major version checked before anything is stored: a file that is not a cudot 1.x library throws
`ArgumentError` and changes nothing. `set_library!(nothing)` removes the preference of the active
project (and the `[Cudot]` table, if nothing else is left in it); a preference set in the
project's `[preferences.Cudot]` or in an environment further along `LOAD_PATH` then applies again.

The active project must be Cudot itself (`julia --project=bindings/julia`) or list Cudot in its
`[deps]` (as `Pkg.develop`/`Pkg.add` do): Julia reads a package's preferences only from such
projects. Otherwise, or without an active project, it throws an error and stores nothing.
"""
function set_library!(path::AbstractString)
    file, table = _preferences_file()    # before opening the library: fails without side effects
    stored = isempty(dirname(path)) ? String(path) : abspath(expanduser(path))
    handle, _, why = _try_open(stored)
    handle === nothing &&
        throw(ArgumentError(string("Cudot.set_library!: cannot use \"", stored, "\": ", why)))
    Libdl.dlclose(handle)    # only opened to check it; the loaded library is not changed now
    _write_preference(file, table, stored)
    return stored
end

function set_library!(::Nothing)
    file, table = _preferences_file()
    _write_preference(file, table, nothing)
    return nothing
end

# The name under which `project` (a parsed Project.toml) knows Cudot, or nothing: its own name if it
# is Cudot, else its [deps] key for Cudot's UUID. That name is the preference table Julia reads.
# Only these two: Julia 1.6 reads preferences from nowhere else (newer Julia also [extras]).
function _name_for_cudot(project::AbstractDict)
    uuid = string(_UUID)
    name = get(project, "name", nothing)
    name isa String && lowercase(string(get(project, "uuid", ""))) == uuid && return name
    deps = get(project, "deps", nothing)
    deps isa AbstractDict || return nothing
    for (k, v) in deps
        v isa String && lowercase(v) == uuid && return String(k)
    end
    return nothing
end

# (file, table) that set_library! writes: the preferences file that Base reads next to the active
# project (JuliaLocalPreferences.toml hides LocalPreferences.toml when both exist), and the table
# named after Cudot. A project that does not list Cudot is refused rather than edited: writing
# there would store a preference that Julia never reads.
function _preferences_file()
    project = Base.active_project()
    project === nothing &&
        error("Cudot.set_library!: there is no active project to store the preference in; ",
              "start Julia with --project (e.g. --project=bindings/julia) or activate one")
    table = isfile(project) ? _name_for_cudot(TOML.parsefile(project)) : nothing
    table === nothing &&
        error("Cudot.set_library!: the active project ", project, " is missing or does not list ",
              "Cudot, so Julia would not read a preference stored there; add Cudot to it first ",
              "(Pkg.develop(path=\"bindings/julia\")), or use --project=bindings/julia")
    dir = dirname(project)
    for name in ("JuliaLocalPreferences.toml", "LocalPreferences.toml")
        isfile(joinpath(dir, name)) && return (joinpath(dir, name), table)
    end
    return (joinpath(dir, "LocalPreferences.toml"), table)
end

# Sets "library" under [table] in `file` to `value`, or deletes it for `nothing` (then an emptied
# table goes too, and a missing file stays missing). Everything else in the file is kept. A file
# that does not parse is an error and is left as it is.
function _write_preference(file::String, table::String, value::Union{String,Nothing})
    exists = isfile(file)
    !exists && value === nothing && return nothing
    prefs = exists ? TOML.parsefile(file) : Dict{String,Any}()
    section = get(prefs, table, nothing)
    if section !== nothing && !(section isa AbstractDict)
        error("Cudot.set_library!: ", table, " in ", file, " is not a table; fix the file by hand")
    end
    if value === nothing
        (section === nothing || !haskey(section, "library")) && return nothing
        delete!(section, "library")
        isempty(section) && delete!(prefs, table)
    else
        if section === nothing
            section = Dict{String,Any}()
            prefs[table] = section
        end
        section["library"] = value
    end
    # A new file moved over the old one rather than a rewrite in place: Base keeps the TOML files it
    # parsed cached, and a new inode makes it re-read this one even when the size and the mtime
    # (whole seconds on some file systems) are the old file's. A failed write leaves the old file.
    tmp = tempname(dirname(file))
    try
        open(io -> TOML.print(io, prefs; sorted=true), tmp, "w")
        mv(tmp, file; force=true)
    finally
        rm(tmp; force=true)
    end
    return nothing
end

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
# The calls that can block for long: init, deinit, dot, dot_n, tile_partials
# ---------------------------------------------------------------------------------------------

# A thread inside an ordinary ccall never reaches a GC safepoint, so a garbage collection that any
# other thread starts waits until the call returns: a long GPU dot (or a GPU allocation, or a free
# that waits for the GPU) would stall every Julia thread. Julia 1.12 added `@ccall gc_safe=true`,
# which lets the collector run meanwhile. That is sound for these calls: cudot never calls back into
# Julia, and the Julia memory it touches is what the arguments pass (Refs, arrays), which the ccall
# keeps rooted for its whole duration (and Julia's collector does not move objects). Older Julia
# gets the plain ccall: same arguments, same results, only without that concurrency. `@static`
# keeps just one branch before any macro inside is expanded, so older Julia never expands the
# gc_safe form. (Early 1.13-DEV builds lacked it too; only release versions are considered.)
const _GC_SAFE_CALLS = VERSION >= v"1.12.0"

@static if _GC_SAFE_CALLS
    _c_init(f, out, n, cfg) =
        @ccall gc_safe=true $f(out::Ref{Ptr{Cvoid}}, n::Csize_t, cfg::Ref{_Config})::Cint
    _c_deinit(f, p) = @ccall gc_safe=true $f(p::Ptr{Cvoid})::Cint
    _c_dot(f, p, r) = @ccall gc_safe=true $f(p::Ptr{Cvoid}, r::Ref{Cdouble})::Cint
    _c_dot_n(f, p, n, r) =
        @ccall gc_safe=true $f(p::Ptr{Cvoid}, n::Csize_t, r::Ref{Cdouble})::Cint
    _c_tile_partials(f, p, first, n, out) =
        @ccall gc_safe=true $f(p::Ptr{Cvoid}, first::Csize_t, n::Csize_t, out::Ptr{UInt8})::Cint
else
    _c_init(f, out, n, cfg) =
        ccall(f, Cint, (Ref{Ptr{Cvoid}}, Csize_t, Ref{_Config}), out, n, cfg)
    _c_deinit(f, p) = ccall(f, Cint, (Ptr{Cvoid},), p)
    _c_dot(f, p, r) = ccall(f, Cint, (Ptr{Cvoid}, Ref{Cdouble}), p, r)
    _c_dot_n(f, p, n, r) = ccall(f, Cint, (Ptr{Cvoid}, Csize_t, Ref{Cdouble}), p, n, r)
    _c_tile_partials(f, p, first, n, out) =
        ccall(f, Cint, (Ptr{Cvoid}, Csize_t, Csize_t, Ptr{UInt8}), p, first, n, out)
end

# ---------------------------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------------------------

# A 16-bit type named BFloat16 (BFloat16s.jl's, or another package's): the error messages point
# such a type to the binding's bfloat16 representation.
_is_bfloat16_like(T) = T isa DataType && nameof(T) === :BFloat16 && isbitstype(T) && sizeof(T) == 2

# The element type given for `what` (the keyword's name) if it is one of ELTYPES; otherwise the
# CudotError the C library would give for an unknown dtype (status 1).
function _checked_eltype(T, what::AbstractString)
    for S in ELTYPES
        S === T && return S
    end
    hint = ""
    if _is_bfloat16_like(T)
        hint = string(" (for bfloat16 data use UInt16, the bit patterns: reinterpret(", T,
                      ", v) views such a buffer as ", T, " without copying)")
    end
    throw(CudotError(ERROR_INVALID_ARGUMENT,
                     string("unsupported ", what, " ", repr(T), hint, ": use one of Float32, ",
                            "Float64, Float16, UInt16 (bfloat16 bit patterns), Int8, UInt8 or Bool")))
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
# yield point; there is none between the two foreign calls below (a GC-safe call is not one), so
# the message read is the one this call left.
@noinline function _init(h::_Library, n::Csize_t, cfg::_Config)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    cref = Ref(cfg)
    st = _c_init(h.init, out, n, cref)
    if st != OK
        cmsg = ccall(h.last_error, Cstring, (Ptr{Cvoid},), C_NULL)
        return (Int(st), C_NULL, unsafe_string(cmsg))
    end
    p = out[]
    p == C_NULL && return (ERROR_INTERNAL, C_NULL, "cudot_init returned CUDOT_OK and a NULL context")
    return (OK, p, "")
end

"""
    CudotContext(n; eltype=Float32, y_eltype=eltype, memory=:auto, device=0, wait_ms=0, rows=1,
                 exact=false)
    CudotContext{Tx}(n; y_eltype=Tx, memory=:auto, device=0, wait_ms=0, rows=1, exact=false)
    CudotContext{Tx,Ty}(n; memory=:auto, device=0, wait_ms=0, rows=1, exact=false)
    CudotContext(f, n; kwargs...)        # do-block form: closes the context when f returns

A cudot context: two input buffers of capacity `n` elements, `x` of element type `eltype` (`Tx`)
and `y` of `y_eltype` (`Ty`), owned by the C library, and what is needed to compute their dot
product.

- `eltype`, `y_eltype`: each one of [`Cudot.ELTYPES`](@ref): `Float32`, `Float64`, `Float16`,
  `Int8`, `UInt8`, `Bool` (a byte buffer that must hold only 0 or 1; it is zeroed at
  construction) or `UInt16`, which stands for bfloat16: the buffer holds bfloat16 bit patterns
  (see [`Cudot.bf16_bits`](@ref)). Every pair is allowed; `y_eltype` defaults to `eltype`.
- `memory`: `:auto` (a GPU strategy when a usable GPU exists, otherwise `:host`), `:pinned`,
  `:mapped`, `:managed` or `:host`. [`memory(ctx)`](@ref) tells what `:auto` chose.
- `device`: CUDA device ordinal, or [`Cudot.DEVICE_ALL`](@ref) for every visible GPU (the same
  result bits as one GPU); ignored by `:host` (and by `:auto` without a GPU). Below -1 is status 1
  (INVALID_ARGUMENT).
- `wait_ms`: the longest one call of a GPU strategy waits for the GPU, in milliseconds; 0 lets the
  library choose ([`Cudot.DEFAULT_WAIT_MS`](@ref) plus 2 s per GiB the call reads). A call that
  waits longer (a hung GPU) throws status 5 (CUDA), and the context can then only be closed. Needs
  cudot 1.5 when not 0 (an older library answers status 4, UNSUPPORTED); outside 0 to
  `typemax(UInt32)` it is status 1 (INVALID_ARGUMENT), before the library is called.
- `rows`: buffers of `rows` rows of `n` elements each (capacity `rows * n`); with `rows > 1` the
  input views are `n × rows` matrices, column `j` being row `j` of the C buffers, and
  [`Cudot.dot_each_row`](@ref) dots them one by one. Needs cudot 1.10 when above 1 (an older
  library answers status 4, UNSUPPORTED); below 1 it is status 1, before the library is called.
- `exact`: `true` makes an exact context (`cudot_config.mode = CUDOT_MODE_EXACT`): every `dot`
  is the correctly rounded dot, the exact sum of the exact products rounded once (the bits of
  `Cudot.dot_arrays(x, y; exact=true)` on the same values, on every memory strategy), and
  [`Cudot.tile_partials`](@ref) gives one exact partial for [`Cudot.join_exact_partials`](@ref).
  [`Cudot.dot_each_row`](@ref) is refused on it (status 4) in this version. See
  [`Cudot.isexact`](@ref). Needs cudot 1.13 when `true` (an older library answers status 4,
  UNSUPPORTED).

Fill the buffers through [`inputs`](@ref) (or `ctx.x` and `ctx.y`, the same views), then call
[`dot`](@ref). Release the context with `close(ctx)` (idempotent) or use the do-block form. A
finalizer releases a context that was never closed once nothing refers to it any more (neither the
context nor one of its input views), but it runs at an unpredictable time, and not at all once
Julia is exiting: close contexts explicitly, especially GPU ones.

Failures throw [`CudotError`](@ref), e.g. status `Cudot.ERROR_NO_DEVICE` (3) for a GPU strategy
without a GPU. Using a closed context throws `CudotError` with status 1 (INVALID_ARGUMENT).
Element types other than `Float32`/`Float64`, and mixed pairs, need cudot 1.1 or later (status 4,
UNSUPPORTED, with an older library).

Thread safety: a context may be used from several tasks/threads; calls on it are serialized by a
lock, and `close` waits for calls in flight. Do not write into its input views while a `dot` on
the same context runs in another task.
"""
mutable struct CudotContext{Tx<:_Eltype,Ty<:_Eltype}
    ptr::Ptr{Cvoid}          # C_NULL once closed or finalized
    n::Int                   # capacity (rows * rowlen); stays readable after close
    rows::Int                # rows of the buffers (1 without the rows keyword)
    rowlen::Int              # elements of each row: the n given to the constructor
    xbuf::Vector{Tx}         # the C buffers, wrapped without ownership; replaced by empty
    ybuf::Vector{Ty}         # vectors on close, so that nothing keeps the freed addresses
    lock::ReentrantLock      # serializes calls and keeps close from racing them

    function CudotContext{Tx,Ty}(n::Integer; memory::Union{Symbol,AbstractString}=:auto,
                                 device::Integer=0, wait_ms::Integer=0, rows::Integer=1,
                                 exact::Bool=false) where {Tx<:_Eltype,Ty<:_Eltype}
        mcode = _memory_code(Symbol(memory))
        0 <= n <= typemax(Int) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: capacity n = ", n,
                                                            " is out of range")))
        typemin(Int32) <= device <= typemax(Int32) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: device = ", device,
                                                            " is out of range")))
        0 <= wait_ms <= typemax(UInt32) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: wait_ms = ", wait_ms,
                                                            " is out of range")))
        1 <= rows <= typemax(Int) && (n == 0 || rows <= typemax(Int) ÷ n) ||
            throw(CudotError(ERROR_INVALID_ARGUMENT, string("cudot_init: rows = ", rows, " of n = ", n,
                                                            " elements is out of range")))
        cap = Int(n) * Int(rows)
        h = _lib()
        xcode, ycode = _dtype_code(Tx), _dtype_code(Ty)
        if h.version < _MIXED_SINCE && (xcode > _F64 || ycode != xcode)
            throw(CudotError(ERROR_UNSUPPORTED,
                             string("element types ", Tx, " x ", Ty, " need cudot ", _MIXED_SINCE,
                                    " or later; the loaded library (", h.path, ") is ",
                                    h.version, ", which has only Float32 and Float64, the same ",
                                    "for x and y")))
        end
        # y_dtype 0 means "the same as dtype": used whenever the C types agree (also Bool with
        # UInt8), which keeps the request valid for a 1.0 library; wait_ms 0 likewise before 1.5,
        # rows 0 (one row) before 1.10, and mode 0 (canonical) before 1.13.
        cfg = _Config(UInt32(sizeof(_Config)), xcode, mcode, Int32(device),
                      ycode == xcode ? Int32(0) : ycode, UInt32(wait_ms),
                      rows == 1 ? UInt64(0) : UInt64(rows),
                      exact ? _MODE_EXACT : _MODE_CANONICAL, Int32(0))
        st, p, msg = _init(h, Csize_t(n), cfg)
        st == OK || throw(CudotError(st, msg))

        # Own the C context (finalizer registered) before anything else can throw.
        ctx = new{Tx,Ty}(p, cap, Int(rows), Int(n), Tx[], Ty[], ReentrantLock())
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
        xbuf = unsafe_wrap(Array, Ptr{Tx}(xr[]), cap; own=false)
        ybuf = unsafe_wrap(Array, Ptr{Ty}(yr[]), cap; own=false)
        # The C buffers start with unspecified bytes. Any byte is a valid value of the other types,
        # but a Bool must be 0x00 or 0x01: zero Bool buffers so that reading one before writing it
        # is well defined.
        Tx === Bool && fill!(xbuf, false)
        Ty === Bool && fill!(ybuf, false)
        setfield!(ctx, :xbuf, xbuf)
        setfield!(ctx, :ybuf, ybuf)
        return ctx
    end
end

function CudotContext(n::Integer; eltype=Float32, y_eltype=eltype,
                      memory::Union{Symbol,AbstractString}=:auto, device::Integer=0,
                      wait_ms::Integer=0, rows::Integer=1, exact::Bool=false)
    Tx = _checked_eltype(eltype, "eltype")
    Ty = _checked_eltype(y_eltype, "y_eltype")
    return CudotContext{Tx,Ty}(n; memory=memory, device=device, wait_ms=wait_ms, rows=rows,
                               exact=exact)
end

function CudotContext{Tx}(n::Integer; y_eltype=Tx, memory::Union{Symbol,AbstractString}=:auto,
                          device::Integer=0, wait_ms::Integer=0, rows::Integer=1,
                          exact::Bool=false) where {Tx<:_Eltype}
    Ty = _checked_eltype(y_eltype, "y_eltype")
    return CudotContext{Tx,Ty}(n; memory=memory, device=device, wait_ms=wait_ms, rows=rows,
                               exact=exact)
end

function CudotContext(f::Function, n::Integer; kwargs...)
    return _with_context(f, CudotContext(n; kwargs...))
end

function CudotContext{Tx}(f::Function, n::Integer; kwargs...) where {Tx<:_Eltype}
    return _with_context(f, CudotContext{Tx}(n; kwargs...))
end

function CudotContext{Tx,Ty}(f::Function, n::Integer; kwargs...) where {Tx<:_Eltype,Ty<:_Eltype}
    return _with_context(f, CudotContext{Tx,Ty}(n; kwargs...))
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

# Finalizer: a backstop for contexts that were never closed. Outside exit it runs only once nothing
# refers to the context (every call below holds it with GC.@preserve, every input view refers to
# it), so no call on it can be in flight. It may run on any thread, in the middle of any task: it
# takes no lock (finalizers must not wait or yield), never throws, never prints, and touches only
# this context. From the moment Julia starts exiting it frees nothing (see _EXITING).
function _finalize(ctx::CudotContext{Tx,Ty}) where {Tx,Ty}
    _EXITING[] && return nothing
    p = getfield(ctx, :ptr)
    p == C_NULL && return nothing
    setfield!(ctx, :ptr, C_NULL)
    # As close does (this matters only for an explicit finalize(ctx) on a context still in use).
    setfield!(ctx, :xbuf, Tx[])
    setfield!(ctx, :ybuf, Ty[])
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
    p = getfield(ctx, :ptr)
    p == C_NULL && _throw_closed()
    return p
end

function _last_error(h::_Library, p::Ptr{Cvoid}, what::AbstractString)
    s = unsafe_string(ccall(h.last_error, Cstring, (Ptr{Cvoid},), p))
    return isempty(s) ? string(what, " failed") : s
end

@noinline _throw_ctx_error(h::_Library, p::Ptr{Cvoid}, st, what) =
    throw(CudotError(st, _last_error(h, p, what)))

# The message of a failed call without a context (cudot_init, cudot_join_partials and the calls on
# the caller's own arrays) is thread-local, in cudot_last_error(NULL): read right after the failed
# call, with no yield point in between, so on the same OS thread.
@noinline function _throw_global_error(h::_Library, st, what::AbstractString)
    msg = unsafe_string(ccall(h.last_error, Cstring, (Ptr{Cvoid},), C_NULL))
    throw(CudotError(st, isempty(msg) ? string(what, " failed") : msg))
end

# Run f(library, pointer) with the context locked, open and kept alive for the whole call.
# The message of a failed call is read inside f, still under the lock, so no other call on this
# context can overwrite it first.
@inline function _locked(f, ctx::CudotContext)
    h = _lib()
    lk = getfield(ctx, :lock)
    lock(lk)
    try
        p = _live_ptr(ctx)
        return GC.@preserve ctx f(h, p)
    finally
        unlock(lk)
    end
end

"""
    isopen(ctx::CudotContext) -> Bool

`false` once the context was closed (or finalized).
"""
Base.isopen(ctx::CudotContext) = getfield(ctx, :ptr) != C_NULL

"""
    close(ctx::CudotContext)

Destroy the C context and free its buffers (`cudot_deinit`). Idempotent: closing a closed context
does nothing. Waits for calls on the context that are in flight in other tasks. Afterwards every
use of the context or of its input views (`ctx.x`, `ctx.y`, and views taken earlier) throws
`CudotError` (status 1). Throws `CudotError` (status 5, CUDA) if freeing GPU memory reported an
error; the context is closed anyway.
"""
function Base.close(ctx::CudotContext{Tx,Ty}) where {Tx,Ty}
    h = _lib()
    lk = getfield(ctx, :lock)
    lock(lk)
    try
        p = getfield(ctx, :ptr)
        p == C_NULL && return nothing
        setfield!(ctx, :ptr, C_NULL)
        # Drop the wrappers of the buffers before freeing them: nothing reachable from the context
        # keeps the old addresses (the views read the buffers through the context, and check first).
        setfield!(ctx, :xbuf, Tx[])
        setfield!(ctx, :ybuf, Ty[])
        st = GC.@preserve ctx _c_deinit(h.deinit, p)
        # The context is gone now, so cudot_last_error(ctx) can no longer be asked.
        st == OK || throw(CudotError(st, "cudot_deinit reported an error while freeing the " *
                                         "context (it is destroyed anyway)"))
    finally
        unlock(lk)
    end
    return nothing
end

"""
    dot(ctx::CudotContext) -> Float64
    dot(ctx::CudotContext, n::Integer) -> Float64

The dot product of the context's two input buffers over all `capacity(ctx)` elements, or over the
first `n` only (`cudot_dot` / `cudot_dot_n`): `sum(x[i] * y[i])`, with `Bool` as 0/1 and `UInt16`
as the bfloat16 value of its bits. Always a `Float64`, whatever the element types.

How it is summed depends on the pair of element types:
- either side `Float64`: compensated (Dot2), as accurate as if computed in twice the working
  precision and rounded once;
- both sides integer (`Int8`, `UInt8`, `Bool`): the exact sum in 64-bit integers, converted to
  `Float64` (exact up to 2^53 in magnitude);
- otherwise (`Float32`, `Float16`, bfloat16, and integers with those): every product exact in
  `Float64`, summed in `Float64`.

A context made with `exact=true` instead returns the correctly rounded dot for every pair: the
exact sum of the exact products, rounded once (see [`Cudot.isexact`](@ref)).

These are methods of `LinearAlgebra.dot` (re-exported by Cudot, so `using Cudot` is enough and
`using LinearAlgebra` alongside causes no conflict). `dot(x, y)` on the context's own views is the
same call (see [`CudotVector`](@ref)). The result is bitwise identical on every call for the same
values, for every memory strategy. `n > capacity(ctx)` throws `CudotError` with status 1
(INVALID_ARGUMENT).

On Julia 1.12 and later the call is GC-safe: other threads can collect garbage while a long dot
runs. On older Julia a garbage collection started elsewhere waits for it to return.
"""
function LinearAlgebra.dot(ctx::CudotContext)
    return _locked(ctx) do h, p
        r = Ref{Cdouble}(0.0)
        st = _c_dot(h.dot, p, r)
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
        st = _c_dot_n(h.dot_n, p, m, r)
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

The CUDA device ordinal the context computes on, [`Cudot.DEVICE_ALL`](@ref) (-1) for a context on
every visible GPU, or `nothing` for the CPU (`:host`).
"""
function device(ctx::CudotContext)
    _, d = _get_memory(ctx)
    return d == DEVICE_NONE ? nothing : Int(d)
end

"""
    capacity(ctx::CudotContext) -> Int

The capacity given at construction (`cudot_get_capacity`): `n`, or `rows * n` for a context made
with `rows`.
"""
function capacity(ctx::CudotContext)
    return _locked(ctx) do h, p
        n = Ref{Csize_t}(0)
        st = ccall(h.get_capacity, Cint, (Ptr{Cvoid}, Ref{Csize_t}), p, n)
        st == OK || _throw_ctx_error(h, p, st, "cudot_get_capacity")
        Int(n[])
    end
end

# The context's cudot_mode (cudot_get_mode), asked with the context locked (inside _locked). A
# library without cudot_get_mode (before 1.13) makes canonical contexts only: it answers a config
# that asks for another mode with status 4, so no context of it can be exact.
function _get_mode(h::_Library, p::Ptr{Cvoid})
    h.get_mode == C_NULL && return _MODE_CANONICAL
    m = Ref{Int32}(0)
    st = ccall(h.get_mode, Cint, (Ptr{Cvoid}, Ref{Int32}), p, m)
    st == OK || _throw_ctx_error(h, p, st, "cudot_get_mode")
    return m[]
end

"""
    Cudot.isexact(ctx::CudotContext) -> Bool

Whether the context was made with `exact=true` (`cudot_get_mode` reports `CUDOT_MODE_EXACT`): its
`dot` is then the correctly rounded dot and [`Cudot.tile_partials`](@ref) gives one exact partial.
`false` for every context of a library older than 1.13. A closed context throws `CudotError`
(status 1).
"""
function isexact(ctx::CudotContext)
    return _locked(ctx) do h, p
        _get_mode(h, p) == _MODE_EXACT
    end
end

"""
    eltype(ctx::CudotContext)

The element type of `x`, the first input (the `eltype` keyword of the constructor). For both, see
[`eltypes`](@ref).
"""
Base.eltype(::Type{<:CudotContext{Tx}}) where {Tx} = Tx

# (x_dtype, y_dtype) as C values. A 1.0 library has no cudot_get_dtypes; its contexts hold the
# same F32 or F64 type on both sides, as the constructor made sure.
function _get_dtypes(ctx::CudotContext{Tx,Ty}) where {Tx,Ty}
    if _lib().get_dtypes == C_NULL
        _live_ptr(ctx)
        return (_dtype_code(Tx), _dtype_code(Ty))
    end
    return _locked(ctx) do h, p
        xd = Ref{Int32}(0)
        yd = Ref{Int32}(0)
        st = ccall(h.get_dtypes, Cint, (Ptr{Cvoid}, Ref{Int32}, Ref{Int32}), p, xd, yd)
        st == OK || _throw_ctx_error(h, p, st, "cudot_get_dtypes")
        (xd[], yd[])
    end
end

"""
    eltypes(ctx::CudotContext{Tx,Ty}) -> (Tx, Ty)

The element types of the two inputs, `x` and `y`, as Julia types. The C library is asked
(`cudot_get_dtypes`) and its answer checked against the context's type; a mismatch would be a
bug and throws `CudotError` (status 6, INTERNAL). `Bool` and `UInt8` are the same C type
(`CUDOT_U8`); the context's type tells them apart. See also [`Cudot.dtypes`](@ref).
"""
function eltypes(ctx::CudotContext{Tx,Ty}) where {Tx,Ty}
    xd, yd = _get_dtypes(ctx)
    if xd != _dtype_code(Tx) || yd != _dtype_code(Ty)
        throw(CudotError(ERROR_INTERNAL,
                         string("cudot_get_dtypes reports ", _dtype_symbol(xd), " x ",
                                _dtype_symbol(yd), " for a CudotContext{", Tx, ", ", Ty, "}")))
    end
    return (Tx, Ty)
end

"""
    Cudot.dtypes(ctx::CudotContext) -> (Symbol, Symbol)

The C element types of `x` and `y` as reported by `cudot_get_dtypes`: each one of `:f32`,
`:f64`, `:f16`, `:bf16`, `:i8`, `:u8` (`Bool` buffers are `:u8`).
"""
function dtypes(ctx::CudotContext)
    xd, yd = _get_dtypes(ctx)
    return (_dtype_symbol(xd), _dtype_symbol(yd))
end

function Base.show(io::IO, ctx::CudotContext{Tx,Ty}) where {Tx,Ty}
    print(io, "CudotContext{", Tx, ", ", Ty, "}(")
    if isopen(ctx)
        print(io, "capacity=", getfield(ctx, :n))
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
    CudotVector{T,C} <: AbstractVector{T}

A view of one input buffer of a [`CudotContext`](@ref) (of type `C`), returned by
[`inputs`](@ref) and by `ctx.x` / `ctx.y`; `x isa CudotVector{Float32}` asks for the element type
only. It holds the context, so the context (and its buffer) stays alive as long as the view is
reachable, and it reads the buffer through the context: every element access checks that the
context is still open and throws `CudotError` (status 1) otherwise, so a view used after `close`
throws instead of touching freed memory. Its length stays the capacity after `close`. (The check
does not protect against another task closing the context in the middle of an access: do not close
a context that other tasks are still using.)

`dot(x, y)` of the two views of one open context is computed by the library: it is `dot(ctx)`
(a `Float64`, the same bits), and `dot(view(x, 1:k), view(y, 1:k))` is `dot(ctx, k)`. Any other
`dot` involving a view (`dot(x, x)`, views of two contexts, a view with a plain vector, other
ranges) throws `ArgumentError` rather than fall back to LinearAlgebra's generic `dot`, which sums
in the element type (an `Int8` sum wraps around, a `Float32` sum rounds in `Float32`) and would
give a different number. For Julia arithmetic, copy first: `dot(collect(x), v)`.

Writing converts with `convert(T, value)`, so a value the element type cannot hold exactly throws
(`InexactError`: `2` or `0.5` into a `Bool` view, `200` into an `Int8` one). A `UInt16` view holds
bfloat16 *bit patterns*: `v[i] = 1` stores the pattern `0x0001`, not the value 1; write
`v[i] = Cudot.bf16_bits(1.0)` and read `Cudot.bf16_value(v[i])`.

`pointer(v)` gives the raw address; keep `v` alive (`GC.@preserve v`) while using it, and do not
use it after `close`.
"""
struct CudotVector{T<:_Eltype,C<:CudotContext} <: AbstractVector{T}
    ctx::C        # keeps the context, hence the buffer, alive
    isx::Bool     # true: the context's x buffer; false: its y buffer

    # Only views whose element type is their side's can exist (the buffer is read as a Vector{T}).
    function CudotVector{T,C}(ctx::C, isx::Bool) where {T<:_Eltype,C<:CudotContext}
        S = isx ? _xtype(ctx) : _ytype(ctx)
        T === S || throw(ArgumentError(string("a CudotVector{", T, "} cannot view the ",
                                              isx ? "x" : "y", " buffer, of element type ", S)))
        return new{T,C}(ctx, isx)
    end
end

_xtype(::CudotContext{Tx,Ty}) where {Tx,Ty} = Tx
_ytype(::CudotContext{Tx,Ty}) where {Tx,Ty} = Ty

_xview(ctx::C) where {Tx,Ty,C<:CudotContext{Tx,Ty}} = CudotVector{Tx,C}(ctx, true)
_yview(ctx::C) where {Tx,Ty,C<:CudotContext{Tx,Ty}} = CudotVector{Ty,C}(ctx, false)

# The buffer behind a view, read from its context at each use: after close it is an empty vector,
# never the freed memory. Callers check that the context is open first.
@inline _data(v::CudotVector{T}) where {T} =
    (getfield(v, :isx) ? getfield(v.ctx, :xbuf) : getfield(v.ctx, :ybuf))::Vector{T}

"""
    x, y = inputs(ctx::CudotContext{Tx,Ty})

The context's two input buffers as views of length `capacity(ctx)`: `x::CudotVector{Tx}` and
`y::CudotVector{Ty}` (also available as `ctx.x` and `ctx.y`). Write the data into them in place
(`x .= ...`, `copyto!(x, v)`, `x[i] = ...`), then call `dot(ctx)` (or `dot(x, y)`, the same). No
data is copied: the views are the library's own memory. The buffers keep their contents between
calls. They become unusable (accesses throw) once the context is closed.

A context made with `rows > 1` gives `n × rows` matrices instead: `reshape`s of those two views
(so every access is checked the same way), column `j` being row `j` of the C buffers (which are
row-major, one row after the other). `view(x, :, j)` is that row; [`Cudot.dot_each_row`](@ref)
dots the rows one by one. `dot` of these matrices, or of their columns, is refused with an
`ArgumentError`: use `dot(ctx)` (the whole buffers as one vector) or `Cudot.dot_each_row(ctx)`.

Element types: `Float32`, `Float64`, `Float16` and `Int8`/`UInt8` are stored natively. A `Bool`
view is a byte buffer holding 0 or 1 (zeroed at construction); never put another byte value in
it through a pointer or `reinterpret` (Julia assumes a `Bool` byte is 0 or 1). A `UInt16` view
holds bfloat16 bit patterns (see [`Cudot.bf16_bits`](@ref)); with the BFloat16s.jl package,
`reinterpret(BFloat16, y)` views it as `BFloat16` values without copying (its type has the same
bits; Cudot does not depend on that package).
"""
function inputs(ctx::CudotContext)
    _live_ptr(ctx)
    x, y = _xview(ctx), _yview(ctx)
    r = getfield(ctx, :rows)
    r == 1 && return (x, y)
    # A context with rows: n × rows matrices over the same checked views (column j is row j of the
    # C buffers, which are row-major: Julia's column-major order reads them as they lie).
    m = getfield(ctx, :rowlen)
    return (reshape(x, m, r), reshape(y, m, r))
end

# ctx.x and ctx.y are the checked views (what inputs returns), and the only properties: the fields
# (the raw wrapped buffers among them) are reached with getfield, inside this module only. A raw
# Vector kept by a caller would read freed memory after close, and would reach LinearAlgebra's
# generic dot.
function Base.getproperty(ctx::CudotContext, name::Symbol)
    name === :x && return inputs(ctx)[1]
    name === :y && return inputs(ctx)[2]
    throw(ArgumentError(string("a CudotContext has the properties x and y only (the input views), ",
                               "not ", name, "; see capacity, memory, eltypes and isopen")))
end

Base.propertynames(::CudotContext, private::Bool=false) = (:x, :y)

"""
    Cudot.context(v::CudotVector) -> CudotContext

The context a view belongs to.
"""
context(v::CudotVector) = v.ctx

Base.size(v::CudotVector) = (getfield(v.ctx, :n),)
Base.IndexStyle(::Type{<:CudotVector}) = IndexLinear()

@inline function Base.getindex(v::CudotVector, i::Int)
    ctx = v.ctx
    _live_ptr(ctx)
    @boundscheck checkbounds(v, i)
    return GC.@preserve ctx @inbounds _data(v)[i]
end

@inline function Base.setindex!(v::CudotVector{T}, val, i::Int) where {T}
    ctx = v.ctx
    _live_ptr(ctx)
    @boundscheck checkbounds(v, i)
    t = convert(T, val)
    GC.@preserve ctx begin
        @inbounds _data(v)[i] = t
    end
    return v
end

function Base.fill!(v::CudotVector{T}, val) where {T}
    ctx = v.ctx
    _live_ptr(ctx)
    t = convert(T, val)
    GC.@preserve ctx fill!(_data(v), t)
    return v
end

function Base.copyto!(dest::CudotVector{T}, src::Vector{T}) where {T}
    ctx = dest.ctx
    _live_ptr(ctx)
    GC.@preserve ctx copyto!(_data(dest), src)
    return dest
end

function Base.pointer(v::CudotVector)
    _live_ptr(v.ctx)
    return pointer(_data(v))
end

Base.unsafe_convert(::Type{Ptr{T}}, v::CudotVector{T}) where {T} = pointer(v)

# Contiguous memory: what Base needs for pointer(v, i) and for passing view(v, a:b) to ccall.
Base.strides(::CudotVector) = (1,)
Base.elsize(::Type{<:CudotVector{T}}) where {T} = sizeof(T)

Base.dataids(v::CudotVector) = Base.dataids(_data(v))

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

# ---------------------------------------------------------------------------------------------
# dot of the views: the library's result, or an error; never LinearAlgebra's generic sum
# ---------------------------------------------------------------------------------------------

# A view, or a view of a view (view(x, 1:k)): the arguments these dot methods take.
const _CudotOperand = Union{CudotVector,SubArray{<:Any,1,<:CudotVector}}

# Broadcasting between overlapping views (`@views x[2:end] .= x[1:end-1]`) copies the source first.
# Base's default copy would have to be a CudotVector again, which no copy can be: copy to a Vector.
Base.unalias(dest, v::_CudotOperand) = Base.mightalias(dest, v) ? copy(v) : v

# (context, is the x side, length) of a whole view or of a leading range of one; nothing for
# anything else (a range not starting at the first element, a step, a list of indices).
_dot_operand(v::CudotVector) = (v.ctx, getfield(v, :isx), length(v))
function _dot_operand(v::SubArray{<:Any,1,<:CudotVector})
    r = parentindices(v)[1]
    (r isa AbstractUnitRange && first(r) == 1) || return nothing
    p = parent(v)
    return (p.ctx, getfield(p, :isx), length(r))
end

@noinline function _refuse_dot()
    throw(ArgumentError(string(
        "dot with a CudotVector: only dot(x, y) of one context's own x and y (whole, or the same ",
        "leading range view(x, 1:k), view(y, 1:k)) is defined, and it is computed by the cudot ",
        "library, like dot(ctx) or dot(ctx, k). LinearAlgebra's generic dot, which any other pair ",
        "would reach, sums in the element type and gives a different number. For Julia ",
        "arithmetic, copy the view first: dot(collect(a), b).")))
end

function LinearAlgebra.dot(a::_CudotOperand, b::_CudotOperand)
    oa, ob = _dot_operand(a), _dot_operand(b)
    (oa === nothing || ob === nothing) && _refuse_dot()
    (ctx, ax, ka), (ctxb, bx, kb) = oa, ob
    (ctx === ctxb && ax != bx) || _refuse_dot()      # x with y of the same context, either order
    ka == kb || throw(DimensionMismatch(string("dot: the views have lengths ", ka, " and ", kb)))
    # The same numbers either way (a prefix of capacity n is the whole dot); dot(ctx) for whole views.
    return ka == getfield(ctx, :n) ? dot(ctx) : dot(ctx, ka)
end

LinearAlgebra.dot(::_CudotOperand, ::AbstractVector) = _refuse_dot()
LinearAlgebra.dot(::AbstractVector, ::_CudotOperand) = _refuse_dot()

# ---------------------------------------------------------------------------------------------
# Partials: building blocks of distributed dots (cudot_tile_partials, cudot_join_partials)
# ---------------------------------------------------------------------------------------------

@noinline _throw_no_partials(h::_Library) =
    throw(CudotError(ERROR_UNSUPPORTED,
                     string("the partials API needs cudot ", _PARTIALS_SINCE, " or later; the ",
                            "loaded library (", h.path, ") is ", h.version)))

"""
    Cudot.tile_partials(ctx, first=1, n=capacity(ctx) - first + 1) -> Vector{UInt8}

The partial sums of the tiles of elements `first:first+n-1` of the context's buffers
(`cudot_tile_partials`), element `first` taken as the first element of a tile: `cld(n,
Cudot.TILE_ELEMENTS)` partials of `Cudot.PARTIAL_BYTES` (16) bytes each, in tile order; only the
last tile may be short. `first` is **1-based**, as Julia indices are (the C function's `first` is
`first - 1`).

An exact context (`exact=true`, library 1.13) has no tiles: it gives ONE exact partial of
[`Cudot.EXACT_PARTIAL_BYTES`](@ref) (1120) bytes for those elements, whatever `first` and `n`
(`n = 0` included: the partial of an empty sum), for [`Cudot.join_exact_partials`](@ref), which
joins such partials in any order.

The bytes are opaque: only [`Cudot.join_partials`](@ref) with the same element types, with a
library of the same major version on a machine of the same byte order, may read them. Joining the
partials of all tiles of a vector, in tile order, gives exactly the bits of `dot` on one context
holding the whole vector, however the tiles were spread over contexts, processes or GPUs. So a
vector split into pieces that each start at a multiple of `Cudot.TILE_ELEMENTS` (only the last
piece may end in a short tile) can be computed piece by piece; see the README for MPI.

Errors (`CudotError`, status 1): a closed context, `first < 1`, `n < 0`, or elements beyond the
capacity. A library older than 1.2 throws status 4 (UNSUPPORTED). GC-safe on Julia 1.12+, like
`dot`.
"""
function tile_partials(ctx::CudotContext, first::Integer=1,
                       n::Integer=getfield(ctx, :n) - first + 1)
    _live_ptr(ctx)
    cap = getfield(ctx, :n)
    1 <= first <= typemax(Int) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("tile_partials: first = ", first,
              " is not an element index (indices are 1-based: the first element is 1)")))
    0 <= n <= typemax(Int) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("tile_partials: n = ", n,
              " is out of range")))
    f0, m = Int(first) - 1, Int(n)
    # Checked here, before the output is allocated for n elements; cannot overflow: 0 <= m <= cap.
    (m <= cap && f0 <= cap - m) ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("tile_partials: elements ", first, ":",
              f0 + m, " go beyond the capacity ", cap)))
    return _locked(ctx) do h, p
        h.tile_partials == C_NULL && _throw_no_partials(h)
        # The output's size depends on the mode: one exact partial, or one partial per tile. The
        # mode is asked under the same lock as the call that writes the output.
        bytes = _get_mode(h, p) == _MODE_EXACT ? EXACT_PARTIAL_BYTES :
                cld(m, TILE_ELEMENTS) * PARTIAL_BYTES
        out = Vector{UInt8}(undef, bytes)
        st = _c_tile_partials(h.tile_partials, p, Csize_t(f0), Csize_t(m), out)
        st == OK || _throw_ctx_error(h, p, st, "cudot_tile_partials")
        out
    end
end

"""
    Cudot.join_partials(xT, yT, partials::AbstractVector{UInt8}) -> Float64

The dot product of a vector from the partials of all its tiles, in tile order
(`cudot_join_partials`), exactly as `dot` on one context holding the whole vector returns it: the
same bits. `xT` and `yT` are the element types of `x` and `y` that the partials were computed for
(as given to `CudotContext`, e.g. `Float32, Bool`); joining with other types gives a meaningless
number. No partials (an empty vector) give `+0.0`.

Errors (`CudotError`, status 1): a length that is not a multiple of `Cudot.PARTIAL_BYTES`, an
element type not in [`Cudot.ELTYPES`](@ref). A library older than 1.2 throws status 4.
"""
function join_partials(xT, yT, partials::AbstractVector{UInt8})
    Tx = _checked_eltype(xT, "x element type")
    Ty = _checked_eltype(yT, "y element type")
    len = length(partials)
    len % PARTIAL_BYTES == 0 ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("join_partials: ", len, " bytes are not ",
              "a whole number of partials of ", PARTIAL_BYTES, " bytes")))
    h = _lib()
    h.join_partials == C_NULL && _throw_no_partials(h)
    # One contiguous block for C: a Vector as it is, anything else (a view, a range) copied.
    buf = partials isa Vector{UInt8} ? partials : Vector{UInt8}(partials)
    return _join(h, _dtype_code(Tx), _dtype_code(Ty), buf, len ÷ PARTIAL_BYTES)
end

# The message of a failed join is thread-local, like cudot_init's (see _throw_global_error).
@noinline function _join(h::_Library, xcode::Int32, ycode::Int32, buf::Vector{UInt8}, tiles::Int)
    r = Ref{Cdouble}(0.0)
    st = ccall(h.join_partials, Cint, (Int32, Int32, Ptr{UInt8}, Csize_t, Ref{Cdouble}),
               xcode, ycode, buf, Csize_t(tiles), r)
    st == OK || _throw_global_error(h, st, "cudot_join_partials")
    return r[]
end

"""
    Cudot.join_exact_partials(partials::AbstractVector{UInt8}) -> Float64

The exact mode's dot from exact partials placed back to back (`cudot_join_exact_partials`,
library 1.13), each of [`Cudot.EXACT_PARTIAL_BYTES`](@ref) (1120) bytes, as
[`Cudot.tile_partials`](@ref) of an exact context (`exact=true`) or `Cudot.tile_partials(x, y;
exact=true)` gives them: their exact sum rounded once, the bits that one exact context, or
`Cudot.dot_arrays(x, y; exact=true)`, holding all their elements returns. Any order, any cuts of
the vector, any element types (so, unlike [`Cudot.join_partials`](@ref), no types are passed). No
partials (an empty vector) give `+0.0`.

The bytes are opaque: only a library of the same major version, on a machine of the same byte
order, may read them.

Errors (`CudotError`, status 1): a length that is not a multiple of `Cudot.EXACT_PARTIAL_BYTES`
(the binding's own check), or a partial that no cudot wrote (the library's message names its
index, counted from 0). A library without `cudot_join_exact_partials` (before 1.13) throws
status 4.
"""
function join_exact_partials(partials::AbstractVector{UInt8})
    len = length(partials)
    len % EXACT_PARTIAL_BYTES == 0 ||
        throw(CudotError(ERROR_INVALID_ARGUMENT, string("join_exact_partials: ", len, " bytes are ",
              "not a whole number of exact partials of ", EXACT_PARTIAL_BYTES, " bytes")))
    h = _lib()
    h.join_exact_partials == C_NULL &&
        throw(CudotError(ERROR_UNSUPPORTED,
                         string("join_exact_partials needs cudot ", _EXACT_CONTEXTS_SINCE,
                                " or later; the loaded library (", h.path, ") is ", h.version)))
    # One contiguous block for C: a Vector as it is, anything else (a view, a range) copied.
    buf = partials isa Vector{UInt8} ? partials : Vector{UInt8}(partials)
    return _join_exact(h, buf, len ÷ EXACT_PARTIAL_BYTES)
end

# As _join: the message of a failure is thread-local, read right after the call.
@noinline function _join_exact(h::_Library, buf::Vector{UInt8}, count::Int)
    r = Ref{Cdouble}(0.0)
    st = ccall(h.join_exact_partials, Cint, (Ptr{UInt8}, Csize_t, Ref{Cdouble}),
               buf, Csize_t(count), r)
    st == OK || _throw_global_error(h, st, "cudot_join_exact_partials")
    return r[]
end

# Dots on the caller's own arrays (cudot 1.7): Cudot.dot_arrays, dot_arrays!, tile_partials(x, y),
# register_host, unregister_host.
include("arrays.jl")

# Many dots in one call (cudot_dot_rows, library 1.9): Cudot.dot_columns, dot_columns!,
# dot_segments, dot_segments!.
include("rows.jl")

# Contexts with rows (cudot 1.10): Cudot.nrows, row_length, dot_each_row, dot_each_row!.
include("context_rows.jl")

# ---------------------------------------------------------------------------------------------
# bfloat16 bit patterns
# ---------------------------------------------------------------------------------------------

"""
    Cudot.bf16_bits(x::Real) -> UInt16

The bfloat16 bit pattern nearest to `x` (round to nearest, ties to even; beyond the largest
bfloat16 it gives ±Inf; NaN gives a quiet NaN of the same sign), for storing into a `UInt16`
input (bfloat16 is the top half of a `Float32`: sign, 8 exponent bits, 7 fraction bits).
`Float32` and `Float64` arguments are rounded once, correctly; other reals are first converted to
`Float64` (exact for `Float16` and for integers up to 2^53).

    y[i] = Cudot.bf16_bits(0.1)          # y::CudotVector{UInt16}
    y .= Cudot.bf16_bits.(values)
"""
function bf16_bits(x::Float32)
    b = reinterpret(UInt32, x)
    # NaN: keep the sign and the top fraction bits, set the quiet bit (truncating alone could turn
    # a NaN with only low fraction bits into Inf).
    isnan(x) && return UInt16(b >> 16) | 0x0040
    # Round to nearest even at bit 16: add 0x7fff, plus one more when the kept part is odd. A carry
    # out of the fraction correctly bumps the exponent (up to Inf). Cannot overflow 32 bits: the
    # largest finite pattern is 0xff7fffff.
    return UInt16((b + 0x00007fff + ((b >> 16) & 0x00000001)) >> 16)
end

function bf16_bits(x::Float64)
    isnan(x) && return bf16_bits(Float32(x))
    f = Float32(x)
    if Float64(f) != x
        # Rounding to Float32 and then to bfloat16 could round twice the wrong way. Instead round
        # to odd in Float32 (truncate toward zero, then set the last bit when inexact), which
        # keeps the information the second rounding needs: with 24 >= 8 + 2 bits it is then correct.
        a = abs(f)
        if Float64(a) > abs(x)
            a = prevfloat(a)      # toward zero (from Inf: floatmax(Float32))
        end
        a = reinterpret(Float32, reinterpret(UInt32, a) | 0x00000001)
        f = signbit(x) ? -a : a
    end
    return bf16_bits(f)
end

bf16_bits(x::Real) = bf16_bits(Float64(x))

"""
    Cudot.bf16_value(bits::UInt16) -> Float32

The value of a bfloat16 bit pattern, exactly (every bfloat16 is a `Float32`):
`Cudot.bf16_value(y[i])` for `y::CudotVector{UInt16}`.
"""
bf16_value(bits::UInt16) = reinterpret(Float32, UInt32(bits) << 16)

end # module Cudot
