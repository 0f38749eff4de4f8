#!/usr/bin/env bash
# Instructions per call of each case, counted by callgrind: repeatable on a noisy machine.
# Runs each case for 1 000 and 11 000 calls and divides the difference by 10 000, so set-up
# cancels out (PROFILE_BIN=path runs another build of the driver). Clock reads are system calls under valgrind and are not counted: see BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PROFILE_BIN:-}" ]; then
  cargo bench -p fusebox-benches --bench profile --no-run 2>/dev/null
fi
bin=${PROFILE_BIN:-$(ls -t target/release/deps/profile-* | grep -v '\.d$' | head -1)}
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 | awk '/refs:/ {gsub(",", "", $NF); print $NF}'; }
for c in ${@:-bare time count attr timed attr_timed timeout recloser_timeout open tripped recloser_open bulkhead attr_bulkhead semaphore keyed attr_keyed attr_keyed8 attr_keyed_host8 attr_keyed_display8 failsafe recloser}; do
  a=$(count "$c" 1000); b=$(count "$c" 11000)
  echo "$c $(( (b - a) / 10000 ))"
done
