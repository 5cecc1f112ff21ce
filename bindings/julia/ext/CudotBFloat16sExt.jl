# Cudot's extension for BFloat16s.jl (Julia 1.9+): vectors of BFloat16s.BFloat16 (the bfloat16
# type CUDA.jl uses too) go to Cudot.dot_arrays and its kin as they are, as CUDOT_BF16 operands,
# with no copy. (A context's bfloat16 buffer stays a vector of UInt16 bit patterns, which
# reinterpret(BFloat16, ctx.y) views as BFloat16 values.)
module CudotBFloat16sExt

using Cudot
using BFloat16s: BFloat16

# The same 16 bits as cudot's bfloat16 (the top half of a Float32).
Cudot._array_dtype(::Type{BFloat16}) = Cudot._BF16

end # module CudotBFloat16sExt
