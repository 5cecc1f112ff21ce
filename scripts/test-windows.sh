#!/usr/bin/env bash
# test-windows.sh - the Windows half of the test suite, cross-built here and run under wine:
#   1. cudot.dll and cudot_classic.dll (CPU backend) with MinGW-w64 (cmake/toolchains/mingw-w64-x86_64.cmake);
#   2. the C/C++ suite through CTest, wine as the emulator (exports, load/unload, quickstart.exe included);
#   3. the Go binding's tests, cross-compiled with GOOS=windows (they load cudot.dll with LoadDLL), with
#      CUDOT_LIBRARY set and with the DLL found beside the program;
#   4. examples/go-classic: the tutorial's Windows client flow (LoadDLL of the classic DLL, the four calls).
# Every wine call goes through scripts/wine-run.sh (a timeout; loader errors shown). Wine is not Windows:
# a pass here means the code works on Wine's Win32; the GPU build for Windows is not built or tested.
# Needs g++-mingw-w64-x86-64-posix, wine64 and golang-go (scripts/test.sh installs them).
# Environment: WINDOWS_BUILD_DIR (default build-windows; relative to the repository root, or absolute).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${WINDOWS_BUILD_DIR:-build-windows}
wine_run=$root/scripts/wine-run.sh

for tool in x86_64-w64-mingw32-g++-posix go; do
  command -v "$tool" >/dev/null || { echo "test-windows.sh: $tool not found" >&2; exit 2; }
done
[[ -x /usr/lib/wine/wine64 ]] || command -v wine64 >/dev/null || { echo "test-windows.sh: wine64 not found" >&2; exit 2; }

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/mingw-w64-x86_64.cmake" \
      -DCMAKE_BUILD_TYPE=Release -DCUDOT_BUILD_TESTS=ON
cmake --build "$build" -j"$(nproc)"
build=$(cd "$build" && pwd)  # WINDOWS_BUILD_DIR may be relative or absolute; absolute from here on

# One wineserver for the whole job. Left to itself, wine starts a server with the first program and the
# server exits a few seconds after the last one; a program that connects just as it goes fails with
# "wine client error:0: recvmsg: Connection reset by peer" before running any code, and its CTest case
# fails. -p keeps this one until -k at the end.
export WINEPREFIX=${WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/cudot-wine}
mkdir -p "$WINEPREFIX"
wineserver_bin=$(command -v wineserver || echo /usr/lib/wine/wineserver64)
"$wineserver_bin" -p
trap '"$wineserver_bin" -k 2>/dev/null || true' EXIT
# The prefix's own services (services.exe, winedevice.exe, ...) start with the first program and now
# live as long as the server: started here, they hold /dev/null, not the output pipe of the CTest case
# that would have started them (CTest then waits for that pipe to close, forever).
"$wine_run" wineboot </dev/null >/dev/null 2>&1 || true

failed=()
echo "==== Windows: C/C++ suite under wine (CTest)"
if ! (cd "$build" && ctest --output-on-failure --no-tests=error -j"$(nproc)"); then
  # Failed cases whose output is that wine error, and only those, run once more; any other failure stands.
  other=$(awk '/^[0-9]+\/[0-9]+ Testing: /{wine=0} /wine client error/{wine=1} /^Test (Failed|Timeout)/{if (!wine) n++}
               END{print n+0}' "$build/Testing/Temporary/LastTest.log")
  if [[ $other == 0 ]]; then
    echo "==== Windows: the failed cases once more (each failed with a wine client error)"
    (cd "$build" && ctest --output-on-failure --rerun-failed) || failed+=(ctest)
  else
    failed+=(ctest)
  fi
fi

export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOOS=windows GOARCH=amd64 CGO_ENABLED=0
export GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/cudot-go-cache}" GOPATH="${GOPATH:-${TMPDIR:-/tmp}/cudot-gopath}"
gobin=$build/go
mkdir -p "$gobin"
windows_path() { echo "Z:${1//\//\\}"; }  # wine maps the Unix root to drive Z:

# run_go NAME ENV-ARGS... -- EXE : a Go test program under wine, with env(1)'s arguments; its verdict
# and the pass/skip counts.
run_go() {
  local name=$1 log=$gobin/$1.log env_args=(); shift
  while [[ $1 != -- ]]; do env_args+=("$1"); shift; done; shift
  if env "${env_args[@]}" "$wine_run" "$@" -test.count=1 -test.v >"$log" 2>&1; then
    echo "ok   $name: $(grep -c -- '--- PASS' "$log") passed, $(grep -c -- '--- SKIP' "$log") skipped"
  else
    tail -40 "$log"; echo "FAIL $name (log: $log)"; failed+=("$name")
  fi
}

echo "==== Windows: Go binding tests (LoadDLL)"
# A DLL of another major version for the loader tests (they run under wine, without a C compiler).
mkdir -p "$gobin/fakes/v2"
{
  echo 'unsigned cudot_version(void) { return 20100; }'
  for f in init get_inputs dot dot_n deinit get_memory status_string last_error; do
    echo "int cudot_$f(void) { return 0; }"  # never called: the version is refused first
  done
} > "$gobin/fakes/fake_v2.c"
x86_64-w64-mingw32-gcc-posix -shared -o "$gobin/fakes/v2/cudot.dll" "$gobin/fakes/fake_v2.c"
export CUDOT_TEST_FAKE_DLLS
CUDOT_TEST_FAKE_DLLS=$(windows_path "$gobin/fakes")
(cd bindings/go && go test -c -o "$gobin/cudot_test.exe" .)
run_go go-env CUDOT_LIBRARY="$(windows_path "$build/cudot.dll")" -- "$gobin/cudot_test.exe"
# Without CUDOT_LIBRARY the binding loads cudot.dll by name: the copy beside the program.
cp "$build/cudot.dll" "$gobin/"
run_go go-beside -u CUDOT_LIBRARY -- "$gobin/cudot_test.exe"

echo "==== Windows: examples/go-classic against cudot_classic.dll"
(cd examples/go-classic && go build -o "$gobin/go-classic.exe" .)
if out=$("$wine_run" "$gobin/go-classic.exe" -lib "$(windows_path "$build/cudot_classic.dll")" 2>&1) &&
   grep -q "all results exact" <<<"$out"; then
  echo "$out"; echo "ok   go-classic"
else
  echo "$out"; echo "FAIL go-classic"; failed+=(go-classic)
fi

if ((${#failed[@]})); then
  echo "test-windows.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "test-windows.sh: all Windows checks passed (under wine)"
