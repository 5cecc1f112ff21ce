#!/usr/bin/python3
"""make_corpus.py - writes the seed corpus of cudot_fuzz (tests/fuzz/corpus/), deterministically.

Each seed is a program in the format described at the top of cudot_fuzz.cpp. The seeds cover every
operation, all 36 pairs of element types, special values, tile boundaries, huge and invalid sizes,
invalid configs, NULL pointers, several open contexts, clones and concurrent dots. Every seed is meant
to pass on a correct library; inputs that expose bugs belong in tests/fuzz/regressions/ instead.

    /usr/bin/python3 tests/fuzz/make_corpus.py            # rewrites corpus/, adds its inputs to regressions/
    /usr/bin/python3 tests/fuzz/make_corpus.py --check    # fails if the committed files differ

Python 3 standard library only.
"""
import hashlib
import os
import struct
import sys

# Operations (cudot_fuzz.cpp: LLVMFuzzerTestOneInput).
INIT, DEINIT, FILL, DOT, DOT_N, QUERY, HOOKS, CLONE, MISC, CONCURRENT, KERNELS, ARRAYS = range(12)
# Element types and strategies (cudot.h).
F32, F64, F16, BF16, I8, U8 = 1, 2, 3, 4, 5, 6
AUTO, PINNED, MAPPED, MANAGED, HOST = 0, 1, 2, 3, 4
SIZE = {F32: 4, F64: 8, F16: 2, BF16: 2, I8: 1, U8: 1}
# Value codes of FILL POINTS/CONST: indexes into the per-type tables of cudot_fuzz.cpp.
V_ZERO, V_MZERO, V_ONE, V_MONE, V_TWO, V_HALF, V_THIRD, V_MAX, V_MMAX, V_MINNORM, V_MINSUB, V_MMINSUB = range(12)
V_MAXSUB, V_INF, V_MINF, V_NAN, V_MNAN, V_SNAN = 12, 13, 14, 15, 16, 17
V_RAW = 0xE0  # followed by the element's bytes
# PRNG classes (random_bits): raw bits, small ints, finite near 1, finite wide, +-1, ones and big values.
C_RAW, C_SMALL, C_NEAR1, C_WIDE, C_PM1, C_CANCEL = range(6)
# Bytes of the harness's tables: kBadDtype, kBadMemory (0xF0 + index), kDevice (0xC0 + index).
BAD_DTYPE = 0xF0
BAD_MEMORY = 0xF0
DEV = {1: 0xC0, 2: 0xC1, 7: 0xC2, 255: 0xC3, 'max': 0xC4, -1: 0xC5, -2: 0xC6, -3: 0xC7, 'min': 0xC8}
# cudot_init n modes.
N_SMALL, N_ANY, N_TILE, N_ZERO, N_HUGE_TABLE, N_HUGE_RANDOM = 0, 2, 3, 4, 5, 6
HUGE_TABLE_LEN = 18


def u8(v): return struct.pack('<B', v & 0xff)
def u16(v): return struct.pack('<H', v & 0xffff)
def u32(v): return struct.pack('<I', v & 0xffffffff)
def u64(v): return struct.pack('<Q', v & 0xffffffffffffffff)


def init(slot, n=0, dtype=F32, ydtype=0, memory=AUTO, device=0, nmode=N_ANY, narg=None, sizemode=0, sizearg=0,
         flags=0, tailpos=0, tailbyte=0, fillclass=C_NEAR1, seed=1):
    """cudot_init into a slot. n is used with nmode N_ANY (n <= 65600); narg overrides it."""
    if narg is None:
        narg = n
    dev = DEV[device] if device in DEV else 0
    return (u8(INIT) + u8(slot) + u8(flags) + u8(nmode) + u64(narg) + u8(sizemode) + u16(sizearg) + u8(dtype)
            + u8(ydtype) + u8(memory) + u8(dev) + u16(tailpos) + u8(tailbyte) + u8(fillclass) + u32(seed))


def tile_n(k, delta):
    """narg for nmode N_TILE: k * 8192 + delta, delta in -3..3."""
    return k + ((delta + 3) << 8)


def deinit(slot): return u8(DEINIT) + u8(slot)
def dot(slot, flags=0):
    """flags: 1 result NULL, 2 ctx NULL, 4 also dot_n(capacity), 8 under the MXCSR mode of bits 4..7."""
    return u8(DOT) + u8(slot) + u8(flags)
def dot_n(slot, mode, arg=0, flags=0): return u8(DOT_N) + u8(slot) + u8(flags) + u8(mode) + u16(arg)
def query(slot, which, flags=0): return u8(QUERY) + u8(slot) + u8(which) + u8(flags)
def hooks(slot, threads, parallel): return u8(HOOKS) + u8(slot) + u8(threads) + u8(parallel)
def clone(a, b, host=True, k=0): return u8(CLONE) + u8(a) + u8(b) + u8(1 if host else 0) + u16(k)
def misc(kind, value=0): return u8(MISC) + u8(kind) + u32(value)
def concurrent(a, b): return u8(CONCURRENT) + u8(a) + u8(b)
def kernels(slot, mode, arg=0): return u8(KERNELS) + u8(slot) + u8(mode) + u16(arg)
def arrays(slot, mode, arg=0, xcode=0, ycode=0, flags=0):
    return u8(ARRAYS) + u8(slot) + u8(flags) + u8(mode) + u16(arg) + u8(xcode) + u8(ycode)


def fill_prng(slot, cls, seed, which=3): return u8(FILL) + u8(slot) + u8(which) + u8(3) + u8(cls) + u32(seed)
def fill_mirror(slot): return u8(FILL) + u8(slot) + u8(3) + u8(4)


def fill_const(slot, code, which=3, raw=b''):
    return u8(FILL) + u8(slot) + u8(which) + u8(2) + u8(code) + raw


def fill_raw(slot, start, count, pattern, which=3):
    assert 1 <= len(pattern) <= 32
    return u8(FILL) + u8(slot) + u8(which) + u8(0) + u16(start) + u16(count) + u8(len(pattern) - 1) + pattern


def fill_points(slot, points, which=3):
    """points: list of (index, code[, raw bytes]); at most 16."""
    assert 1 <= len(points) <= 16
    out = u8(FILL) + u8(slot) + u8(which) + u8(1) + u8(len(points) - 1)
    for p in points:
        out += u16(p[0]) + u8(p[1]) + (p[2] if len(p) > 2 else b'')
    return out


# DOT_N modes (decode_dot_n): prefix, capacity, beyond, SIZE_MAX - a, zero, tile boundary, 2^a, cap - a.
DN_PREFIX, DN_CAP, DN_BEYOND, DN_SIZE_MAX, DN_ZERO, DN_TILE, DN_POW2, DN_CAP_MINUS = range(8)
# QUERY which: inputs, memory, dtypes, capacity, last_error; flags bit0/bit1 NULL outs, 0x80 NULL ctx.
Q_INPUTS, Q_MEMORY, Q_DTYPES, Q_CAPACITY, Q_LAST_ERROR = range(5)
Q_NULL_CTX = 0x80


def seeds():
    s = {}
    types = [F32, F64, F16, BF16, I8, U8]

    # The basics: one context, every getter, a few dots.
    s['basic_f32'] = (init(0, 1000, F32, fillclass=C_NEAR1, seed=7) + dot(0) + dot(0, 4) + dot_n(0, DN_PREFIX, 500)
                      + query(0, Q_INPUTS) + query(0, Q_MEMORY) + query(0, Q_DTYPES) + query(0, Q_CAPACITY)
                      + query(0, Q_LAST_ERROR) + query(0, Q_INPUTS, 3) + query(0, Q_MEMORY, 1)
                      + query(0, Q_DTYPES, 2) + deinit(0))
    s['defaults_null_config'] = init(1, 333, sizemode=11, seed=3) + dot(1) + query(1, Q_DTYPES) + query(1, Q_MEMORY)
    s['v1_config_size16'] = init(2, 100, F64, ydtype=F16, sizemode=4, seed=5) + query(2, Q_DTYPES) + dot(2)

    # All 36 pairs: one file per x type, every y type, on random data of a few sizes.
    for i, tx in enumerate(types):
        prog = b''
        for j, ty in enumerate(types):
            slot = j % 4
            n = [1, 7, 1000, 4099, 8193, 20000][(i + j) % 6]
            prog += init(slot, n, tx, ty, memory=HOST if j % 2 else AUTO, fillclass=[C_NEAR1, C_WIDE, C_SMALL][j % 3],
                         seed=100 * i + j)
            prog += dot(slot) + dot_n(slot, DN_PREFIX, n // 2 + 1) + kernels(slot, DN_CAP)
        s['pairs_x%d' % tx] = prog

    # Special values: NaN, Inf * 0, +Inf with -Inf, a lone Inf, subnormals, overflowing products.
    for t in [F32, F64, F16, BF16]:
        prog = init(0, 64, t, fillclass=C_PM1, seed=t)
        prog += fill_const(0, V_ONE) + dot(0)
        prog += fill_points(0, [(5, V_INF)], which=1) + dot(0)             # lone +Inf
        prog += fill_points(0, [(9, V_MINF)], which=1) + dot(0)            # +Inf and -Inf: NaN
        prog += fill_const(0, V_ONE) + fill_points(0, [(3, V_NAN)], which=2) + dot(0)  # NaN
        prog += fill_const(0, V_ONE) + fill_points(0, [(3, V_INF)], which=1) + fill_points(0, [(3, V_ZERO)], which=2)
        prog += dot(0)                                                      # Inf * 0: NaN
        prog += fill_const(0, V_MINSUB) + dot(0) + fill_const(0, V_MAX) + dot(0) + dot_n(0, DN_PREFIX, 1)
        prog += fill_const(0, V_MZERO, which=1) + dot(0)                    # -0 products: +0
        prog += fill_points(0, [(0, V_SNAN), (1, V_MNAN), (2, V_MMINSUB), (3, V_MAXSUB)]) + dot(0) + kernels(0, DN_CAP)
        # Full tiles (the vector loops) with specials in them, compared across kernel copies.
        prog += init(1, 8192 * 2 + 5, t, F16 if t != F16 else BF16, memory=HOST, fillclass=C_RAW, seed=77 + t)
        prog += fill_points(1, [(100, V_INF), (8191, V_NAN), (9000, V_ZERO), (9001, V_SNAN)], which=1)
        prog += fill_points(1, [(100, V_ZERO), (8191, V_ONE), (9000, V_INF), (12000, V_MINF)], which=2)
        prog += kernels(1, DN_CAP) + dot(1) + fill_prng(1, C_WIDE, 3) + kernels(1, DN_TILE, 2) + dot(1)
        s['special_%d' % t] = prog
    # Mixed pairs with specials: I8/U8 times F16 Inf, BF16 NaN times U8 zero.
    s['special_mixed'] = (init(0, 50, I8, F16, seed=1) + fill_const(0, V_ONE) + fill_points(0, [(4, V_INF)], which=2)
                          + dot(0) + fill_points(0, [(4, V_ZERO)], which=1) + dot(0)
                          + init(1, 50, BF16, U8, seed=2) + fill_const(1, V_TWO) + fill_points(1, [(7, V_NAN)], which=1)
                          + dot(1) + fill_points(1, [(7, V_ZERO)], which=2) + dot(1))

    # Tile boundaries and the thread pool.
    for t in [F32, F64, BF16, U8]:
        prog = b''
        for k, (tk, d) in enumerate([(1, -1), (1, 0), (1, 1), (2, 0), (5, 3), (8, 0)]):
            slot = k % 4
            prog += init(slot, dtype=t, ydtype=F32 if k == 3 else 0, nmode=N_TILE, narg=tile_n(tk, d),
                         memory=HOST, fillclass=C_NEAR1 if k % 2 else C_WIDE, seed=k)
            prog += hooks(slot, k % 3, k % 2) + dot(slot) + dot_n(slot, DN_TILE, tile_n(1, -3 + k))
            prog += hooks(slot, 1, 1) + dot(slot) + hooks(slot, 0, 0) + dot_n(slot, DN_CAP) + kernels(slot, DN_CAP)
        s['tiles_%d' % t] = prog

    # Cancellation: mirrored halves (exact dot 0), wide exponents, ones with big values; and clones.
    for t, ty in [(F64, 0), (F32, 0), (BF16, F16), (I8, 0), (F64, F32), (F16, I8)]:
        prog = init(0, 20000, t, ty, fillclass=C_WIDE, seed=11) + fill_mirror(0) + dot(0) + dot_n(0, DN_PREFIX, 777)
        prog += fill_prng(0, C_CANCEL, 99) + dot(0) + clone(0, 1, True, 8192) + clone(0, 2, False, 10001)
        prog += fill_prng(0, C_WIDE, 5) + clone(0, 3, True, 1) + dot(1) + dot(2) + dot(3)
        s['cancel_%d_%d' % (t, ty)] = prog
    # Values whose plain double sum loses the 1: 1e16 + 1 - 1e16 across tiles (F64: 1e16 is code 18).
    s['cancel_across_tiles'] = (init(0, 3 * 8192, F64, memory=HOST, seed=1) + fill_const(0, V_ZERO, which=1)
                                + fill_const(0, V_ONE, which=2) + fill_points(0, [(0, 18), (9000, V_ONE), (20000, 19)],
                                                                              which=1) + dot(0) + hooks(0, 2, 1) + dot(0))

    # Huge n: refused without allocating, whatever the types and strategy.
    prog = b''
    for k in range(HUGE_TABLE_LEN):
        prog += init(k % 4, dtype=types[k % 6], ydtype=types[(k + 2) % 6], memory=[AUTO, HOST, PINNED][k % 3],
                     nmode=N_HUGE_TABLE, narg=k)
    s['huge_n_table'] = prog
    s['huge_n_random'] = (init(0, nmode=N_HUGE_RANDOM, narg=0x0123456789abcdef, dtype=U8, memory=HOST)
                          + init(1, nmode=N_HUGE_RANDOM, narg=1, dtype=F64, memory=HOST)
                          + init(2, nmode=N_HUGE_RANDOM, narg=0xffff000000000000, dtype=F16, memory=MANAGED)
                          + init(3, 5, memory=HOST) + dot(3))

    # Invalid configs (each init fails; the successful ones after them use HOST).
    prog = b''
    prog += init(0, 10, sizemode=6, sizearg=0) + init(0, 10, sizemode=6, sizearg=15)        # size < 16
    prog += init(0, 10, sizemode=7, sizearg=5, tailpos=2, tailbyte=1)                          # newer options
    prog += init(0, 10, dtype=BAD_DTYPE + 0) + init(0, 10, dtype=BAD_DTYPE + 7)                # bad dtype
    prog += init(0, 10, ydtype=BAD_DTYPE + 2) + init(0, 10, memory=BAD_MEMORY + 0)              # bad y_dtype, memory
    prog += init(0, 10, memory=BAD_MEMORY + 4) + init(0, 10, memory=PINNED, device=-1)
    prog += init(0, 10, memory=MAPPED, device=-2) + init(0, 10, memory=MANAGED, device=7)
    prog += init(0, 10, memory=PINNED) + init(0, 10, flags=1) + init(0, 10, flags=1, sizemode=11)  # NULL out-pointer
    prog += init(1, 10, memory=HOST, device=-1) + init(2, 10, memory=HOST, device='min') + dot(1) + dot(2)
    s['config_invalid'] = prog
    s['config_sizes'] = (init(0, 9, F16, BF16, memory=HOST, sizemode=5, sizearg=0) + query(0, Q_DTYPES)
                         + init(1, 9, F16, BF16, memory=HOST, sizemode=5, sizearg=2) + query(1, Q_DTYPES)
                         + init(2, 9, I8, U8, memory=HOST, sizemode=7, sizearg=40) + dot(2)
                         + init(3, 9, memory=HOST, sizemode=8) + dot(3)
                         + init(0, 9, memory=HOST, sizemode=9, sizearg=100) + init(1, 9, memory=HOST, sizemode=10,
                                                                                   sizearg=8192)
                         + init(2, 9, memory=HOST, sizemode=7, sizearg=63, tailpos=62, tailbyte=0x80))
    s['auto_devices'] = (init(0, 5, memory=AUTO, device=1) + init(1, 5, memory=AUTO, device='max') + dot(0) + dot(1)
                         + init(2, 5, memory=AUTO, device=-1) + init(3, 5, memory=AUTO, device=-3))

    # NULL pointers and bad sizes on live contexts (no cudot_get_capacity(ctx, NULL) here: see regressions/).
    s['null_and_beyond'] = (init(0, 100, F32, seed=4) + dot(0, 1) + dot(0, 2) + dot(3) + dot_n(3, DN_PREFIX, 3)
                            + dot_n(0, DN_BEYOND, 0) + dot_n(0, DN_BEYOND, 200) + dot_n(0, DN_SIZE_MAX, 0)
                            + dot_n(0, DN_SIZE_MAX, 9) + dot_n(0, DN_POW2, 63) + dot_n(0, DN_ZERO) + dot_n(0, DN_CAP, 0, 1)
                            + query(0, Q_LAST_ERROR) + dot(0) + query(0, Q_LAST_ERROR)
                            + query(1, Q_INPUTS) + query(1, Q_MEMORY) + query(1, Q_DTYPES) + query(1, Q_CAPACITY)
                            + query(1, Q_LAST_ERROR) + query(0, Q_CAPACITY, Q_NULL_CTX) + deinit(1) + misc(2))
    s['empty_contexts'] = (init(0, 0, F64, nmode=N_ZERO) + init(1, 0, U8, I8, nmode=N_ZERO, memory=HOST) + dot(0)
                           + dot(1) + dot_n(0, DN_ZERO) + dot_n(0, DN_BEYOND, 1) + query(0, Q_INPUTS)
                           + clone(0, 2, True, 0) + dot(2))
    s['misc'] = misc(0, 4) + misc(0, 10) + misc(0, 11) + misc(1) + misc(2)

    # Several contexts open at once, interleaved, with concurrent dots.
    s['interleaved'] = (init(0, 3000, F32, F16, seed=1) + init(1, 9000, F64, memory=HOST, seed=2)
                        + init(2, 500, I8, U8, fillclass=C_RAW, seed=3) + init(3, 17, BF16, BF16, seed=4)
                        + dot(0) + dot(1) + fill_prng(2, C_RAW, 8, which=1) + dot(2) + concurrent(0, 1)
                        + concurrent(2, 2) + hooks(1, 1, 1) + concurrent(1, 3) + deinit(0) + dot(1)
                        + init(0, 40000, F16, F16, memory=HOST, fillclass=C_WIDE, seed=5) + concurrent(0, 1)
                        + fill_raw(3, 2, 5, b'\x80\x7f\x00\x3c') + dot(3) + deinit(2) + deinit(2))
    s['raw_bytes'] = (init(0, 256, F32, seed=0, flags=2) + fill_raw(0, 0, 0, bytes(range(1, 33))) + dot(0)
                      + fill_raw(0, 10, 20, b'\xff\xff\xff\x7f', which=2) + dot(0)
                      + fill_points(0, [(1, V_RAW, b'\x00\x00\x80\x7f'), (2, V_THIRD)], which=1) + dot(0))
    # The caller's FP mode (MXCSR: FTZ 0x10, DAZ 0x20, rounding 0x40/0x80/0xC0, with flag 0x08) must not matter.
    prog = b''
    for k, (t, ty) in enumerate([(F32, 0), (F64, 0), (F16, F64), (BF16, F32)]):
        prog += init(k, 9000, t, ty, memory=HOST, fillclass=C_WIDE if t == F32 else C_NEAR1, seed=40 + k)
        prog += fill_points(k, [(1, V_MINSUB), (2, V_MAXSUB), (3, V_MINNORM), (8200, V_MMINSUB)])
        prog += dot(k, 0x08 | 0x10 | 0x20 | 0xC0) + dot(k, 0x08 | 0x40) + dot(k, 0x08 | 0x80 | 0x10) + dot(k)
    for k, t in enumerate([F32, F64, F16]):  # all-subnormal x: DAZ in the library would give 0
        prog += init(k, 100, t, memory=HOST) + fill_const(k, V_MAXSUB, which=1) + fill_const(k, V_HALF, which=2)
        prog += dot(k, 0x08 | 0x10 | 0x20) + dot(k, 0x08 | 0xC0) + dot(k)
    s['caller_fp_env'] = prog
    # The caller's own arrays (cudot_dot_arrays): every stride code and misalignment, partials, bad requests.
    for i, tx in enumerate(types):
        prog = b''
        for j, ty in enumerate(types):
            slot = j % 4
            n = [1, 7, 1000, 4099, 8193, 20000][(i + j) % 6]
            prog += init(slot, n, tx, ty, memory=HOST, fillclass=[C_NEAR1, C_WIDE, C_PM1][j % 3], seed=300 + 10 * i + j)
            prog += arrays(slot, DN_CAP, 0, (i * 6 + j) % 48, (j * 7 + i) % 48) + arrays(slot, DN_PREFIX, n // 3 + 1, 2, 5)
            prog += arrays(slot, DN_CAP, 0, 1, 0, flags=4)
        prog += arrays(0, DN_CAP, 0, 0, 0, flags=1) + arrays(0, DN_CAP, 0, 0, 0, flags=2) + arrays(0, DN_CAP, 0, 0, 0, flags=8)
        s['arrays_x%d' % tx] = prog
    # The same operands as a batch of one row (cudot_dot_rows) and as three segments, also with the
    # arrays request one byte short (rows do not read it), and a bad row.
    prog = b''
    for j, (tx, ty) in enumerate([(F32, F32), (F64, F16), (BF16, I8), (U8, U8)]):
        n = [5, 4099, 8193, 20000][j]
        prog += init(j, n, tx, ty, memory=HOST, fillclass=[C_NEAR1, C_WIDE, C_PM1, C_SMALL][j], seed=700 + j)
        prog += arrays(j, DN_CAP, 0x3101 * (j + 1), (j * 7) % 48, (j * 11 + 3) % 48, flags=16 | 32)
        prog += arrays(j, DN_PREFIX, n // 2 + 1, 1, 6, flags=16 | 32 | 8)
    prog += arrays(0, DN_CAP, 0, 0, 0, flags=16 | 1)
    s['rows'] = prog
    # The exact mode (flags 64): the dot, and one exact partial of it (with a changed copy refused or
    # joined), every stride code, and a bad request.
    prog = b''
    for j, (tx, ty) in enumerate([(F32, F32), (F64, F64), (F16, F64), (I8, BF16)]):
        n = [7, 4099, 8193, 20000][j]
        prog += init(j, n, tx, ty, memory=HOST, fillclass=[C_WIDE, C_WIDE, C_PM1, C_NEAR1][j], seed=800 + j)
        prog += arrays(j, DN_CAP, 0, (j * 7) % 48, (j * 5 + 1) % 48, flags=64)
        prog += arrays(j, DN_CAP, 17 + 300 * j, (j * 11) % 48, (j * 3 + 2) % 48, flags=64 | 4)
        prog += arrays(j, DN_PREFIX, n // 2 + 1, 1, 6, flags=64 | 4)
    prog += arrays(0, DN_CAP, 0, 0, 0, flags=64 | 4 | 1)
    s['exact'] = prog
    s['unfilled'] = init(0, 300, F64, flags=2) + dot(0) + dot(0) + dot_n(0, DN_PREFIX, 100) + hooks(0, 2, 1) + dot(0)
    return s


def regressions():
    """Hand-minimized inputs for the findings of the first fuzzing runs (see regressions/README.md).
    Fuzzer-found crash inputs are added to regressions/ as they are; these are only the readable ones."""
    r = {}
    # A successful AUTO cudot_init (no GPU) erases the message of the last failed cudot_init.
    r['init-error-kept-auto'] = init(0, 10, dtype=BAD_DTYPE + 0) + init(1, 10, memory=AUTO)
    # cudot_get_capacity(ctx, NULL) fails with CUDOT_ERROR_INVALID_ARGUMENT and leaves no message.
    r['capacity-null-message'] = init(0, 10, memory=HOST) + query(0, Q_CAPACITY, 1)
    # cudot_status_string(10) (a value a C caller may pass) loads an invalid enum value: UBSan aborts.
    r['status-string-range'] = misc(0, 14)
    return r


def write_dir(out, named, check, what):
    wanted = {}
    for name, data in sorted(named.items()):
        assert len(data) <= 4096, name
        wanted['%s-%s' % (name, hashlib.sha1(data).hexdigest()[:8])] = data
    if check:
        have = {}
        if os.path.isdir(out):
            have = {f: open(os.path.join(out, f), 'rb').read() for f in os.listdir(out) if f in wanted}
        if have != wanted:
            print('make_corpus.py: %s lacks or differs from what make_corpus.py writes' % out)
            return 1
        return 0
    os.makedirs(out, exist_ok=True)
    if what == 'corpus':  # the corpus is entirely generated; regressions/ also holds fuzzer artifacts
        for f in os.listdir(out):
            if f not in wanted:
                os.remove(os.path.join(out, f))
    for name, data in wanted.items():
        with open(os.path.join(out, name), 'wb') as fh:
            fh.write(data)
    print('make_corpus.py: %d %s inputs in %s' % (len(wanted), what, out))
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    check = '--check' in sys.argv[1:]
    rc = write_dir(os.path.join(here, 'corpus'), seeds(), check, 'corpus')
    rc |= write_dir(os.path.join(here, 'regressions'), regressions(), check, 'regression')
    return rc


if __name__ == '__main__':
    sys.exit(main())
