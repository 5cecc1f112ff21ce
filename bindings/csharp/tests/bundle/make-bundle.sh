#!/usr/bin/env bash
# make-bundle.sh - build the C# binding's NUnit tests as one program that needs no mono installed, for
# GPU machines without mono: mkbundle --simple packs mono's runtime, the framework assemblies, NUnit's
# framework, Cudot.dll, Cudot.Tests.dll and MiniRunner.exe (its runner) into OUT_DIR/cudot-csharp-tests.bin,
# with mono's native shim beside it and a wrapper, OUT_DIR/cudot-csharp-tests, that runs it.
# The program finds libcudot through CUDOT_LIBRARY at run time, as the tests always do; building needs it
# too (scripts/make-nupkg.sh, which compiles Cudot.dll, packs that library).
#   bindings/csharp/tests/bundle/make-bundle.sh OUT_DIR
# Needs mcs, mkbundle (mono-devel) and NUnit 2.6 (libnunit-cil-dev), as bindings/csharp/test.sh does.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cs=$(cd "$here/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nunit_fw=$(pkg-config --libs nunit 2>/dev/null | tr ' ' '\n' | sed -n 's/^-r://p' | grep '/nunit\.framework\.dll$' || true)
nunit_fw=${nunit_fw:-/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll}
bash "$cs/../../scripts/make-nupkg.sh" --stage "$work/stage" "$work/nupkg" >/dev/null
cp "$work/stage/lib/net45/Cudot.dll" "$nunit_fw" "$work/"
mcs -nologo -unsafe -target:library -out:"$work/Cudot.Tests.dll" -r:"$work/Cudot.dll" -r:"$work/nunit.framework.dll" -r:System.Numerics "$cs"/tests/*.cs
mcs -nologo -out:"$work/MiniRunner.exe" -r:"$work/Cudot.Tests.dll" -r:"$work/nunit.framework.dll" "$here/MiniRunner.cs"
# The class library calls into mono's native shim (libmono-native: System.Random, files, sockets), which
# mono's config maps to a path under this machine's mono; the bundle's config names it bare, and the
# shim travels beside the program, found through LD_LIBRARY_PATH (set by the wrapper below).
sed 's|\$mono_libdir/libmono-native\.so|libmono-native.so|g' /etc/mono/config > "$work/config"
cp -L /usr/lib/libmono-native.so "$out/libmono-native.so"
# --simple appends the assemblies to a copy of the mono program (which has the runtime linked in); the
# --static C-toolchain route gives a program that crashes at start with Debian's mono 6.8.
(cd "$work" && mkbundle --simple --deps -L /usr/lib/mono/4.5 -L . --config "$work/config" \
   --machine-config /etc/mono/4.5/machine.config -o "$out/cudot-csharp-tests.bin" \
   MiniRunner.exe Cudot.Tests.dll Cudot.dll nunit.framework.dll >/dev/null)
cat > "$out/cudot-csharp-tests" <<'WRAPPER'
#!/bin/sh
# Runs the bundled C# tests (make-bundle.sh) with mono's native shim from this folder.
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH=$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$here/cudot-csharp-tests.bin" "$@"
WRAPPER
chmod +x "$out/cudot-csharp-tests"
echo "make-bundle: $out/cudot-csharp-tests"
