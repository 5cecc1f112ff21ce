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

# Exact dot product (BigFloat wide enough that every product and partial sum is exact for
# inputs in [-1, 1]) and the sum of |x[i] * y[i]|.
function reference(xs::Vector{T}, ys::Vector{T}) where {T}
    setprecision(BigFloat, 512) do
        s = big(0.0)
        a = big(0.0)
        for i in eachindex(xs, ys)
            p = big(xs[i]) * big(ys[i])
            s += p
            a += abs(p)
        end
        return s, a
    end
end

# The error bound of cudot's accuracy contract (the same the C tests use):
#   Float32 inputs: products exact in double, summed in double   |r - s| <= g(n) * sum|x*y|
#   Float64 inputs: compensated Dot2                             |r - s| <= u|s| + g(n)^2 * sum|x*y|
# with u = 2^-53 and g(n) = n*u / (1 - n*u).
function error_bound(::Type{T}, s::BigFloat, a::BigFloat, n::Integer) where {T}
    setprecision(BigFloat, 512) do
        u = big(2.0)^-53
        g = n * u / (1 - n * u)
        return T === Float64 ? u * abs(s) + g^2 * a : g * a
    end
end

function random_inputs(::Type{T}, n, seed) where {T}
    rng = MersenneTwister(seed)
    xs = T[2 * rand(rng, T) - 1 for _ in 1:n]
    ys = T[2 * rand(rng, T) - 1 for _ in 1:n]
    return xs, ys
end

# A context of a GPU strategy, or nothing when there is no GPU and GPU tests are not required.
function gpu_context(n, T, mem)
    try
        return CudotContext(n; eltype=T, memory=mem)
    catch err
        if err isa CudotError && err.status == Cudot.ERROR_NO_DEVICE && !GPU_REQUIRED
            return nothing
        end
        rethrow()
    end
end

@testset "Cudot" begin

@testset "library" begin
    v = Cudot.version()
    @test v.major == 1
    @test !isempty(Cudot.library_path())
end

@testset "exact integer data, $T, n = $n" for T in (Float32, Float64), n in SIZES
    CudotContext(n; eltype=T, memory=:host) do ctx
        @test isopen(ctx)
        @test capacity(ctx) == n
        @test memory(ctx) === :host
        @test Cudot.device(ctx) === nothing
        @test eltype(ctx) === T
        x, y = inputs(ctx)
        @test x isa CudotVector{T}
        @test length(x) == n && length(y) == n
        fill_integers!(x, y)
        r = dot(ctx)
        @test r isa Float64
        @test r === Float64(exact_integer_dot(n))
        if n == 0
            @test r === 0.0                   # +0.0, not -0.0
        end
        # Prefixes: dot(ctx, k) reads only the first k elements.
        for k in unique((0, 1, n ÷ 2, n))
            k <= n || continue
            @test dot(ctx, k) === Float64(exact_integer_dot(k))
        end
        @test dot(ctx, 0) === 0.0
    end
end

@testset "random data within the accuracy bound, $T, n = $n" for T in (Float32, Float64),
                                                                  n in (1, 1000, 8193, 2^20 + 3)
    xs, ys = random_inputs(T, n, 20240 + n)
    s, a = reference(xs, ys)
    bound = error_bound(T, s, a, n)
    CudotContext(n; eltype=T, memory=:host) do ctx
        x, y = inputs(ctx)
        copyto!(x, xs)
        copyto!(y, ys)
        @test x == xs && y == ys
        r = dot(ctx)
        err = setprecision(BigFloat, 512) do
            abs(big(r) - s)
        end
        @test err <= bound
        # Repeated calls are bitwise identical.
        for _ in 1:5
            @test dot(ctx) === r
        end
        # A prefix equals what a context of that capacity returns, bitwise.
        k = n ÷ 3
        CudotContext(k; eltype=T, memory=:host) do small
            xk, yk = inputs(small)
            copyto!(xk, xs[1:k])
            copyto!(yk, ys[1:k])
            @test dot(small) === dot(ctx, k)
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
end

@testset "auto strategy" begin
    CudotContext(1000; eltype=Float32) do ctx
        m = memory(ctx)
        @test m in (:pinned, :mapped, :managed, :host)
        @test m !== :auto
        d = Cudot.device(ctx)
        @test m === :host ? d === nothing : d isa Int
        x, y = inputs(ctx)
        fill_integers!(x, y)
        @test dot(ctx) === Float64(exact_integer_dot(1000))
    end
end

@testset "GPU strategy $mem, $T" for mem in (:pinned, :mapped, :managed), T in (Float32, Float64)
    n = 2^20 + 3
    ctx = gpu_context(n, T, mem)
    if ctx === nothing
        @info "no usable GPU: skipping memory = :$mem (set CUDOT_TEST_GPU=1 to make this a failure)"
        @test_skip ctx !== nothing
    else
        try
            @test memory(ctx) === mem
            @test Cudot.device(ctx) == 0
            xs, ys = random_inputs(T, n, 7)
            x, y = inputs(ctx)
            copyto!(x, xs)
            copyto!(y, ys)
            r = dot(ctx)
            # Bitwise equal to the CPU, and to itself on every call.
            host = CudotContext(n; eltype=T, memory=:host)
            hx, hy = inputs(host)
            copyto!(hx, xs)
            copyto!(hy, ys)
            @test r === dot(host)
            @test dot(ctx, 12345) === dot(host, 12345)
            close(host)
            @test dot(ctx) === r
            # Fresh data between calls is seen.
            fill_integers!(x, y)
            @test dot(ctx) === Float64(exact_integer_dot(n))
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

    # Wrong element type.
    for T in (Int32, Float16, ComplexF64, BigFloat)
        e = thrown(() -> CudotContext(10; eltype=T))
        @test e isa CudotError && e.status == 1
    end
    @test_throws TypeError CudotContext{Int}(10)

    # Negative capacity, out-of-range device.
    @test thrown(() -> CudotContext(-1)).status == 1
    @test thrown(() -> CudotContext(10; memory=:host, device=2^40)).status == 1

    # Failures inside cudot_init carry the message of cudot_last_error(NULL).
    e = thrown(() -> CudotContext(typemax(Int); eltype=Float64, memory=:host))
    @test e isa CudotError && e.status == 1      # the byte count overflows size_t
    @test !isempty(e.msg)
    e = thrown(() -> CudotContext(2^50; eltype=Float64, memory=:host))
    @test e isa CudotError && e.status == Cudot.ERROR_OUT_OF_MEMORY
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
end

@testset "close, use after close" begin
    ctx = CudotContext(100; eltype=Float64, memory=:host)
    x, y = inputs(ctx)
    fill!(x, 2)
    fill!(y, 3)
    @test dot(ctx) == 600.0
    @test occursin("capacity=100", sprint(show, ctx))
    close(ctx)
    @test !isopen(ctx)
    close(ctx)                                  # idempotent
    @test !isopen(ctx)
    @test occursin("closed", sprint(show, ctx))
    for f in (() -> dot(ctx), () -> dot(ctx, 1), () -> memory(ctx), () -> capacity(ctx),
              () -> inputs(ctx), () -> Cudot.device(ctx),
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
end

end # @testset "Cudot"
