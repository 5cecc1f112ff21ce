# Tests of contexts with rows (CudotContext(n; rows=k), Cudot.nrows, row_length, dot_each_row,
# dot_each_row!; cudot 1.10), included by runtests.jl inside its "Cudot" testset. The contract: each
# result has the bits of Cudot.dot_arrays on copies of its row's first n elements, on every memory
# strategy, and a refused call writes nothing.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written): they
# are only syntax-checked (check_syntax.sh).

# Every row's dot alone: the first m elements of columns 1:k of the input matrices, copied.
function rows_alone(ctx, k, m)
    X, Y = inputs(ctx)
    return Float64[Cudot.dot_arrays(X[1:m, j], Y[1:m, j]) for j in 1:k]
end

rows_same_bits(a::Vector{Float64}, b::Vector{Float64}) =
    length(a) == length(b) && all(reinterpret(UInt64, a) .== reinterpret(UInt64, b))

# The checks every context with rows must pass (filled by the caller).
function check_context_rows(ctx, k, n)
    @test Cudot.nrows(ctx) == k && Cudot.row_length(ctx) == n && capacity(ctx) == k * n
    got = Cudot.dot_each_row(ctx)
    @test got isa Vector{Float64} && rows_same_bits(got, rows_alone(ctx, k, n))
    # Prefixes: fewer rows, shorter rows, both.
    for kk in unique((k, k ÷ 2, 1, 0)), m in unique((n, n ÷ 3, min(n, 1), 0))
        part = Cudot.dot_each_row(ctx; rows=kk, n=m)
        @test length(part) == kk && rows_same_bits(part, rows_alone(ctx, kk, m))
        into = fill(42.0, kk)
        @test Cudot.dot_each_row!(into, ctx, kk, m) === into
        @test rows_same_bits(into, part)
        m == 0 && @test all(reinterpret(UInt64, part) .== 0)      # +0.0, not -0.0
    end
    # Beyond the context: the library's INVALID_ARGUMENT, with its message; nothing written.
    for (kk, m) in ((k + 1, n), (k, n + 1), (k + 1, 0))
        into = fill(42.0, kk)
        e = thrown(() -> Cudot.dot_each_row!(into, ctx, kk, m))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("exceed", e.msg)
        @test all(into .== 42.0)
        e = thrown(() -> Cudot.dot_each_row(ctx; rows=kk, n=m))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("exceed", e.msg)
    end
end

const CONTEXT_ROW_PAIRS = ((Float32, Float32), (Float64, Float64), (Float16, Int8), (UInt16, Float32),
                           (UInt8, Bool))

@testset "context rows: each row has the bits of its own dot, $Tx × $Ty" for (Tx, Ty) in CONTEXT_ROW_PAIRS
    for (k, n) in ((11, 37), (3, 8192 + 5), (2, 100), (4, 0))
        CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:host, rows=k) do ctx
            xs, ys = random_inputs(Tx, Ty, k * n, 7 + k + n)
            X, Y = inputs(ctx)
            @test X isa AbstractMatrix{Tx} && size(X) == (n, k) && size(Y) == (n, k)
            copyto!(X, reshape(xs, n, k))
            copyto!(Y, reshape(ys, n, k))
            check_context_rows(ctx, k, n)
            # dot(ctx) still sees one vector of k * n elements.
            @test dot(ctx) === Cudot.dot_arrays(xs, ys)
        end
    end
end

@testset "context rows: the views, columns and refused dots" begin
    CudotContext(5; eltype=Float64, memory=:host, rows=3) do ctx
        X, Y = inputs(ctx)
        @test size(X) == (5, 3) && ctx.x == X
        fill!(X, 0.0)
        fill!(Y, 1.0)
        X[3, 2] = 7.0                   # row 2 of the C buffers, its third element: element 8
        @test dot(ctx) == 7.0 && dot(ctx, 7) == 0.0 && dot(ctx, 8) == 7.0
        @test Cudot.dot_each_row(ctx) == [0.0, 7.0, 0.0]
        @test view(X, :, 2) == [0.0, 0.0, 7.0, 0.0, 0.0]
        for (a, b) in ((X, Y), (view(X, :, 1), view(Y, :, 1)), (X, ones(5, 3)), (view(X, :, 1), ones(5)))
            @test thrown(() -> dot(a, b)) isa ArgumentError
            @test thrown(() -> dot(b, a)) isa ArgumentError
        end
    end
    # A context without rows (or with one) keeps its vector views, and has one row of its capacity.
    for kw in (NamedTuple(), (rows=1,))
        CudotContext(9; eltype=Float32, memory=:host, kw...) do ctx
            x, y = inputs(ctx)
            @test x isa CudotVector{Float32} && length(x) == 9
            @test Cudot.nrows(ctx) == 1 && Cudot.row_length(ctx) == 9
            x .= 0:8
            y .= 2
            @test Cudot.dot_each_row(ctx) == [dot(ctx)] == [72.0]
        end
    end
end

@testset "context rows: errors" begin
    for k in (0, -1)
        e = thrown(() -> CudotContext(4; memory=:host, rows=k))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && occursin("rows", e.msg)
    end
    e = thrown(() -> CudotContext(1 << 40; memory=:host, rows=1 << 40))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
    ctx = CudotContext(8; memory=:host, rows=3)
    @test thrown(() -> Cudot.dot_each_row(ctx; rows=-1)) isa CudotError
    @test thrown(() -> Cudot.dot_each_row(ctx; n=-1)) isa CudotError
    @test thrown(() -> Cudot.dot_each_row!(zeros(2), ctx, 3, 8)) isa CudotError
    @test Cudot.dot_each_row!(Float64[], ctx, 0, 8) == Float64[]
    close(ctx)
    e = thrown(() -> Cudot.dot_each_row(ctx))
    @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT
end

# The same checks on the GPU strategies, on one GPU and on every visible one; skipped without a
# usable GPU (and :auto where it resolves to :host), failed instead with CUDOT_TEST_GPU=1.
@testset "context rows on $mem, device $dev, $Tx × $Ty" for mem in (:pinned, :mapped, :managed, :auto),
        dev in (0, Cudot.DEVICE_ALL), (Tx, Ty) in ((Float32, Float32), (Float64, Float64), (Float16, UInt16))
    for (k, n) in ((64, 3000), (5, 2^15 + 3), (300, 17))
        ctx = mem === :auto ? CudotContext(n; eltype=Tx, y_eltype=Ty, memory=:auto, device=dev, rows=k) :
              gpu_context(n, Tx, Ty, mem; device=dev, rows=k)
        if ctx !== nothing && memory(ctx) === :host      # :auto without a usable GPU
            close(ctx)
            @test !GPU_REQUIRED                           # CUDOT_TEST_GPU=1: :auto must find it
            ctx = nothing
        end
        if ctx === nothing
            skip_without_gpu("context rows on :$mem")
            continue
        end
        try
            mem === :auto || @test memory(ctx) === mem
            xs, ys = random_inputs(Tx, Ty, k * n, k + n)
            load!(ctx, xs, ys)
            for round in 1:3            # :auto measures the CPU and the GPUs on the first calls
                @test rows_same_bits(Cudot.dot_each_row(ctx), rows_alone(ctx, k, n))
            end
            check_context_rows(ctx, k, n)
            xs, ys = random_inputs(Tx, Ty, k * n, k + n + 7)     # fresh data after a dot
            load!(ctx, xs, ys)
            @test rows_same_bits(Cudot.dot_each_row(ctx), rows_alone(ctx, k, n))
        finally
            close(ctx)
        end
    end
end
