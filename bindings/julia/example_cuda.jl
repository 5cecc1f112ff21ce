# Dots on CUDA.jl arrays with the Julia binding of cudot (the CUDA.jl extension, Julia 1.9+):
#
#     CUDOT_LIBRARY=$PWD/build/libcudot.so.1 julia --project=ENV example_cuda.jl
#
# with an environment ENV that has both Cudot (Pkg.develop(path="bindings/julia")) and CUDA.
# (Not run yet: no Julia runtime was available where this was written.)

using CUDA
using Cudot

n = 10_000_000
dx = CUDA.rand(Float32, n)                     # device memory, filled on the task's stream
dy = CuArray(Float16.(rand(n)))

# Blocking: queued on the task's stream (CUDA.stream()) after the kernels that filled dx and dy,
# computed on their GPU in place (no copy), the result returned on the host.
r = Cudot.dot_arrays(dx, dy)
println("dot of device arrays: ", r)

# The same bits as the CPU computes from host copies of the same values.
println("same as the host's: ", r === Cudot.dot_arrays(Array(dx), Array(dy)))

# Strided device views: every third element, and y backwards.
println("strided: ", Cudot.dot_arrays(view(dx, 1:3:n), view(dy, n:-3:1)))

# Async: queued, returns at once; the result lands in a one-element CuVector in stream order.
# Several dots can fill the slots of one vector and be read with a single copy.
results = CUDA.zeros(Float64, 3)
Cudot.dot_arrays!(view(results, 1:1), dx, dy)
Cudot.dot_arrays!(view(results, 2:2), dx, dx)
Cudot.dot_arrays!(view(results, 3:3), dy, dy)
println("async results: ", Array(results))    # Array() waits for the task's stream

# On a stream of its own.
s = CuStream()
own = CUDA.zeros(Float64, 1)
Cudot.dot_arrays!(own, dx, dy; stream=s)
CUDA.synchronize(s)
println("on its own stream: ", Array(own)[1] === r)

# Host memory registered once (page-locked, mapped for the GPU): from 2^20 elements on the GPU
# reads it in place over the bus; the result can go to the device.
hx = rand(Float32, n)
Cudot.register_host(hx) do hx
    dev = CUDA.zeros(Float64, 1)
    Cudot.dot_arrays!(dev, hx, dx)            # a registered host x with a device y
    println("registered host x device: ", Array(dev)[1])
end
