# Tests of exact rows (Cudot.dot_columns, dot_columns!, dot_segments, dot_segments! with exact=true,
# and Cudot.dot_each_row of an exact context; cudot 1.14), included by runtests.jl inside its "Cudot"
# testset after rows.jl and exact_contexts.jl (whose same_bits, random_matrices, wide_inputs and
# exact_reference it uses). The contract: each result has the bits of Cudot.dot_arrays(...;
# exact=true) on its own pair alone, the exact sum rounded once.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written): they
# are only syntax-checked (check_syntax.sh).

exact_columnwise(X::AbstractMatrix, Y::AbstractMatrix) =
    [Cudot.dot_arrays(view(X, :, j), view(Y, :, j); exact=true) for j in 1:size(X, 2)]
exact_columnwise(x::AbstractVector, Y::AbstractMatrix) =
    [Cudot.dot_arrays(x, view(Y, :, j); exact=true) for j in 1:size(Y, 2)]

@testset "exact rows: the columns of two matrices, $Tx × $Ty" for (Tx, Ty) in ROW_PAIRS
    for (n, count) in ((1, 1), (7, 5), (1000, 3), (8193, 4))
        # Wide-range values for the float pairs (their naive sums cancel and round), random ones else.
        if (Tx, Ty) in EXACT_PAIRS
            xs, ys = wide_inputs(Tx, Ty, n * count, 51 + n)
            X, Y = reshape(xs, n, count), reshape(ys, n, count)
        else
            X, Y = random_matrices(Tx, Ty, n, count, 53 + n)
        end
        want = exact_columnwise(X, Y)
        got = Cudot.dot_columns(X, Y; exact=true)
        @test got isa Vector{Float64} && same_bits(got, want)
        if Tx === Float64 && Ty === Float64
            for j in 1:count
                ok, ref = exact_reference(X[:, j], Y[:, j])
                @test ok && got[j] === ref
            end
        end
        # Strided views: columns backwards, rows backwards.
        for (I, J) in ((1:n, count:-1:1), (n:-1:1, 1:count))
            Xv, Yv = view(X, I, J), view(Y, I, J)
            @test same_bits(Cudot.dot_columns(Xv, Yv; exact=true), exact_columnwise(Xv, Yv))
        end
        # One vector against every column (row stride 0), forwards and reversed.
        q = X[:, 1]
        @test same_bits(Cudot.dot_columns(q, Y; exact=true), exact_columnwise(q, Y))
        qr = view(q, n:-1:1)
        @test same_bits(Cudot.dot_columns(qr, Y; exact=true), exact_columnwise(qr, Y))
    end
end

@testset "exact rows: segments, with empty ones" begin
    T8 = Cudot.TILE_ELEMENTS
    offsets = [1, 1, 2, 5, T8 + 5, T8 + 5, 2T8 + 10, 2T8 + 10]
    L = offsets[end] - 1
    for (Tx, Ty) in EXACT_PAIRS
        xs, ys = wide_inputs(Tx, Ty, L, 405)
        want = [Cudot.dot_arrays(view(xs, offsets[i]:offsets[i+1]-1), view(ys, offsets[i]:offsets[i+1]-1); exact=true)
                for i in 1:length(offsets)-1]
        got = Cudot.dot_segments(xs, ys, offsets; exact=true)
        @test same_bits(got, want)
        @test all(got[i] === 0.0 for i in (1, 5, 7))     # empty segments give +0.0
        @test same_bits(Cudot.dot_segments(strided_copy(xs, 3), strided_copy(ys, -1), offsets; exact=true), want)
    end
end

@testset "exact rows: known answers" begin
    # [1e16, 1, -1e16] × 100 then [3] against ones: exactly 103; the canonical order gives 4.
    n = 301
    triples = Float32[]
    for _ in 1:100
        append!(triples, (1f16, 1f0, -1f16))
    end
    push!(triples, 3f0)
    T = hcat(triples, reverse(triples), fill(0.5f0, n))
    q = ones(Float32, n)
    @test Cudot.dot_columns(q, T; exact=true) == [103.0, 103.0, 150.5]
    @test Cudot.dot_columns(q, T)[1] == 4.0
    # [1e308, 1e308] ⋅ [10, -10]: products past the Float64 range, an exact zero, +0.0 (=== tells
    # it from -0.0); as a column and as a segment beside an empty one.
    @test Cudot.dot_columns(reshape([1e308, 1e308], 2, 1), [10.0, -10.0]; exact=true)[1] === 0.0
    got = Cudot.dot_segments([1e308, 1e308, 2.0], [10.0, -10.0, 0.5], [1, 3, 3, 4]; exact=true)
    @test got[1] === 0.0 && got[2] === 0.0 && got[3] === 1.0
    # Columns of no elements, and no columns.
    @test all(r === 0.0 for r in Cudot.dot_columns(zeros(0, 3), zeros(Float32, 0, 3); exact=true))
    @test Cudot.dot_columns(zeros(4), zeros(4, 0); exact=true) == Float64[]
    @test all(r === 0.0 for r in Cudot.dot_segments(Float64[], Float64[], [1, 1, 1]; exact=true))
end

@testset "exact rows: errors" begin
    # The binding's checks come first, as for the canonical calls.
    @test thrown(() -> Cudot.dot_columns(zeros(3, 2), zeros(3, 3); exact=true)).status == 1
    @test thrown(() -> Cudot.dot_segments(zeros(3), zeros(3), [1, 5]; exact=true)).status == 1
    # Host memory cannot be queued, exact or not: status 4, nothing written.
    results = fill(NaN, 2)
    e = thrown(() -> Cudot.dot_columns!(results, rand(3, 2), rand(3, 2); exact=true))
    @test e isa CudotError && e.status == 4 && all(isnan, results)
    # A library older than 1.14 (the loaded one, its version read as 1.13.0): exact=true is refused
    # by the binding with status 4, whatever the batch, while canonical batches still go through.
    real = Cudot._lib()
    names = fieldnames(Cudot._Library)
    old = Cudot._Library((name === :version ? v"1.13.0" : getfield(real, name) for name in names)...)
    Cudot._LIB[] = old
    try
        for f in (() -> Cudot.dot_columns(ones(3), ones(3, 2); exact=true),
                  () -> Cudot.dot_columns(zeros(0), zeros(0, 0); exact=true),
                  () -> Cudot.dot_segments(ones(3), ones(3), [1, 2, 4]; exact=true),
                  () -> Cudot.dot_columns!(fill(NaN, 2), ones(3, 2), ones(3, 2); exact=true),
                  () -> Cudot.dot_segments!(fill(NaN, 1), ones(3), ones(3), [1, 4]; exact=true))
            e = thrown(f)
            @test e isa CudotError && e.status == Cudot.ERROR_UNSUPPORTED
            @test occursin("cudot_rows.mode", e.msg) && occursin("1.14", e.msg) && occursin("1.13.0", e.msg)
        end
        @test Cudot.dot_columns(ones(3), ones(3, 2)) == [3.0, 3.0]
    finally
        Cudot._LIB[] = real
    end
end

@testset "exact rows: an exact context's dot_each_row, $T on :$mem" for T in (Float32, Float64), mem in (:host, :auto)
    k, n = 4, 301
    xs, ys = wide_inputs(T, T, k * n, 61)
    X0, Y0 = reshape(xs, n, k), reshape(ys, n, k)
    # Column 2: the triples against ones, whose canonical sum loses every 1.
    for i in 0:99
        X0[3i+1:3i+3, 2] .= (T(1e16), one(T), -T(1e16))
    end
    X0[n, 2] = 3
    Y0[:, 2] .= one(T)
    CudotContext(n; eltype=T, memory=mem, rows=k, exact=true) do ctx
        X, Y = inputs(ctx)
        copyto!(X, X0)
        copyto!(Y, Y0)
        @test Cudot.isexact(ctx)
        got = Cudot.dot_each_row(ctx)
        @test same_bits(got, exact_columnwise(X0, Y0))
        @test got[2] === 103.0
        part = Cudot.dot_each_row(ctx; rows=3, n=7)
        @test same_bits(part, exact_columnwise(X0[1:7, 1:3], Y0[1:7, 1:3]))
        @test all(r === 0.0 for r in Cudot.dot_each_row(ctx; rows=2, n=0))
        @test dot(ctx) === Cudot.dot_arrays(xs, ys; exact=true)   # still one vector of k * n
    end
end
