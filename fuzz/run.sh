#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for FUZZ_SECONDS each, one after the
# other, and says what each found; exits non-zero when any target crashed,
# hung or ran out of memory (its input is then in fuzz/artifacts/<target>/).
# `make fuzz` calls it; see CONTRIBUTING.md, "Fuzzing".
#
#   fuzz/run.sh [TARGET...]        every target when none is named
#
# FUZZ_SECONDS    seconds per target (default 60)
# FUZZ_SANITIZER  none (default) or address; address builds with
#                 -Zsanitizer=address, which stable Rust allows only with
#                 RUSTC_BOOTSTRAP=1 (set here for that case alone)
# FUZZ_ARGS       more libFuzzer flags, e.g. "-seed=1 -max_len=512"
#
# Each target grows a working corpus in fuzz/target/corpus/<target>/ (kept
# between runs, not committed) from its committed seeds, fuzz/corpus/<target>/,
# which stay as they are. Logs: fuzz/target/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")"

CARGO=${CARGO:-cargo}
CARGO_FUZZ_VERSION=0.13.2
seconds=${FUZZ_SECONDS:-60}
sanitizer=${FUZZ_SANITIZER:-none}
case $seconds in '' | *[!0-9]*) echo "FUZZ_SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;; esac

if ! "$CARGO" fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz $CARGO_FUZZ_VERSION (cargo install --locked)"
  "$CARGO" install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

# cargo-fuzz's instrumentation flags (-Cpasses=sancov-module, -Cllvm-args)
# are stable; only a sanitizer needs -Z flags, so nightly's features.
if [ "$sanitizer" != none ]; then
  export RUSTC_BOOTSTRAP=1
fi
# Release with debug assertions and overflow checks: an overflow is a crash.
flags=(--sanitizer "$sanitizer" --debug-assertions)

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <("$CARGO" fuzz list)
fi

echo "building the fuzz targets (sanitizer: $sanitizer)"
"$CARGO" fuzz build "${flags[@]}"

mkdir -p target/logs artifacts
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
summary=()
failed=0
for t in "${targets[@]}"; do
  # corpus/$t is the committed seed corpus; a target without one starts empty.
  mkdir -p "target/corpus/$t" "artifacts/$t" "corpus/$t"
  dict=()
  [ -f "dict/$t.dict" ] && dict=("-dict=dict/$t.dict")
  log="target/logs/$t.log"
  echo "== $t: ${seconds}s"
  st=0
  # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
  "$CARGO" fuzz run "${flags[@]}" "$t" "target/corpus/$t" "corpus/$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" ${FUZZ_ARGS:-} >"$log" 2>&1 || st=$?

  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  found=$(find "artifacts/$t" -type f -newer "$stamp" \
    \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/ in \1 s/p' "$log" | tail -n 1)
  line="$t: ${runs:-?} runs$took, coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} inputs"
  if [ "$st" -ne 0 ] || [ -n "$found" ]; then
    failed=$((failed + 1))
    # What libFuzzer said about the failure: the panic or the error, and the input.
    grep -E -A 12 "^error|panicked at|^==[0-9]+== ?ERROR|ERROR: libFuzzer|out-of-memory|Test unit written" "$log" | head -n 40 >&2 || true
    line="$line: FAILED (exit $st)"
    for f in $found; do
      line="$line"$'\n'"    input: fuzz/$f"$'\n'"    reproduce: cargo fuzz run --fuzz-dir fuzz ${flags[*]} $t fuzz/$f"
    done
    [ -n "$found" ] || line="$line, see fuzz/$log"
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "fuzzing summary (sanitizer $sanitizer, ${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
echo "fuzz: $(( ${#targets[@]} - failed )) passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "fuzzing found a failure: the inputs above reproduce it" >&2
  exit 1
fi
