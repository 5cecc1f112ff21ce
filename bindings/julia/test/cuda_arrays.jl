# Tests of Cudot's CUDA.jl extension (ext/CudotCUDAExt.jl): dots of CuArrays read in place on the
# task's stream, bit for bit the :host context's dot. Included by runtests.jl only where CUDA.jl
# can be loaded (it is then loaded already); without a usable GPU every testset here is skipped,
# unless CUDOT_TEST_GPU=1, which makes that a failure.
#
# NOTE: like the rest of these tests, not run yet (no Julia runtime where they were written).

const CUDA_USABLE = CUDA.functional()

# Skips a testset's body without a usable GPU (a failure when one is required).
function with_cuda(body, what)
    if CUDA_USABLE
        body()
    elseif GPU_REQUIRED
        @test CUDA_USABLE
    else
        skip_without_gpu(what)
    end
    return nothing
end

# The device copy of a strided host view made by strided_copy: the same layout (poison in the
# gaps), viewed with the same range, so that the device view has the same stride.
function device_view(v::SubArray)
    return view(CuArray(parent(v)), parentindices(v)[1])
end

# One element read back to the host, after the task's stream has passed everything queued on it.
read_back(r) = Array(r)[1]

@testset "own arrays: CUDA.jl arrays, $Tx × $Ty" for (Tx, Ty) in GPU_PAIRS
    with_cuda("CUDA.jl arrays") do
        @test Base.get_extension(Cudot, :CudotCUDAExt) !== nothing
        for n in (0, 1, 8193, 2^20 + 3)
            xs, ys = random_inputs(Tx, Ty, n, 4711 + n)
            want = host_dot(xs, ys)
            dx, dy = CuArray(xs), CuArray(ys)
            @test Cudot.dot_arrays(dx, dy) === want
            for (sx, sy) in ((-1, 1), (2, -3))
                @test Cudot.dot_arrays(device_view(strided_copy(xs, sx)),
                                       device_view(strided_copy(ys, sy))) === want
            end
            # Async, into a one-element CuVector on the task's stream.
            r = CUDA.fill(NaN, 1)
            @test Cudot.dot_arrays!(r, dx, dy) === r
            @test read_back(r) === want
            # Into one slot of a larger vector.
            slots = CUDA.fill(NaN, 3)
            Cudot.dot_arrays!(view(slots, 2:2), dx, dy)
            got = Array(slots)
            @test got[2] === want && isnan(got[1]) && isnan(got[3])
            # The partials of device arrays are the host's bytes.
            @test Cudot.tile_partials(dx, dy) == Cudot.tile_partials(xs, ys)
        end
    end
end

@testset "own arrays: CUDA.jl streams" begin
    with_cuda("CUDA.jl streams") do
        xs, ys = random_inputs(Float32, Float64, 2^20 + 3, 21)
        want = host_dot(xs, ys)
        dx, dy = CuArray(xs), CuArray(ys)
        # A stream of its own: the dot is queued there, the result read after synchronizing it.
        s = CuStream()
        r = CUDA.fill(NaN, 1)
        Cudot.dot_arrays!(r, dx, dy; stream=s)
        CUDA.synchronize(s)
        @test read_back(r) === want
        @test Cudot.dot_arrays(dx, dy; stream=s) === want
        # CUDA.jl's special streams, and producer streams to wait for.
        for special in (CUDA.default_stream(), CUDA.legacy_stream(), CUDA.per_thread_stream())
            @test Cudot.dot_arrays(dx, dy; stream=special) === want
            @test Cudot.dot_arrays(dx, dy; x_ready=special, y_ready=s) === want
        end
        # Data written by another task, on that task's stream, then read here.
        later = fetch(Threads.@spawn begin
            d = CuArray(ys)       # on the spawned task's own stream
            d .*= 1               # a kernel there too
            d
        end)
        @test Cudot.dot_arrays(dx, later) === want
        # Many tasks, each on its own stream, at once.
        tasks = [Threads.@spawn Cudot.dot_arrays(dx, dy) for _ in 1:8]
        @test all(t -> fetch(t) === want, tasks)
    end
end

@testset "own arrays: CUDA.jl unified memory, registered host memory, mixes" begin
    with_cuda("CUDA.jl memory kinds") do
        n = 2^20 + 3
        xs, ys = random_inputs(Float32, Float16, n, 5)
        want = host_dot(xs, ys)
        ux = cu(xs; unified=true)                  # cu keeps Float32 (it narrows only Float64)
        @test eltype(ux) === Float32
        @test Cudot.dot_arrays(ux, CuArray(ys)) === want
        # Registered host memory: read in place by the GPU; device result; a device x with a
        # page-locked host y.
        hx, hy = copy(xs), copy(ys)
        Cudot.register_host(hx) do _
            Cudot.register_host(hy) do _
                @test Cudot.dot_arrays(hx, hy) === want
                r = CUDA.fill(NaN, 1)
                Cudot.dot_arrays!(r, hx, hy)
                @test read_back(r) === want
                @test Cudot.dot_arrays(CuArray(xs), hy) === want
                # A registered one-element host vector receives an async result.
                res = [NaN]
                Cudot.register_host(res) do _
                    Cudot.dot_arrays!(res, CuArray(xs), CuArray(ys))
                    CUDA.synchronize()
                    @test res[1] === want
                end
            end
        end
    end
end

@testset "own arrays: CUDA.jl BFloat16" begin
    with_cuda("CUDA.jl BFloat16") do
        ext = Base.get_extension(Cudot, :CudotBFloat16sExt)
        if ext === nothing
            @info "CudotBFloat16sExt not loaded: skipping CuArray{BFloat16}"
            @test_skip false
        else
            xs, ys = random_inputs(Float32, UInt16, 9000, 17)
            dy = CuArray(collect(reinterpret(ext.BFloat16, ys)))
            @test Cudot.dot_arrays(CuArray(xs), dy) === host_dot(xs, ys)
        end
    end
end

@testset "own arrays: CUDA.jl errors" begin
    with_cuda("CUDA.jl errors") do
        dx, dy = CUDA.ones(Float32, 100), CUDA.ones(Float32, 100)
        # The binding's checks.
        e = thrown(() -> Cudot.dot_arrays!(CUDA.zeros(Float64, 2), dx, dy))
        @test e isa CudotError && e.status == 1 && occursin("exactly one", e.msg)
        @test thrown(() -> Cudot.dot_arrays(dx, CUDA.ones(Float32, 99))).status == 1
        @test thrown(() -> Cudot.dot_arrays(dx, CUDA.ones(Int32, 100))).status == 1
        # The library's: a result in pageable host memory the GPU cannot be given to write.
        r = [NaN]
        e = thrown(() -> Cudot.dot_arrays!(r, dx, dy))
        @test e isa CudotError && e.status == Cudot.ERROR_INVALID_ARGUMENT && !isempty(e.msg)
        CUDA.synchronize()
        @test isnan(r[1])
        # Device memory is not host memory to register.
        @test thrown(() -> Cudot.register_host(dx)).status == Cudot.ERROR_INVALID_ARGUMENT
        @test Cudot.dot_arrays(dx, dy) === 100.0
    end
end
