#!/usr/bin/env bash
# gpu-check.sh - run the whole test suite on a machine with an NVIDIA GPU, and fail if the GPU tests
# did not really run (on a GPU machine "skipped" is a failure).
#
#   scripts/gpu-check.sh                 configure, build (needs Catch2: scripts/test.sh installs it) and test
#   scripts/gpu-check.sh BUILD_DIR       test an existing build, e.g. one built on another machine and
#                                        copied here (the GPU machine needs no compiler or Catch2 then)
#   scripts/gpu-check.sh --prepare BUILD_DIR   (on the build machine) also compile the Go test binary and
#                                        go-classic into BUILD_DIR/go-gpu, and the C# tests with mono
#                                        inside into BUILD_DIR/csharp-gpu, for GPU machines without Go
#                                        or mono
#   scripts/gpu-check.sh --sanitize BUILD_DIR  run the GPU test program under compute-sanitizer's four
#                                        tools (memcheck with --leak-check full, racecheck, synccheck,
#                                        initcheck); fails on any report. CUDOT_SANITIZE_TESTS is the
#                                        Catch2 test spec (default "~[faults]~[deliberate]": every GPU
#                                        case except the fault-injection ones, which compare the device's
#                                        free memory and so cannot run beside a sanitizer's own
#                                        allocations, and the two that make what a sanitizer reports on
#                                        purpose: a failing CUDA call of the caller's, and a hung
#                                        context's memory, kept by design). Each tool
#                                        runs each test case in its own process, CUDOT_SANITIZE_PARALLEL
#                                        (default 8) at a time, each stopped after
#                                        CUDOT_SANITIZE_CASE_TIMEOUT seconds (default 3600; a stopped
#                                        case counts as not clean); a case whose tool failed itself
#                                        ("Internal Sanitizer Error") is run again alone, and that run
#                                        decides; sanitize-summary.txt has the totals.
# After CTest (one process per test case), each Catch2 test program runs once more with all its cases in
# one process, as no case may depend on another (whole-process.txt: each run's cases passed, skipped and
# failed). A GPU case that skips fails the check, unless it needs a second GPU on a machine with one.
# Then cudot_mpi_dot with GPU contexts on 2 ranks (where mpirun exists, or .mpi-carry was carried), and
# the bindings against the GPU strategies (CUDOT_TEST_GPU=1: a missing GPU fails them) where their
# runtimes exist: Python (any python3 with numpy and pytest; also tests/python/own_arrays_check.py), Go
# and C# (the prepared binaries).
# Logs go to $OUT (if set) or ./gpu-check-logs. CUDOT_CTEST_ARGS adds arguments to ctest (e.g. -E bench).
# CUDOT_CHECK_PARTS (default "tests bindings") runs a part alone: "tests" is CTest, the whole-process
# runs and MPI; "bindings" is Python, Go and C#. (A GPU host that limits each command's time can run
# the two parts one after the other.)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
logs=${OUT:-$root/gpu-check-logs}
mkdir -p "$logs"

if [[ "${1:-}" == --prepare ]]; then
  build=$(cd "$2" && pwd)
  mkdir -p "$build/go-gpu"
  export GOPROXY=off GOFLAGS=-mod=mod GOCACHE=${GOCACHE:-/tmp/cudot-go-cache} GOPATH=${GOPATH:-/tmp/cudot-gopath}
  (cd bindings/go && go test -c -o "$build/go-gpu/cudot.test" .)
  (cd examples/go-classic && go build -o "$build/go-gpu/go-classic" .)
  echo "gpu-check: Go binaries in $build/go-gpu"
  # The C# tests as one program with mono inside (the GPU machine has no mono).
  CUDOT_LIBRARY=$build/libcudot.so bindings/csharp/tests/bundle/make-bundle.sh "$build/csharp-gpu" 2>/dev/null
  exit 0
fi

if [[ "${1:-}" == --sanitize ]]; then
  # Every (tool, test case) pair is its own process, CUDOT_SANITIZE_PARALLEL (default 8) at a time:
  # the sanitizers' cost is mostly on the host, so this takes the ~25 minutes the four tools need one
  # after another down to a few on a 16-core host.
  build=$(cd "$2" && pwd)
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$logs/gpu.txt"
  "$sanitizer" --version | tail -1 | tee -a "$logs/gpu.txt"
  work=$(mktemp -d)
  # Catch2 test specs treat , [ ] \ specially: escape them so each name selects exactly its case.
  # (Catch2 v2 exits with the number of cases it listed.)
  { "$build/tests/test_gpu" --list-test-names-only "${CUDOT_SANITIZE_TESTS:-~[faults]~[deliberate]}" || true; } | sed '/^$/d' |
    sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g' -e 's/\]/\\]/g' > "$work/cases"
  # racecheck first: its cases are the longest, so they should not be left for the end. A job is
  # "tool case mix": mix is "-" but for the threaded own-arrays case, which runs twice, its threads all
  # on streams of their own and all on per-thread streams. Its default mix of the two (one process)
  # finishes its 320 dots with the right bits under every tool, then never exits: a thread destroying its
  # stream waits in the driver (cuStreamDestroy, on a lock the tool's own thread also waits for), with
  # the stream synchronised first or not. Each form alone is clean; without a tool the mix never hung.
  for tool in racecheck memcheck synccheck initcheck; do
    awk -v tool="$tool" '{ if (index($0, "threads on their own streams and on per-thread streams"))
                             print tool, NR, "own\n" tool, NR, "per-thread"; else print tool, NR, "-" }' "$work/cases"
  done > "$work/jobs"
  export sanitizer build work
  run_one() {  # tool, case number (line of $work/cases), mix (- or CUDOT_TEST_THREAD_STREAMS); never fails
    local extra=() spec start rc=0 log mix=${3:--} mix_env=()
    [[ $1 == memcheck ]] && extra=(--leak-check full)
    spec=$(sed -n "$2p" "$work/cases")
    log="$work/$1-$(printf %03d "$2")$([[ $mix == - ]] || echo ".$mix").log"
    start=$(date +%s)
    [[ $mix == - ]] || mix_env=(CUDOT_TEST_THREAD_STREAMS="$mix")
    env "${mix_env[@]}" timeout "${CUDOT_SANITIZE_CASE_TIMEOUT:-3600}" \
      "$sanitizer" --tool "$1" "${extra[@]}" --error-exitcode 99 --print-limit 20 \
      "$build/tests/test_gpu" "$spec" > "$log" 2>&1 || rc=$?
    echo "exit $rc after $(( $(date +%s) - start )) s: $spec${mix_env:+ (${mix_env[*]})}" >> "$log"
  }
  export -f run_one
  start=$(date +%s)
  xargs -n 3 -P "${CUDOT_SANITIZE_PARALLEL:-8}" bash -c 'run_one "$1" "$2" "$3"' _ < "$work/jobs"
  # A tool that fails itself ("Internal Sanitizer Error", seen once from racecheck on an H100 while 12
  # sanitized processes shared the GPU) counts that as an error of the program. Such a case is run
  # again alone, and the lone run decides; the earlier log is kept after the others.
  retried=0
  for log in "$work"/*.log; do
    grep -q 'Internal Sanitizer Error' "$log" || continue
    job=$(basename "$log" .log)  # tool-NNN or tool-NNN.mix
    { echo "==== earlier run of ${job}, replaced by a run alone after its Internal Sanitizer Error:"; cat "$log"; } \
      > "$work/${job}.internal-error"
    case_id=${job%%.*} mix=-
    [[ $job == *.* ]] && mix=${job#*.}
    run_one "${case_id%-*}" "$((10#${case_id##*-}))" "$mix"
    retried=$((retried + 1))
  done
  status=0
  for tool in memcheck racecheck synccheck initcheck; do
    cat "$work/$tool"-*.log $(ls "$work/$tool"-*.internal-error 2>/dev/null) > "$logs/sanitize-$tool.log"
    cases=$(ls "$work/$tool"-*.log | wc -l)
    clean=0
    for log in "$work/$tool"-*.log; do
      grep -q -E '^exit 0 after' "$log" && grep -q -E '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$log" &&
        clean=$((clean + 1))
    done
    passed=$(grep -h -E '^All tests passed' "$work/$tool"-*.log | sed -E 's/.*\(([0-9]+) assertions?.*/\1/' | awk '{ s += $1 } END { print s + 0 }')
    echo "compute-sanitizer $tool: $clean of $cases test cases clean (exit 0 and a zero summary);" \
         "Catch2: $passed assertions passed" | tee -a "$logs/sanitize-summary.txt"
    [[ $clean == "$cases" ]] || status=1
  done
  echo "wall time, all tools: $(( $(date +%s) - start )) s; $retried case(s) run again alone after a sanitizer-internal error" |
    tee -a "$logs/sanitize-summary.txt"
  rm -rf "$work"
  exit $status
fi

build=${1:-}
if [[ -z "$build" ]]; then
  build=build-gpu
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native
  cmake --build "$build" -j"$(nproc)"
fi
build=$(cd "$build" && pwd)

# A build made elsewhere names its source and build folders by absolute path; where those paths do not
# exist here, make them point at this checkout so CTest finds everything.
src_then=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
bin_then=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
if [[ -n "$src_then" && ! -e "$src_then" ]]; then
  mkdir -p "$(dirname "$src_then")" && ln -s "$root" "$src_then"
fi
if [[ -n "$bin_then" && ! -e "$bin_then" ]]; then
  ln -s "$build" "$bin_then"
fi

cmake_then=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$build/CMakeCache.txt")
if [[ -n "$cmake_then" && ! -e "$cmake_then" ]] && command -v cmake >/dev/null; then
  ln -s "$(command -v cmake)" "$cmake_then"  # CTest runs script tests with the cmake that configured them
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv | tee "$logs/gpu.txt"
export CUDOT_CLASSIC_TEST_GPU=1  # the classic C test also runs its GPU strategies
status=0
parts=${CUDOT_CHECK_PARTS:-tests bindings}
if [[ " $parts " == *" tests "* ]]; then
(cd "$build" && ctest --output-on-failure -j4 ${CUDOT_CTEST_ARGS:-} 2>&1) | tee "$logs/ctest.log" || status=1
# A GPU case skipped on a GPU machine did not run: a failure, unless it needs a second GPU and this machine
# has one (such a case prints "SKIPPED: needs two GPUs ..."; CTest keeps each test's output in LastTest.log).
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
output_of() {  # CTest test name -> its output in LastTest.log
  awk -v name="$1" '
    !found && index($0, " Testing: ") && substr($0, index($0, " Testing: ") + 10) == name { found = 1; next }
    found && !reading && /^Output:$/ { reading = 1; getline; next }
    reading && /^<end of output>$/ { exit }
    reading { print }' "$build/Testing/Temporary/LastTest.log"
}
while IFS= read -r name; do
  if [[ $gpus -lt 2 ]] && output_of "$name" | grep -q "^SKIPPED: needs two GPUs"; then
    echo "gpu-check: skipped here (one GPU): $name"
  else
    echo "gpu-check: GPU test skipped on a machine with $gpus GPU(s): $name" >&2
    status=1
  fi
done < <(sed -n 's/^[[:space:]]*[0-9]* - \(gpu:.*\) (Skipped)$/\1/p' "$logs/ctest.log")

# ---- each Catch2 test program once as one process ----
# CTest runs each case in a process of its own, which hides a case that leaves the process changed for
# the cases after it (the current GPU, an environment variable, a test knob); here every program runs
# all its cases in one process, as a user's program would run its calls: no case may depend on another.
# tests/support/isolation.cpp fails a case that leaves such state changed, naming what. One program at a
# time, after CTest: the fault cases compare the GPU's free memory, so nothing may run beside them.
whole_counts() {  # a Catch2 console log -> "N test cases: P passed, S skipped, F failed; A assertions"
  local log=$1 line cases=0 passed=0 failed=0 skipped=0 assertions=0
  line=$(grep -E '^test cases skipped: [0-9]+ of ' "$log" | tail -1 || true)
  [[ $line =~ skipped:\ ([0-9]+) ]] && skipped=${BASH_REMATCH[1]}
  line=$(grep -E '^All tests passed' "$log" | tail -1 || true)
  if [[ $line =~ \(([0-9]+)\ assertions?\ in\ ([0-9]+)\ test\ cases?\) ]]; then
    assertions=${BASH_REMATCH[1]} cases=${BASH_REMATCH[2]} passed=${BASH_REMATCH[2]}
  else
    line=$(grep -E '^test cases: ' "$log" | tail -1 || true)
    [[ $line =~ cases:\ +([0-9]+) ]] && cases=${BASH_REMATCH[1]}
    [[ $line =~ ([0-9]+)\ passed ]] && passed=${BASH_REMATCH[1]}
    [[ $line =~ ([0-9]+)\ failed ]] && failed=${BASH_REMATCH[1]}
    line=$(grep -E '^assertions: ' "$log" | tail -1 || true)
    [[ $line =~ assertions:\ +([0-9]+) ]] && assertions=${BASH_REMATCH[1]}
  fi
  # Catch2 counts a skipped case as passed (tests/support/isolation.hpp): the listener's line says which.
  echo "$cases test cases: $((passed - skipped)) passed, $skipped skipped, $failed failed; $assertions assertions"
}
failed_cases() {  # the names (and sections) of the cases with a failure in a Catch2 console log
  awk 'length($0) == 79 && /^-+$/ { header = !header; if (header) name = ""; next }
       header { name = name (name == "" ? "" : " / ") $0; next }
       /: FAILED:$/ && name != "" && !(name in seen) { seen[name] = 1; print "  " name }' "$1"
}
for program in tests/test_cpu tests/test_pool_limits tests/test_gpu tests/reliability/test_bad_input \
               tests/reliability/test_stress tests/reliability/test_stress_gpu; do
  name=$(basename "$program")
  if [[ ! -x "$build/$program" ]]; then
    echo "==== whole process: $name NOT RUN (not in this build)" | tee -a "$logs/whole-process.txt"
    continue
  fi
  echo "==== whole process: $name (every case in one process; log: whole-$name.log)"
  rc=0
  (cd "$(dirname "$build/$program")" && "./$name" 2>&1) > "$logs/whole-$name.log" || rc=$?
  echo "whole process: $name: $(whole_counts "$logs/whole-$name.log") (exit $rc)" | tee -a "$logs/whole-process.txt"
  if [[ $rc != 0 ]]; then
    failures=$(failed_cases "$logs/whole-$name.log")
    [[ -n $failures ]] || failures=$(tail -n 5 "$logs/whole-$name.log")  # no case failed: none ran
    printf 'whole process: %s failed in:\n%s\n' "$name" "$failures" | tee -a "$logs/whole-process.txt"
    status=1
  fi
  # The same rule as for CTest's GPU cases: on a GPU machine only a case that needs a second GPU may
  # skip, and only where there is one GPU.
  if [[ $name == *gpu* ]]; then
    skips=$(grep "^SKIPPED: " "$logs/whole-$name.log" || true)
    [[ $gpus -lt 2 ]] && skips=$(grep -v "^SKIPPED: needs two GPUs" <<<"$skips" || true)
    if [[ -n $skips ]]; then
      echo "gpu-check: $name skipped GPU cases on a machine with $gpus GPU(s):" >&2
      echo "$skips" >&2
      status=1
    fi
  fi
done

# ---- cudot_mpi_dot with GPU contexts: 2 ranks, rank r on GPU r % (number of GPUs) ----
# MPI: the machine's own, or a copy of Debian's carried in .mpi-carry (scripts/mpi-carry.sh).
if [[ -x "$build/tests/test_mpi" ]]; then
  [[ -f .mpi-carry/activate.sh ]] && source .mpi-carry/activate.sh
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
  if command -v mpirun >/dev/null; then
    for memory in pinned mapped managed auto; do
      echo "==== mpi: 2 ranks, $memory contexts, $gpus GPU(s)"
      CUDOT_MPI_TEST_MEMORY=$memory CUDOT_MPI_TEST_GPUS=$gpus \
        mpirun -np 2 -x CUDOT_MPI_TEST_MEMORY -x CUDOT_MPI_TEST_GPUS "$build/tests/test_mpi" 2>&1 |
        tee -a "$logs/mpi-gpu.log" || status=1
    done
  else
    echo "==== mpi: NOT RUN (no mpirun here, no .mpi-carry)"
  fi
fi

fi  # tests

# ---- bindings against the GPU strategies ----
[[ " $parts " == *" bindings "* ]] || exit $status
export CUDOT_TEST_GPU=1 CUDOT_LIBRARY=$build/libcudot.so CUDOT_CLASSIC_LIBRARY=$build/libcudot_classic.so
python=""
for candidate in python3 /usr/bin/python3 /opt/torch/.venv/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import numpy, pytest" 2>/dev/null; then
    python=$(command -v "$candidate"); break
  fi
done
if [[ -n "$python" ]]; then
  echo "==== python binding on the GPU ($python)"
  PYTHON=$python bindings/python/test.sh 2>&1 | tee "$logs/python.log" || status=1
  echo "==== the outside check of own arrays: numpy, CuPy, PyTorch, raw cudaMalloc (tests/python/own_arrays_check.py)"
  PYTHONPATH=$root/bindings/python "$python" tests/python/own_arrays_check.py 2>&1 | tee "$logs/outside-check.log" || status=1
else
  echo "==== python binding: NOT RUN (no python3 with numpy and pytest here)"
fi
if [[ -x "$build/go-gpu/cudot.test" ]]; then
  echo "==== go binding on the GPU"
  (cd bindings/go && "$build/go-gpu/cudot.test" -test.count=1 -test.v 2>&1) | tee "$logs/go.log" || status=1
  echo "go: $(grep -c -- '--- PASS' "$logs/go.log" || true) passed, $(grep -c -- '--- SKIP' "$logs/go.log" || true)" \
       "skipped, $(grep -c -- '--- FAIL' "$logs/go.log" || true) failed"
  for memory in pinned mapped managed auto; do
    CUDOT_MEMORY=$memory "$build/go-gpu/go-classic" -lib "$CUDOT_CLASSIC_LIBRARY" 2>&1 | tee -a "$logs/go.log" || status=1
  done
else
  echo "==== go binding: NOT RUN (no prepared binaries: scripts/gpu-check.sh --prepare BUILD_DIR)"
fi
if command -v mono >/dev/null && command -v nunit-console >/dev/null && command -v nuget >/dev/null; then
  echo "==== C# binding on the GPU (mono)"
  bindings/csharp/test.sh 2>&1 | tee "$logs/csharp.log" || status=1
elif [[ -x "$build/csharp-gpu/cudot-csharp-tests" ]]; then
  echo "==== C# binding on the GPU (the prepared bundle: its NUnit tests, mono inside)"
  "$build/csharp-gpu/cudot-csharp-tests" 2>&1 | tee "$logs/csharp.log" || status=1
else
  echo "==== C# binding: NOT RUN (no mono here, no prepared bundle: scripts/gpu-check.sh --prepare BUILD_DIR)"
fi
exit $status
