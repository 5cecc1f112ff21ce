# Tests of many dots in one call on CUDA.jl arrays (Cudot.dot_columns, dot_columns!,
# dot_segments, dot_segments! with the CUDA.jl extension): the columns of CuMatrix operands and the
# segments of CuVectors, dotted by their GPU in one launch, blocking and queued; every result bit
# for bit the host's. Included by runtests.jl after cuda_arrays.jl (whose with_cuda and read_back
# it uses), only where CUDA.jl can be loaded; without a usable GPU every testset is skipped, unless
# CUDOT_TEST_GPU=1.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written): they
# are only syntax-checked (check_syntax.sh).

@testset "rows: the columns of CuMatrix operands, $Tx × $Ty" for (Tx, Ty) in GPU_PAIRS
    with_cuda("CUDA.jl columns") do
        for (n, count) in ((1, 3), (8193, 5))
            X, Y = random_matrices(Tx, Ty, n, count, 900 + n)
            want = Cudot.dot_columns(X, Y)               # the host's bits (rows.jl checks them)
            dX, dY = CuArray(X), CuArray(Y)
            @test same_bits(Cudot.dot_columns(dX, dY), want)
            # Queued on the task's stream into a CuVector, read after it.
            r = CUDA.fill(NaN, count)
            @test Cudot.dot_columns!(r, dX, dY) === r
            @test same_bits(Array(r), want)
            # Strided device views: columns backwards, every second column.
            @test same_bits(Cudot.dot_columns(view(dX, :, count:-1:1), view(dY, :, count:-1:1)), reverse(want))
            @test same_bits(Cudot.dot_columns(view(dX, :, 1:2:count), view(dY, :, 1:2:count)), want[1:2:count])
            # One device vector against every column.
            q = CuArray(X[:, 1])
            @test same_bits(Cudot.dot_columns(q, dY), Cudot.dot_columns(X[:, 1], Y))
            rq = CUDA.fill(NaN, count)
            Cudot.dot_columns!(rq, q, dY)
            @test same_bits(Array(rq), Cudot.dot_columns(X[:, 1], Y))
        end
    end
end

@testset "rows: segments of CuVectors, and streams" begin
    with_cuda("CUDA.jl segments") do
        T8 = Cudot.TILE_ELEMENTS
        offsets = [1, 1, 8, T8 + 8, T8 + 8, 3T8 + 2]
        xs, ys = random_inputs(Float32, Float16, offsets[end] - 1, 61)
        want = Cudot.dot_segments(xs, ys, offsets)
        dx, dy = CuArray(xs), CuArray(ys)
        @test same_bits(Cudot.dot_segments(dx, dy, offsets), want)
        s = CuStream()
        r = CUDA.fill(NaN, length(want))
        Cudot.dot_segments!(r, dx, dy, offsets; stream=s)
        CUDA.synchronize(s)
        @test same_bits(Array(r), want)
        @test same_bits(Cudot.dot_segments(dx, dy, offsets; stream=CUDA.per_thread_stream()), want)
    end
end

@testset "exact rows: CuMatrix columns and CuVector segments, $Tx × $Ty" for (Tx, Ty) in GPU_PAIRS
    with_cuda("CUDA.jl exact rows") do
        n, count = 8193, 5
        X, Y = random_matrices(Tx, Ty, n, count, 950)
        want = Cudot.dot_columns(X, Y; exact=true)       # the host's bits (rows_exact.jl checks them)
        dX, dY = CuArray(X), CuArray(Y)
        @test same_bits(Cudot.dot_columns(dX, dY; exact=true), want)
        r = CUDA.fill(NaN, count)
        Cudot.dot_columns!(r, dX, dY; exact=true)
        @test same_bits(Array(r), want)
        q = CuArray(X[:, 1])
        @test same_bits(Cudot.dot_columns(q, dY; exact=true), Cudot.dot_columns(X[:, 1], Y; exact=true))
        offsets = [1, 1, 8, n + 8, n + 8, count * n + 1]
        xs, ys = vec(X), vec(Y)
        wants = Cudot.dot_segments(xs, ys, offsets; exact=true)
        @test same_bits(Cudot.dot_segments(CuArray(xs), CuArray(ys), offsets; exact=true), wants)
        rs = CUDA.fill(NaN, length(wants))
        Cudot.dot_segments!(rs, CuArray(xs), CuArray(ys), offsets; exact=true)
        @test same_bits(Array(rs), wants)
    end
end

@testset "rows: CUDA.jl errors" begin
    with_cuda("CUDA.jl rows errors") do
        dX = CUDA.ones(Float32, 100, 4)
        # The binding's checks: results of the wrong length, operands of different sizes.
        @test thrown(() -> Cudot.dot_columns!(CUDA.zeros(Float64, 3), dX, dX)).status == 1
        @test thrown(() -> Cudot.dot_columns(dX, CUDA.ones(Float32, 99, 4))).status == 1
        # The library's: results in pageable host memory the GPU cannot be given to write.
        r = fill(NaN, 4)
        e = thrown(() -> Cudot.dot_columns!(r, dX, dX))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && !isempty(e.msg)
        CUDA.synchronize()
        @test all(isnan, r)
        @test Cudot.dot_columns(dX, dX) == fill(100.0, 4)
    end
end
