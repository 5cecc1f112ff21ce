#!/usr/bin/env bash
# gpu-bench.sh - the benchmark programs' record runs on a GPU machine, each bounded in time, their outputs
# named after the host and packed into one file (a device machine returns few files).
#
#   scripts/gpu-bench.sh BUILD_DIR [quick | records | SECONDS]
#     quick    (default) cudot-bench-host, cudot-bench-arrays --quick, cudot-bench --no-pairs --max-log2 22,
#              and on a host of several GPUs cudot-bench-multigpu --max-log2 26 --reps 10: a few minutes
#     records  the records docs/PERFORMANCE.md shows: cudot-bench --no-pairs --max-log2 26, and
#              cudot-bench-multigpu --max-log2 26 on several GPUs
#     SECONDS  stop starting programs once this many seconds have passed (default 570: a device call's
#              10 minutes less the start); a program that would pass it is stopped and its output kept
# Outputs go to $OUT (or ./gpu-bench-logs) as bench-<host>-<what>.txt (and .json), and all of them to
# bench-<host>.tar.xz; <host> is h200-x1, h200-x2, ... from the GPUs' name and count.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/gpu-bench.sh BUILD_DIR [quick | records | SECONDS]}
mode=quick budget=570
for a in "${@:2}"; do
  case $a in
    quick | records) mode=$a ;;
    *[!0-9]* | '') echo "gpu-bench: unknown argument '$a'" >&2; exit 2 ;;
    *) budget=$a ;;
  esac
done
out=${OUT:-$(pwd)/gpu-bench-logs}
mkdir -p "$out"
start=$(date +%s)
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o -i -E 'h100|h200|a100|l40s?|b200' | head -1 | tr 'A-Z' 'a-z')
host="${model:-gpu}-x${gpus}"
work=$(mktemp -d)
{
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'
  grep -q avx512f /proc/cpuinfo && echo "avx512f: yes" || echo "avx512f: no"
  # The build's own record (scripts/gpu-pack.sh) first: this copy's .git may be older than the build.
  [[ -f "$build/commit.txt" ]] && echo "built from: $(cat "$build/commit.txt")"
  git log --oneline -1 2>/dev/null
} > "$work/bench-$host-machine.txt" 2>&1

# run NAME PROGRAM ARGS...: within what is left of the budget; never fails.
run() {
  local name=$1 left
  shift
  left=$((budget - ($(date +%s) - start)))
  if ((left < 20)); then
    echo "gpu-bench: $name not run, $left s left of $budget" | tee -a "$work/bench-$host-machine.txt"
    return 0
  fi
  echo "gpu-bench: $name ($left s left)"
  timeout "$left" "$@" > "$work/bench-$host-$name.txt" 2>&1
  echo "exit $? after $(($(date +%s) - start)) s in all" >> "$work/bench-$host-$name.txt"
}

if [[ $mode == quick ]]; then
  run host "$build/cudot-bench-host"
  run arrays "$build/cudot-bench-arrays" --quick --json "$work/bench-$host-arrays.json"
  run bench "$build/cudot-bench" --no-pairs --max-log2 22 --json "$work/bench-$host-bench.json"
  ((gpus > 1)) && run multigpu "$build/cudot-bench-multigpu" --max-log2 26 --reps 10 --json "$work/bench-$host-multigpu.json"
else
  run bench "$build/cudot-bench" --no-pairs --max-log2 26 --json "$work/bench-$host-bench.json"
  # The default 30 rounds (4 x at n <= 2^22): M2's ratios of two medians need them.
  ((gpus > 1)) && run multigpu "$build/cudot-bench-multigpu" --max-log2 26 --json "$work/bench-$host-multigpu.json"
fi
# Every program's verdict lines, together, for a first look.
grep -h -E '^(T[0-9]|M[0-9]|E |A |B |C |D |F )' "$work"/bench-"$host"-*.txt > "$work/bench-$host-verdicts.txt" 2>/dev/null
tar -cJf "$out/bench-$host.tar.xz" -C "$work" .
cp "$work/bench-$host-verdicts.txt" "$out/"
rm -rf "$work"
echo "gpu-bench: $(($(date +%s) - start)) s; outputs in $out/bench-$host.tar.xz"
