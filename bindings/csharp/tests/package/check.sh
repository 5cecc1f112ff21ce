#!/usr/bin/env bash
# check.sh BUILD NUPKG - install NUPKG (made by scripts/make-nupkg.sh, which ../../test.sh runs) from a
# local folder source as a user would, and build and run Consumer.cs against the
# installed package only, with CUDOT_LIBRARY and LD_LIBRARY_PATH unset: the native library must come
# from the package's runtimes/linux-x64/native folder. Two layouts are run: the assembly used straight
# from the installed package (MONO_PATH), and an application folder laid out as the .NET SDK copies a
# package (Cudot.dll and runtimes/ next to the program). Called by ../../test.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
csharp=$here/../..
build=$(cd "$1" && pwd) # absolute: compared below with the path the binding reports
nupkg=$2
[[ -f $nupkg ]] || { echo "FAIL no package at $nupkg"; exit 1; }
work=$build/package
rm -rf "$work"
mkdir -p "$work/feed" "$work/packages" "$work/home" "$work/app"
export HOME=$work/home # nuget writes its config and cache under HOME: keep them in the build folder

version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$csharp/Cudot.nuspec")
[[ $(basename "$nupkg") == "Cudot.$version.nupkg" ]] || { echo "FAIL $nupkg is not Cudot.$version.nupkg"; exit 1; }
cp "$nupkg" "$work/feed/"
nuget install Cudot -Version "$version" -Source "$work/feed" -OutputDirectory "$work/packages" -NonInteractive >/dev/null
pkg=$work/packages/Cudot.$version
for f in lib/net45/Cudot.dll lib/net45/Cudot.xml runtimes/linux-x64/native/libcudot.so.1; do
  [[ -f $pkg/$f ]] || { echo "FAIL package lacks $f"; exit 1; }
done
# The assembly is Mono's build (Span from Mono's mscorlib): no folder may offer it to other runtimes.
others=$(cd "$pkg/lib" && ls | grep -vx net45 || true)
[[ -z $others ]] || { echo "FAIL package offers the Mono build to other frameworks too: lib/$others"; exit 1; }

mcs -nologo -out:"$work/Consumer.exe" -r:"$pkg/lib/net45/Cudot.dll" "$here/Consumer.cs"
cp "$work/Consumer.exe" "$pkg/lib/net45/Cudot.dll" "$work/app/"
mkdir -p "$work/app/runtimes/linux-x64/native"
cp "$pkg/runtimes/linux-x64/native/libcudot.so.1" "$work/app/runtimes/linux-x64/native/"

status=0
# run NAME EXPECTED_LIBRARY EXE ENV...
run() {
  local name=$1 lib=$2 exe=$3 out; shift 3
  if out=$(env -u CUDOT_LIBRARY LD_LIBRARY_PATH= "$@" mono "$exe" 2>&1) &&
     grep -qxF "package dot = 2499975000" <<<"$out" && grep -qxF "library $lib" <<<"$out"; then
    echo "ok   $name"
  else
    echo "FAIL $name: $out"; status=1
  fi
}
run "package used in place (MONO_PATH)" "$pkg/runtimes/linux-x64/native/libcudot.so.1" \
  "$work/Consumer.exe" MONO_PATH="$pkg/lib/net45"
run "package copied into the application folder" "$work/app/runtimes/linux-x64/native/libcudot.so.1" \
  "$work/app/Consumer.exe"
exit $status
