"""The package version. Its one literal is `version = "..."` under [project] in pyproject.toml (which a
repository-wide check compares with cudot.h): an installed package reads it back from its metadata, which
the build wrote from that literal; the source tree reads the literal itself."""
from __future__ import annotations

import os
import re
from importlib import metadata
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))


def _from_metadata() -> Optional[str]:
    try:
        dist = metadata.distribution("cudot")
    except metadata.PackageNotFoundError:
        return None
    # Only when that installation is this very copy: a source tree must not report the version of some
    # other cudot installed in the same environment.
    if os.path.realpath(dist.locate_file("cudot/__init__.py")) != os.path.join(os.path.realpath(_HERE), "__init__.py"):
        return None
    return dist.version


def _from_pyproject() -> Optional[str]:
    try:
        with open(os.path.join(os.path.dirname(_HERE), "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    project = re.search(r"^\[project\][^\n]*\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    version = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return version.group(1) if version else None


def read() -> str:
    return _from_metadata() or _from_pyproject() or "0+unknown"
