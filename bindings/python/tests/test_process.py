"""cudot in a Python process that forks (multiprocessing's default on Linux) and that exits with
contexts still open: nothing may hang, crash or give a different number."""
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import cudot
from support import GPU_MEMORIES, gpu_context_or_skip

N = 1 << 21  # 16 MiB of f32 x and y: the HOST dot shares the work with the library's thread pool

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this system"),
              # Python 3.12 warns about fork() in a threaded process: the very case tested here.
              pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")]


def _fill(ctx):
    ctx.x[:] = (np.arange(ctx.x.size) % 9 - 4).astype(np.float32)
    ctx.y[:] = (np.arange(ctx.y.size) % 4 * 0.25).astype(np.float32)


def _want():
    i = np.arange(N)
    return float(np.dot((i % 9 - 4).astype(np.float64), (i % 4 * 0.25).astype(np.float64)))


_inherited = None  # the parent's context, as the forked children see it


def _child_task(_):
    mine = cudot.Context(N, memory="host")
    _fill(mine)
    automatic = cudot.Context(N)  # AUTO: the CPU here, or a GPU the child can use
    _fill(automatic)
    try:
        return _inherited.dot(), mine.dot(), automatic.dot()
    finally:
        mine.close()
        automatic.close()


def test_forked_children_use_host_contexts_while_the_parent_is_busy():
    global _inherited
    _inherited = cudot.Context(N, memory="host")
    _fill(_inherited)
    want = _inherited.dot()
    assert want == _want()
    stop = threading.Event()
    seen = []

    def busy():  # the parent keeps dotting, so children are forked in the middle of dots
        while not stop.is_set():
            seen.append(_inherited.dot())

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map_async(_child_task, range(8)).get(timeout=60)
    finally:
        stop.set()
        worker.join()
    assert all(r == (want, want, want) for r in results)
    assert seen and all(v == want for v in seen)
    _inherited.close()


def _gpu_child(_):
    try:
        _inherited.dot()
    except cudot.CudotError as e:
        return int(e.status), str(e)
    return 0, "the inherited GPU context computed a dot"


@pytest.mark.parametrize("memory", GPU_MEMORIES)
def test_gpu_context_inherited_through_fork_is_refused(memory):
    global _inherited
    _inherited = gpu_context_or_skip(1000, np.float32, memory)
    _inherited.x[:] = 1
    _inherited.y[:] = 2
    assert _inherited.dot() == 2000
    with multiprocessing.get_context("fork").Pool(1) as pool:
        status, message = pool.map_async(_gpu_child, [0]).get(timeout=60)[0]
    assert status == cudot.Status.UNSUPPORTED
    assert "fork" in message
    assert _inherited.dot() == 2000  # the parent's context is unaffected
    _inherited.close()


LATE = r"""
import atexit, gc
import numpy as np
import cudot

N = 1 << 21
def fill(ctx):
    ctx.x[:] = (np.arange(N) % 9 - 4).astype(np.float32)
    ctx.y[:] = (np.arange(N) % 4 * 0.25).astype(np.float32)

early = cudot.Context(N, memory="host"); fill(early); want = early.dot()

def at_exit():
    ctx = cudot.Context(N, memory="host"); fill(ctx)
    assert ctx.dot() == want and early.dot() == want
    ctx.close(); early.close()
    print("atexit ok", flush=True)
atexit.register(at_exit)

class Cycle:  # only the collector at shutdown frees it, with its context still open
    pass
c = Cycle(); c.self = c; c.ctx = cudot.Context(N, memory="host"); fill(c.ctx); c.ctx.dot()
gc.disable()
del c
leaked = cudot.Context(N, memory="host"); fill(leaked); leaked.dot()  # open at exit, never closed
"""


def test_contexts_at_interpreter_exit():
    run = subprocess.run([sys.executable, "-c", LATE], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert "atexit ok" in run.stdout
