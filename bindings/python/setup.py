"""Build steps pyproject.toml cannot express: bundling libcudot into the wheel.

With CUDOT_LIBRARY set at build time (the full path of a built libcudot), the library is copied into the
package as cudot/libcudot.so.1, which the binding loads before any other copy unless CUDOT_LIBRARY is set
when it runs. Such a wheel holds machine code, so it is tagged for this platform (py3-none-linux_x86_64 on
a 64-bit x86 Linux): it installs only where that library runs. Without CUDOT_LIBRARY the wheel is the
pure-Python binding alone (py3-none-any), which looks for the library on the system as before.

    CUDOT_LIBRARY=/path/to/build/libcudot.so python3 -m build --wheel --no-isolation
"""
import ctypes
import importlib.util
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools 70.1 and later carry bdist_wheel themselves; before, the wheel package does
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def _binding_lib():
    """cudot/_lib.py loaded on its own (it needs nothing else from the package, and loads no library at
    import), for the bundled file name and the major version check the binding itself uses."""
    spec = importlib.util.spec_from_file_location("cudot_build_lib", os.path.join(HERE, "cudot", "_lib.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _library_to_bundle():
    """The file named by CUDOT_LIBRARY, checked to be a cudot library of the binding's major version, or
    None when the variable is unset."""
    path = os.environ.get("CUDOT_LIBRARY")
    if not path:
        return None
    binding = _binding_lib()
    try:
        binding.check_major(binding._version_of(ctypes.CDLL(os.path.abspath(path))))
    except (OSError, ImportError) as e:
        raise SystemExit(f"setup.py: CUDOT_LIBRARY={path!r} cannot be bundled: {e}") from None
    return path


class BuildPyWithLibrary(build_py):
    """build_py, plus the library copied into the built package (not into the source tree)."""

    def run(self):
        super().run()
        path = _library_to_bundle()
        if path:
            target = os.path.join(self.build_lib, "cudot", _binding_lib().BUNDLED)
            shutil.copyfile(path, target)  # follows symlinks: the file itself, e.g. libcudot.so.1.5.0
            os.chmod(target, 0o755)


class LibraryDistribution(Distribution):
    """Counts the bundled library as platform code, so that the package lands in the wheel's platlib
    root (Root-Is-Purelib: false) and bdist_wheel tags it for this platform."""

    def has_ext_modules(self):
        return _library_to_bundle() is not None


class PlatformWheel(bdist_wheel):
    """The tag: this platform's, but any Python 3 and no ABI (the binding is ctypes only)."""

    def get_tag(self):
        python, abi, platform = super().get_tag()
        return (python, abi, platform) if self.root_is_pure else ("py3", "none", platform)


setup(distclass=LibraryDistribution, cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
