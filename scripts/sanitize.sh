#!/usr/bin/env bash
# sanitize.sh - the CPU path under AddressSanitizer + UndefinedBehaviorSanitizer, under ThreadSanitizer,
# and under valgrind memcheck. Any report fails the run. scripts/test.sh calls it (CI); it needs the
# packages test.sh installs (g++, Catch2, MPFR, valgrind).
#
#   scripts/sanitize.sh [asan|tsan|valgrind]...     (default: all three)
#
# Each job builds the library without CUDA (the CPU path is what these tools can see; the GPU path is
# checked by compute-sanitizer on a GPU machine: scripts/gpu-check.sh --sanitize) in its own folder;
# valgrind may run an existing build's programs instead (CUDOT_VALGRIND_BUILD; scripts/test.sh does).
# Logs and a one-line summary per job go to ${SANITIZE_LOGS:-build-sanitize-logs}.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
logs=${SANITIZE_LOGS:-build-sanitize-logs}
mkdir -p "$logs"
summary=$logs/summary.txt
: > "$summary"
# Without MPI: Open MPI's own allocations at exit would fill LeakSanitizer's report, and its progress
# threads TSan's; libcudot_mpi uses only the public API these jobs already cover.
common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDOT_WITH_CUDA=OFF -DCUDOT_BUILD_BENCH=OFF -DCUDOT_WITH_MPI=OFF)
# Not under sanitizers: the install check builds an unsanitized consumer against the library, and the
# bench/accuracy programs are not built without CUDA.
skip='^(install|bench|accuracy):'
status=0

note() { echo "$*" | tee -a "$summary"; }

configure_and_build() {  # folder, extra cmake arguments...
  local dir=$1 start=$SECONDS; shift
  cmake -S . -B "$dir" "${common[@]}" "$@" > "$logs/$dir-configure.log"
  cmake --build "$dir" -j"$jobs" > "$logs/$dir-build.log" 2>&1 || { tail -30 "$logs/$dir-build.log"; return 1; }
  note "$dir: built in $((SECONDS - start)) s"
}

run_ctest() {  # name, folder, ctest arguments...
  local name=$1 dir=$2; shift 2
  local start=$SECONDS
  if (cd "$dir" && ctest --output-on-failure -j"$jobs" -E "${skip_here:-$skip}" "$@") > "$logs/$name.log" 2>&1; then
    note "$name: $(grep -E 'tests passed|tests failed' "$logs/$name.log" | tail -1) ($((SECONDS - start)) s)"
  else
    status=1
    tail -60 "$logs/$name.log"
    note "$name: FAILED: $(grep -E 'tests passed|tests failed' "$logs/$name.log" | tail -1) (log: $logs/$name.log)"
  fi
}

asan() {
  # -O1 (the sanitizers' usual level): the vector kernel copies build about a fifth faster than at -O2
  # under both instrumentations, which made this the CI run's longest build.
  configure_and_build build-asan -DCUDOT_SANITIZE="address;undefined" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG"
  # detect_leaks: LeakSanitizer runs at every test program's exit; any leak is an error.
  # Not the fork case whose parent has threads inside inits and deinits while it forks: the allocator of
  # GCC 12's libasan is not locked around fork(), so a child forked while another thread holds one of
  # its size-class locks waits on that lock forever at its first malloc (in
  # SizeClassAllocator64::GetFromAllocator), now and then. glibc's malloc is locked around fork, so this
  # is the sanitizer's, not cudot's; the case runs natively on every CI run, and the other fork cases run
  # here.
  skip_here="$skip|fork: while other threads are inside dots" \
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest "asan+ubsan" build-asan
}

tsan() {
  configure_and_build build-tsan -DCUDOT_SANITIZE=thread
  # Among the cases: tests/test_messages.cpp, whose threads read cudot_last_error while others fail on
  # the same context (any race between those reads and the writes is a report).
  # Not the fork cases: TSan does not support fork() in a process with threads, and its deadlock
  # detector stops at 64 locks held at once (cudot's fork handler holds the registry's 256 shards).
  # Nor the two long single-threaded sweeps (every size, every instruction-set copy): one thread gives TSan
  # nothing to see, they would take most of its time, and they run natively and under ASan. Nor the
  # 8-thread pooled-dot case ([slow-under-checkers]: many times slower under TSan and valgrind than
  # natively, why not yet known; it runs under ASan): the 32-thread stress program keeps TSan's and
  # valgrind's eyes on threads sharing the pool. Nor the exact mode's 2^31 products, one long loop of one
  # dot (its pieces share the pool as the exact cases that stay do); it runs natively and under ASan.
  skip_here="$skip|fork|counts come out exact at every size|short tiles give the baseline copy|private contexts on 8 threads|exact: 2\\^31 products" \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest "tsan" build-tsan
}

# test_cpu under memcheck on both cores: valgrind runs a process's threads one at a time, so one process
# keeps one core busy. The cases the filter selects are dealt in turn into eight lists (Catch2's
# --input-file; commas and backslashes in names escaped), and two workers take the next list as each
# finishes one, which evens out the long cases. The lists must together name every case, else the cases
# run in one process as before. Uses vg, logs and note from the caller.
valgrind_test_cpu_shards() {  # program, filter
  local prog=$1 filter=$2 start=$SECONDS dir="$logs/test_cpu-shards" lists=8 k all listed=0 codes=0 what
  rm -rf "$dir"
  mkdir -p "$dir"
  "$prog" "$filter" --list-test-names-only | sed -e '/^$/d' -e 's/\\/\\\\/g' -e 's/,/\\,/g' > "$dir/names.txt"
  all=$(wc -l < "$dir/names.txt")
  awk -v d="$dir" -v lists="$lists" '{ print > (d "/list-" (NR % lists) ".txt") }' "$dir/names.txt"
  for k in "$dir"/list-*.txt; do
    listed=$((listed + $("$prog" -f "$k" --list-test-names-only | sed '/^$/d' | wc -l)))
  done
  if ((all > 1 && listed == all)); then
    # shellcheck disable=SC2016
    printf '%s\n' "$dir"/list-*.txt | xargs -P 2 -I{} sh -c '"$@" -f "$0" > "$0.log" 2>&1' {} "${vg[@]}" "$prog" ||
      codes=1
    what="$all cases, $lists lists on two workers"
  else
    "${vg[@]}" "$prog" "$filter" > "$dir/list-all.txt.log" 2>&1 || codes=1
    what="$all cases in one process (the lists named $listed)"
  fi
  if ((codes == 0)); then
    note "valgrind test_cpu: clean ($what, $((SECONDS - start)) s)"
  else
    for k in "$dir"/*.log; do tail -40 "$k"; done
    note "valgrind test_cpu: FAILED ($what; logs: $dir/*.log)"
    return 1
  fi
}

valgrind_memcheck() {
  # CUDOT_VALGRIND_BUILD: an existing build folder whose programs to run (test.sh passes its main build,
  # which saves a build; its CUDA runtime, linked in, finds no driver on CI and was seen clean under
  # memcheck); otherwise a CPU-only build of its own.
  local b=${CUDOT_VALGRIND_BUILD:-build-valgrind}
  if [[ -z ${CUDOT_VALGRIND_BUILD:-} ]]; then configure_and_build build-valgrind; else note "valgrind: the programs of $b"; fi
  # The compiled test programs, each under memcheck: any error, or any definite or indirect leak, exits
  # 97. Valgrind runs threads one at a time and many times slower, so the stress and soak programs get fewer
  # operations here than in the native and sanitizer jobs (same code paths).
  local vg=(valgrind --quiet --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite,indirect
            --show-leak-kinds=definite,indirect)
  local failed=0
  # test_cpu without its fork cases: a forked child still owns the bookkeeping of threads that did not
  # follow it into the child (std::thread's start state), which memcheck counts as lost at the child's exit.
  # Nor the [slow-under-checkers] cases: the three single-threaded sweeps (every size, every instruction-set
  # copy, the literal order) would take most of test_cpu's time here and repeat the code paths of the
  # cases that stay; they run natively and under ASan+UBSan, which also sees reads past a buffer's end.
  # Nor two threaded cases that create and destroy contexts on several threads (messages racing failures,
  # calls racing deinit): each init and deinit makes mmap calls, which under valgrind (one thread at a
  # time) make them many times slower; TSan and ASan run them. Nor the [accuracy] and [large] cases:
  # they weigh numbers on long vectors through the code paths the other cases take, about half of
  # test_cpu's time, which under memcheck is several minutes; ASan+UBSan and TSan run them.
  local cpu_filter="~[fork]~[slow-under-checkers]~[accuracy]~[large]"
  valgrind_test_cpu_shards "$b/tests/test_cpu" "$cpu_filter" || failed=1
  local progs=(
    "$b/tests/reliability/test_bad_input"
    "$b/tests/reliability/test_stress"
    "$b/tests/reliability/cudot-soak --memory host --cycles 2000 --n 1000 --dtype f32,f64,f16,bf16,i8,u8"
    "$b/tests/test_shared_c"
    "$b/tests/test_classic_c"
    "$b/quickstart")
  local prog start
  for prog in "${progs[@]}"; do
    start=$SECONDS
    local name; name=$(basename "${prog%% *}")
    # shellcheck disable=SC2086
    if CUDOT_STRESS_OPS=${CUDOT_VALGRIND_STRESS_OPS:-2000} "${vg[@]}" $prog > "$logs/valgrind-$name.log" 2>&1; then
      note "valgrind $name: clean ($((SECONDS - start)) s)"
    else
      failed=1
      tail -40 "$logs/valgrind-$name.log"
      note "valgrind $name: FAILED (exit $?; log: $logs/valgrind-$name.log)"
    fi
  done
  ((failed == 0)) || status=1
}

targets=("$@")
((${#targets[@]})) || targets=(asan tsan valgrind)
for t in "${targets[@]}"; do
  case $t in
    asan) asan ;;
    tsan) tsan ;;
    valgrind) valgrind_memcheck ;;
    *) echo "sanitize.sh: unknown job $t" >&2; exit 2 ;;
  esac
done
echo "==== sanitize.sh summary"; cat "$summary"
exit $status
