"""Tile partials (library 1.2): a vector split over several contexts, each computing the partials of its
tiles, joined in tile order, gives the same bits as one context holding the whole vector. This is what a
distributed dot (e.g. over mpi4py) does, with the processes replaced by contexts in one process."""
import numpy as np
import pytest

import cudot
from support import GPU_MEMORIES, bits, gpu_context_or_skip, put, random_values

T = 8192  # CUDOT_TILE_ELEMENTS
N = 5 * T + 1234  # six tiles, the last one short
CUTS = [0, 2 * T, 3 * T, N]  # three pieces, each starting on a tile boundary; the last one ends short
PAIRS = [("f32", "f32"), ("f64", "f64"), ("f16", "f16"), ("bf16", "bf16"), ("i8", "i8"), ("u8", "bool"),
         ("f16", "bool"), ("f64", "f32"), ("bf16", "i8")]


def whole_and_values(xt, yt, memory="host"):
    rng = np.random.default_rng(len(xt) * 31 + len(yt))
    x, y = random_values(xt, N, rng), random_values(yt, N, rng)
    if xt not in ("i8", "u8", "bool"):  # large and small terms: another summation order shows in the bits
        x[::97] = (x[::97] * 1e4).clip(-6e4, 6e4)  # still finite in f16
    whole = cudot.Context(N, xt, memory=memory, y_dtype=yt)
    put(whole.x, xt, x)
    put(whole.y, yt, y)
    return whole, x, y


def test_constants():
    assert (cudot.TILE_ELEMENTS, cudot.PARTIAL_BYTES) == (8192, 16)


@pytest.mark.parametrize("xt, yt", PAIRS)
def test_split_over_contexts_gives_the_same_bits_as_one_context(xt, yt):
    whole, x, y = whole_and_values(xt, yt)
    with whole:
        pieces = []
        for lo, hi in zip(CUTS, CUTS[1:]):
            with cudot.Context(hi - lo, xt, memory="host", y_dtype=yt) as part:
                put(part.x, xt, x[lo:hi])
                put(part.y, yt, y[lo:hi])
                p = part.tile_partials()
                assert p.dtype == np.uint8 and p.shape == (-(-(hi - lo) // T) * 16,)
                pieces.append(p)
        joined = cudot.join_partials(np.concatenate(pieces), xt, yt)
        want = whole.dot()
        assert isinstance(joined, float) and bits(joined) == bits(want)
        # The whole context's own partials, in one call or piece by piece, join to the same bits.
        assert bits(cudot.join_partials(whole.tile_partials(), xt, yt)) == bits(want)
        by_range = [whole.tile_partials(lo, hi - lo) for lo, hi in zip(CUTS, CUTS[1:])]
        assert bits(cudot.join_partials(b"".join(p.tobytes() for p in by_range), xt, yt)) == bits(want)


def test_join_accepts_bytes_like_objects_and_defaults_y_to_x():
    with cudot.Context(T + 5, "f32", memory="host") as ctx:
        ctx.x[:], ctx.y[:] = 0.5, 3
        p = ctx.tile_partials()
        want = ctx.dot()
    for form in (p, p.tobytes(), bytearray(p.tobytes()), memoryview(p.tobytes()), p.reshape(-1, 16)):
        assert cudot.join_partials(form, "f32") == want == 0.5 * 3 * (T + 5)


def test_empty_ranges():
    with cudot.Context(10, "f64", memory="host") as ctx:
        assert ctx.tile_partials(10, 0).size == 0 and ctx.tile_partials(3, 0).size == 0
    assert bits(cudot.join_partials(b"", "f64")) == bits(0.0)
    with cudot.Context(0, "f32", memory="host") as empty:
        assert empty.tile_partials().size == 0


def test_range_beyond_capacity_is_refused():
    with cudot.Context(100, "f32", memory="host") as ctx:
        for first, n in ((0, 101), (99, 2), (101, 0), (2 ** 63, 1)):
            with pytest.raises(cudot.InvalidArgumentError, match="capacity"):
                ctx.tile_partials(first, n)
        with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
            ctx.tile_partials(101)
        with pytest.raises(ValueError):
            ctx.tile_partials(-1)
        with pytest.raises(TypeError):
            ctx.tile_partials(0.5)
        assert ctx.tile_partials(99).size == cudot.PARTIAL_BYTES  # the context is still fine


def test_wrong_partials_are_refused():
    with pytest.raises(cudot.InvalidArgumentError, match="multiple of 16"):
        cudot.join_partials(b"\0" * 17, "f32")
    with pytest.raises(TypeError, match="uint8"):
        cudot.join_partials(np.zeros(2, np.float64), "f32")  # bytes of doubles are not partials
    with pytest.raises(TypeError, match="element type"):
        cudot.join_partials(b"", "int32")
    with pytest.raises(TypeError):
        cudot.join_partials([0] * 16, "f32")


def test_tile_partials_on_a_closed_context():
    ctx = cudot.Context(8, memory="host")
    ctx.close()
    with pytest.raises(ValueError, match="closed"):
        ctx.tile_partials()


@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_partials_match_host(memory):
    host, x, y = whole_and_values("f32", "bf16")
    with host, gpu_context_or_skip(N, "f32", memory, y_dtype="bf16") as gpu:
        put(gpu.x, "f32", x)
        put(gpu.y, "bf16", y)
        for first, n in ((0, N), (T, N - T), (2 * T, 3)):
            got = cudot.join_partials(gpu.tile_partials(first, n), "f32", "bf16")
            assert bits(got) == bits(cudot.join_partials(host.tile_partials(first, n), "f32", "bf16"))
