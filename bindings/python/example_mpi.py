"""A distributed dot with mpi4py: each process holds a tile-aligned piece of x and y in its own context
and sends the partials of its tiles to rank 0, which joins them in tile order. The result is the same
bits as one context holding the whole vector, which rank 0 checks here.

    mpirun -n 3 python3 example_mpi.py
"""
import numpy as np
from mpi4py import MPI

import cudot

comm = MPI.COMM_WORLD
n = 1_000_003  # the whole vector
tiles = -(-n // cudot.TILE_ELEMENTS)
# Rank r holds tiles [t0, t1): every piece starts on a tile boundary; only the last one ends short.
t0, t1 = (tiles * r // comm.size for r in (comm.rank, comm.rank + 1))
first, end = t0 * cudot.TILE_ELEMENTS, min(t1 * cudot.TILE_ELEMENTS, n)


def values(lo, hi):
    """Elements [lo, hi) of the global x and y (each rank makes its own piece)."""
    i = np.arange(lo, hi)
    return np.sin(i).astype(np.float32), np.cos(0.5 * i).astype(np.float32)


with cudot.Context(end - first, "f32") as ctx:
    ctx.x[:], ctx.y[:] = values(first, end)
    mine = ctx.tile_partials()  # uint8, PARTIAL_BYTES per tile
pieces = comm.gather(mine, root=0)  # in rank order, which is tile order
if comm.rank == 0:
    result = cudot.join_partials(np.concatenate(pieces), "f32")
    with cudot.Context(n, "f32") as whole:
        whole.x[:], whole.y[:] = values(0, n)
        print(f"{comm.size} ranks: {result!r}; one context: {whole.dot()!r}; same bits: {result == whole.dot()}")
