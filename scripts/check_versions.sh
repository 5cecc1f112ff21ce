#!/usr/bin/env bash
# check_versions.sh - every package version in the repository must equal the public header's version
# (CUDOT_VERSION_MAJOR.MINOR.PATCH in include/cudot.h), the one source of truth. CMake reads the header
# itself; the bindings' package files cannot, so this check (a CTest entry) fails when one drifts.
# The bindings cannot read the header's declarations either: each repeats its structs, enums, constants
# and signatures by hand, and scripts/check_bindings_abi.py, run last, fails when one of those drifts
# (after its self-test has shown that it catches such changes).
set -euo pipefail
cd "$(dirname "$0")/.."

part() { sed -n "s/^#define CUDOT_VERSION_$1 \([0-9][0-9]*\).*/\1/p" include/cudot.h; }
want="$(part MAJOR).$(part MINOR).$(part PATCH)"
[[ $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "check_versions: cannot read the version from include/cudot.h" >&2; exit 2; }

failed=0
# check FILE SED-EXPRESSION : the expression prints the version FILE states (exactly one line).
check() {
  local file=$1 found
  if [[ ! -f $file ]]; then echo "FAIL $file: missing"; failed=1; return; fi
  found=$(sed -n "$2" "$file")
  if [[ $found == "$want" ]]; then
    echo "ok   $file: $found"
  else
    echo "FAIL $file: states '${found//$'\n'/, }', the header says $want"; failed=1
  fi
}
check bindings/python/pyproject.toml 's/^version *= *"\([^"]*\)".*/\1/p'
check bindings/julia/Project.toml    's/^version *= *"\([^"]*\)".*/\1/p'
check bindings/csharp/Cudot.csproj   's/.*<Version>\([^<]*\)<\/Version>.*/\1/p'
check bindings/csharp/Cudot.nuspec   's/.*<version>\([^<]*\)<\/version>.*/\1/p'
check bindings/go/version.go         's/^const BindingVersion = "\([^"]*\)".*/\1/p'

versions_failed=$failed
echo "== the bindings' mirrors of include/cudot.h (scripts/check_bindings_abi.py --self-test)"
python3 scripts/check_bindings_abi.py --self-test || failed=1

if ((versions_failed)); then echo "check_versions: a package version differs from include/cudot.h ($want)"; fi
if ((failed)); then exit 1; fi
echo "check_versions: every package says $want, and every binding's mirror matches include/cudot.h"
