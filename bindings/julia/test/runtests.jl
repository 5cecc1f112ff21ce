# Tests of the Julia binding of cudot.
#
# Run from the repository root, with the C library built:
#     CUDOT_LIBRARY=$PWD/build/libcudot.so.1 julia --project=bindings/julia bindings/julia/test/runtests.jl
# GPU strategies are skipped when the library reports NO_DEVICE, unless CUDOT_TEST_GPU=1, in which
# case a missing GPU is a failure.
#
# NOTE: these tests have not been run yet (no Julia runtime was available where they were written);
# CI only checks that they parse.

using Test
using Random
using Cudot

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
function gpu_context(n, Tx, Ty, mem; device=0)
    try
        return CudotContext(n; eltype=Tx, y_eltype=Ty, memory=mem, device=device)
    catch err
        if err isa CudotError && err.status == Cudot.ERROR_NO_DEVICE && !GPU_REQUIRED
            return nothing
        end
        rethrow()
    end
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
        @info "no usable GPU: skipping memory = :$mem (set CUDOT_TEST_GPU=1 to make this a failure)"
        @test_skip ctx !== nothing
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
        @info "no usable GPU: skipping DEVICE_ALL on :$mem (set CUDOT_TEST_GPU=1 to make this a failure)"
        @test_skip ctx !== nothing
    else
        try
            @test memory(ctx) === mem
            @test Cudot.device(ctx) == Cudot.DEVICE_ALL
            xs, ys = random_inputs(Tx, Ty, n, 17)
            x, y = inputs(ctx)
            copyto!(x, xs)
            copyto!(y, ys)
            CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do host
                hx, hy = inputs(host)
                copyto!(hx, xs)
                copyto!(hy, ys)
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
    @test ctx.ptr == C_NULL          # the pointer is dropped: no later call can pass it to the library
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
    @test first(Cudot._candidates())[1] == Cudot._default_name()
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

end # @testset "Cudot"
