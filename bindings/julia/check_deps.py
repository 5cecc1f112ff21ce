#!/usr/bin/python3
"""Fails unless every [deps] entry of the Julia package's Project.toml is a standard library.

A registered dependency would make `pkg> dev bindings/julia` need the General registry and leave
an offline machine with no way to use the binding (the reason Preferences.jl was dropped). No Julia
is needed: this reads the file with tomllib (Python 3.11+).

usage: check_deps.py [Project.toml]      (default: the one next to this script)
"""
import pathlib
import sys
import tomllib

# Name -> UUID of the standard libraries the package may depend on: they ship with every Julia from
# 1.6 on, so Pkg never looks them up in a registry. The UUID is checked too: a registered package
# may reuse a stdlib's name. The same list as test/runtests.jl's STDLIBS.
STDLIBS = {
    "Base64": "2a0f44e3-6c83-55bd-87e4-b1978d98bd5f",
    "Dates": "ade2ca70-3891-5945-98fb-dc099432e06a",
    "Libdl": "8f399da3-3557-5675-b5ff-fb832c97cbdb",
    "LinearAlgebra": "37e2e46d-f89d-539d-b4ee-838fcccc9c8e",
    "Logging": "56ddb016-857b-54e1-b83d-db4d58db5568",
    "Printf": "de0858da-6303-5e67-8744-51eddeeeb8d7",
    "Random": "9a3f8284-a2c9-5f02-9a11-845980a1fd5c",
    "Serialization": "9e88b42a-f829-5b0c-bbe9-9e923198166b",
    "TOML": "fa267f1f-6049-4f14-aa54-33bafae1ed76",
    "Test": "8dfed614-e22c-5e08-85e1-65c5234f0b40",
    "UUIDs": "cf7118a7-6976-5b1a-9a39-7adc72f591a4",
}

default = pathlib.Path(__file__).parent / "Project.toml"
path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else default
with open(path, "rb") as f:
    deps = tomllib.load(f).get("deps", {})

bad = [f"{name} = {uuid!r}" for name, uuid in sorted(deps.items())
       if STDLIBS.get(name) != str(uuid).lower()]
if bad:
    print(f"{path}: [deps] must list standard libraries only (an offline install needs no "
          f"registry); not a known stdlib: {', '.join(bad)}", file=sys.stderr)
    sys.exit(1)
print(f"{path}: [deps] are standard libraries only: {', '.join(sorted(deps))}")
