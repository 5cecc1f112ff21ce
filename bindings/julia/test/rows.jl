# Tests of many dots in one call on host arrays (Cudot.dot_columns, dot_segments; cudot 1.9),
# included by runtests.jl inside its "Cudot" testset. The contract: each result has the bits of
# Cudot.dot_arrays on its own pair of columns or segments, whatever the batch.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written): they
# are only syntax-checked (check_syntax.sh).

# Two n × count matrices of random values of the two types.
function random_matrices(::Type{Tx}, ::Type{Ty}, n, count, seed) where {Tx,Ty}
    xs, ys = random_inputs(Tx, Ty, n * count, seed)
    return reshape(xs, n, count), reshape(ys, n, count)
end

# Every column's dot alone, the reference of every test below.
columnwise(X::AbstractMatrix, Y::AbstractMatrix) =
    [Cudot.dot_arrays(view(X, :, j), view(Y, :, j)) for j in 1:size(X, 2)]
columnwise(x::AbstractVector, Y::AbstractMatrix) = [Cudot.dot_arrays(x, view(Y, :, j)) for j in 1:size(Y, 2)]
columnwise(X::AbstractMatrix, y::AbstractVector) = [Cudot.dot_arrays(view(X, :, j), y) for j in 1:size(X, 2)]

# The same values, bit for bit (NaN included).
same_bits(a::Vector{Float64}, b::Vector{Float64}) =
    length(a) == length(b) && all(reinterpret(UInt64, a) .== reinterpret(UInt64, b))

const ROW_PAIRS = ((Float32, Float32), (Float64, Float64), (Float32, Float64), (Float16, UInt16),
                   (Int8, UInt8), (Bool, Float32))

@testset "rows: the columns of two matrices, $Tx × $Ty" for (Tx, Ty) in ROW_PAIRS
    for (n, count) in ((1, 1), (5, 7), (1000, 3), (8193, 4))
        X, Y = random_matrices(Tx, Ty, n, count, 31 + n + count)
        want = columnwise(X, Y)
        got = Cudot.dot_columns(X, Y)
        @test got isa Vector{Float64} && same_bits(got, want)
        # Each column is the bits of a :host context holding it.
        @test got[end] === host_dot(X[:, end], Y[:, end])
        # Strided views: every second column, columns backwards, rows backwards, every other row.
        for (I, J) in ((1:n, 1:2:count), (1:n, count:-1:1), (n:-1:1, 1:count), (1:2:n, 1:count))
            Xv, Yv = view(X, I, J), view(Y, I, J)
            @test same_bits(Cudot.dot_columns(Xv, Yv), columnwise(Xv, Yv))
        end
        # A view of a larger matrix: columns with padding between them (stride(X, 2) > size(X, 1)).
        P = fill(poison(Tx), n + 3, count)
        P[2:n+1, :] .= X
        @test stride(view(P, 2:n+1, :), 2) == n + 3
        @test same_bits(Cudot.dot_columns(view(P, 2:n+1, :), Y), want)
    end
end

@testset "rows: one vector against every column, $Tx × $Ty" for (Tx, Ty) in ROW_PAIRS
    n, count = 8195, 6
    q, _ = random_inputs(Tx, Ty, n, 77)
    _, table = random_matrices(Tx, Ty, n, count, 78)
    want = columnwise(q, table)
    @test same_bits(Cudot.dot_columns(q, table), want)
    @test same_bits(Cudot.dot_columns(table, q), columnwise(table, q))
    # The query as a strided or reversed view, and a query of one repeated value (stride 0).
    qv = strided_copy(q, -2)
    @test same_bits(Cudot.dot_columns(qv, table), want)
    rep = view(q, StepRangeLen(1, 0, n))
    @test same_bits(Cudot.dot_columns(rep, table), columnwise(rep, table))
    # The same column dotted with itself as a one-column matrix: the plain dot.
    @test Cudot.dot_columns(q, reshape(table[:, 1], n, 1)) == [Cudot.dot_arrays(q, table[:, 1])]
end

@testset "rows: NaN and infinities stay in their column" begin
    X = Float64[1 NaN Inf; 2 1 0; 3 1 0]
    y = Float32[1, 1, 1]
    got = Cudot.dot_columns(X, y)
    @test got[1] === 6.0 && isnan(got[2]) && got[3] === Inf
    @test same_bits(got, columnwise(X, y))
end

@testset "rows: segments, with empty ones" begin
    T8 = Cudot.TILE_ELEMENTS
    offsets = [1, 1, 2, 2, 5, T8 + 5, 2T8 + 6, 2T8 + 6, 2T8 + 10, 2T8 + 10]
    L = offsets[end] - 1
    for (Tx, Ty) in ROW_PAIRS
        xs, ys = random_inputs(Tx, Ty, L, 404)
        want = [Cudot.dot_arrays(view(xs, offsets[i]:offsets[i+1]-1), view(ys, offsets[i]:offsets[i+1]-1))
                for i in 1:length(offsets)-1]
        got = Cudot.dot_segments(xs, ys, offsets)
        @test same_bits(got, want)
        @test all(got[i] === 0.0 for i in (1, 3, 7, 9))     # empty segments give +0.0
        # Strided and reversed operands: segments of the views' elements.
        xv, yv = strided_copy(xs, 3), strided_copy(ys, -1)
        @test same_bits(Cudot.dot_segments(xv, yv, offsets), want)
        # Offsets that start late and end early, of any integer type.
        inner = Int32[4, 100, 101]
        @test same_bits(Cudot.dot_segments(xs, ys, inner),
                        [Cudot.dot_arrays(view(xs, 4:99), view(ys, 4:99)), Cudot.dot_arrays(view(xs, 100:100), view(ys, 100:100))])
    end
end

@testset "rows: no columns, no segments, empty columns" begin
    @test Cudot.dot_columns(zeros(Float32, 4, 0), zeros(Float32, 4, 0)) == Float64[]
    @test Cudot.dot_columns(zeros(4), zeros(4, 0)) == Float64[]
    @test Cudot.dot_segments(Float32[1, 2], Float32[3, 4], [2]) == Float64[]
    # Columns of no elements: +0.0 each.
    got = Cudot.dot_columns(zeros(Float64, 0, 3), zeros(Float32, 0, 3))
    @test length(got) == 3 && all(r === 0.0 for r in got)
    @test all(r === 0.0 for r in Cudot.dot_segments(Float64[], Float64[], [1, 1, 1]))
end

@testset "rows: the binding's own checks" begin
    # Sizes that do not match.
    @test thrown(() -> Cudot.dot_columns(zeros(3, 2), zeros(3, 3))).status == 1
    @test thrown(() -> Cudot.dot_columns(zeros(4), zeros(3, 3))).status == 1
    @test thrown(() -> Cudot.dot_columns(zeros(3, 3), zeros(2))).status == 1
    @test thrown(() -> Cudot.dot_columns(zeros(3), zeros(3))).status == 1         # two vectors
    @test thrown(() -> Cudot.dot_segments(zeros(3), zeros(4), [1, 2])).status == 1
    # Offsets: empty, decreasing, before 1, past the end.
    for bad in (Int[], [1, 3, 2], [0, 2], [1, 5], [2, 2, 1])
        e = thrown(() -> Cudot.dot_segments(zeros(3), zeros(3), bad))
        @test e.status == 1
        isempty(bad) || @test occursin("offsets must not decrease and lie in [1, 4]", e.msg)
    end
    # Matrices that are not one strided block of memory, and unsupported element types.
    @test thrown(() -> Cudot.dot_columns(transpose(zeros(3, 3)), zeros(3, 3))).status == 1
    @test thrown(() -> Cudot.dot_columns(view(zeros(3, 3), :, [1, 3]), zeros(3, 2))).status == 1
    @test thrown(() -> Cudot.dot_columns(zeros(Int64, 3, 2), zeros(3, 2))).status == 1
    # The async calls check their results' length first.
    @test thrown(() -> Cudot.dot_columns!(zeros(3), zeros(3, 2), zeros(3, 2))).status == 1
    @test thrown(() -> Cudot.dot_segments!(zeros(1), zeros(3), zeros(3), [1, 2, 4])).status == 1
end

@testset "rows: what the library refuses" begin
    # Host memory cannot be queued: status 4 (the library's, or the binding's where the library
    # lacks cudot_dot_rows_async), and nothing is written.
    results = fill(NaN, 2)
    e = thrown(() -> Cudot.dot_columns!(results, rand(3, 2), rand(3, 2)))
    @test e.status == 4 && occursin("cudot_dot_rows_async", e.msg)
    @test all(isnan, results)
    e = thrown(() -> Cudot.dot_segments!(results, rand(4), rand(4), [1, 2, 5]))
    @test e.status == 4
end

@testset "rows: the C struct's layout" begin
    if Sys.WORD_SIZE == 64
        # struct cudot_rows of cudot.h 1.14 (mode and reserved after 1.9's 136 bytes), as a C
        # compiler lays it out.
        @test sizeof(Cudot._Rows) == 144
        @test [fieldoffset(Cudot._Rows, i) for i in 1:16] ==
              [0, 4, 8, 16, 24, 48, 72, 80, 88, 96, 104, 112, 120, 128, 136, 140]
        @test fieldnames(Cudot._Rows)[15:16] == (:mode, :reserved)
    else
        @test_skip false
    end
    @test isbitstype(Cudot._Rows)
    @test (Cudot._ROWS_STRIDED, Cudot._ROWS_SEGMENTED, Cudot._ROWS_POINTERS) == (0, 1, 2)
end
