# Tests of dots on the caller's own host arrays (Cudot.dot_arrays, dot_arrays!, tile_partials(x, y),
# register_host), included by runtests.jl inside its "Cudot" testset. The contract: the same bits
# as a :host context holding the same values, for every pair of element types and every stride.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written).

# The bits a :host context holding xs and ys returns: the reference of every test below.
function host_dot(xs::AbstractVector{Tx}, ys::AbstractVector{Ty}) where {Tx,Ty}
    return CudotContext(length(xs); eltype=Tx, y_eltype=Ty, memory=:host) do ctx
        dot(load!(ctx, collect(xs), collect(ys)))
    end
end

# A value that changes a dot if the library reads it by mistake: NaN where the type has one.
poison(::Type{T}) where {T<:AbstractFloat} = T(NaN)
poison(::Type{UInt16}) = 0x7fc0                       # a bfloat16 NaN
poison(::Type{T}) where {T<:Integer} = typemax(T)     # Bool: true

const GUARD = 3   # poisoned elements before and after the elements a strided view holds

# A view with stride s (s != 0) of a new vector that holds vals at every s-th place, poison in the
# gaps and around: view(parent, r) with r a range of step s. For s < 0 its element 1 is the one
# with the highest address.
function strided_copy(vals::AbstractVector{T}, s::Integer) where {T}
    n = length(vals)
    span = abs(s) * max(n - 1, 0) + 1
    parent = fill(poison(T), span + 2 * GUARD)
    lo, hi = GUARD + 1, GUARD + abs(s) * (n - 1) + 1
    r = s > 0 ? (lo:s:hi) : (hi:s:lo)
    v = view(parent, r)
    copyto!(v, vals)
    return v
end

# Stride pairs of the tests: contiguous, reversed, steps forward and backward, mixed.
const STRIDE_PAIRS = ((1, 1), (-1, 1), (1, -1), (-1, -1), (2, 3), (-3, 2), (5, -7))

@testset "own arrays: the bits of a :host context, $Tx × $Ty" for Tx in ELTYPES, Ty in ELTYPES
    for n in (0, 1, 1000, 8193)
        xs, ys = random_inputs(Tx, Ty, n, 1703 + n)
        want = host_dot(xs, ys)
        @test Cudot.dot_arrays(xs, ys) === want
        for (sx, sy) in STRIDE_PAIRS
            xv, yv = strided_copy(xs, sx), strided_copy(ys, sy)
            @test (n < 2 || stride(xv, 1) == sx) && xv == xs && yv == ys
            @test Cudot.dot_arrays(xv, yv) === want
        end
    end
end

@testset "own arrays: a large dot, strided, against the context and the BigFloat bound" begin
    n = 2^20 + 3
    for (Tx, Ty) in ((Float32, Float32), (Float64, Float64), (Float16, UInt16), (Int8, Bool))
        xs, ys = random_inputs(Tx, Ty, n, 99)
        want = host_dot(xs, ys)
        @test Cudot.dot_arrays(xs, ys) === want
        @test Cudot.dot_arrays(strided_copy(xs, -1), strided_copy(ys, 2)) === want
        s, a = reference(xs, ys)
        @test within_contract(Tx, Ty, want, s, a, n)
    end
end

@testset "own arrays: negative strides start at element 1, the highest address" begin
    p = Float64[1, 2, 3, 4]
    w = view(p, 4:-1:1)                      # w == [4, 3, 2, 1]
    @test stride(w, 1) == -1
    @test pointer(w) == pointer(p, 4)        # what Cudot passes as element 0
    # Weights that tell every order apart: 4*1 + 3*10 + 2*100 + 1*1000.
    @test Cudot.dot_arrays(w, Float64[1, 10, 100, 1000]) === 1234.0
    @test Cudot.dot_arrays(Float64[1, 10, 100, 1000], w) === 1234.0
    @test Cudot.dot_arrays(w, w) === 30.0
    # A zero step: p[2] three times, stride 0 (one value repeated, the bits of three copies).
    rep = view(p, StepRangeLen(2, 0, 3))
    @test stride(rep, 1) == 0 && rep == [2.0, 2.0, 2.0]
    @test Cudot.dot_arrays(rep, Float64[1, 10, 100]) === 222.0
    @test Cudot.dot_arrays(rep, Float64[1, 10, 100]) === host_dot([2.0, 2.0, 2.0], Float64[1, 10, 100])
    # Every second element backwards: 4, 2.
    @test Cudot.dot_arrays(view(p, 4:-2:1), Float64[1, 10]) === 24.0
    # A row of a matrix (stride 3) and a reversed column.
    A = reshape(Float32.(1:12), 3, 4)
    row = view(A, 2, :)                      # 2, 5, 8, 11
    @test stride(row, 1) == 3
    @test Cudot.dot_arrays(row, Float32[1, 10, 100, 1000]) === 11852.0
    @test Cudot.dot_arrays(view(A, 3:-1:1, 4), Float32[1, 10, 100]) === 12.0 + 110.0 + 1000.0
    # x and y may be the same memory.
    xs, _ = random_inputs(Float32, Float32, 5000, 5)
    @test Cudot.dot_arrays(xs, xs) === host_dot(xs, xs)
end

@testset "own arrays: other strided vectors (reinterpret, a context's views, Bool)" begin
    xs, ys = random_inputs(Float32, UInt16, 3000, 11)
    # bfloat16 data held in another 16-bit type, passed as its UInt16 bits without a copy.
    held = collect(reinterpret(BFloat16, ys))      # a Vector of the stand-in type
    bits = reinterpret(UInt16, held)               # a ReinterpretArray over it
    @test bits isa StridedVector{UInt16} && !(bits isa Vector)
    @test Cudot.dot_arrays(xs, bits) === host_dot(xs, ys)
    # The stand-in type itself is refused, with a hint.
    e = thrown(() -> Cudot.dot_arrays(xs, held))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    @test occursin("BFloat16s", e.msg) && occursin("reinterpret(UInt16", e.msg)
    # A context's own views are operands too (read in place, the context's bits).
    CudotContext(3000; eltype=Float32, y_eltype=UInt16, memory=:host) do ctx
        load!(ctx, xs, ys)
        @test Cudot.dot_arrays(ctx.x, ctx.y) === dot(ctx)
        @test Cudot.dot_arrays(ctx.x, ys) === dot(ctx)
        @test Cudot.tile_partials(ctx.x, ctx.y) == Cudot.tile_partials(ctx)
    end
    # A Vector{Bool} is bytes 0/1: the same bits as the same 0/1 as UInt8.
    mask = [isodd(i) for i in 1:3000]
    @test Cudot.dot_arrays(xs, mask) === host_dot(xs, UInt8.(mask))
end

@testset "own arrays: BFloat16s.BFloat16 through the extension" begin
    ext = VERSION >= v"1.9" ? Base.get_extension(Cudot, :CudotBFloat16sExt) : nothing
    if ext === nothing
        @info "BFloat16s.jl not loaded: skipping its extension's test"
        @test_skip false
    else
        BF = ext.BFloat16
        xs, ys = random_inputs(Float16, UInt16, 9000, 13)
        vals = collect(reinterpret(BF, ys))          # BFloat16 values with the bits ys
        @test Cudot.dot_arrays(xs, vals) === host_dot(xs, ys)
        @test Cudot.dot_arrays(strided_copy(xs, 2), view(vals, 9000:-1:1)) ===
              host_dot(xs, reverse(ys))
    end
end

@testset "own arrays: tile partials join to the bits of one context, $Tx × $Ty" for (Tx, Ty) in
        PARTIAL_PAIRS
    T = Cudot.TILE_ELEMENTS
    N = 3T + 5
    xs, ys = random_inputs(Tx, Ty, N, 2024)
    CudotContext(N; eltype=Tx, y_eltype=Ty, memory=:host) do whole
        load!(whole, xs, ys)
        want = Cudot.tile_partials(whole)
        @test Cudot.tile_partials(xs, ys) == want
        @test Cudot.tile_partials(strided_copy(xs, -1), strided_copy(ys, 3)) == want
        @test Cudot.join_partials(Tx, Ty, Cudot.tile_partials(xs, ys)) === dot(whole)
        # A piece starting at a tile boundary (a view, in place) gives that piece's tiles.
        piece = Cudot.tile_partials(view(xs, T+1:N), view(ys, T+1:N))
        @test piece == Cudot.tile_partials(whole, T + 1)
        joined = vcat(Cudot.tile_partials(view(xs, 1:T), view(ys, 1:T)), piece)
        @test Cudot.join_partials(Tx, Ty, joined) === dot(whole)
    end
    @test Cudot.tile_partials(Tx[], Ty[]) == UInt8[]
end

@testset "own arrays: errors" begin
    xs, ys = random_inputs(Float32, Float64, 100, 3)
    status(f) = (e = thrown(f); e isa CudotError ? e.status : e)
    # The binding's own checks (status 1, its message).
    e = thrown(() -> Cudot.dot_arrays(xs, ys[1:99]))
    @test e isa CudotError && e.status == 1 && occursin("100", e.msg) && occursin("99", e.msg)
    @test status(() -> Cudot.tile_partials(xs, ys[1:99])) == 1
    for bad in (Int32[1, 2], ComplexF64[1, 2], UInt32[1, 2], ["a", "b"])
        @test status(() -> Cudot.dot_arrays(bad, Float32[1, 2])) == 1
        @test status(() -> Cudot.dot_arrays(Float32[1, 2], bad)) == 1
    end
    @test occursin("y has element type Int32", thrown(() -> Cudot.dot_arrays(xs, Int32.(1:100))).msg)
    # Not strided memory: a BitVector, a range, a view with a vector of indices.
    for bad in (trues(100), 1.0:100.0, view(ys, collect(1:100)))
        e = thrown(() -> Cudot.dot_arrays(xs, bad))
        @test e isa CudotError && e.status == 1 && occursin("not strided", e.msg)
    end
    # Stream arguments that are no stream.
    for s in ("stream", -1, 1.5, :legacy)
        @test status(() -> Cudot.dot_arrays(xs, ys; stream=s)) == 1
        @test status(() -> Cudot.dot_arrays(xs, ys; x_ready=s)) == 1
    end
    # A stream is ignored when the CPU computes (pageable host memory).
    @test Cudot.dot_arrays(xs, ys; stream=Ptr{Cvoid}(2)) === host_dot(xs, ys)
    # The async form: the result must be one element (the binding's check) ...
    e = thrown(() -> Cudot.dot_arrays!(zeros(2), xs, ys))
    @test e isa CudotError && e.status == 1 && occursin("exactly one", e.msg)
    # ... and pageable host operands are read by the CPU only: the library refuses, with its
    # message, and writes nothing.
    r = [NaN]
    e = thrown(() -> Cudot.dot_arrays!(r, xs, ys))
    @test e isa CudotError && e.status == Cudot.ERROR_UNSUPPORTED
    @test occursin("cudot_dot_arrays_async", e.msg) && occursin("pageable", e.msg)
    @test isnan(r[1])
    # Everything still works afterwards.
    @test Cudot.dot_arrays(xs, ys) === host_dot(xs, ys)
end

@testset "own arrays: register_host, unregister_host" begin
    xs, ys = random_inputs(Float64, Int8, 50_000, 8)
    want = host_dot(xs, ys)
    @test Cudot.register_host(xs) === xs
    try
        @test Cudot.dot_arrays(xs, ys) === want               # registered: the same bits
        @test Cudot.dot_arrays(view(xs, 50_000:-1:1), view(ys, 50_000:-1:1)) === want
        e = thrown(() -> Cudot.register_host(xs))            # overlaps the range registered
        @test e isa CudotError && e.status == 1 && !isempty(e.msg)
    finally
        @test Cudot.unregister_host(xs) === xs
    end
    e = thrown(() -> Cudot.unregister_host(xs))              # not registered any more
    @test e isa CudotError && e.status == 1 && !isempty(e.msg)
    @test thrown(() -> Cudot.register_host(Float64[])).status == 1      # no bytes
    # Only a dense array of plain bits names one range.
    @test thrown(() -> Cudot.register_host(view(xs, 1:2:100))).status == 1
    @test thrown(() -> Cudot.register_host(Any[1, 2])).status == 1
    # The do-block form unregisters when the block ends, also on error: registering again works.
    @test Cudot.register_host(r -> Cudot.dot_arrays(r, ys), xs) === want
    @test_throws ErrorException Cudot.register_host(_ -> error("inside"), xs)
    @test Cudot.register_host(xs) === xs
    @test Cudot.unregister_host(xs) === xs
end

@testset "own arrays: each task reads its own call's message" begin
    # Two failures with different library messages; cudot_last_error(NULL) is per OS thread, and
    # each task must see the message of its own call, never the other's.
    unregistered = zeros(16)
    nothing_in_it = Float32[]          # one array: its (NULL or not) address is the same each time
    unreg_msg = thrown(() -> Cudot.unregister_host(unregistered)).msg
    empty_msg = thrown(() -> Cudot.register_host(nothing_in_it)).msg
    @test unreg_msg != empty_msg
    ok = Threads.Atomic{Int}(0)
    tasks = map(1:8) do i
        Threads.@spawn for _ in 1:200
            if isodd(i)
                thrown(() -> Cudot.unregister_host(unregistered)).msg == unreg_msg &&
                    Threads.atomic_add!(ok, 1)
            else
                thrown(() -> Cudot.register_host(nothing_in_it)).msg == empty_msg &&
                    Threads.atomic_add!(ok, 1)
            end
            yield()
        end
    end
    foreach(wait, tasks)
    @test ok[] == 8 * 200
end

@testset "own arrays: the C structs' layout" begin
    if Sys.WORD_SIZE == 64
        # struct cudot_array of cudot.h 1.7 and struct cudot_arrays of 1.11 (mode and reserved2
        # after y_ready), as a C compiler lays them out.
        @test sizeof(Cudot._Array) == 24
        @test [fieldoffset(Cudot._Array, i) for i in 1:4] == [0, 8, 12, 16]
        @test sizeof(Cudot._Arrays) == 96
        @test [fieldoffset(Cudot._Arrays, i) for i in 1:10] == [0, 4, 8, 16, 40, 64, 72, 80, 88, 92]
    else
        @test_skip false
    end
    @test isbitstype(Cudot._Arrays)
end

@testset "own arrays: exact=true is the correctly rounded dot (BigFloat's exact sum)" begin
    x32 = Float32[]
    for _ in 1:100
        append!(x32, Float32[1f16, 1, -1f16])
    end
    push!(x32, 3)
    @test Cudot.dot_arrays(x32, ones(Float32, length(x32)); exact=true) == 103.0
    @test Cudot.dot_arrays([1e200, -1e200, 1.0], [1e200, 1e200, 1.0]; exact=true) == 1.0
    @test Cudot.dot_arrays([1e308, 1e308], [10.0, -10.0]; exact=true) === 0.0
    @test Cudot.dot_arrays([1e300, 1e300, -1e300], [1e10, 1e10, 1e10]; exact=true) == Inf
    x = [ldexp(1 + rand(), rand(-300:300)) * rand((-1, 1)) for _ in 1:5000]
    y = [ldexp(1 + rand(), rand(-300:300)) for _ in 1:5000]
    want = setprecision(BigFloat, 2000) do
        Float64(sum(big.(x) .* big.(y)))
    end
    @test Cudot.dot_arrays(x, y; exact=true) === want
    p = randperm(length(x))
    @test Cudot.dot_arrays(x[p], y[p]; exact=true) === want
end
