#!/usr/bin/env bash
# make-nupkg.sh - build the C# binding's NuGet package, Cudot.<version>.nupkg, and print its path.
#
#   CUDOT_LIBRARY=/path/to/build/libcudot.so scripts/make-nupkg.sh [--stage DIR] [OUTDIR]
#
# Compiles bindings/csharp/src with mono's mcs into Cudot.dll and Cudot.xml, stages them with the
# native library that CUDOT_LIBRARY names (copied, symlinks followed, as libcudot.so.1) in the layout
# bindings/csharp/Cudot.nuspec files, and packs that with Debian's nuget (2.8.7, on mono). Runs no tests.
# The one line on stdout is the absolute path of the package, written into OUTDIR (default build-nupkg/
# at the repository root; created if missing; an older package of the same version there is replaced,
# nothing else in it is touched). Progress and errors go to stderr.
#   --stage DIR  build and stage in DIR (emptied first) and keep it; by default a temporary folder,
#                removed at exit. bindings/csharp/test.sh keeps it to test the very Cudot.dll it packed.
# nuget runs with HOME in the temporary (or stage) folder, so nothing is written to your own HOME.
# Needs mcs, nuget (Debian: mono-mcs, nuget); installs nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
csharp=$root/bindings/csharp

usage() { echo "usage: CUDOT_LIBRARY=/path/to/libcudot.so $0 [--stage DIR] [OUTDIR]" >&2; exit 2; }
stage=""
out=""
while (($#)); do
  case $1 in
    --stage) (($# >= 2)) || usage; stage=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) [[ -z $out ]] || usage; out=$1; shift ;;
  esac
done
out=${out:-$root/build-nupkg}

: "${CUDOT_LIBRARY:?set CUDOT_LIBRARY to the full path of the libcudot.so to put into the package}"
[[ -f $CUDOT_LIBRARY ]] || { echo "make-nupkg.sh: CUDOT_LIBRARY=$CUDOT_LIBRARY is not a file" >&2; exit 2; }
for tool in mcs nuget; do
  command -v "$tool" >/dev/null || { echo "make-nupkg.sh: $tool not found" >&2; exit 2; }
done

if [[ -n $stage ]]; then
  rm -rf "$stage"
  mkdir -p "$stage"
  stage=$(cd "$stage" && pwd)
else
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$csharp/Cudot.nuspec")
[[ -n $version ]] || { echo "make-nupkg.sh: no <version> in $csharp/Cudot.nuspec" >&2; exit 1; }

# The layout Cudot.nuspec's <files> name.
lib=$stage/lib/net45
native=$stage/runtimes/linux-x64/native
mkdir -p "$lib" "$native" "$stage/home"
echo "make-nupkg.sh: compiling bindings/csharp/src with mcs" >&2
mcs -nologo -unsafe -langversion:7.2 -target:library -doc:"$lib/Cudot.xml" -out:"$lib/Cudot.dll" "$csharp"/src/*.cs >&2
cp -L "$CUDOT_LIBRARY" "$native/libcudot.so.1" # the real file, under the soname the binding binds

pkg=$out/Cudot.$version.nupkg
rm -f "$pkg"
echo "make-nupkg.sh: packing Cudot $version with $CUDOT_LIBRARY" >&2
HOME=$stage/home nuget pack "$csharp/Cudot.nuspec" -BasePath "$stage" -OutputDirectory "$out" \
  -NonInteractive -NoPackageAnalysis >&2
[[ -f $pkg ]] || { echo "make-nupkg.sh: nuget pack did not write $pkg" >&2; exit 1; }
echo "$pkg"
