#!/usr/bin/env bash
# test.sh - build the C# binding and its NuGet package with scripts/make-nupkg.sh (mcs, nuget), run the
# NUnit tests and the example on mono against that very Cudot.dll, check how the library is found
# (CUDOT_LIBRARY must win; wrong libraries must fail clearly), check that the bundled runner for GPU
# machines without mono (tests/bundle) runs the same cases, compile the README's examples, write
# through views of disposed contexts in child processes, then install the package and build and run a
# program that gets cudot from that package alone.
# Environment: CUDOT_LIBRARY (required: full path of libcudot.so), CUDOT_TEST_GPU=1 (GPU tests must
# run, not skip), CUDOT_CS_BUILD (build folder, default bindings/csharp/build). Installs nothing
# (nuget's own files go to a HOME inside the build folder).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${CUDOT_CS_BUILD:-$here/build}

: "${CUDOT_LIBRARY:?set CUDOT_LIBRARY to the full path of libcudot.so}"
[[ -f $CUDOT_LIBRARY ]] || { echo "test.sh: CUDOT_LIBRARY=$CUDOT_LIBRARY is not a file" >&2; exit 2; }
# Absolute, so the checks below may run from other folders; the file name itself is kept.
CUDOT_LIBRARY=$(cd "$(dirname "$CUDOT_LIBRARY")" && pwd)/$(basename "$CUDOT_LIBRARY")
export CUDOT_LIBRARY

for tool in mcs mono nunit-console cc nuget; do
  command -v "$tool" >/dev/null || { echo "test.sh: $tool not found" >&2; exit 2; }
done
# Debian's NUnit 2.6: the framework assembly the tests compile against, as its pkg-config file says.
nunit_fw=$(pkg-config --libs nunit 2>/dev/null | tr ' ' '\n' | sed -n 's/^-r://p' | grep '/nunit\.framework\.dll$' || true)
nunit_fw=${nunit_fw:-/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll}
[[ -f $nunit_fw ]] || { echo "test.sh: nunit.framework.dll not found" >&2; exit 2; }

failed=()

# One version everywhere: cudot.h, the assembly, the project and the package.
header=$here/../../include/cudot.h
if [[ -f $header ]]; then
  want=$(awk '/#define CUDOT_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $3} END{print v}' "$header")
  for got in "$(sed -n 's/.*AssemblyInformationalVersion("\([^"]*\)").*/\1/p' "$here/src/AssemblyInfo.cs")" \
             "$(sed -n 's:.*<Version>\(.*\)</Version>.*:\1:p' "$here/Cudot.csproj")" \
             "$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$here/Cudot.nuspec")"; do
    [[ $got == "$want" ]] || { echo "FAIL version $got in bindings/csharp, cudot.h says $want"; failed+=(version); }
  done
fi

echo "== building into $build (scripts/make-nupkg.sh: the package, and the Cudot.dll tested here)"
rm -rf "$build"
mkdir -p "$build"
# The same script users run: what is tested is what it packs, and its steps have no second copy here.
nupkg=$(bash "$here/../../scripts/make-nupkg.sh" --stage "$build/stage" "$build/nupkg")
echo "$nupkg"
cp "$build/stage/lib/net45/Cudot.dll" "$build/stage/lib/net45/Cudot.xml" "$build/"
mcs -nologo -unsafe -target:library -out:"$build/Cudot.Tests.dll" -r:"$build/Cudot.dll" -r:"$nunit_fw" -r:System.Numerics "$here"/tests/*.cs
cp "$nunit_fw" "$build/"
mcs -nologo -out:"$build/Example.exe" -r:"$build/Cudot.dll" "$here/example/Example.cs"

echo "== NUnit tests"
nunit-console -nologo -noshadow "$build/Cudot.Tests.dll" -result="$build/TestResult.xml" || failed+=(nunit)

echo "== the bundled runner (tests/bundle: how the GPU machine, which has no mono, runs these tests)"
# It must run exactly the cases NUnit ran, or a GPU run through it would prove less than it says.
bash "$here/tests/bundle/make-bundle.sh" "$build/bundle" 2>/dev/null
if bundled_out=$("$build/bundle/cudot-csharp-tests" 2>&1); then
  bundled=$(tail -1 <<<"$bundled_out")
  echo "$bundled"
  nunit_cases=$(sed -n 's/.*<test-results [^>]*total="\([0-9]*\)"[^>]*not-run="\([0-9]*\)".*/\1 \2/p' "$build/TestResult.xml" |
                awk '{print $1 + $2}')
  [[ $bundled == *"($nunit_cases cases)"* ]] ||
    { echo "FAIL the bundled runner ran other cases than NUnit's $nunit_cases: $bundled"; failed+=(bundle); }
else
  grep -E '^FAILED|^csharp:' <<<"$bundled_out" || tail -20 <<<"$bundled_out"
  failed+=(bundle)
fi

echo "== example"
if out=$(mono "$build/Example.exe" 2>&1); then
  echo "$out"
  grep -q "dot of 1000000 elements = 1500000 " <<<"$out" || failed+=("example output")
  grep -q "Float32 x UInt8: sum of the odd elements = 16$" <<<"$out" || failed+=("example mixed output")
  grep -q "own arrays: float x double = 3$" <<<"$out" || failed+=("example own arrays output")
  grep -qF "strided: a[0]*b[3] + a[2]*b[2] = 5" <<<"$out" || failed+=("example strided output")
else
  echo "$out"; failed+=(example)
fi

echo "== README examples (compiled with mcs as shown; whole programs run)"
bash "$here/tests/readme/check.sh" "$build" || failed+=("README examples")

# A write into freed memory need not throw: it may abort or kill the process, or hang it in mono's
# crash reporter. Hence a child process per size, under a timeout; its last line is the verdict.
echo "== writes through views of disposed contexts (a child process per size)"
mcs -nologo -unsafe -out:"$build/WriteAfterDispose.exe" -r:"$build/Cudot.dll" "$here/tests/dispose/WriteAfterDispose.cs"
for n in 1000 4194304; do
  if out=$(timeout --kill-after=10 180 mono "$build/WriteAfterDispose.exe" "$n" 2>&1); then
    echo "ok   $(tail -1 <<<"$out")"
  else
    rc=$?
    tail -30 <<<"$out"
    echo "FAIL write after Dispose, n = $n: exit status $rc (124/137: hung and killed, 134: aborted, 139: SIGSEGV)"
    failed+=("write after Dispose (n = $n)")
  fi
done

# Loader checks, each in a fresh process since a process loads the library once.
fakes=$build/fakes
mkdir -p "$fakes/v2" "$fakes/v1" "$fakes/soname2" "$fakes/real" "$fakes/decoy" "$fakes/devlink"
fake() { cc -shared -fPIC -o "$1" "$here/tests/fake_cudot.c" "${@:2}"; }
fake "$fakes/v2/libcudot.so.1" -DFAKE_VERSION=20000 -Wl,-soname,libcudot.so.1
fake "$fakes/v1/libcudot.so.1" -DFAKE_VERSION=10000 -Wl,-soname,libcudot.so.1
fake "$fakes/soname2/libcudot.so" -DFAKE_VERSION=20000 -Wl,-soname,libcudot.so.2
cp -L "$CUDOT_LIBRARY" "$fakes/real/libcudot.so.1"
cp "$build/Cudot.dll" "$build/Example.exe" "$fakes/decoy/"
cp "$fakes/v1/libcudot.so.1" "$fakes/decoy/"   # Mono probes the folder of Cudot.dll first
# The import name is "cudot": next to the real soname, a libcudot.so of major 2 must not be taken.
cp -L "$CUDOT_LIBRARY" "$fakes/devlink/libcudot.so.1"
cp "$fakes/soname2/libcudot.so" "$fakes/devlink/libcudot.so"

# expect_ok NAME ENV... : the example must succeed with that environment.
expect_ok() {
  local name=$1; shift
  if env "$@" mono "$build/Example.exe" >/dev/null 2>&1; then echo "ok   $name"; else echo "FAIL $name"; failed+=("$name"); fi
}
# expect_error NAME PATTERN EXE ENV... : the program must fail and print PATTERN.
expect_error() {
  local name=$1 pattern=$2 exe=$3 out; shift 3
  if out=$(env "$@" mono "$exe" 2>&1); then echo "FAIL $name: succeeded"; failed+=("$name"); return; fi
  if grep -q "$pattern" <<<"$out"; then echo "ok   $name"; else echo "FAIL $name: $out"; failed+=("$name"); fi
}

echo "== library loading"
expect_ok "CUDOT_LIBRARY wins over LD_LIBRARY_PATH" LD_LIBRARY_PATH="$fakes/v2"
expect_ok "normal search without CUDOT_LIBRARY" -u CUDOT_LIBRARY LD_LIBRARY_PATH="$fakes/real"
expect_ok "import name cudot binds libcudot.so.1, not libcudot.so" -u CUDOT_LIBRARY LD_LIBRARY_PATH="$fakes/devlink"
expect_error "other major version refused" "needs major version 1, but .* is version 2.0.0" \
  "$build/Example.exe" CUDOT_LIBRARY="$fakes/v2/libcudot.so.1"
expect_error "other major version refused (normal search)" "needs major version 1" \
  "$build/Example.exe" -u CUDOT_LIBRARY LD_LIBRARY_PATH="$fakes/v2"
expect_error "other soname refused" "SONAME differs" "$build/Example.exe" CUDOT_LIBRARY="$fakes/soname2/libcudot.so"
expect_error "missing file refused" "cannot load CUDOT_LIBRARY=" "$build/Example.exe" CUDOT_LIBRARY="$fakes/nothing.so"
expect_error "copy next to Cudot.dll detected" "another copy" "$fakes/decoy/Example.exe"
expect_error "no library at all" "cannot load libcudot.so.1" "$build/Example.exe" -u CUDOT_LIBRARY LD_LIBRARY_PATH=

# Without a GPU the real library gives waitMs no visible effect: a stand-in library, built from
# bindings/testing/config_spy.c against include/cudot.h, refuses cudot_init with a message that spells out
# the cudot_config it received, and tests/spy/WaitMsSpy.cs prints it. Each value must arrive in the
# header's wait_ms field, with the other options in theirs, in a struct of the header's size.
echo "== waitMs and rows reach cudot_config.wait_ms and .rows (tests/spy, against bindings/testing/config_spy.c)"
mkdir -p "$fakes/spy"
if cc -shared -fPIC -I "$here/../../include" -Wl,-soname,libcudot.so.1 -o "$fakes/spy/libcudot.so.1" \
      "$here/../testing/config_spy.c" &&
   mcs -nologo -out:"$build/WaitMsSpy.exe" -r:"$build/Cudot.dll" "$here/tests/spy/WaitMsSpy.cs"; then
  for w in 0 1 1234 60000 4294967295; do
    name="waitMs $w reaches the library"
    out=$(CUDOT_LIBRARY="$fakes/spy/libcudot.so.1" mono "$build/WaitMsSpy.exe" "$w" 2>&1) || {
      echo "FAIL $name: $out"; failed+=("$name"); continue; }
    declare -A got=()
    for word in $out; do [[ $word == *=* ]] && got[${word%%=*}]=${word#*=}; done
    # The context asked for: n 1, Int8 (5) x Float16 (3), Host (4), device 0.
    want="n=1 dtype=5 memory=4 device=0 y_dtype=3 wait_ms=$w size=${got[sizeof]:-?}"
    seen=""
    for key in n dtype memory device y_dtype wait_ms size; do seen+="$key=${got[$key]:-?} "; done
    if [[ -n ${got[sizeof]:-} && ${seen% } == "$want" ]]; then
      echo "ok   $name"
    else
      echo "FAIL $name: the spy received: $out (want $want)"; failed+=("$name")
    fi
    unset got
  done
  # rows (1.10): one row goes as 0, which a library older than 1.10 accepts; more as they are. The struct
  # is the header's 40 bytes of 1.13 (mode and reserved after rows).
  for rw in 1:0 2:2 12345:12345; do
    rows=${rw%%:*} wire=${rw#*:}
    name="rows $rows reaches the library"
    out=$(CUDOT_LIBRARY="$fakes/spy/libcudot.so.1" mono "$build/WaitMsSpy.exe" 7 "$rows" 2>&1) || {
      echo "FAIL $name: $out"; failed+=("$name"); continue; }
    declare -A got=()
    for word in $out; do [[ $word == *=* ]] && got[${word%%=*}]=${word#*=}; done
    want="n=1 dtype=5 memory=4 device=0 y_dtype=3 wait_ms=7 rows=$wire size=40"
    seen=""
    for key in n dtype memory device y_dtype wait_ms rows size; do seen+="$key=${got[$key]:-?} "; done
    if [[ ${got[sizeof]:-} == 40 && ${seen% } == "$want" ]]; then
      echo "ok   $name"
    else
      echo "FAIL $name: the spy received: $out (want $want)"; failed+=("$name")
    fi
    unset got
  done
else
  echo "FAIL building the config spy or tests/spy/WaitMsSpy.cs"; failed+=("waitMs spy")
fi

# Exact rows need 1.14: a 1.13 stand-in (tests/fake_cudot.c with FAKE_ROWS) serves canonical rows, and the
# binding itself refuses exact: true for it, with Unsupported naming the version needed.
echo "== exact rows with a 1.13 library (tests/rows/OldRows.cs, against tests/fake_cudot.c -DFAKE_ROWS)"
mkdir -p "$fakes/rows113"
if fake "$fakes/rows113/libcudot.so.1" -DFAKE_VERSION=11300 -DFAKE_ROWS -Wl,-soname,libcudot.so.1 &&
   mcs -nologo -out:"$build/OldRows.exe" -r:"$build/Cudot.dll" "$here/tests/rows/OldRows.cs" &&
   out=$(CUDOT_LIBRARY="$fakes/rows113/libcudot.so.1" mono "$build/OldRows.exe" 2>&1); then
  echo "$out" | sed 's/^/     /'
  echo "ok   exact rows refused by the binding with a 1.13 library; canonical rows served"
else
  echo "${out:-}"; echo "FAIL exact rows with a 1.13 library"; failed+=("exact rows, 1.13 library")
fi

echo "== NuGet package"
bash "$here/tests/package/check.sh" "$build" "$nupkg" || failed+=("NuGet package")

if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all C# checks passed"
