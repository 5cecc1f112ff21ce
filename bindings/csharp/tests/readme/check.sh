#!/usr/bin/env bash
# check.sh BUILD - the C# README's examples compile as shown, under the compiler the README names (mono's
# mcs, C# 7.2 at most), against BUILD/Cudot.dll; those that are complete programs also run. Called by
# ../../test.sh, with CUDOT_LIBRARY set.
#
# Every ```csharp block of ../../README.md is taken verbatim, in one of two forms:
#  - a program (it declares a Main method): compiled alone, as the README's own command line does
#    (mcs -out:X.exe -r:Cudot.dll X.cs), and run; it must exit with status 0;
#  - a fragment (anything else): compiled into a class with `using System; using Cudot;` (a block's own
#    `using X;` lines move to the top of the file), as the body of a method, or as class members when
#    its first line of code begins with `static` (a method shown whole). A fragment must declare every
#    name it uses; it is compiled, not run.
# A block with `using MPI;` is compiled with MpiStandIn.cs (MPI.NET is not in Debian; see that file).
# `#line` directives make mcs report README.md's own line numbers.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readme=$(cd "$here/../.." && pwd)/README.md
build=$(cd "$1" && pwd)
work=$build/readme
rm -rf "$work"
mkdir -p "$work"

# block<k>.cs: the k-th block, verbatim; block<k>.line: the README line of its first line.
awk -v dir="$work" '
  /^```csharp[ \t]*$/ && !inside { inside = 1; k++; f = dir "/block" k ".cs"; printf "" > f
                                   print NR + 1 > (dir "/block" k ".line"); close(dir "/block" k ".line"); next }
  /^```[ \t]*$/ && inside       { inside = 0; close(f); next }
  inside                        { print > f }
  END { if (inside) { print "README.md: a ```csharp block is never closed" > "/dev/stderr"; exit 1 } }
' "$readme"
blocks=$(find "$work" -name 'block*.cs' | wc -l)
((blocks > 0)) || { echo "FAIL no \`\`\`csharp block in $readme"; exit 1; }

status=0 programs=0
for ((k = 1; k <= blocks; k++)); do
  src=$work/block$k.cs
  line=$(cat "$work/block$k.line")
  what="README.md:$line"
  extra=()
  grep -q '^using MPI;' "$src" && extra+=("$here/MpiStandIn.cs")
  if grep -qE 'static (void|int) Main *\(' "$src"; then
    gen=$work/Program$k.cs
    { echo "#line $line \"$readme\""; cat "$src"; } >"$gen"
    if ! out=$(mcs -nologo -out:"$work/program$k.exe" -r:"$build/Cudot.dll" "$gen" "${extra[@]}" 2>&1); then
      echo "FAIL $what (a program) does not compile with mcs:"; echo "$out"; status=1; continue
    fi
    if out=$(cd "$work" && MONO_PATH=$build timeout --kill-after=10 120 mono "program$k.exe" 2>&1); then
      echo "ok   $what: a program, compiled and run; it printed: $(tail -1 <<<"$out")"; programs=$((programs + 1))
    else
      echo "FAIL $what (a program) compiled but failed to run (exit status $?):"; echo "$out"; status=1
    fi
  else
    gen=$work/Fragment$k.cs
    usings=$(grep -E '^using [A-Za-z0-9_.]+;[[:space:]]*$' "$src" | grep -vxE 'using (System|Cudot);[[:space:]]*' || true)
    first=$(grep -vE '^[[:space:]]*(//.*)?$|^using [A-Za-z0-9_.]+;' "$src" | head -1)
    {
      echo "using System;"; echo "using Cudot;"
      [[ -z $usings ]] || echo "$usings"
      echo "static class ReadmeBlock$k"; echo "{"
      if [[ $first =~ ^[[:space:]]*((public|internal|private)[[:space:]]+)?static[[:space:]] ]]; then
        echo "#line $line \"$readme\""
        sed -E 's/^using [A-Za-z0-9_.]+;[[:space:]]*$//' "$src"
        echo "#line default"
      else
        echo "static void Fragment()"; echo "{"
        echo "#line $line \"$readme\""
        sed -E 's/^using [A-Za-z0-9_.]+;[[:space:]]*$//' "$src"
        echo "#line default"
        echo "}"
      fi
      echo "}"
    } >"$gen"
    if out=$(mcs -nologo -target:library -out:"$work/fragment$k.dll" -r:"$build/Cudot.dll" "$gen" "${extra[@]}" 2>&1); then
      echo "ok   $what: a fragment, compiled"
    else
      echo "FAIL $what (a fragment) does not compile with mcs (wrapped as $gen):"; echo "$out"; status=1
    fi
  fi
done
echo "README examples: $blocks csharp blocks compiled, $programs programs run"
exit $status
