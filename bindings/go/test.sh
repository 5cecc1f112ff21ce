#!/usr/bin/env bash
# Vets and tests the Go binding, runs its example, builds and runs a separate module that uses it, then
# builds and runs examples/go-classic.
# Needs CUDOT_LIBRARY and CUDOT_CLASSIC_LIBRARY (full paths) and an installed Go; installs nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
classic_dir="$(cd "$here/../../examples/go-classic" && pwd)"
: "${CUDOT_LIBRARY:?set CUDOT_LIBRARY to the full path of libcudot.so}"
: "${CUDOT_CLASSIC_LIBRARY:?set CUDOT_CLASSIC_LIBRARY to the full path of libcudot_classic.so}"
command -v go >/dev/null || { echo "test.sh: go not found (install golang-go)" >&2; exit 1; }

# Offline: standard library and cgo only. Caches go under /tmp unless the caller chose otherwise.
export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/cudot-go-cache}" GOPATH="${GOPATH:-${TMPDIR:-/tmp}/cudot-gopath}"
# The script changes directory, so make relative paths absolute first.
[[ "$CUDOT_LIBRARY" == /* ]] || CUDOT_LIBRARY="$PWD/$CUDOT_LIBRARY"
[[ "$CUDOT_CLASSIC_LIBRARY" == /* ]] || CUDOT_CLASSIC_LIBRARY="$PWD/$CUDOT_CLASSIC_LIBRARY"
export CUDOT_LIBRARY CUDOT_CLASSIC_LIBRARY
log="$(mktemp)"
bin="$(mktemp -d)"
trap 'rm -rf "$log" "$bin"' EXIT

cd "$here"
echo "== go vet (linux, windows)"
go vet ./...
GOOS=windows go vet ./...

echo "== go test"
rc=0
GODEBUG=cgocheck=2 go test -count=1 -v ./... 2>&1 | tee "$log" || rc=$?
echo "== summary: $(grep -c -- '--- PASS' "$log" || true) passed, $(grep -c -- '--- SKIP' "$log" || true) skipped," \
     "$(grep -c -- '--- FAIL' "$log" || true) failed (tests, subtests and examples)"
[ "$rc" -eq 0 ] || { echo "test.sh: go test failed" >&2; exit "$rc"; }

echo "== example (float32, then two mixed pairs)"
go build -o "$bin/example" ./example
GODEBUG=cgocheck=2 "$bin/example"
GODEBUG=cgocheck=2 "$bin/example" -dtype float16 -ydtype uint8
GODEBUG=cgocheck=2 "$bin/example" -dtype int8 -ydtype bfloat16

echo "== example/ownarrays (dots of Go slices, no Context)"
go build -o "$bin/ownarrays" ./example/ownarrays
GODEBUG=cgocheck=2 "$bin/ownarrays"

# A separate module, in a temporary directory outside the repository, that finds the binding through a
# replace directive (what a user does while there is no module proxy to fetch it from), built offline.
echo "== a separate module (example.com/consumer) builds against this one and runs"
consumer="$bin/consumer"
mkdir -p "$consumer"
cp "$here/testdata/consumer/main.go" "$consumer/"
(
  cd "$consumer"
  go mod init example.com/consumer 2>/dev/null
  go mod edit -require=cudot.example/cudot@v0.0.0 -replace=cudot.example/cudot="$here"
  go vet .
  go build -o consumer .
)
out="$(GODEBUG=cgocheck=2 "$consumer/consumer")"
echo "$out"
grep -qx "dot = 332833500" <<<"$out" || { echo "test.sh: the consumer module printed the wrong result" >&2; exit 1; }

echo "== examples/go-classic"
cd "$classic_dir"
go vet ./...
GOOS=windows go vet ./...
go build -o "$bin/go-classic" .
GODEBUG=cgocheck=2 "$bin/go-classic" -lib "$CUDOT_CLASSIC_LIBRARY"
echo "== all Go checks passed"
