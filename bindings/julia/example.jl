# Short example of the Julia binding of cudot.
#
#     CUDOT_LIBRARY=$PWD/build/libcudot.so.1 julia --project=bindings/julia bindings/julia/example.jl
#
# (Not run yet: no Julia runtime was available where this was written.)

using Cudot

n = 1_000_000

# The do-block form closes the context (and frees its buffers) when the block ends.
r = CudotContext(n; eltype=Float32) do ctx
    println("context: ", ctx, ", memory chosen by :auto: ", memory(ctx))
    x, y = inputs(ctx)              # views of the library's own buffers: fill them in place
    for i in 1:n
        x[i] = 1.0f0 / i
        y[i] = i
    end
    r1 = dot(ctx)                   # == n, exactly (every product is 1)
    y .= 2                          # refill and compute again: same buffers, new data
    (r1, dot(ctx), dot(ctx, 10))    # the last one reads only the first 10 elements
end
println("dot products: ", r)

# Without the do-block: close explicitly. Errors are CudotError exceptions.
ctx = CudotContext(10; eltype=Float64, memory=:host)
try
    dot(ctx, 11)                    # beyond the capacity
catch err
    err isa CudotError || rethrow()
    println("expected error: ", sprint(showerror, err))
finally
    close(ctx)
end
