# Tests of exact contexts and exact partials (CudotContext(n; exact=true), Cudot.isexact,
# Cudot.tile_partials of an exact context or with exact=true, Cudot.join_exact_partials; cudot 1.13),
# included by runtests.jl inside its "Cudot" testset. The contract: an exact context's dot is the
# correctly rounded dot, the bits of Cudot.dot_arrays(x, y; exact=true) on the same values, which is
# the exact sum of the products rounded once (checked here against a BigFloat sum that a
# Rational{BigInt} sum proves exact); exact partials of any pieces, joined in any order, give the
# bits of the whole.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written): they
# are only syntax-checked (check_syntax.sh).

# Values of a wide range of magnitudes and both signs: their products cancel and lose most of their
# bits in any floating-point order, so only an exact sum rounded once gets the dot right.
wide_element(rng, ::Type{Float64}) = ldexp(1 + rand(rng), rand(rng, -300:300)) * rand(rng, (-1, 1))
wide_element(rng, ::Type{Float32}) =
    Float32(ldexp(1 + rand(rng), rand(rng, -60:60)) * rand(rng, (-1, 1)))

function wide_inputs(::Type{Tx}, ::Type{Ty}, n, seed) where {Tx,Ty}
    rng = MersenneTwister(seed)
    xs = Tx[wide_element(rng, Tx) for _ in 1:n]
    ys = Ty[wide_element(rng, Ty) for _ in 1:n]
    return xs, ys
end

# (whether the BigFloat sum is exact, the exact dot rounded once to Float64). The products of these
# values lie between 2^-706 and 2^605, so 2048 bits hold every partial sum of a few thousand of them
# exactly; the Rational{BigInt} sum, exact by construction, confirms it (compared inside the same
# precision, where multiplying by its power-of-two denominator is exact). Float64 of a BigFloat
# rounds once, to nearest, ties to even: the correctly rounded dot.
function exact_reference(xs::AbstractVector, ys::AbstractVector)
    setprecision(BigFloat, 2048) do
        s = big(0.0)
        q = zero(Rational{BigInt})
        for i in eachindex(xs, ys)
            a, b = Float64(xs[i]), Float64(ys[i])
            s += big(a) * big(b)
            q += Rational{BigInt}(a) * Rational{BigInt}(b)
        end
        return (s == q, Float64(s))
    end
end

# An exact context on `mem` holding xs and ys; the GPU strategies through gpu_context (nothing
# without a GPU, unless CUDOT_TEST_GPU=1).
function exact_context(xs::AbstractVector{Tx}, ys::AbstractVector{Ty}, mem; device=0) where {Tx,Ty}
    n = length(xs)
    ctx = mem in (:host, :auto) ?
        CudotContext(n; eltype=Tx, y_eltype=Ty, memory=mem, device=device, exact=true) :
        gpu_context(n, Tx, Ty, mem; device=device, exact=true)
    ctx === nothing || load!(ctx, xs, ys)
    return ctx
end

# Float32, Float64 and a mixed pair.
const EXACT_PAIRS = ((Float32, Float32), (Float64, Float64), (Float32, Float64))

@testset "exact contexts: the 40-byte cudot_config of 1.13" begin
    # cudot_config as a C compiler lays it out (scripts/check_bindings_abi.py checks the fields'
    # names and types against cudot.h; this checks where Julia puts them).
    @test sizeof(Cudot._Config) == 40
    @test [fieldoffset(Cudot._Config, i) for i in 1:9] == [0, 4, 8, 12, 16, 20, 24, 32, 36]
    @test fieldnames(Cudot._Config)[8:9] == (:mode, :reserved)
    @test Cudot.EXACT_PARTIAL_BYTES == 1120
end

@testset "exact contexts: :host and :auto give the bits of dot_arrays(...; exact=true), $Tx × $Ty" for
        (Tx, Ty) in EXACT_PAIRS
    for n in (0, 1, 1000, 3 * Cudot.TILE_ELEMENTS + 5)
        xs, ys = wide_inputs(Tx, Ty, n, 1300 + n)
        want = Cudot.dot_arrays(xs, ys; exact=true)
        n == 0 && @test want === 0.0
        for mem in (:host, :auto)
            ctx = exact_context(xs, ys, mem)
            try
                @test Cudot.isexact(ctx)
                for round in 1:3            # :auto times the CPU and the GPU on its first dots
                    @test dot(ctx) === want
                end
                for k in unique((0, 1, n ÷ 3, n))
                    k <= n || continue
                    @test dot(ctx, k) === Cudot.dot_arrays(xs[1:k], ys[1:k]; exact=true)
                end
                @test dot(ctx.x, ctx.y) === want     # the views' dot is the context's
            finally
                close(ctx)
            end
        end
        # The same values in a canonical context: not exact, and its partials are tiles.
        CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host) do canonical
            load!(canonical, xs, ys)
            @test !Cudot.isexact(canonical)
            @test length(Cudot.tile_partials(canonical)) == cld(n, Cudot.TILE_ELEMENTS) * Cudot.PARTIAL_BYTES
        end
    end
end

@testset "exact contexts: the known answers" begin
    # 100 times (1e16, 1, -1e16) and a 3, against ones: 103 (a sum in double loses the ones).
    x32 = Float32[]
    for _ in 1:100
        append!(x32, Float32[1f16, 1, -1f16])
    end
    push!(x32, 3)
    cases = ((x32, ones(Float32, length(x32)), 103.0),
             ([1e300, 1e300, -1e300], [1e10, 1e10, 1e10], Inf),   # 1e310: past the largest double
             ([1e308, 1e308], [10.0, -10.0], 0.0))                # products beyond range cancel
    for mem in (:host, :auto), (xs, ys, want) in cases
        ctx = exact_context(xs, ys, mem)
        try
            r = dot(ctx)
            @test r === want                          # === compares bits: 0.0 here is +0.0
            @test r === Cudot.dot_arrays(xs, ys; exact=true)
            want == 0 && @test !signbit(r)
        finally
            close(ctx)
        end
    end
end

@testset "exact contexts: the correctly rounded dot (BigFloat sum, proven exact by Rational)" begin
    for (Tx, Ty) in EXACT_PAIRS
        xs, ys = wide_inputs(Tx, Ty, 2000, 77)
        exact, want = exact_reference(xs, ys)
        @test exact
        for mem in (:host, :auto)
            ctx = exact_context(xs, ys, mem)
            try
                @test dot(ctx) === want
            finally
                close(ctx)
            end
        end
    end
    # Every product cancelled by its negation but one, shuffled: the dot is that product exactly.
    xs, ys = wide_inputs(Float64, Float64, 2000, 78)
    xc = vcat(xs, -xs, [3.0])
    yc = vcat(ys, ys, [ldexp(1.0, -20)])
    p = randperm(MersenneTwister(79), length(xc))
    exact, want = exact_reference(xc[p], yc[p])
    @test exact && want === 3 * ldexp(1.0, -20)
    for mem in (:host, :auto)
        ctx = exact_context(xc[p], yc[p], mem)
        try
            @test dot(ctx) === want
        finally
            close(ctx)
        end
    end
end

# The GPU strategies compute the exact dot on their GPU(s): the same bits. Skipped without a GPU.
@testset "exact contexts on $mem, device $dev" for mem in (:pinned, :mapped, :managed),
        dev in (0, Cudot.DEVICE_ALL)
    for (Tx, Ty) in EXACT_PAIRS
        xs, ys = wide_inputs(Tx, Ty, 2^15 + 3, 11)
        ctx = exact_context(xs, ys, mem; device=dev)
        if ctx === nothing
            skip_without_gpu("exact contexts on :$mem")
            continue
        end
        try
            @test memory(ctx) === mem && Cudot.isexact(ctx)
            want = Cudot.dot_arrays(xs, ys; exact=true)
            @test dot(ctx) === want
            @test dot(ctx, 1000) === Cudot.dot_arrays(xs[1:1000], ys[1:1000]; exact=true)
            @test Cudot.join_exact_partials(Cudot.tile_partials(ctx)) === want
            @test Cudot.join_exact_partials(Cudot.tile_partials(ctx, 5, 2^14)) ===
                  Cudot.dot_arrays(xs[5:2^14+4], ys[5:2^14+4]; exact=true)
        finally
            close(ctx)
        end
    end
end

@testset "exact partials: pieces cut at random, shuffled and joined, give the whole, $Tx × $Ty" for
        (Tx, Ty) in EXACT_PAIRS
    T = Cudot.TILE_ELEMENTS
    N = 3T + 77
    B = Cudot.EXACT_PARTIAL_BYTES
    rng = MersenneTwister(2024)
    xs, ys = wide_inputs(Tx, Ty, N, 4711)
    whole = exact_context(xs, ys, :host)
    try
        want = dot(whole)
        @test want === Cudot.dot_arrays(xs, ys; exact=true)
        one_partial = Cudot.tile_partials(whole)
        @test one_partial isa Vector{UInt8} && length(one_partial) == B
        @test Cudot.join_exact_partials(one_partial) === want
        for trial in 1:5
            # Cuts anywhere, not on tile boundaries; a repeated cut makes an empty piece.
            cuts = sort(vcat(1, rand(rng, 1:N+1, 6), N + 1))
            pieces = [cuts[i]:cuts[i+1]-1 for i in 1:length(cuts)-1]
            from_whole, from_arrays, from_contexts = Vector{UInt8}[], Vector{UInt8}[], Vector{UInt8}[]
            for r in pieces
                piece_want = Cudot.dot_arrays(xs[r], ys[r]; exact=true)
                # The piece's elements of the whole context (1-based first; also n = 0).
                a = Cudot.tile_partials(whole, first(r), length(r))
                # The piece as the caller's own arrays.
                b = Cudot.tile_partials(xs[r], ys[r]; exact=true)
                # The piece in an exact context of its own (of capacity 0 for an empty piece).
                c = CudotContext(length(r); eltype=Tx, y_eltype=Ty, memory=:host, exact=true) do piece
                    Cudot.tile_partials(load!(piece, xs[r], ys[r]))
                end
                for part in (a, b, c)
                    @test length(part) == B
                    @test Cudot.join_exact_partials(part) === piece_want
                end
                push!(from_whole, a)
                push!(from_arrays, b)
                push!(from_contexts, c)
            end
            # Each source's partials in a random order; then a random source for each piece.
            for parts in (from_whole, from_arrays, from_contexts,
                          [rand(rng, (from_whole[i], from_arrays[i], from_contexts[i]))
                           for i in eachindex(pieces)])
                joined = reduce(vcat, parts[randperm(rng, length(parts))]; init=UInt8[])
                @test length(joined) == length(pieces) * B
                @test Cudot.join_exact_partials(joined) === want
                # A view of the bytes (copied by the binding) joins the same.
                @test Cudot.join_exact_partials(view(joined, 1:length(joined))) === want
            end
        end
    finally
        close(whole)
    end
end

@testset "exact partials: any element types, the empty sum" begin
    a32, b32 = wide_inputs(Float32, Float32, 1000, 1)
    a64, b64 = wide_inputs(Float64, Float64, 1000, 2)
    parts = vcat(Cudot.tile_partials(a64, b64; exact=true), Cudot.tile_partials(a32, b32; exact=true))
    # Float32 to Float64 is exact, so the whole in Float64 has the same products.
    want = Cudot.dot_arrays(vcat(Float64.(a32), a64), vcat(Float64.(b32), b64); exact=true)
    @test Cudot.join_exact_partials(parts) === want
    exact, ref = exact_reference(vcat(a32, a64), vcat(b32, b64))
    @test exact && ref === want
    # No partials, and partials of no elements: +0.0.
    @test Cudot.join_exact_partials(UInt8[]) === 0.0
    of_nothing = Cudot.tile_partials(Float64[], Float64[]; exact=true)
    @test length(of_nothing) == Cudot.EXACT_PARTIAL_BYTES
    @test Cudot.join_exact_partials(vcat(of_nothing, of_nothing)) === 0.0
    CudotContext(0; eltype=Float64, memory=:host, exact=true) do ctx
        @test Cudot.isexact(ctx) && dot(ctx) === 0.0
        p = Cudot.tile_partials(ctx)
        @test length(p) == Cudot.EXACT_PARTIAL_BYTES && Cudot.join_exact_partials(p) === 0.0
    end
end

@testset "exact partials and contexts: errors" begin
    B = Cudot.EXACT_PARTIAL_BYTES
    xs, ys = wide_inputs(Float64, Float64, 100, 3)
    good = vcat(Cudot.tile_partials(xs[1:50], ys[1:50]; exact=true),
                Cudot.tile_partials(xs[51:100], ys[51:100]; exact=true),
                Cudot.tile_partials(Float64[], Float64[]; exact=true))
    @test Cudot.join_exact_partials(good) === Cudot.dot_arrays(xs, ys; exact=true)
    # A corrupted partial: the library's INVALID_ARGUMENT, its message naming the partial (counted
    # from 0). Byte 1 of the second partial is its tag; byte 9 of the third, its reserved word.
    for (byte, index) in ((B + 1, 1), (2B + 9, 2))
        bad = copy(good)
        bad[byte] ⊻= 0xff
        e = thrown(() -> Cudot.join_exact_partials(bad))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
        @test occursin("partial", e.msg) && occursin(string("partial ", index), e.msg)
    end
    e = thrown(() -> Cudot.join_exact_partials(zeros(UInt8, B)))       # bytes no cudot wrote
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("partial 0", e.msg)
    # Lengths that are not whole partials: the binding's own check, before the library.
    for len in (1, B - 1, B + 1, 16)
        e = thrown(() -> Cudot.join_exact_partials(zeros(UInt8, len)))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("partial", e.msg)
    end
    e = thrown(() -> Cudot.tile_partials(xs, ys[1:99]; exact=true))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT

    # An exact context with rows: dot sees the whole buffers; dot_each_row gives each row its exact
    # dot (cudot 1.14; rows_exact.jl compares them with dot_arrays(...; exact=true) on wide data).
    CudotContext(4; eltype=Float64, memory=:host, rows=2, exact=true) do ctx
        X, Y = inputs(ctx)
        X[:, 1] .= (1e308, 1e308, 1.0, 2.0)
        X[:, 2] .= 1.0
        Y[:, 1] .= (10.0, -10.0, 0.5, 0.25)
        Y[:, 2] .= 2.0
        @test Cudot.isexact(ctx)
        got = Cudot.dot_each_row(ctx)
        @test got == [1.0, 8.0] && got[1] === Cudot.dot_arrays(X[:, 1], Y[:, 1]; exact=true)
        @test Cudot.dot_each_row(ctx; rows=1, n=2)[1] === 0.0      # 1e309 - 1e309: +0.0
        e = thrown(() -> Cudot.dot_each_row(ctx; rows=3))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    end
    # Elements beyond the capacity, and a closed context, as for canonical partials.
    ctx = CudotContext(3; eltype=Float64, memory=:host, exact=true)
    e = thrown(() -> Cudot.tile_partials(ctx, 2, 3))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("capacity", e.msg)
    @test length(Cudot.tile_partials(ctx, 4, 0)) == B          # empty, just past the end
    close(ctx)
    for f in (() -> Cudot.isexact(ctx), () -> Cudot.tile_partials(ctx), () -> dot(ctx))
        e = thrown(f)
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    end
    # exact=false is the default: a canonical context.
    CudotContext(3; memory=:host, exact=false) do c
        @test !Cudot.isexact(c)
    end
end
