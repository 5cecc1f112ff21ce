# Tests of the Julia binding of cudot.
#
# Run from the repository root, with the C library built (no Pkg step: every dependency, the test
# ones included, is a standard library, so this works offline, with no registry):
#     CUDOT_LIBRARY=$PWD/build/libcudot.so.1 julia --threads=2 --project=bindings/julia bindings/julia/test/runtests.jl
# GPU strategies are skipped when the library reports NO_DEVICE, unless CUDOT_TEST_GPU=1, in which
# case a missing GPU is a failure.
#
# NOTE: these tests have not been run yet (no Julia runtime was available where they were written);
# CI only checks that they parse.

using Test
using Random
using Cudot

# CUDA.jl is not a test dependency (large, and of use only with a GPU). The tests of Cudot's CUDA.jl
# extension (test/cuda_arrays.jl) run where CUDA.jl can be loaded from the active environments,
# e.g. a temporary one: Pkg.activate(temp=true); Pkg.develop(path="bindings/julia");
# Pkg.add("CUDA"); include("bindings/julia/test/runtests.jl"). Elsewhere they are skipped.
const HAVE_CUDA_JL = VERSION >= v"1.9" && Base.find_package("CUDA") !== nothing
if HAVE_CUDA_JL
    using CUDA
end

const GPU_REQUIRED = get(ENV, "CUDOT_TEST_GPU", "") == "1"
const SIZES = (0, 1, 1000, 8193, 2^20 + 3)

# Every supported Julia element type. The 7 x 7 pairs of them cover all 36 pairs of C element
# types (Bool and UInt8 are both CUDOT_U8; UInt16 holds bfloat16 bit patterns).
const ELTYPES = (Float32, Float64, Float16, UInt16, Int8, UInt8, Bool)
const DTYPE = Dict{DataType,Symbol}(Float32 => :f32, Float64 => :f64, Float16 => :f16,
                                    UInt16 => :bf16, Int8 => :i8, UInt8 => :u8, Bool => :u8)

# A stand-in for BFloat16s.BFloat16 (not a dependency): a 16-bit primitive type of that name, to
# check that a bfloat16 buffer can be viewed as such a type and that passing the type itself as an
# element type gets a helpful error.
primitive type BFloat16 16 end

# The exception thrown by f(), or an error if it throws none.
function thrown(f)
    try
        f()
    catch err
        return err
    end
    error("expected an exception, none was thrown")
end

# Small integers whose products and partial sums are exact in Float32 and Float64 arithmetic.
xint(i) = (i % 7) - 3
yint(i) = (i % 5) - 2

function fill_integers!(x, y)
    for i in eachindex(x, y)
        x[i] = xint(i)
        y[i] = yint(i)
    end
    return nothing
end

function exact_integer_dot(n)
    s = 0
    for i in 1:n
        s += xint(i) * yint(i)
    end
    return s
end

# ---- integer patterns that every element type holds exactly ---------------------------------

is_integer_type(T) = T === Int8 || T === UInt8 || T === Bool

# The integers each type holds exactly (bfloat16 has 8 significant bits: every integer up to 256).
int_range(::Type{Bool}) = (0, 1)
int_range(::Type{UInt8}) = (0, 255)
int_range(::Type{Int8}) = (-128, 127)
int_range(::Type{UInt16}) = (-256, 256)
int_range(::Type{Float16}) = (-2048, 2048)
int_range(::Type{Float32}) = (-4096, 4096)
int_range(::Type{Float64}) = (-4096, 4096)

# Deterministic integers in int_range(T). Products are at most 2^24 in magnitude, so every partial
# sum of up to 2^29 of them is an integer below 2^53: exact in every arithmetic cudot uses.
function pattern(::Type{T}, i::Integer, a::Integer, b::Integer) where {T}
    lo, hi = int_range(T)
    return lo + mod(a * i + (i >> b), hi - lo + 1)
end
xpat(::Type{T}, i) where {T} = pattern(T, i, 7919, 3)
ypat(::Type{T}, i) where {T} = pattern(T, i, 31, 5)

# The element of type T holding the integer v (v in int_range(T), so exactly).
element(::Type{UInt16}, v::Integer) = Cudot.bf16_bits(Float32(v))
element(::Type{T}, v::Integer) where {T} = T(v)

# The number an element stands for, exactly, as a Float64 (bfloat16 bits decoded).
numeric(e::UInt16) = Float64(Cudot.bf16_value(e))
numeric(e::Real) = Float64(e)

function fill_pattern!(x::AbstractVector{Tx}, y::AbstractVector{Ty}) where {Tx,Ty}
    for i in eachindex(x, y)
        x[i] = element(Tx, xpat(Tx, i))
        y[i] = element(Ty, ypat(Ty, i))
    end
    return nothing
end

# The element of largest magnitude of each integer type.
extreme(::Type{Int8}) = typemin(Int8)    # -128
extreme(::Type{UInt8}) = typemax(UInt8)  # 255
extreme(::Type{Bool}) = true

function exact_pattern_dot(::Type{Tx}, ::Type{Ty}, n::Integer) where {Tx,Ty}
    s = 0
    for i in 1:n
        s += xpat(Tx, i) * ypat(Ty, i)
    end
    return s
end

# ---- random data, reference and error bounds ------------------------------------------------

# Random values typical of each type: floats in [-1, 1) (rounded to the type), integers over the
# whole range of the type.
rand_element(rng, ::Type{Float32}) = 2 * rand(rng, Float32) - 1
rand_element(rng, ::Type{Float64}) = 2 * rand(rng) - 1
rand_element(rng, ::Type{Float16}) = Float16(2 * rand(rng) - 1)
rand_element(rng, ::Type{UInt16}) = Cudot.bf16_bits(2 * rand(rng, Float32) - 1)
rand_element(rng, ::Type{T}) where {T<:Union{Int8,UInt8,Bool}} = rand(rng, T)

function random_inputs(::Type{Tx}, ::Type{Ty}, n, seed) where {Tx,Ty}
    rng = MersenneTwister(seed)
    xs = Tx[rand_element(rng, Tx) for _ in 1:n]
    ys = Ty[rand_element(rng, Ty) for _ in 1:n]
    return xs, ys
end

# Copies xs and ys into the context's two buffers; returns the context.
function load!(ctx, xs, ys)
    x, y = inputs(ctx)
    copyto!(x, xs)
    copyto!(y, ys)
    return ctx
end

# Exact dot product (BigFloat wide enough that every product and partial sum of these inputs is
# exact) and the sum of |x[i] * y[i]|.
function reference(xs::AbstractVector, ys::AbstractVector)
    setprecision(BigFloat, 512) do
        s = big(0.0)
        a = big(0.0)
        for i in eachindex(xs, ys)
            p = big(numeric(xs[i])) * big(numeric(ys[i]))
            s += p
            a += abs(p)
        end
        return s, a
    end
end

# The error bound of cudot's accuracy contract (the same the C tests use), by the pair of types:
#   either side Float64: compensated Dot2                         |r - s| <= u|s| + g(n)^2 * sum|x*y|
#   otherwise (not both integer): products exact, sums in double  |r - s| <= g(n) * sum|x*y|
# with u = 2^-53 and g(n) = n*u / (1 - n*u). Both sides integer: exact (checked separately).
function error_bound(::Type{Tx}, ::Type{Ty}, s::BigFloat, a::BigFloat, n::Integer) where {Tx,Ty}
    setprecision(BigFloat, 512) do
        u = big(2.0)^-53
        g = n * u / (1 - n * u)
        return (Tx === Float64 || Ty === Float64) ? u * abs(s) + g^2 * a : g * a
    end
end

# Whether r is what cudot promises for inputs of these types with exact dot s and sum|x*y| a.
function within_contract(::Type{Tx}, ::Type{Ty}, r::Float64, s::BigFloat, a::BigFloat,
                         n::Integer) where {Tx,Ty}
    if is_integer_type(Tx) && is_integer_type(Ty)
        return r === Float64(s)          # s is an integer below 2^53 here: exact
    end
    err = setprecision(BigFloat, 512) do
        abs(big(r) - s)
    end
    return err <= error_bound(Tx, Ty, s, a, n)
end

# A context of a GPU strategy, or nothing when there is no GPU and GPU tests are not required.
function gpu_context(n, Tx, Ty, mem; device=0, wait_ms=0, rows=1, exact=false)
    try
        return CudotContext(n; eltype=Tx, y_eltype=Ty, memory=mem, device=device, wait_ms=wait_ms, rows=rows,
                            exact=exact)
    catch err
        if err isa CudotError && err.status == Cudot.ERROR_NO_DEVICE && !GPU_REQUIRED
            return nothing
        end
        rethrow()
    end
end

# Records a GPU test as skipped (gpu_context returned nothing: no GPU, and none required).
function skip_without_gpu(what)
    @info "no usable GPU: skipping $what (set CUDOT_TEST_GPU=1 to make this a failure)"
    @test_skip false
end

const RANDOM_CASES = vcat([(Tx, Ty, n) for Tx in ELTYPES for Ty in ELTYPES for n in (1, 1000, 8193)],
                          [(T, T, 2^20 + 3) for T in (Float32, Float64, Float16, UInt16)],
                          [(Float32, Float64, 2^20 + 3), (Float16, Int8, 2^20 + 3)])

# Pairs checked on every GPU strategy against the CPU (a mix of the three arithmetic kinds).
const GPU_PAIRS = ((Float32, Float32), (Float64, Float64), (Float16, Float32), (UInt16, Float16),
                   (Float32, Bool), (Int8, UInt8), (Bool, Bool), (Float64, Int8), (UInt16, Float64))


# ---- helpers of the lifetime testsets (close twice, use after close, wrong element type, finalizer)

# A method for one view type only, as code written for one element type has: handed a view of
# another type it is a MethodError, never a reinterpretation of the bytes.
only_float64(v::CudotVector{Float64}) = length(v)

# For "finalizer-only release of 200 contexts". Each buffer is above glibc's largest dynamic mmap
# threshold (32 MiB on 64-bit, see mallopt(3)), so malloc maps it on its own and free unmaps it at
# once: the resident set then shows exactly which buffers are still allocated, whatever malloc kept
# from earlier tests and whichever thread runs the finalizers. Only every 32nd page is written:
# fast, and still 2.5 MiB resident per context.
const FORGET_N = 5 << 20                    # Float64 elements: 40 MiB per buffer
const FORGET_STRIDE = 32 * 4096 ÷ 8         # elements between two written ones

# The resident set of this process, in bytes (Linux).
function resident_bytes()
    fields = split(read("/proc/self/statm", String))
    return parse(Int, fields[2]) * Int(ccall(:getpagesize, Cint, ()))
end

# Makes `count` contexts, writes some pages of both buffers, and drops them without closing them.
# Returns the resident set while they were all reachable, and weak references to them. A function
# of its own, so that nothing of the caller keeps one reachable.
@noinline function forget_contexts(count)
    refs = WeakRef[]
    contexts = CudotContext[]
    for _ in 1:count
        ctx = CudotContext(FORGET_N; eltype=Float64, memory=:host)
        x, y = inputs(ctx)
        for j in 1:FORGET_STRIDE:FORGET_N
            x[j] = 1.0
            y[j] = 2.0
        end
        push!(refs, WeakRef(ctx))
        push!(contexts, ctx)
    end
    peak = resident_bytes()
    return peak, refs
end

# ---- helpers of the packaging, exit and partials testsets

const PKGDIR = dirname(@__DIR__)                  # bindings/julia
const PROJECT_TOML = joinpath(PKGDIR, "Project.toml")
const HEADER = joinpath(PKGDIR, "..", "..", "include", "cudot.h")

# The keys of each [section] of a flat TOML file such as Project.toml (no nested tables, no
# multi-line values), enough to check which dependencies have a [compat] entry.
function toml_keys(path)
    sections = Dict{String,Vector{String}}()
    current = ""
    for line in eachline(path)
        s = strip(line)
        if startswith(s, "[")
            current = String(strip(s, ['[', ']']))
        elseif !startswith(s, "#") && occursin('=', s)
            push!(get!(sections, current, String[]), String(strip(split(s, '=')[1])))
        end
    end
    return sections
end

# The standard libraries Project.toml may list in [deps], by name and UUID: they ship with every
# Julia from 1.6 on, so Pkg needs no registry for them. The same list as check_deps.py's (test.sh).
const STDLIBS = Dict(
    "Base64" => "2a0f44e3-6c83-55bd-87e4-b1978d98bd5f",
    "Dates" => "ade2ca70-3891-5945-98fb-dc099432e06a",
    "Libdl" => "8f399da3-3557-5675-b5ff-fb832c97cbdb",
    "LinearAlgebra" => "37e2e46d-f89d-539d-b4ee-838fcccc9c8e",
    "Logging" => "56ddb016-857b-54e1-b83d-db4d58db5568",
    "Printf" => "de0858da-6303-5e67-8744-51eddeeeb8d7",
    "Random" => "9a3f8284-a2c9-5f02-9a11-845980a1fd5c",
    "Serialization" => "9e88b42a-f829-5b0c-bbe9-9e923198166b",
    "TOML" => "fa267f1f-6049-4f14-aa54-33bafae1ed76",
    "Test" => "8dfed614-e22c-5e08-85e1-65c5234f0b40",
    "UUIDs" => "cf7118a7-6976-5b1a-9a39-7adc72f591a4",
)

# The version Project.toml states on its `version = "..."` line.
function project_version()
    m = match(r"^version\s*=\s*\"([^\"]*)\"\s*$"m, read(PROJECT_TOML, String))
    return m === nothing ? nothing : VersionNumber(m[1])
end

# CUDOT_VERSION_MAJOR.MINOR.PATCH of the header.
function header_version()
    text = read(HEADER, String)
    part(name) = parse(Int, match(Regex("#define CUDOT_VERSION_" * name * " (\\d+)"), text)[1])
    return VersionNumber(part("MAJOR"), part("MINOR"), part("PATCH"))
end

# Runs `script` in a new Julia process with the same active project (and this process's
# environment, so CUDOT_LIBRARY too). Returns (finished in time and exited 0, stdout,
# stderr); a process still running after `timeout` seconds is killed.
function run_julia(script::String; threads::Int=2, timeout::Float64=300.0)
    dir = mktempdir()
    out, err = joinpath(dir, "stdout"), joinpath(dir, "stderr")
    # The active project of these tests: bindings/julia itself, or the sandbox of Pkg.test.
    project = dirname(Base.active_project())
    cmd = `$(Base.julia_cmd()) --startup-file=no --threads=$threads --project=$project -e $script`
    proc = run(pipeline(cmd; stdout=out, stderr=err); wait=false)
    in_time = timedwait(() -> process_exited(proc), timeout) === :ok
    in_time || kill(proc)
    wait(proc)
    return (in_time && success(proc), read(out, String), read(err, String))
end

# A process that exits while contexts are open: one used by an atexit hook of the user, one never
# closed, one still computing on another thread. Julia runs every finalizer at exit, of reachable
# contexts too; they must free nothing then (the busy one would be freed under the running dot).
const EXIT_SCRIPT = raw"""
using Cudot
const N = 1 << 22
function filled(n)
    c = CudotContext(n; eltype=Float64, memory=:host)
    x, y = inputs(c)
    fill!(x, 1.0)
    fill!(y, 0.5)
    return c
end
const early = filled(N)
const want = dot(early)
# Registered after Cudot's own hook, so it runs before it (hooks run last registered first).
atexit() do
    late = filled(N)
    ok = dot(late) == want && dot(early) == want
    close(late)
    close(early)
    println(ok ? "atexit ok" : "atexit WRONG")
    flush(stdout)
end
const leaked = filled(N)                 # open at exit, never closed
const busy = filled(N)
const started = Threads.Atomic{Bool}(false)
Threads.@spawn while true
    dot(busy) == want || println("busy WRONG")
    started[] = true
    yield()                              # lets the main task run if both share a thread
end
while !started[]
    sleep(0.01)
end
println("exiting")
flush(stdout)
"""

# Element type pairs of the partials tests: each kind of arithmetic, a mixed pair, bfloat16, Bool.
const PARTIAL_PAIRS = ((Float32, Float32), (Float64, Float64), (Float16, UInt16), (Int8, UInt8),
                       (Float32, Bool), (Float64, Int8))

@testset "Cudot" begin

@testset "library" begin
    v = Cudot.version()
    @test v.major == 1
    @test v >= v"1.1.0"              # mixed element types need 1.1
    @test !isempty(Cudot.library_path())
    @test Cudot.ELTYPES === ELTYPES
end

@testset "bfloat16 bit patterns" begin
    bits = Cudot.bf16_bits
    val = Cudot.bf16_value
    @test bits(1.0f0) === 0x3f80
    @test bits(1.0) === 0x3f80
    @test bits(-2) === 0xc000
    @test bits(0.0) === 0x0000
    @test bits(-0.0) === 0x8000
    @test bits(Inf32) === 0x7f80
    @test bits(-Inf) === 0xff80
    @test isnan(val(bits(NaN32))) && isnan(val(bits(NaN)))
    @test val(0x3f80) === 1.0f0
    @test val(0x4049) === 3.140625f0
    # Round to nearest, ties to even.
    @test bits(reinterpret(Float32, 0x3f808000)) === 0x3f80    # tie, even stays
    @test bits(reinterpret(Float32, 0x3f818000)) === 0x3f82    # tie, odd goes up
    @test bits(reinterpret(Float32, 0x3f808001)) === 0x3f81    # above the tie
    # A Float64 just above a tie rounds up (a detour through Float32 would round it to the tie).
    @test bits(1.0 + 2.0^-8 + 2.0^-30) === 0x3f81
    @test bits(1.0 + 2.0^-8) === 0x3f80
    @test bits(-(1.0 + 2.0^-8 + 2.0^-30)) === 0xbf81
    # Overflow to Inf; the largest bfloat16 stays.
    @test bits(floatmax(Float32)) === 0x7f80
    @test bits(1e300) === 0x7f80
    @test bits(val(0x7f7f)) === 0x7f7f
    # Every pattern that is not NaN survives a round trip, through Float32 and through Float64.
    @test all(b -> isnan(val(b)) || (bits(val(b)) === b && bits(Float64(val(b))) === b),
              0x0000:0xffff)
    # Every integer up to 256 is exact.
    @test all(v -> val(bits(v)) == v, -256:256)
end

@testset "exact integer data, $Tx × $Ty, n = $n" for Tx in ELTYPES, Ty in ELTYPES, n in SIZES
    CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        @test ctx isa CudotContext{Tx,Ty}
        @test isopen(ctx)
        @test capacity(ctx) == n
        @test memory(ctx) === :host
        @test Cudot.device(ctx) === nothing
        @test eltype(ctx) === Tx
        @test eltypes(ctx) === (Tx, Ty)
        @test Cudot.dtypes(ctx) === (DTYPE[Tx], DTYPE[Ty])
        x, y = inputs(ctx)
        @test x isa CudotVector{Tx}
        @test y isa CudotVector{Ty}
        @test eltype(x) === Tx && eltype(y) === Ty
        @test length(x) == n && length(y) == n
        if Ty === Bool
            @test !any(y)                 # Bool buffers start zeroed
        end
        fill_pattern!(x, y)
        # The values written are the values read (the views are the buffers, natively typed).
        @test all(i -> x[i] === element(Tx, xpat(Tx, i)), 1:n)
        @test all(i -> y[i] === element(Ty, ypat(Ty, i)), 1:n)
        r = dot(ctx)
        @test r isa Float64
        @test r === Float64(exact_pattern_dot(Tx, Ty, n))
        if n == 0
            @test r === 0.0                   # +0.0, not -0.0
        end
        # Prefixes: dot(ctx, k) reads only the first k elements.
        for k in unique((0, 1, n ÷ 2, n))
            k <= n || continue
            @test dot(ctx, k) === Float64(exact_pattern_dot(Tx, Ty, k))
        end
        @test dot(ctx, 0) === 0.0
        # No copies: the views keep pointing at the same buffers.
        if n > 0
            x2, y2 = inputs(ctx)
            @test pointer(x2) == pointer(x) && pointer(y2) == pointer(y)
        end
    end
end

@testset "random data within the accuracy bound, $Tx × $Ty, n = $n" for (Tx, Ty, n) in RANDOM_CASES
    xs, ys = random_inputs(Tx, Ty, n, 20240 + n)
    s, a = reference(xs, ys)
    CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        x, y = inputs(ctx)
        copyto!(x, xs)
        copyto!(y, ys)
        @test x == xs && y == ys
        r = dot(ctx)
        @test within_contract(Tx, Ty, r, s, a, n)
        # Repeated calls are bitwise identical.
        for _ in 1:5
            @test dot(ctx) === r
        end
        # A prefix equals what a context of that capacity returns, bitwise.
        k = n ÷ 3
        CudotContext(k; eltype=Tx, y_eltype=Ty, memory=:host) do small
            xk, yk = inputs(small)
            copyto!(xk, xs[1:k])
            copyto!(yk, ys[1:k])
            @test dot(small) === dot(ctx, k)
        end
    end
end

@testset "Float32 × Bool mask" begin
    n = 100_003
    rng = MersenneTwister(99)
    vals = Float32[2 * rand(rng, Float32) - 1 for _ in 1:n]
    mask = rand(rng, Bool, n)
    CudotContext(n; eltype=Float32, y_eltype=Bool, memory=:host) do ctx
        @test eltypes(ctx) === (Float32, Bool)
        @test Cudot.dtypes(ctx) === (:f32, :u8)
        x, m = inputs(ctx)
        @test m isa CudotVector{Bool}
        @test !any(m)                        # zeroed at construction
        copyto!(x, vals)
        copyto!(m, mask)
        @test m == mask
        r = dot(ctx)
        s, a = reference(vals, mask)
        @test within_contract(Float32, Bool, r, s, a, n)
        # The masked sum, computed the same way: the same as Float32 x Float32 with 0/1 values,
        # bitwise (the products are the same doubles and the order depends only on n).
        CudotContext(n; eltype=Float32, memory=:host) do plain
            px, py = inputs(plain)
            copyto!(px, vals)
            py .= mask                       # true -> 1.0f0, false -> 0.0f0
            @test dot(plain) === r
        end
        # A mask from a condition, broadcast straight into the buffer.
        m .= x .> 0
        @test count(m) == count(>(0), vals)
        s2, a2 = reference(vals, vals .> 0)
        @test within_contract(Float32, Bool, dot(ctx), s2, a2, n)
        # Only 0 and 1 go in.
        @test_throws InexactError (m[1] = 2)
        @test_throws InexactError (m[1] = 0.5)
        m[1] = 1
        @test m[1] === true
        m[1] = false
        @test m[1] === false
        @test all(b -> b <= 0x01, reinterpret(UInt8, m))
        # Product semantics: a masked-out Inf or NaN still makes the result NaN (Inf * 0).
        x[2] = Inf32
        m[2] = false
        @test isnan(dot(ctx))
    end
end

@testset "Float16 against a Float64 reference, n = $n" for n in (1, 1000, 8193, 2^20 + 3)
    xs, ys = random_inputs(Float16, Float16, n, 555 + n)
    s, a = reference(xs, ys)
    r16 = CudotContext(n; eltype=Float16, memory=:host) do ctx
        x, y = inputs(ctx)
        copyto!(x, xs)
        copyto!(y, ys)
        dot(ctx)
    end
    @test within_contract(Float16, Float16, r16, s, a, n)
    # The same values as Float64 (exact conversions): cudot's Dot2 result.
    r64 = CudotContext(n; eltype=Float64, memory=:host) do ctx
        x, y = inputs(ctx)
        copyto!(x, Float64.(xs))
        copyto!(y, Float64.(ys))
        dot(ctx)
    end
    @test within_contract(Float64, Float64, r64, s, a, n)
    # Float16 x Float64 is Dot2 too, whatever side the Float16 is on.
    for (Tx, Ty) in ((Float16, Float64), (Float64, Float16))
        r = CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
            x, y = inputs(ctx)
            copyto!(x, Tx.(xs))
            copyto!(y, Ty.(ys))
            dot(ctx)
        end
        @test within_contract(Tx, Ty, r, s, a, n)
        # The same numbers, the same Dot2 arithmetic, the same order (it depends only on n).
        @test r === r64
    end
    # Float16 products are exact in Float64, so a single product is exact.
    if n == 1
        @test r16 == Float64(xs[1]) * Float64(ys[1])
    end
end

@testset "integer pairs are exact, $Tx × $Ty" for Tx in (Int8, UInt8, Bool), Ty in (Int8, UInt8, Bool)
    n = 2^20 + 3
    xs, ys = random_inputs(Tx, Ty, n, 77)
    exact = sum(Int64(xs[i]) * Int64(ys[i]) for i in 1:n)
    CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        @test eltypes(ctx) === (Tx, Ty)
        x, y = inputs(ctx)
        copyto!(x, xs)
        copyto!(y, ys)
        @test dot(ctx) === Float64(exact)
        k = 12345
        @test dot(ctx, k) === Float64(sum(Int64(xs[i]) * Int64(ys[i]) for i in 1:k))
        # The largest products, all of one sign.
        fill!(x, extreme(Tx))
        fill!(y, extreme(Ty))
        @test dot(ctx) === Float64(n * Int64(extreme(Tx)) * Int64(extreme(Ty)))
        # Cancellation to exactly zero gives +0.0 (n - 1 is even: the pairs 3, -3 cancel).
        if Tx === Int8 && Ty !== Bool
            for i in 1:n
                x[i] = isodd(i) ? 3 : -3
            end
            fill!(y, 1)
            @test dot(ctx, n - 1) === 0.0
            @test dot(ctx) === 3.0
        end
    end
end

@testset "special values" begin
    CudotContext(4; eltype=Float64, memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, 1.0)
        fill!(y, 1.0)
        x[2] = NaN
        @test isnan(dot(ctx))
        x[2] = Inf
        @test dot(ctx) == Inf
        y[2] = 0.0
        @test isnan(dot(ctx))             # Inf * 0
    end
    CudotContext(4; eltype=Float16, y_eltype=Int8, memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, 1)
        fill!(y, 1)
        x[3] = Inf16
        @test dot(ctx) === Inf
        x[3] = -Inf16
        @test dot(ctx) === -Inf
        x[3] = NaN16
        @test isnan(dot(ctx))
        x[3] = floatmax(Float16)          # 65504: no overflow in Float64
        @test dot(ctx) === 65504.0 + 3.0
    end
    CudotContext(4; eltype=UInt16, y_eltype=Float32, memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, Cudot.bf16_bits(1.0))
        fill!(y, 2)
        @test dot(ctx) === 8.0
        x[1] = Cudot.bf16_bits(Inf)
        @test dot(ctx) === Inf
        x[1] = Cudot.bf16_bits(NaN)
        @test isnan(dot(ctx))
        # The pitfall: x[i] = 1 stores the bit pattern 0x0001, the subnormal 2^-133, not 1.
        x[1] = 1
        @test x[1] === 0x0001
        @test Cudot.bf16_value(x[1]) === Float32(2.0^-133)
        @test dot(ctx) === 6.0                  # 2 * 2^-133 vanishes next to 6
    end
end

@testset "bfloat16 buffers viewed as another 16-bit type" begin
    CudotContext(3; eltype=Float32, y_eltype=UInt16, memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, 1)
        b = reinterpret(BFloat16, y)             # no copy: writes go to the C buffer
        @test length(b) == 3
        for i in 1:3
            b[i] = reinterpret(BFloat16, Cudot.bf16_bits(i / 2))
        end
        @test y[2] === Cudot.bf16_bits(1.0)
        @test dot(ctx) === 3.0
    end
end

@testset "auto strategy" begin
    for (Tx, Ty) in ((Float32, Float32), (Float16, Bool))
        CudotContext(1000; eltype=Tx, y_eltype=Ty) do ctx
            m = memory(ctx)
            @test m in (:pinned, :mapped, :managed, :host)
            @test m !== :auto
            d = Cudot.device(ctx)
            @test m === :host ? d === nothing : d isa Int
            @test eltypes(ctx) === (Tx, Ty)
            x, y = inputs(ctx)
            fill_pattern!(x, y)
            @test dot(ctx) === Float64(exact_pattern_dot(Tx, Ty, 1000))
        end
    end
end

@testset "GPU strategy $mem, $Tx × $Ty" for mem in (:pinned, :mapped, :managed), (Tx, Ty) in GPU_PAIRS
    n = 2^20 + 3
    ctx = gpu_context(n, Tx, Ty, mem)
    if ctx === nothing
        skip_without_gpu("memory = :$mem")
    else
        try
            @test memory(ctx) === mem
            @test Cudot.device(ctx) == 0
            @test eltypes(ctx) === (Tx, Ty)
            xs, ys = random_inputs(Tx, Ty, n, 7)
            x, y = inputs(ctx)
            copyto!(x, xs)
            copyto!(y, ys)
            r = dot(ctx)
            # Bitwise equal to the CPU, and to itself on every call.
            host = CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host)
            hx, hy = inputs(host)
            copyto!(hx, xs)
            copyto!(hy, ys)
            @test r === dot(host)
            @test dot(ctx, 12345) === dot(host, 12345)
            close(host)
            @test dot(ctx) === r
            # Fresh data between calls is seen.
            fill_pattern!(x, y)
            @test dot(ctx) === Float64(exact_pattern_dot(Tx, Ty, n))
        finally
            close(ctx)
        end
    end
end

# DEVICE_ALL: one context over every visible GPU, reported as DEVICE_ALL, with the CPU's bits. Without
# a usable GPU it must be NO_DEVICE (skipped; a failure with CUDOT_TEST_GPU=1), never UNSUPPORTED.
@testset "DEVICE_ALL on $mem, $Tx × $Ty" for mem in (:pinned, :mapped, :managed),
                                             (Tx, Ty) in ((Float32, Float32), (Float64, Float16))
    @test Cudot.DEVICE_ALL == -1
    n = 3 * 8192 * 40 + 5    # many tiles, so several GPUs each get a run; the last tile short
    ctx = gpu_context(n, Tx, Ty, mem; device=Cudot.DEVICE_ALL)
    if ctx === nothing
        skip_without_gpu("DEVICE_ALL on :$mem")
    else
        try
            @test memory(ctx) === mem
            @test Cudot.device(ctx) == Cudot.DEVICE_ALL
            xs, ys = random_inputs(Tx, Ty, n, 17)
            x, y = inputs(load!(ctx, xs, ys))
            CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do host
                load!(host, xs, ys)
                for k in (n, 0, 1, 8193, n ÷ 3, n - 1)
                    @test dot(ctx, k) === dot(host, k)
                end
            end
            fill_pattern!(x, y)    # fresh data after a dot
            @test dot(ctx) === Float64(exact_pattern_dot(Tx, Ty, n))
        finally
            close(ctx)
        end
    end
end

@testset "errors" begin
    # Unknown memory strategy.
    e = thrown(() -> CudotContext(10; memory=:bogus))
    @test e isa CudotError
    @test e.status == Cudot.ERROR_INVALID_ARGUMENT == 1
    @test e.name === :CUDOT_ERROR_INVALID_ARGUMENT
    @test occursin("bogus", e.msg)
    @test occursin("CUDOT_ERROR_INVALID_ARGUMENT", sprint(showerror, e))

    # Unsupported element types, for x and for y.
    for T in (Int32, Int16, UInt32, Int64, ComplexF64, BigFloat, Char, :f32, "Float32", 1)
        e = thrown(() -> CudotContext(10; eltype=T, memory=:host))
        @test e isa CudotError && e.status == 1
        @test occursin("eltype", e.msg)
        e = thrown(() -> CudotContext(10; eltype=Float32, y_eltype=T, memory=:host))
        @test e isa CudotError && e.status == 1
        @test occursin("y_eltype", e.msg)
    end
    # A BFloat16 type is pointed to UInt16.
    e = thrown(() -> CudotContext(10; y_eltype=BFloat16, memory=:host))
    @test e isa CudotError && e.status == 1
    @test occursin("UInt16", e.msg) && occursin("reinterpret", e.msg)
    @test_throws TypeError CudotContext{Int}(10)
    @test_throws TypeError CudotContext{Float32,Int}(10)

    # The parametric constructors.
    CudotContext{Float16}(5; memory=:host) do ctx
        @test eltypes(ctx) === (Float16, Float16)
    end
    CudotContext{Int8}(5; y_eltype=Bool, memory=:host) do ctx
        @test eltypes(ctx) === (Int8, Bool)
    end
    ctx = CudotContext{UInt8,Float64}(5; memory=:host)
    @test eltypes(ctx) === (UInt8, Float64)
    @test Cudot.dtypes(ctx) === (:u8, :f64)
    close(ctx)

    # Negative capacity, out-of-range device.
    @test thrown(() -> CudotContext(-1)).status == 1
    @test thrown(() -> CudotContext(10; memory=:host, device=2^40)).status == 1
    # Below DEVICE_ALL (-1) is INVALID_ARGUMENT, from the library, whose message names CUDOT_DEVICE_ALL;
    # :host ignores the device.
    for (mem, dev) in ((:pinned, -3), (:mapped, Cudot.DEVICE_NONE), (:auto, Int(typemin(Int32))))
        e = thrown(() -> CudotContext(8; memory=mem, device=dev))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
        @test occursin("CUDOT_DEVICE_ALL", e.msg)
    end
    for dev in (Cudot.DEVICE_ALL, -3)
        CudotContext(8; memory=:host, device=dev) do ctx
            @test memory(ctx) === :host && Cudot.device(ctx) === nothing
        end
    end

    # Failures inside cudot_init carry the message of cudot_last_error(NULL).
    e = thrown(() -> CudotContext(typemax(Int); eltype=Float64, memory=:host))
    @test e isa CudotError && e.status == 1      # the byte count overflows size_t
    @test !isempty(e.msg)
    e = thrown(() -> CudotContext(2^50; eltype=Float64, memory=:host))
    @test e isa CudotError && e.status == Cudot.ERROR_OUT_OF_MEMORY
    @test !isempty(e.msg)
    e = thrown(() -> CudotContext(2^62; eltype=Float64, y_eltype=Int8, memory=:host))
    @test e isa CudotError && e.status in (1, 2)  # overflows, or cannot be had
    @test !isempty(e.msg)

    CudotContext(10; memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, 1)
        fill!(y, 1)
        # dot beyond the capacity: the C library refuses it, with a message.
        e = thrown(() -> dot(ctx, 11))
        @test e isa CudotError
        @test e.status == 1
        @test e.name === :CUDOT_ERROR_INVALID_ARGUMENT
        @test occursin("capacity", e.msg)
        @test thrown(() -> dot(ctx, -1)).status == 1
        @test dot(ctx) == 10.0                  # the context still works afterwards

        # Elements of the wrong type.
        @test_throws MethodError (x[1] = "one")
        @test_throws InexactError (x[1] = 1.0 + 2.0im)
        @test_throws BoundsError x[11]
        @test_throws BoundsError (x[0] = 1)
        @test_throws Union{BoundsError,ArgumentError} copyto!(x, ones(Float32, 11))
    end

    # Values the integer and Bool types cannot hold.
    CudotContext(3; eltype=Int8, y_eltype=Bool, memory=:host) do ctx
        x, y = inputs(ctx)
        @test_throws InexactError (x[1] = 200)
        @test_throws InexactError (x[1] = 1.5)
        @test_throws InexactError (y[1] = 2)
        @test_throws InexactError fill!(y, -1)
        x[1] = -128
        y[1] = true
        @test dot(ctx, 1) === -128.0
    end
end

@testset "close, use after close" begin
    ctx = CudotContext(100; eltype=Float64, memory=:host)
    x, y = inputs(ctx)
    fill!(x, 2)
    fill!(y, 3)
    @test dot(ctx) == 600.0
    @test occursin("capacity=100", sprint(show, ctx))
    @test startswith(sprint(show, ctx), "CudotContext{Float64, Float64}(")
    close(ctx)
    @test !isopen(ctx)
    close(ctx)                                  # idempotent
    @test !isopen(ctx)
    @test occursin("closed", sprint(show, ctx))
    for f in (() -> dot(ctx), () -> dot(ctx, 1), () -> memory(ctx), () -> capacity(ctx),
              () -> inputs(ctx), () -> Cudot.device(ctx), () -> eltypes(ctx),
              () -> Cudot.dtypes(ctx),
              () -> x[1], () -> (y[1] = 1.0), () -> fill!(x, 0), () -> copyto!(x, zeros(100)),
              () -> pointer(x), () -> sum(x))
        e = thrown(f)
        @test e isa CudotError && e.status == 1
    end
    @test length(x) == 100                      # the size needs no memory access
    @test occursin("closed", sprint(show, x))
    @test occursin("closed", sprint(show, MIME"text/plain"(), x))

    # The do-block form closes the context and returns the body's value.
    escaped = Ref{Any}(nothing)
    r = CudotContext(3; memory=:host) do c
        escaped[] = c
        a, b = inputs(c)
        a .= [1, 2, 3]
        b .= 1
        dot(c)
    end
    @test r == 6.0
    @test !isopen(escaped[])
    # ... also when the body throws, and the body's error is the one reported.
    function failing_body(c)
        escaped[] = c
        error("body failed")
    end
    @test_throws ErrorException CudotContext(failing_body, 3; memory=:host)
    @test !isopen(escaped[])
end

@noinline function unreachable_context(n)
    ctx = CudotContext(n; eltype=Float64, memory=:host)
    x, y = inputs(ctx)
    fill!(x, 1)
    fill!(y, 2)
    dot(ctx) == 2n || error("unexpected dot")
    return WeakRef(ctx)
end

@noinline function view_only(n)
    ctx = CudotContext(n; memory=:host)
    x, y = inputs(ctx)
    fill!(x, 3)
    fill!(y, 1)
    return x, WeakRef(ctx)
end

# Keeps only a view of a context, collects garbage, and checks the context survived. Runs in its
# own frame so that nothing of it stays reachable from the caller afterwards.
@noinline function view_keeps_context(n)
    x, wr = view_only(n)
    for _ in 1:3
        GC.gc()
    end
    alive = wr.value !== nothing
    ok = alive && isopen(Cudot.context(x)) && all(==(3.0f0), x) &&
         dot(Cudot.context(x)) == 3.0 * n
    return alive, ok, wr
end

function collected(wr::WeakRef)
    for _ in 1:10
        GC.gc()
        wr.value === nothing && return true
    end
    return false
end

@testset "finalizer-only release" begin
    # Contexts that are never closed are released by their finalizers.
    @test collected(unreachable_context(1000))
    for _ in 1:20
        unreachable_context(1 << 16)
    end
    GC.gc()
    GC.gc()

    # A view keeps its context alive: the data stays valid after the context itself is dropped,
    # and once the view is gone too, the context is released.
    alive, ok, wr = view_keeps_context(5000)
    @test alive
    @test ok
    @test collected(wr)
end

@testset "close twice" begin
    for (Tx, Ty) in ((Float32, Float32), (UInt16, Bool), (Int8, Float64))
        ctx = CudotContext(100; eltype=Tx, y_eltype=Ty, memory=:host)
        @test close(ctx) === nothing
        @test !isopen(ctx)
        @test close(ctx) === nothing              # no error, and no second cudot_deinit
        @test close(ctx) === nothing
        @test !isopen(ctx)
    end
    # Closed inside the do-block, then again by the do-block itself.
    @test CudotContext(c -> (close(c); isopen(c)), 4; memory=:host) === false
    # Many tasks close one context at once: the lock lets one of them free it, the others find it
    # closed.
    ctx = CudotContext(1 << 16; eltype=Float64, memory=:host)
    tasks = [Threads.@spawn close(ctx) for _ in 1:16]
    @test all(t -> fetch(t) === nothing, tasks)
    @test !isopen(ctx)
    # The library still works (a double free would have corrupted the heap).
    CudotContext(1000; eltype=Float64, memory=:host) do c
        x, y = inputs(c)
        fill_integers!(x, y)
        @test dot(c) === Float64(exact_integer_dot(1000))
    end
end

@testset "use after close, $Tx × $Ty" for Tx in ELTYPES, Ty in ELTYPES
    ctx = CudotContext(6; eltype=Tx, y_eltype=Ty, memory=:host)
    x, y = inputs(ctx)
    fill_pattern!(x, y)
    @test dot(ctx) === Float64(exact_pattern_dot(Tx, Ty, 6))
    close(ctx)
    @test getfield(ctx, :ptr) == C_NULL   # the pointer is dropped: no later call can pass it on
    uses = (() -> dot(ctx), () -> dot(ctx, 0), () -> dot(ctx, 6), () -> dot(ctx, 7),
            () -> memory(ctx), () -> Cudot.device(ctx), () -> capacity(ctx), () -> inputs(ctx),
            () -> eltypes(ctx), () -> Cudot.dtypes(ctx),
            () -> x[1], () -> y[6], () -> (x[1] = element(Tx, 1)), () -> (y[1] = element(Ty, 1)),
            () -> fill!(x, element(Tx, 0)), () -> fill!(y, element(Ty, 0)),
            () -> copyto!(x, Tx[element(Tx, 1) for _ in 1:6]), () -> pointer(y),
            () -> sum(numeric, x), () -> collect(y))
    for f in uses
        e = thrown(f)
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    end
    @test eltype(ctx) === Tx                     # needs no native call
    @test length(x) == 6 && length(y) == 6
    @test close(ctx) === nothing
end

@testset "wrong element type, $Tx × $Ty" for Tx in ELTYPES, Ty in ELTYPES
    CudotContext(4; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        x, y = inputs(ctx)
        @test x isa CudotVector{Tx}
        @test y isa CudotVector{Ty}
        # Each view has its own side's type, and only that one.
        for S in ELTYPES
            @test (x isa CudotVector{S}) == (S === Tx)
            @test (y isa CudotVector{S}) == (S === Ty)
            if S !== Tx
                @test_throws TypeError (inputs(ctx)::Tuple{CudotVector{S},CudotVector{Ty}})
            end
            if S !== Ty
                @test_throws TypeError (inputs(ctx)::Tuple{CudotVector{Tx},CudotVector{S}})
            end
        end
        if Tx === Float64
            @test only_float64(x) == 4
        else
            @test_throws MethodError only_float64(x)
        end
        if Ty === Float64
            @test only_float64(y) == 4
        else
            @test_throws MethodError only_float64(y)
        end
        # Values of another type are converted exactly or refused; a refused write changes nothing.
        x[1] = element(Tx, 1)
        y[1] = element(Ty, 1)
        @test_throws MethodError (x[1] = "one")
        @test_throws MethodError (y[1] = "one")
        if Tx <: Integer                         # Int8, UInt8, Bool and UInt16 (bfloat16 bits)
            @test_throws InexactError (x[1] = 1.5)
        end
        if Ty <: Integer
            @test_throws InexactError (y[1] = 1.5)
        end
        @test x[1] === element(Tx, 1)
        @test y[1] === element(Ty, 1)
        # The context works normally afterwards.
        fill_pattern!(x, y)
        @test dot(ctx) === Float64(exact_pattern_dot(Tx, Ty, 4))
    end
end

@testset "finalizer-only release of 200 contexts" begin
    # 200 contexts that are never closed, dropped in rounds of 40 with GC.gc() between rounds. Their
    # memory must come back: every context is finalized and collected, and the resident set stays
    # flat across rounds, where a leak would add 100 MiB a round. (Julia's GC does not see the C
    # buffers, so without the finalizer nothing would ever free them.)
    if !(Sys.islinux() && isfile("/proc/self/statm"))
        @test_skip isfile("/proc/self/statm")
    else
        rounds, per_round = 5, 40
        round_bytes = per_round * 2 * (FORGET_N ÷ FORGET_STRIDE) * 4096
        GC.gc()
        GC.gc()
        after = Int[]
        for r in 1:rounds
            pre = resident_bytes()
            peak, refs = forget_contexts(per_round)
            # The written pages were resident: had they leaked, the resident set would show it.
            @test peak - pre > round_bytes * 9 ÷ 10
            for _ in 1:10
                GC.gc()
                all(w -> w.value === nothing, refs) && break
            end
            @test all(w -> w.value === nothing, refs)
            push!(after, resident_bytes())
        end
        @info "finalizer-only release: resident MiB after each round" mib = [a >> 20 for a in after]
        @test maximum(after[2:end]) - after[1] < round_bytes ÷ 4
    end
end

@testset "threads" begin
    CudotContext(2^16 + 1; eltype=Float64, memory=:host) do ctx
        x, y = inputs(ctx)
        fill_integers!(x, y)
        expected = Float64(exact_integer_dot(2^16 + 1))
        tasks = [Threads.@spawn dot(ctx) for _ in 1:16]
        @test all(t -> fetch(t) === expected, tasks)
    end
    # Independent contexts on several threads at once.
    results = Vector{Float64}(undef, 8)
    Threads.@threads for i in 1:8
        results[i] = CudotContext(1000 * i; memory=:host) do ctx
            x, y = inputs(ctx)
            fill_integers!(x, y)
            dot(ctx)
        end
    end
    @test results == [Float64(exact_integer_dot(1000 * i)) for i in 1:8]
    # ... also of different element types.
    pairs = [(ELTYPES[mod1(i, 7)], ELTYPES[mod1(3i + 1, 7)]) for i in 1:14]
    mixed = Vector{Float64}(undef, length(pairs))
    Threads.@threads for i in eachindex(pairs)
        Tx, Ty = pairs[i]
        mixed[i] = CudotContext(777 * i; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
            x, y = inputs(ctx)
            fill_pattern!(x, y)
            dot(ctx)
        end
    end
    @test mixed == [Float64(exact_pattern_dot(pairs[i]..., 777 * i)) for i in eachindex(pairs)]
end

@testset "library lookup: the versioned name first, another major version passed over" begin
    @test first(Cudot._CANDIDATES)[1]() == Cudot._default_name()
    cc = Sys.which("cc")
    if cc !== nothing && Sys.islinux()
        dir = mktempdir()
        src = joinpath(dir, "fake.c")
        write(src, "unsigned cudot_version(void) { return 20000; }\n")
        fake = joinpath(dir, "libcudot.so.2")
        run(`$cc -shared -fPIC -o $fake $src`)
        handle, version, why = Cudot._try_open(fake)
        @test handle === nothing
        @test occursin("major version 1", why)
    end
end

@testset "library lookup in a new process: a refused candidate gives way to the next" begin
    cc = Sys.which("cc")
    if cc !== nothing && Sys.islinux()
        # The soname (tried first) finds a fake 2.0.0; the unversioned name finds the real library.
        fake_dir, real_dir = mktempdir(), mktempdir()
        src = joinpath(fake_dir, "fake.c")
        write(src, "unsigned cudot_version(void) { return 20000; }\n")
        run(`$cc -shared -fPIC -o $(joinpath(fake_dir, "libcudot.so.1")) $src`)
        copied = joinpath(real_dir, "libcudot.so")
        cp(realpath(Cudot.library_path()), copied)
        script = "using Cudot; println(Cudot.version(), ' ', Cudot.library_path())"
        ok, out, err = withenv("CUDOT_LIBRARY" => nothing,
                               "LD_LIBRARY_PATH" => string(fake_dir, ":", real_dir)) do
            run_julia(script)
        end
        @test ok
        ok || @info "the lookup process failed" out err
        words = split(strip(out))
        @test length(words) == 2 && VersionNumber(words[1]).major == 1
        @test length(words) == 2 && realpath(words[2]) == realpath(copied)
    end
end

# ---- the views and LinearAlgebra.dot: dot(ctx.x, ctx.y) used to reach the generic dot, which sums in
# the element type (an Int8 sum wraps, a Float32 sum rounds in Float32) and returns that type

@testset "dot of the views is the library's dot, $Tx × $Ty" for (Tx, Ty) in
        ((Float32, Float32), (Int8, Int8), (Float16, Float16), (UInt8, Bool), (Float32, Float64),
         (UInt16, Float32))
    n = 3 * Cudot.TILE_ELEMENTS + 17
    xs, ys = random_inputs(Tx, Ty, n, 99)
    CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        x, y = inputs(load!(ctx, xs, ys))
        r = dot(ctx)
        @test dot(ctx.x, ctx.y) === r
        @test dot(x, y) === r
        @test dot(y, x) === r
        @test x' * y === r                       # LinearAlgebra turns this into dot(x, y)
        @test ctx.x isa CudotVector{Tx} && ctx.y isa CudotVector{Ty}
        @test pointer(ctx.x) == pointer(x) && pointer(ctx.y) == pointer(y)   # the buffers, no copy
        @test propertynames(ctx) == (:x, :y)
        # A leading range of both views is the prefix dot.
        for k in (0, 1, 1000, n)
            @test dot(view(x, 1:k), view(y, 1:k)) === dot(ctx, k)
        end
        @test dot(view(x, :), y) === r
        # Every other pair is an error, never a silently different number.
        @test_throws ArgumentError dot(x, x)
        @test_throws ArgumentError dot(x, collect(y))
        @test_throws ArgumentError dot(collect(x), y)
        @test_throws ArgumentError dot(view(x, 2:5), view(y, 2:5))
        @test_throws ArgumentError dot(view(x, 1:2:9), view(y, 1:2:9))
        @test_throws DimensionMismatch dot(view(x, 1:3), view(y, 1:4))
        CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do other
            @test_throws ArgumentError dot(x, inputs(other)[2])
        end
        @test occursin("collect", sprint(showerror, thrown(() -> dot(x, x))))
        # Copies are ordinary vectors, computed by LinearAlgebra as usual.
        @test dot(collect(x), collect(y)) isa Number
    end
end

@testset "ctx.x and ctx.y after close, n = $n" for n in (10, 1000, 1 << 22)
    ctx = CudotContext(n; eltype=Float64, memory=:host)
    ctx.x .= 2                                   # broadcasting into the view writes the buffer
    fill!(ctx.y, 3)
    @test dot(ctx) == 6.0 * n
    x, y = ctx.x, ctx.y
    close(ctx)
    # ctx.x was the raw wrapped buffer, still pointing at the freed memory; now every access throws.
    for f in (() -> ctx.x, () -> ctx.y, () -> x[1], () -> (y[2] = 1.0), () -> dot(x, y),
              () -> sum(x), () -> pointer(y))
        e = thrown(f)
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
        @test occursin("closed", e.msg)
    end
    # Nothing reachable from the context keeps the freed addresses.
    @test isempty(getfield(ctx, :xbuf)) && isempty(getfield(ctx, :ybuf))
    @test length(x) == n && length(y) == n       # the size needs no memory access
    @test getfield(ctx, :ptr) == C_NULL
    # A new context starts at zero, and the old views still cannot reach it.
    fresh = CudotContext(n; eltype=Float64, memory=:host)
    @test count(!iszero, fresh.x) == 0 && count(!iszero, fresh.y) == 0
    fill!(fresh.x, 1)
    fill!(fresh.y, 2)
    @test thrown(() -> (x[1] = 5.0)) isa CudotError
    @test dot(fresh) == 2.0 * n
    close(fresh)
end

@testset "the context's only properties are the views" begin
    ctx = CudotContext(10; eltype=Float32, memory=:host)
    @test propertynames(ctx) == (:x, :y) && propertynames(ctx, true) == (:x, :y)
    # ctx.xbuf (the raw wrapped buffer) used to be reachable: kept past close, it read freed memory,
    # and dot(ctx.xbuf, ctx.ybuf) was LinearAlgebra's dot, not the library's.
    for name in (:xbuf, :ybuf, :ptr, :n, :lock, :z)
        @test thrown(() -> getproperty(ctx, name)) isa ArgumentError
    end
    @test hasproperty(ctx, :x) && !hasproperty(ctx, :xbuf)
    close(ctx)
end

@testset "views are contiguous memory: pointer(v, i), strides, overlapping broadcasts" begin
    CudotContext(8; eltype=Float64, y_eltype=Int8, memory=:host) do ctx
        x, y = inputs(ctx)
        x .= 1:8
        y .= 1:8
        @test strides(x) == (1,) && Base.elsize(typeof(y)) == 1
        @test pointer(x, 3) == pointer(x) + 2 * sizeof(Float64)
        @test GC.@preserve x unsafe_load(pointer(x, 3)) == 3.0
        @views x[2:end] .= x[1:end-1]          # overlapping: the source is copied first
        @test collect(x) == [1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
        y .= y                                  # the same view on both sides
        @test collect(y) == Int8.(1:8)
        @test dot(ctx) == sum(collect(x) .* (1:8))
    end
end

# ---- exit: finalizers free nothing once Julia exits; blocking calls are GC-safe on Julia 1.12+

@testset "finalizers free nothing once Julia exits" begin
    @test Cudot._EXITING[] == false
    if isdefined(Base, :atexit_hooks)
        @test any(h -> h === Cudot._at_exit, Base.atexit_hooks)   # registered by __init__
    end
    ctx = CudotContext(1000; eltype=Float64, memory=:host)
    x, y = inputs(ctx)
    fill!(x, 1)
    fill!(y, 2)
    try
        Cudot._at_exit()          # what Julia's exit runs before it runs every finalizer
        Cudot._finalize(ctx)      # the finalizer, on a context that is still in use
        @test isopen(ctx)
        @test dot(ctx) == 2000.0
    finally
        Cudot._EXITING[] = false
    end
    # Before exit the registered finalizer frees the context (normally only an unreachable one).
    finalize(ctx)
    @test !isopen(ctx)
    @test isempty(getfield(ctx, :xbuf)) && isempty(getfield(ctx, :ybuf))
    @test_throws CudotError x[1]
    @test close(ctx) === nothing

    # The real thing, in a process of its own.
    ok, out, err = run_julia(EXIT_SCRIPT)
    @test ok
    @test occursin("exiting", out) && occursin("atexit ok", out)
    @test !occursin("WRONG", out)
    ok || @info "the exit test's process failed" out err
end

@testset "garbage collection while dots run" begin
    # The results must not change while another task collects garbage all the time (on Julia
    # 1.12+ the long calls are GC-safe, so collections also run during them). Run with
    # --threads=2 or more (test.sh does) for the tasks to run in parallel. This checks results
    # only: that a collection proceeds during a call is what `gc_safe=true` means, not measured.
    n = 1 << 22
    CudotContext(n; eltype=Float32, memory=:host) do ctx
        x, y = inputs(ctx)
        fill_integers!(x, y)
        want = Float64(exact_integer_dot(n))
        stop = Threads.Atomic{Bool}(false)
        collector = Threads.@spawn begin
            rounds = 0
            while true                           # at least one round, however tasks are scheduled
                GC.gc(false)
                rounds += 1
                stop[] && break
                yield()
            end
            rounds
        end
        workers = [Threads.@spawn [dot(ctx) for _ in 1:20] for _ in 1:4]
        results = [fetch(t) for t in workers]
        stop[] = true
        @test all(rs -> all(==(want), rs), results)
        @test fetch(collector) >= 1
    end
end

# ---- packaging: versions, compat, the library preference

@testset "package version and compat" begin
    proj = project_version()
    @test proj !== nothing
    lib = Cudot.version()
    # Any 1.x library will do (newer features are checked by version at the call); the binding's
    # own version is the header's (below).
    @test proj.major == lib.major
    if isfile(HEADER)
        @test header_version() == proj
    end
    sections = toml_keys(PROJECT_TOML)
    compat = get(sections, "compat", String[])
    @test "julia" in compat
    # Standard libraries only, each under its own UUID, so that no registry is ever needed (test.sh
    # checks the same list without Julia). A new stdlib dependency is added to STDLIBS.
    deps = Cudot.TOML.parsefile(PROJECT_TOML)["deps"]
    for (name, uuid) in deps
        @test get(STDLIBS, name, nothing) == uuid
    end
    @test issubset(["Libdl", "LinearAlgebra", "TOML"], keys(deps))
    for dep in vcat(get(sections, "deps", String[]), get(sections, "extras", String[]))
        @test dep in compat
    end
    # The package extensions (1.7): each weak dependency has a [compat] entry and is an extra too
    # (for Pkg before Julia 1.9), and each extension has its file in ext/.
    weak = get(sections, "weakdeps", String[])
    @test sort(weak) == ["BFloat16s", "CUDA"]
    for dep in weak
        @test dep in compat
        @test dep in get(sections, "extras", String[])
    end
    extensions = get(sections, "extensions", String[])
    @test sort(extensions) == ["CudotBFloat16sExt", "CudotCUDAExt"]
    for ext in extensions
        @test isfile(joinpath(PKGDIR, "ext", ext * ".jl"))
    end
end

# Runs f(dir) with a new folder's Project.toml as the active project and the only environment on
# LOAD_PATH besides the stdlibs, so that no real LocalPreferences.toml is touched or read (a
# preference in the user's default environment would apply too). With `lists_cudot`, Cudot is one
# of its [deps], as in the project of a user who added or developed Cudot (Julia reads a package's
# preferences only from projects that list it). A new folder each time: Base caches the TOML files
# it has parsed, by path.
function with_project(f; lists_cudot::Bool=true)
    dir = mktempdir()
    deps = lists_cudot ? string("Cudot = \"", Base.PkgId(Cudot).uuid, "\"\n") : ""
    write(joinpath(dir, "Project.toml"), string("[deps]\n", deps))
    previous, previous_path = Base.ACTIVE_PROJECT[], copy(LOAD_PATH)
    try
        Base.ACTIVE_PROJECT[] = joinpath(dir, "Project.toml")
        copy!(LOAD_PATH, ["@", "@stdlib"])
        return f(dir)
    finally
        copy!(LOAD_PATH, previous_path)
        Base.ACTIVE_PROJECT[] = previous
    end
end

@testset "library preference (Cudot.set_library!)" begin
    lib = abspath(Cudot.library_path())
    # The UUID the preference is read and written under is the package's.
    @test Cudot._UUID == Base.PkgId(Cudot).uuid
    @test string(Cudot._UUID) == Cudot.TOML.parsefile(PROJECT_TOML)["uuid"]
    with_project() do dir
        @test Cudot.set_library!(lib) == lib
        prefs = joinpath(dir, "LocalPreferences.toml")
        @test isfile(prefs) && occursin(lib, read(prefs, String))
        # Preferences.jl's format: the key `library` in a [Cudot] table, nothing else.
        @test Cudot.TOML.parsefile(prefs) == Dict("Cudot" => Dict("library" => lib))
        withenv("CUDOT_LIBRARY" => nothing) do
            @test Cudot._requested_library()[1] == lib
        end
        # The environment variable takes precedence over the preference.
        withenv("CUDOT_LIBRARY" => "/elsewhere/libcudot.so.1") do
            @test Cudot._requested_library()[1] == "/elsewhere/libcudot.so.1"
        end
        # A file that is not a cudot library is refused, and the preference stays as it was.
        bogus = joinpath(dir, "libnotcudot.so")
        write(bogus, "not a library")
        @test_throws ArgumentError Cudot.set_library!(bogus)
        @test occursin(lib, read(prefs, String)) && !occursin(bogus, read(prefs, String))
        # Removed again, and the emptied [Cudot] table with it.
        @test Cudot.set_library!(nothing) === nothing
        @test !occursin(lib, read(prefs, String))
        @test !haskey(Cudot.TOML.parsefile(prefs), "Cudot")
        withenv("CUDOT_LIBRARY" => nothing) do
            @test Cudot._requested_library() === nothing
        end
        # Removing it again changes nothing and is no error.
        @test Cudot.set_library!(nothing) === nothing
    end
    # Every other table and key of the file is kept, by both forms.
    with_project() do dir
        prefs = joinpath(dir, "LocalPreferences.toml")
        write(prefs, "[Other]\nlevel = 3\n\n[Cudot]\nkeep = \"yes\"\n")
        @test Cudot.set_library!(lib) == lib
        @test Cudot.TOML.parsefile(prefs) ==
              Dict("Other" => Dict("level" => 3), "Cudot" => Dict("keep" => "yes", "library" => lib))
        @test Cudot.set_library!(nothing) === nothing
        @test Cudot.TOML.parsefile(prefs) ==
              Dict("Other" => Dict("level" => 3), "Cudot" => Dict("keep" => "yes"))
    end
    # A preference written by an older Cudot (through Preferences.jl, the same file and format) is
    # found as it is.
    with_project() do dir
        write(joinpath(dir, "LocalPreferences.toml"), string("[Cudot]\nlibrary = \"", lib, "\"\n"))
        withenv("CUDOT_LIBRARY" => nothing) do
            @test Cudot._requested_library()[1] == lib
        end
    end
    # Nothing to delete: no file is created.
    with_project() do dir
        @test Cudot.set_library!(nothing) === nothing
        @test !isfile(joinpath(dir, "LocalPreferences.toml"))
    end
    # A project that does not list Cudot is refused (Julia would never read the preference there),
    # and nothing is written.
    with_project(lists_cudot=false) do dir
        @test_throws ErrorException Cudot.set_library!(lib)
        @test_throws ErrorException Cudot.set_library!(nothing)
        @test !isfile(joinpath(dir, "LocalPreferences.toml"))
    end
end

# ---- partials: a vector split over several contexts gives the bits of one context

@testset "tile partials of pieces join to the bits of one context, $Tx × $Ty" for (Tx, Ty) in
        PARTIAL_PAIRS
    T = Cudot.TILE_ELEMENTS
    N = 5T + 123                                 # the last tile is short
    xs, ys = random_inputs(Tx, Ty, N, 4242)
    whole = CudotContext(N; eltype=Tx, y_eltype=Ty, memory=:host)
    try
        load!(whole, xs, ys)
        want = dot(whole)
        all_parts = Cudot.tile_partials(whole)
        @test length(all_parts) == 6 * Cudot.PARTIAL_BYTES
        @test Cudot.join_partials(Tx, Ty, all_parts) === want
        # Three pieces in contexts of their own: one tile; three tiles; a whole tile and the short one.
        joined = UInt8[]
        for r in (1:T, T+1:4T, 4T+1:N)
            CudotContext(length(r); eltype=Tx, y_eltype=Ty, memory=:host) do piece
                mine = Cudot.tile_partials(load!(piece, xs[r], ys[r]))
                @test length(mine) == cld(length(r), T) * Cudot.PARTIAL_BYTES
                # The same tiles taken from the whole context (1-based first): the same bytes.
                @test mine == Cudot.tile_partials(whole, first(r), length(r))
                append!(joined, mine)
            end
        end
        @test joined == all_parts
        @test Cudot.join_partials(Tx, Ty, joined) === want
        # A piece whose first whole tile starts inside its buffer, after 5 elements of the tile
        # before (as an MPI rank holding an unaligned block has): first = 6.
        CudotContext(5 + 2T; eltype=Tx, y_eltype=Ty, memory=:host) do piece
            load!(piece, xs[T-4:3T], ys[T-4:3T])
            @test Cudot.tile_partials(piece, 6, 2T) == Cudot.tile_partials(whole, T + 1, 2T)
        end
        # The first tiles alone are the prefix dot; a view of the bytes joins like the bytes.
        @test Cudot.join_partials(Tx, Ty, all_parts[1:2*Cudot.PARTIAL_BYTES]) === dot(whole, 2T)
        @test Cudot.join_partials(Tx, Ty, view(all_parts, 1:length(all_parts))) === want
    finally
        close(whole)
    end
end

@testset "tile partials on GPU strategy $mem" for mem in (:pinned, :mapped, :managed)
    T = Cudot.TILE_ELEMENTS
    N = 3T + 7
    for (Tx, Ty) in ((Float32, Float32), (Float16, Int8))
        ctx = gpu_context(N, Tx, Ty, mem)
        if ctx === nothing
            skip_without_gpu("partials on :$mem")
            continue
        end
        try
            xs, ys = random_inputs(Tx, Ty, N, 31)
            load!(ctx, xs, ys)
            CudotContext(N; eltype=Tx, y_eltype=Ty, memory=:host) do host
                load!(host, xs, ys)
                # The same bytes as the CPU, also from an unaligned first element.
                @test Cudot.tile_partials(ctx) == Cudot.tile_partials(host)
                @test Cudot.tile_partials(ctx, 4, 2T) == Cudot.tile_partials(host, 4, 2T)
                @test Cudot.join_partials(Tx, Ty, Cudot.tile_partials(ctx)) === dot(host)
            end
        finally
            close(ctx)
        end
    end
end

@testset "tile partials: errors" begin
    T = Cudot.TILE_ELEMENTS
    CudotContext(2T + 5; memory=:host) do ctx
        x, y = inputs(ctx)
        fill!(x, 1)
        fill!(y, 1)
        @test length(Cudot.tile_partials(ctx)) == 3 * Cudot.PARTIAL_BYTES
        @test Cudot.tile_partials(ctx, 1, 0) == UInt8[]
        @test Cudot.tile_partials(ctx, 2T + 6, 0) == UInt8[]          # empty, just past the end
        @test Cudot.join_partials(Float32, Float32, Cudot.tile_partials(ctx, T + 1)) ===
              Float64(T + 5)
        for (f, n) in ((0, 1), (-3, 1), (1, -1), (1, 2T + 6), (2T + 6, 1), (2T + 7, 0), (T, 2T))
            e = thrown(() -> Cudot.tile_partials(ctx, f, n))
            @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
        end
        @test occursin("1-based", thrown(() -> Cudot.tile_partials(ctx, 0, 1)).msg)
        @test occursin("capacity", thrown(() -> Cudot.tile_partials(ctx, 2, 2T + 5)).msg)
        @test dot(ctx) == 2T + 5                  # the context still works
    end
    closed = CudotContext(10; memory=:host)
    close(closed)
    e = thrown(() -> Cudot.tile_partials(closed))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT

    @test Cudot.join_partials(Float32, Float32, UInt8[]) === 0.0           # +0.0
    @test Cudot.join_partials(Int8, Bool, UInt8[]) === 0.0
    for len in (1, 15, 17)
        e = thrown(() -> Cudot.join_partials(Float32, Float32, zeros(UInt8, len)))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    end
    for T in (Int32, ComplexF64, :f32, BFloat16)
        @test thrown(() -> Cudot.join_partials(T, Float32, UInt8[])).status == 1
        @test thrown(() -> Cudot.join_partials(Float32, T, UInt8[])).status == 1
    end
end

# ---- wait_ms (cudot_config.wait_ms, 1.5): the bound on waits for the GPU

# Without a GPU the library gives wait_ms no visible effect: contexts with it must compute the bits of
# contexts without, and where the value lands in the config is seen through bindings/testing/config_spy.c,
# a stand-in library (built against include/cudot.h) whose cudot_init refuses every request with a
# message spelling out the cudot_config it received.
@testset "wait_ms" begin
    # Every strategy, against a :host context holding the same values (the library promises their bits).
    # On a GPU, 2000 ms leaves a dot of 2^15 + 3 elements ample time (:auto measures the GPU at this
    # size); the GPU strategies are skipped without a usable GPU (failed with CUDOT_TEST_GPU=1).
    n = 2^15 + 3
    rng = MersenneTwister(5)
    xs, ys = randn(rng, n), randn(rng, n)
    for (mem, w) in ((:host, 1), (:host, typemax(UInt32)), (:auto, 2000), (:auto, typemax(UInt32)),
                     (:pinned, 2000), (:mapped, Cudot.DEFAULT_WAIT_MS), (:managed, typemax(UInt32)))
        bounded = mem in (:host, :auto) ? CudotContext(n; eltype=Float64, memory=mem, wait_ms=w) :
                  gpu_context(n, Float64, Float64, mem; wait_ms=w)
        if bounded === nothing
            skip_without_gpu("wait_ms on :$mem")
            continue
        end
        host = CudotContext(n; eltype=Float64, memory=:host)
        try
            for ctx in (host, bounded)
                x, y = inputs(ctx)
                x .= xs
                y .= ys
            end
            mem === :auto || @test memory(bounded) === mem
            for k in (n, n ÷ 3, 1), round in 1:3     # :auto times the CPU and the GPU on the first dots
                @test reinterpret(UInt64, dot(bounded, k)) == reinterpret(UInt64, dot(host, k))
            end
        finally
            close(host)
            close(bounded)
        end
    end
    for w in (-1, Int(typemax(UInt32)) + 1)
        e = thrown(() -> CudotContext(4; memory=:host, wait_ms=w))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
        @test occursin("wait_ms", e.msg)
    end

    cc = Sys.which("cc")
    src = joinpath(@__DIR__, "..", "..", "testing", "config_spy.c")
    include_dir = joinpath(@__DIR__, "..", "..", "..", "include")
    if cc === nothing || !Sys.islinux() || !isfile(src) || !isfile(joinpath(include_dir, "cudot.h"))
        @info "config spy not built (needs cc, Linux and the source tree)"
        @test_skip false
    else
        spy = joinpath(mktempdir(), "libcudot_spy.so")
        run(`$cc -shared -fPIC -I $include_dir -o $spy $src`)
        handle, version, why = Cudot._try_open(spy)
        @test handle !== nothing
        spylib = Cudot._bind_library(handle, version, spy, "the config spy")
        real = Cudot._lib()
        for w in (0, 1, 1234, Cudot.DEFAULT_WAIT_MS, typemax(UInt32))
            Cudot._LIB[] = spylib       # every call below reaches the spy, until restored
            e = try
                thrown(() -> CudotContext{Int8,Float16}(1; memory=:host, device=0, wait_ms=w))
            finally
                Cudot._LIB[] = real
            end
            @test e isa CudotError && e.status == Cudot.ERROR_UNSUPPORTED
            words = split(e.msg)
            @test words[1:2] == ["config", "spy:"]
            got = Dict(String(k) => parse(Int, v) for (k, v) in (split(kv, "=") for kv in words[3:end]))
            # The binding's struct has the header's size, and every field lands where the header puts it.
            @test got["size"] == got["sizeof"] == sizeof(Cudot._Config)
            @test got == Dict("n" => 1, "size" => got["sizeof"], "sizeof" => got["sizeof"],
                              "dtype" => Int(Cudot._dtype_code(Int8)), "memory" => Int(Cudot._memory_code(:host)),
                              "device" => 0, "y_dtype" => Int(Cudot._dtype_code(Float16)), "wait_ms" => Int(w),
                              "rows" => 0)
        end
        # rows (1.10): one row goes as 0, which a library older than 1.10 accepts; more as they are.
        for (k, wire) in ((1, 0), (2, 2), (12345, 12345))
            Cudot._LIB[] = spylib
            e = try
                thrown(() -> CudotContext{Float64,Float64}(7; memory=:host, device=3, wait_ms=9, rows=k))
            finally
                Cudot._LIB[] = real
            end
            @test e isa CudotError && e.status == Cudot.ERROR_UNSUPPORTED
            words = split(e.msg)
            got = Dict(String(key) => parse(Int, v) for (key, v) in (split(kv, "=") for kv in words[3:end]))
            @test got["size"] == got["sizeof"] == sizeof(Cudot._Config) == 40
            @test got["rows"] == wire && got["wait_ms"] == 9 && got["device"] == 3 && got["n"] == 7
        end
    end
end

# ---- dots on the caller's own arrays (1.7)

include("own_arrays.jl")

# ---- many dots in one call (1.9)

include("rows.jl")

# ---- contexts with rows (1.10)

include("context_rows.jl")

# ---- exact contexts and exact partials (1.13)

include("exact_contexts.jl")

# ---- exact rows (1.14)

include("rows_exact.jl")

if HAVE_CUDA_JL
    include("cuda_arrays.jl")
    include("cuda_rows.jl")
else
    @testset "own arrays: CUDA.jl arrays" begin
        if GPU_REQUIRED
            @test HAVE_CUDA_JL       # CUDOT_TEST_GPU=1 asks for them: missing is a failure
        else
            @info "CUDA.jl cannot be loaded here: skipping the tests of the CUDA.jl extension"
            @test_skip false
        end
    end
end

end # @testset "Cudot"
