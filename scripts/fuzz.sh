#!/usr/bin/env bash
# fuzz.sh [SECONDS] - fuzz the C API with libFuzzer (tests/fuzz/cudot_fuzz.cpp) under ASan + UBSan.
#
#  1. checks for clang and libFuzzer (installs nothing: on Debian, `apt-get install clang cmake`; libFuzzer
#     is in libclang-rt-<N>-dev, which clang-<N> pulls in through libclang-common-<N>-dev);
#  2. configures build-fuzz (clang, no CUDA, no tests/bench/examples, -fsanitize=address,undefined) and
#     builds only cudot_fuzz;
#  3. replays every input of tests/fuzz/corpus/ and tests/fuzz/regressions/, one process each;
#  4. fuzzes for SECONDS (default 180) from a scratch copy of the corpus (build-fuzz/fuzz-work/; the
#     committed corpus is never written), and prints a one-line summary.
# Exits non-zero if any replayed input fails or fuzzing finds a crash, leak, timeout or contract violation
# (crash inputs are left in build-fuzz/fuzz-work/artifacts/; copy them to tests/fuzz/regressions/).
#
# Environment: FUZZ_JOBS      parallel fuzzing processes, 1 (default) or 2
#              FUZZ_MAX_LEN   largest input in bytes (default 4096)
#              FUZZ_SEED      libFuzzer -seed (default: random)
#              BUILD_DIR      build folder (default build-fuzz)
#              CUDOT_FUZZ_ALLOW  checks the harness should report but tolerate (see cudot_fuzz.cpp and
#                             tests/fuzz/regressions/README.md), to fuzz past a known, unfixed finding
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${1:-180}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "usage: scripts/fuzz.sh [SECONDS]   (default 180)" >&2
  exit 2
fi
build=${BUILD_DIR:-build-fuzz}
jobs=${FUZZ_JOBS:-1}
max_len=${FUZZ_MAX_LEN:-4096}
[[ $jobs == 1 || $jobs == 2 ]] || { echo "fuzz.sh: FUZZ_JOBS must be 1 or 2" >&2; exit 2; }
fuzz_dir=tests/fuzz

# ---- 1. tools ------------------------------------------------------------------------------------
for tool in clang clang++ cmake; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool not found (Debian: apt-get install clang cmake)" >&2; exit 2; }
done
clang_major=$(clang -dumpversion | cut -d. -f1)
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' >"$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz.sh: clang $clang_major cannot link a libFuzzer + ASan program:" >&2
  sed 's/^/  /' "$probe/err" >&2
  echo "fuzz.sh: on Debian, libFuzzer and the sanitizer runtimes are in libclang-rt-$clang_major-dev" >&2
  exit 2
fi

# ---- 2. build --------------------------------------------------------------------------------------
echo "==== fuzz.sh: building cudot_fuzz in $build (clang $clang_major, address;undefined)"
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDOT_WITH_CUDA=OFF \
  -DCUDOT_BUILD_FUZZ=ON -DCUDOT_BUILD_TESTS=OFF -DCUDOT_BUILD_BENCH=OFF -DCUDOT_BUILD_EXAMPLES=OFF \
  -DCUDOT_SANITIZE="address;undefined" >"$probe/configure.log" 2>&1 || { cat "$probe/configure.log"; exit 1; }
cmake --build "$build" --target cudot_fuzz -j"$(nproc)" >"$probe/build.log" 2>&1 || { cat "$probe/build.log"; exit 1; }
bin=$root/$build/tests/fuzz/cudot_fuzz
[[ -x $bin ]] || { echo "fuzz.sh: $bin was not built" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:symbolize=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# ---- 3. replay ---------------------------------------------------------------------------------------
echo "==== fuzz.sh: replaying $fuzz_dir/corpus and $fuzz_dir/regressions"
replayed=0
failed=()
kinds=()
for f in "$fuzz_dir"/corpus/* "$fuzz_dir"/regressions/*; do
  [[ -f $f ]] || continue
  case $(basename "$f") in README* | *.md) continue ;; esac
  replayed=$((replayed + 1))
  if ! "$bin" "$f" >"$probe/replay.log" 2>&1; then
    why=$(grep -m1 -E 'contract violation|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$probe/replay.log" || true)
    # One line per input: the harness's check name, or the sanitizer's verdict; the full text once per kind.
    kind=$(sed -nE 's/.*contract violation \[([^]]*)\].*/\1/p; s/.*runtime error:.*/UBSan/p; s/.*ERROR: ([A-Za-z]+): ([a-z-]+).*/\1:\2/p' <<<"$why" | head -1)
    kind=${kind:-unknown}
    echo "  FAILED [$kind] $f"
    if [[ " ${kinds[*]:-} " != *" $kind "* ]]; then
      kinds+=("$kind")
      echo "         ${why:-(run $bin $f to see why)}"
    fi
    failed+=("$f")
  fi
done
echo "fuzz.sh: replayed $replayed inputs, ${#failed[@]} failed${kinds:+ (checks: ${kinds[*]})}"

# ---- 4. fuzz -------------------------------------------------------------------------------------------
work=$root/$build/fuzz-work
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$fuzz_dir"/corpus/* "$work/corpus/"
seeds=$(find "$work/corpus" -type f | wc -l)
args=(-max_total_time="$seconds" -max_len="$max_len" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$work/artifacts/" -dict="$root/$fuzz_dir/cudot.dict")
[[ -n ${FUZZ_SEED:-} ]] && args+=(-seed="$FUZZ_SEED")
echo "==== fuzz.sh: fuzzing for $seconds s with $jobs process(es) from $seeds seeds (scratch: $work)"
start=$SECONDS
set +e
if ((jobs == 1)); then
  (cd "$work" && "$bin" "${args[@]}" "$work/corpus" >"$work/fuzz-0.log" 2>&1)
  rc=$?
else
  (cd "$work" && "$bin" "${args[@]}" -jobs="$jobs" -workers="$jobs" "$work/corpus" >"$work/fuzz-main.log" 2>&1)
  rc=$?
fi
set -e
elapsed=$((SECONDS - start))

# ---- summary --------------------------------------------------------------------------------------------
logs=("$work"/fuzz-[0-9]*.log)
execs=0
cov=0
ft=0
for log in "${logs[@]}"; do
  [[ -f $log ]] || continue
  e=$( (grep -o 'stat::number_of_executed_units: [0-9]*' "$log" || true) | tail -1 | awk '{print $2}')
  if [[ -z $e ]]; then  # stopped before the final stats: the last status line
    e=$( (grep -oE '^#[0-9]+' "$log" || true) | tail -1 | tr -d '#')
  fi
  execs=$((execs + ${e:-0}))
  c=$( (grep -oE 'cov: [0-9]+' "$log" || true) | tail -1 | awk '{print $2}')
  f=$( (grep -oE 'ft: [0-9]+' "$log" || true) | tail -1 | awk '{print $2}')
  ((${c:-0} > cov)) && cov=${c:-0}
  ((${f:-0} > ft)) && ft=${f:-0}
  (grep -E 'contract violation|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY:' "$log" || true) |
    head -5 | sed "s|^|  $(basename "$log"): |"
done
corpus_now=$(find "$work/corpus" -type f | wc -l)
findings=$(find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
rate=$((elapsed > 0 ? execs / elapsed : execs))
echo "fuzz.sh: SUMMARY: $execs executions in $elapsed s ($rate/s, $jobs process(es)), coverage $cov edges / $ft features," \
     "corpus $seeds -> $corpus_now inputs, $findings crash/leak/timeout inputs; replay: $replayed inputs, ${#failed[@]} failed"
if ((findings > 0)); then
  echo "fuzz.sh: inputs that failed are in $work/artifacts/ (logs: $work/fuzz-*.log); reproduce with $bin FILE"
  find "$work/artifacts" -type f | sed 's/^/  /'
fi
if ((${#failed[@]} > 0 || findings > 0 || rc != 0)); then
  echo "fuzz.sh: FAILED (libFuzzer exit status $rc)"
  exit 1
fi
echo "fuzz.sh: passed"
