#!/usr/bin/env bash
# Builds hrxarray with sanitizers and runs the tests under them:
#
#   ext/check/sanitize.sh [asan|tsan|all] [pytest arguments...]     (default: all)
#
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer, with float-to-integer overflow
#         checks (-DHRX_SANITIZE=address,undefined,float-cast-overflow): the whole suite
#         (or the given pytest arguments)
#   tsan  ThreadSanitizer (-DHRX_SANITIZE=thread): the scheduling, array-futures, resident
#         exchange and lifecycle tests (or the given pytest arguments), with
#         ext/check/tsan.supp for the reports of code that is not ours (CPython, NumPy, glibc)
#   report <dir> <status>  re-reads a finished run: build/sanitize-<kind> and pytest's status
#   The tests that fork a threaded process skip themselves under both (tests/helpers.py:
#   skip_fork_under_sanitizers says why).
#
# Each kind has its own virtual environment and build directory under
# build/sanitize-<kind>/ (venv/, cmake/, logs/), so the normal .venv and build/
# are left alone; the first run builds everything (6 to 10 minutes per kind on
# 2 cores), later runs rebuild incrementally. Reports are written to
# build/sanitize-<kind>/logs/ and printed at the end; the script fails when the
# tests fail or any report was written.
#
# Python itself is not instrumented, so the sanitizer runtime of the compiler
# that built the extension (GCC's; CXX defaults to g++) is preloaded into it and
# into every subprocess the tests start (they inherit the environment), with
# libstdc++: the runtime looks up __cxa_throw when it starts, and Python does
# not load libstdc++ before it imports the extension (without it, the first
# C++ exception stops the process with "CHECK failed ... real___cxa_throw").
# PYTHONMALLOC=malloc puts Python's objects on the heap the sanitizers watch.
# LeakSanitizer is off: libpython has no frame pointers, so the stacks of
# CPython's allocations are cut short, and objects a test leaves alive at
# interpreter exit on purpose (tests/test_dlpack_core.py's exit tests) are
# reported as leaks of ours; no suppression tells those from a real leak
# (the tests check live_bytes for the runtime's own storage instead).
# Hypothesis keeps its profile (the whole suite takes about 2 minutes under
# ASan here, against 45 s without). Extra sanitizer options can be appended
# through the caller's ASAN_OPTIONS, UBSAN_OPTIONS and TSAN_OPTIONS (later
# options win).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KIND=${1:-all}
[ $# -gt 0 ] && shift
PYTHON=${PYTHON:-python3}
export CXX=${CXX:-g++}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

# runtime <library>: the path of one of the compiler's runtime libraries
runtime() {
  local lib
  lib=$("$CXX" -print-file-name="$1")
  if [ "$lib" = "$1" ] || [ ! -e "$lib" ]; then
    echo "sanitize.sh: $CXX has no $1 (Debian: apt-get install g++ brings libasan, libubsan and libtsan)" >&2
    exit 2
  fi
  echo "$lib"
}

# build <kind> <HRX_SANITIZE value>: venv and instrumented install in build/sanitize-<kind>
build() {
  local dir=build/sanitize-$1
  [ -x "$dir/venv/bin/python" ] || "$PYTHON" -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --disable-pip-version-check \
    scikit-build-core nanobind==3.1.0 cmake ninja numpy ml_dtypes pytest hypothesis
  "$dir/venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
    --config-settings=build-dir="$dir/cmake" --config-settings=cmake.define.HRX_SANITIZE="$2" \
    --config-settings=install.strip=false ".[test]"
  # The check that the module really is instrumented (a stale cache or an
  # ignored option would otherwise make a clean run meaningless); not by
  # importing it, which needs the preload.
  local so
  so=$(echo "$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"/hrxarray/_core.*.so)
  if ! nm -D "$so" | grep -c "$3" >/dev/null; then
    echo "sanitize.sh: $so is not built with -fsanitize=$2 (no $3)" >&2
    exit 2
  fi
}

# Note [Reports that bypass the log files]: UBSan linked beside ASan (GCC's
# separate libubsan) ignores log_path and writes to stderr, and a process it
# halts (halt_on_error) ends without pytest's summary: before, such a run
# printed nothing and the script said "reports: none". So pytest's whole
# output is kept (tee) in build/sanitize-<kind>/pytest.out, and the
# sanitizers exit with HALTED (their exitcode option) instead of 1, which
# pytest never uses: a halted pytest, or a test's subprocess halted and
# reported through the test's failure, is a finding. pytest captures only
# sys.stdout/sys.stderr (--capture=sys), not file descriptor 2: with its
# default (fd) capture, a report a lane thread wrote to stderr went into the
# test's capture file and was lost when the sanitizer ended the process
# (fmath's sinturns of NaN was such a report: exit 86, "reports: none").
HALTED=86
# Lines that start a sanitizer report, whichever stream carried it.
MARKERS='runtime error: |ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ERROR: ThreadSanitizer|SUMMARY: [A-Za-z]*Sanitizer|ERROR: LeakSanitizer'

# report <dir> <pytest status>: print the sanitizer logs and what pytest's
# output carried; fail on any, on a halted run and on failed tests
report() {
  local dir=$1 status=$2 logs=$1/logs found=0 f why=""
  mkdir -p "$logs"
  if [ -f "$dir/pytest.out" ] && grep -Eq "$MARKERS" "$dir/pytest.out"; then
    # from each report's first line to the next blank line: the report and its stack
    awk -v re="$MARKERS" '$0 ~ re {on = 1} on {print} /^[[:space:]]*$/ {on = 0}' \
      "$dir/pytest.out" >"$logs/output-reports"
  fi
  for f in "$logs"/*; do
    [ -e "$f" ] || continue
    found=1
    echo "==== $f"
    cat "$f"
  done
  [ "$status" = "$HALTED" ] && why="; a sanitizer ended pytest: exit status $HALTED"
  if [ "$found" = 1 ] || [ "$status" != 0 ]; then
    echo "sanitize.sh $(basename "$dir"): FAILED (pytest status $status$why; reports: $([ "$found" = 1 ] && echo "$logs/" || echo none))" >&2
    return 1
  fi
  echo "sanitize.sh $(basename "$dir"): clean (pytest passed, no reports)"
}

# run <kind> <pytest arguments...>: pytest under the kind's environment
run() {
  local kind=$1
  shift
  local dir=build/sanitize-$kind
  rm -rf "$dir/logs"
  mkdir -p "$dir/logs"
  local status=0
  # From the root, as the normal suite: `import hrxarray` finds the installed
  # package (src/ layout). No cache provider: nothing written into the tree.
  PYTHONMALLOC=malloc "$dir/venv/bin/pytest" -p no:cacheprovider -q --capture=sys "$@" 2>&1 | tee "$dir/pytest.out" ||
    status=${PIPESTATUS[0]}
  report "$dir" "$status"
}

asan() {
  build asan address,undefined,float-cast-overflow __asan_
  local lib opts=exitcode=$HALTED:detect_leaks=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1
  lib="$(runtime libasan.so) $(runtime libstdc++.so)"
  LD_PRELOAD="$lib" \
    ASAN_OPTIONS="$opts:log_path=$ROOT/build/sanitize-asan/logs/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="exitcode=$HALTED:print_stacktrace=1:halt_on_error=1:log_path=$ROOT/build/sanitize-asan/logs/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    run asan "$@"
}

tsan() {
  build tsan thread __tsan_
  [ $# -gt 0 ] || set -- tests/test_scheduling.py tests/test_array_futures.py tests/test_resident.py tests/test_lifecycle.py
  local lib
  lib="$(runtime libtsan.so) $(runtime libstdc++.so)"
  LD_PRELOAD="$lib" \
    TSAN_OPTIONS="exitcode=$HALTED:suppressions=$ROOT/ext/check/tsan.supp:second_deadlock_stack=1:log_path=$ROOT/build/sanitize-tsan/logs/tsan${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    run tsan "$@"
}

case $KIND in
  report) report "$@" ;;  # report <dir> <status>: the check alone, on a kept run (and for its test)
  asan) asan "$@" ;;
  tsan) tsan "$@" ;;
  all) rc=0; asan "$@" || rc=1; tsan "$@" || rc=1; exit $rc ;;
  *) echo "usage: $0 [asan|tsan|all] [pytest arguments...] | $0 report <dir> <pytest status>" >&2; exit 2 ;;
esac
