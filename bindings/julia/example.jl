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
    r1 = dot(ctx)                   # close to n (each product is 1 up to the rounding of 1/i)
    y .= 2                          # refill and compute again: same buffers, new data
    (r1, dot(ctx), dot(ctx, 10))    # the last one reads only the first 10 elements
end
println("dot products: ", r)

# Mixed element types: Float32 values and a Bool mask (one byte per element, 0 or 1).
masked = CudotContext(n; eltype=Float32, y_eltype=Bool) do ctx
    x, mask = inputs(ctx)           # CudotVector{Float32}, CudotVector{Bool}
    x .= 0.5f0
    mask .= iseven.(1:n)            # a Bool buffer accepts only true/false (0/1)
    println("element types: ", eltypes(ctx), ", in C: ", Cudot.dtypes(ctx))
    dot(ctx)                        # the sum of x where mask is true: n/4 here
end
println("masked sum: ", masked)

# Small integers: the sum is exact (64-bit integer arithmetic), returned as a Float64.
exact = CudotContext(n; eltype=Int8, y_eltype=UInt8, memory=:host) do ctx
    x, y = inputs(ctx)
    x .= -128
    y .= 0xff
    dot(ctx)                        # -128 * 255 * n, exactly
end
println("Int8 x UInt8: ", exact, " == ", -128 * 255 * n)

# bfloat16 lives in UInt16 buffers as bit patterns: convert with Cudot.bf16_bits / bf16_value.
# (With BFloat16s.jl, reinterpret(BFloat16, y) views the same buffer as BFloat16 values.)
half = CudotContext(4; eltype=Float16, y_eltype=UInt16, memory=:host) do ctx
    x, y = inputs(ctx)
    x .= Float16[1, 2, 3, 4]
    y .= Cudot.bf16_bits.([0.5, 0.25, 0.125, 0.0625])   # not `y .= 1`: that stores the pattern 0x0001
    println("y as bfloat16 values: ", Cudot.bf16_value.(y))
    dot(ctx)                        # 0.5 + 0.5 + 0.375 + 0.25 = 1.625
end
println("Float16 x bfloat16: ", half)

# The views are the context's buffers, also reachable as ctx.x and ctx.y. dot of the two views is the
# library's dot (never LinearAlgebra's generic sum, which would wrap around in Int8 here).
CudotContext(1000; eltype=Int8, memory=:host) do ctx
    ctx.x .= 100
    ctx.y .= 100
    println("dot(ctx.x, ctx.y) = ", dot(ctx.x, ctx.y), " == dot(ctx) = ", dot(ctx))   # 1.0e7
    x, y = inputs(ctx)
    println("first 10: ", dot(view(x, 1:10), view(y, 1:10)), " == ", dot(ctx, 10))
end

# Partials: a vector cut at a tile boundary, each piece in a context of its own (as on two MPI
# ranks), joins to exactly the bits of one context holding it all. first is 1-based.
T = Cudot.TILE_ELEMENTS
vals = Float32[sin(i) for i in 1:3T+5]
whole = CudotContext(length(vals); eltype=Float32, memory=:host) do ctx
    x, y = inputs(ctx)
    copyto!(x, vals)
    fill!(y, 1)
    dot(ctx)
end
parts = UInt8[]
for r in (1:T, T+1:length(vals))                 # the second piece ends in a short tile
    CudotContext(length(r); eltype=Float32, memory=:host) do piece
        x, y = inputs(piece)
        copyto!(x, vals[r])
        fill!(y, 1)
        append!(parts, Cudot.tile_partials(piece))  # 16 bytes per tile
    end
end
println("joined: ", Cudot.join_partials(Float32, Float32, parts), " == whole: ", whole)

# Dots on your own vectors (cudot 1.7): no context and no copy. Each vector goes to the library as
# the address of its element 1 and its stride; the bits are those of a :host context holding the
# same values.
a = Float32[sin(i) for i in 1:n]
b = Float64[cos(i) for i in 1:n]
println("own arrays: ", Cudot.dot_arrays(a, b))
# Strided and reversed views are read in place too: every second element of a, and b backwards.
# (For view(b, n:-2:2), pointer() is its element 1, b[n], the last in memory: what cudot takes.)
println("strided:    ", Cudot.dot_arrays(view(a, 1:2:n), view(b, n:-2:2)))
mask = [isodd(i) for i in 1:n]                     # Vector{Bool}: one byte per element
println("masked:     ", Cudot.dot_arrays(a, mask))
# Partials of your own vectors join like a context's.
println("joined:     ", Cudot.join_partials(Float32, Float64, Cudot.tile_partials(a, b)))

# Exact rows (cudot 1.14): one query against each column of a table, each dot rounded once. The
# first column's naive sum loses every 1; the correctly rounded dot is 103.
n_rows = 301
col = Float32[]
for _ in 1:100
    append!(col, (1f16, 1f0, -1f16))
end
push!(col, 3f0)
table = hcat(col, fill(0.5f0, n_rows))          # two columns: the triples, then 0.5s
q = ones(Float32, n_rows)
println("exact rows: ", Cudot.dot_columns(q, table; exact=true), " (canonical: ", Cudot.dot_columns(q, table), ")")

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
