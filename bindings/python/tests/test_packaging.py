"""Packaging: the version, loading the library lazily, the copy bundled in the package (a wheel's), and the
type hints. test.sh runs this suite twice: from the source tree, and from a wheel installed in a venv."""
import importlib.metadata
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import cudot
from support import build_fake_library, mapped_cudot_files

HERE = Path(__file__).resolve().parent
PYPROJECT = HERE.parent / "pyproject.toml"  # absent when the tests run from a copy (the wheel check)
HEADER = HERE.parent.parent.parent / "include" / "cudot.h"
PACKAGE = Path(cudot.__file__).resolve().parent
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")


# --- version -------------------------------------------------------------------------------------------
def test_version_is_the_pyproject_and_header_version():
    if PYPROJECT.exists():  # the source tree: the literal under [project]
        project = PYPROJECT.read_text().split("[project]", 1)[1].split("\n[", 1)[0]
        assert cudot.__version__ == re.search(r'^version = "([^"]+)"$', project, re.M).group(1)
    else:  # installed: the wheel's metadata
        assert cudot.__version__ == importlib.metadata.version("cudot")
    if HEADER.exists():
        parts = dict(re.findall(r"#define CUDOT_VERSION_(MAJOR|MINOR|PATCH) (\d+)", HEADER.read_text()))
        assert cudot.__version__ == "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


# --- loading --------------------------------------------------------------------------------------------
def run_python(code, tmp_path, site, *args, **env_changes):
    """Run `code` with `args` in a fresh interpreter that sees only the package under `site` (not the
    source tree), from tmp_path, with the given environment changes (None removes a variable)."""
    env = dict(os.environ, PYTHONPATH=str(site))
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)


LAZY = r"""
import cudot
def mapped():
    return [line for line in open("/proc/self/maps") if "libcudot" in line]
assert not mapped() and "lib" not in vars(cudot._lib), "the library was loaded at import"
print(cudot.__version__, cudot.library_version(), bool(mapped()))
"""


@linux_only
def test_import_does_not_load_the_library(tmp_path):
    run = run_python(LAZY, tmp_path, PACKAGE.parent)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [cudot.__version__, cudot.library_version(), "True"]


FIRST_USE = r"""
import os, sys, threading, time
import cudot
from cudot import _lib
try:  # CUDOT_LIBRARY names a missing file: refused, and not remembered
    cudot.library_version()
except ImportError as e:
    print("refused:", type(e).__name__)
os.environ["CUDOT_LIBRARY"] = sys.argv[1]
loads, real_load = [], _lib._load
def slow_load():  # widens the window in which a second thread could start a second load
    loads.append(1)
    time.sleep(0.2)
    return real_load()
_lib._load = slow_load
threads = [threading.Thread(target=cudot.library_version) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print("loads:", len(loads), cudot.library_version())
"""


@linux_only
def test_first_use_loads_once_and_a_failure_is_retried(tmp_path):
    real = sorted(mapped_cudot_files())[0]
    run = run_python(FIRST_USE, tmp_path, PACKAGE.parent, real, CUDOT_LIBRARY=tmp_path / "missing.so")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["refused: LibraryLoadError", f"loads: 1 {cudot.library_version()}"]


WHICH = r"""
import cudot, os
print(cudot.library_version(), cudot._lib.lib._name)  # the version, and the name it was opened by
print(sorted({os.path.realpath(line.split()[-1]) for line in open("/proc/self/maps") if "/libcudot" in line}))
"""


def loaded(run):
    """(version, the name the library was opened by, the libcudot files mapped) from a run of WHICH."""
    assert run.returncode == 0, run.stderr
    first, mapped = run.stdout.splitlines()
    return (*first.split(" ", 1), mapped)


@pytest.fixture
def site_with_bundled(tmp_path):
    """A copy of this package under tmp_path/site, with the real library bundled as cudot/libcudot.so.1."""
    real = sorted(mapped_cudot_files())[0]
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "cudot", ignore=shutil.ignore_patterns("__pycache__", "libcudot*"))
    shutil.copyfile(real, site / "cudot" / "libcudot.so.1")
    return site, real


@linux_only
def test_the_bundled_copy_is_loaded_first(tmp_path, site_with_bundled):
    site, _ = site_with_bundled
    bundled = str((site / "cudot" / "libcudot.so.1").resolve())
    _, name, mapped = loaded(run_python(WHICH, tmp_path, site, CUDOT_LIBRARY=None, LD_LIBRARY_PATH=None))
    assert name == bundled and mapped == repr([bundled])


@linux_only
def test_cudot_library_wins_over_the_bundled_copy(tmp_path, site_with_bundled):
    site, real = site_with_bundled
    (tmp_path / "chosen").mkdir()
    chosen = str(shutil.copyfile(real, tmp_path / "chosen" / "libcudot-copy.so"))
    _, name, mapped = loaded(run_python(WHICH, tmp_path, site, CUDOT_LIBRARY=chosen))
    assert name == chosen and mapped == repr([chosen])  # the bundled copy is not even opened
    run = run_python(WHICH, tmp_path, site, CUDOT_LIBRARY=tmp_path / "missing.so")  # no fallback to bundled
    assert run.returncode != 0 and "missing.so" in run.stderr and "LibraryLoadError" in run.stderr


@linux_only
@pytest.mark.parametrize("soname", [None, "libcudot.so.1"])
def test_a_bundled_copy_of_another_major_is_passed_over(tmp_path, site_with_bundled, soname):
    """Also when the refused copy carries our SONAME: kept loaded, it would answer the next name's dlopen."""
    site, real = site_with_bundled
    bundled = site / "cudot" / "libcudot.so.1"
    bundled.unlink()
    build_fake_library(bundled, 20000, soname)
    good = tmp_path / "good"
    good.mkdir()
    os.symlink(real, good / "libcudot.so.1")
    version, name, mapped = loaded(run_python(WHICH, tmp_path, site, CUDOT_LIBRARY=None, LD_LIBRARY_PATH=good))
    assert version.startswith("1.") and name == "libcudot.so.1" and real in mapped  # found by the search
    run = run_python(WHICH, tmp_path, site, CUDOT_LIBRARY=None, LD_LIBRARY_PATH=None)
    assert run.returncode != 0  # (unless the system has a libcudot.so.1 of its own)
    assert str(bundled) in run.stderr and "major version 1" in run.stderr


FIRST_CALL = "import cudot; print(cudot.__file__, flush=True); cudot.library_version()"


def load_error(tmp_path, cwd, site=None, **env_changes):
    """The last stderr line of a first call that finds no library: CUDOT_LIBRARY unset, LD_LIBRARY_PATH an
    empty folder, PYTHONPATH `site` (None: unset, so `import cudot` finds the package in `cwd`). Also
    returns the cudot.__file__ printed. Skips when the system has a libcudot.so.1 of its own."""
    (tmp_path / "empty").mkdir(exist_ok=True)
    env = {"CUDOT_LIBRARY": None, "LD_LIBRARY_PATH": tmp_path / "empty", "PYTHONPATH": site, **env_changes}
    run = run_python(FIRST_CALL, cwd, site, **env)
    if run.returncode == 0:
        pytest.skip("the system linker finds a libcudot.so.1 of its own")
    return run.stdout.strip(), run.stderr.strip().splitlines()[-1]


def copy_package(folder):
    """This package's Python files as folder/cudot, without any bundled library."""
    shutil.copytree(PACKAGE, folder / "cudot", ignore=shutil.ignore_patterns("__pycache__", "libcudot*"))
    return folder / "cudot"


@linux_only
def test_the_load_error_from_a_source_tree_names_it_and_says_it_shadows_a_wheel(tmp_path):
    """A newcomer's trap: a wheel installed, the example run from bindings/python, where `import cudot`
    finds the source tree's cudot/ (no library in it). The error names that package and says why."""
    tree = tmp_path / "bindings" / "python"
    package = copy_package(tree)
    (tree / "pyproject.toml").write_text('[project]\nname = "cudot"\nversion = "1.0.0"\n')
    imported, error = load_error(tmp_path, tree)  # from the source folder itself, PYTHONPATH unset
    assert imported == str(package / "__init__.py")
    assert error.startswith("cudot.LibraryLoadError: ")
    assert f"imported from {package} (" in error
    assert "(tried libcudot.so.1 (not found))" in error  # the candidates, as before
    assert "set CUDOT_LIBRARY to its full path" in error
    assert f"source tree (no libcudot.so.1 in it, a pyproject.toml in {tree})" in error
    assert "shadows any installed wheel; run from another folder, or set CUDOT_LIBRARY" in error


@linux_only
def test_the_load_error_from_an_installed_package_names_it(tmp_path):
    """No pyproject.toml above the package (an installed one): its folder, and no word of a source tree."""
    package = copy_package(tmp_path / "site")
    (tmp_path / "elsewhere").mkdir()
    imported, error = load_error(tmp_path, tmp_path / "elsewhere", site=tmp_path / "site")
    assert imported == str(package / "__init__.py")
    assert f"no usable libcudot for the cudot package imported from {package} (tried libcudot.so.1 (not found))" in error
    assert "set CUDOT_LIBRARY to its full path" in error and "source tree" not in error


@linux_only
def test_the_load_error_with_a_bundled_copy_is_not_about_a_source_tree(tmp_path):
    """A bundled copy that is refused (another major) means a built package, even with a pyproject.toml above."""
    package = copy_package(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    build_fake_library(package / "libcudot.so.1", 20000)
    _, error = load_error(tmp_path, tmp_path)
    assert f"imported from {package} (tried {package / 'libcudot.so.1'} (" in error and "major version 1" in error
    assert "source tree" not in error


@linux_only
def test_a_failing_cudot_library_names_the_package_too(tmp_path):
    package = copy_package(tmp_path / "site")
    _, error = load_error(tmp_path, tmp_path, site=tmp_path / "site", CUDOT_LIBRARY=tmp_path / "missing.so")
    assert f"cannot load CUDOT_LIBRARY='{tmp_path / 'missing.so'}'" in error
    assert f"(the cudot package in use is {package})" in error


@linux_only
@pytest.mark.skipif(not os.environ.get("CUDOT_TEST_EXPECT_LIBRARY"), reason="CUDOT_TEST_EXPECT_LIBRARY unset")
def test_the_expected_library_is_the_one_loaded():
    """test.sh names the file this run must use: CUDOT_LIBRARY, or the wheel's bundled copy."""
    expected = os.path.realpath(os.environ["CUDOT_TEST_EXPECT_LIBRARY"])
    assert mapped_cudot_files() == {expected}


# --- type hints -----------------------------------------------------------------------------------------
PUBLIC_FUNCTIONS = ["library_version", "join_partials", "bf16_from_float", "bf16_to_float", "dot", "dot_async",
                    "tile_partials", "as_bf16", "register_host", "join_exact_partials"]


def public_methods():
    for name, member in vars(cudot.Context).items():
        if name.startswith("_") and name not in ("__init__", "__enter__", "__exit__"):
            continue
        yield f"Context.{name}", member.fget if isinstance(member, property) else member


def test_public_api_is_annotated_and_marked_typed():
    assert (PACKAGE / "py.typed").is_file()
    functions = [(name, getattr(cudot, name)) for name in PUBLIC_FUNCTIONS] + list(public_methods())
    functions.append(("CudotError.for_status", cudot.CudotError.for_status))
    for name, fn in functions:
        hints = typing.get_type_hints(fn)  # also checks that every annotation resolves
        params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
        assert "return" in hints and all(p in hints for p in params), name


TYPED_USER = '''
from typing import Optional
import numpy as np
import numpy.typing as npt
import cudot

def total(n: int) -> float:
    with cudot.Context(n, "f32", memory="host") as ctx:
        ctx.x[:] = 1.0
        parts: npt.NDArray[np.uint8] = ctx.tile_partials(0, n)
        device: Optional[int] = ctx.device
        own: float = cudot.dot(ctx.x[::-1], np.zeros(n, np.float16), stream=None)
        with cudot.Context(n, "f64", memory="host", rows=2) as table:
            each: npt.NDArray[np.float64] = table.dot_each_row(2, n, out=np.zeros(2))
            cells: int = table.rows * table.row_length
        with cudot.Context(n, "f64", memory="host", exact=True) as exact:
            mode: bool = exact.exact
            whole: float = cudot.join_exact_partials(exact.tile_partials(0, n).tobytes())
            whole += cudot.join_exact_partials(cudot.tile_partials(exact.x, exact.y, exact=True))
        with cudot.register_host(ctx.y) as registration:
            own_parts: npt.NDArray[np.uint8] = cudot.tile_partials(ctx.x, cudot.as_bf16(ctx.y.view(np.uint16)))
        try:
            return ctx.dot() + cudot.join_partials(parts, ctx.dtypes[0], ctx.dtypes[1])
        except cudot.InvalidArgumentError as e:
            return float(e.status)
'''
WRONG = ("\nname: int = cudot.library_version()\nnot_a_function = cudot.Context(4).dot_n('4')\n"
         "as_int: int = cudot.dot(np.zeros(3), np.zeros(3))\n")


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="no mypy (Debian: python3-mypy)")
def test_a_typed_user_type_checks(tmp_path):
    """mypy --strict reads the annotations (from an installed package only thanks to py.typed): correct
    code passes, and wrong code is caught, which shows the types are not just Any."""
    env = dict(os.environ, MYPYPATH=str(PACKAGE.parent)) if PYPROJECT.exists() else dict(os.environ)
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
               "--cache-dir", str(tmp_path / "cache")]  # silent: judge the user's file, not cudot's insides
    (tmp_path / "good.py").write_text(TYPED_USER)
    run = subprocess.run(command + ["good.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "bad.py").write_text(TYPED_USER + WRONG)
    run = subprocess.run(command + ["bad.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert 'error: Incompatible types in assignment (expression has type "str"' in run.stdout
    assert 'error: Argument 1 to "dot_n" of "Context" has incompatible type "str"' in run.stdout
    assert 'error: Incompatible types in assignment (expression has type "float", variable has type "int")' in run.stdout
