#!/usr/bin/env bash
# simengine-balance on small files: output format, the worked example of paper 002 Sec. 6.2,
# caps, and clear errors (file and line named, exit 2 on bad usage).
set -uo pipefail
bin="$SE_BUILD_DIR/src/simengine-balance"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib_expect.sh"

# 13 items of cost 1, worker 1 four times slower: equal counts 7 + 6 give 24 s, then 9 + 4 (16 s),
# 10 + 3 (12 s) and the optimum 11 + 2 (11 s); the rate method gets there in one update. A cap of
# one item on worker 1 forces 12 + 1 (12 s).
for i in $(seq 13); do echo 1; done > "$work/costs"
printf '1\n4\n' > "$work/factors"
expect "help" 0 "Usage: simengine-balance" -- "$bin" --help
expect "iterations printed" 0 "^iter 0 wall 24$" -- "$bin" --iterations 3 "$work/costs" "$work/factors"
expect "best and intervals" 0 "best 11 intervals 0 10 11 12" -- "$bin" --iterations 4 "$work/costs" "$work/factors"
expect "optimal" 0 "optimal 11$" -- "$bin" "$work/costs" "$work/factors"
expect "rate method" 0 "best 11 intervals 0 10 11 12" -- "$bin" --method rate --iterations 2 "$work/costs" "$work/factors"
out=$("$bin" --iterations 5 "$work/costs" "$work/factors")
if [ "$(grep -c '^iter ' <<<"$out")" -eq 5 ]; then pass=$((pass+1)); echo "ok: 5 iteration lines"
else fail=$((fail+1)); echo "FAIL: expected 5 iteration lines"; echo "$out"; fi
expect "capacity" 0 "best 12 intervals 0 11 12 12" -- "$bin" --capacity -,1 "$work/costs" "$work/factors"
expect "capacity too small" 1 "capacities hold" -- "$bin" --capacity 5,4 "$work/costs" "$work/factors"

# Bad usage: exit 2.
expect "no files" 2 "needs a COSTS file" -- "$bin"
expect "unknown option" 2 "unknown option '--bogus'" -- "$bin" --bogus "$work/costs" "$work/factors"
expect "bad iterations" 2 "--iterations 'x'" -- "$bin" --iterations x "$work/costs" "$work/factors"
expect "bad method" 2 "unknown balancing method 'fast'" -- "$bin" --method fast "$work/costs" "$work/factors"
expect "bad capacity" 2 "--capacity '3,y'" -- "$bin" --capacity 3,y "$work/costs" "$work/factors"
expect "capacity count" 2 "2 entries expected" -- "$bin" --capacity 3 "$work/costs" "$work/factors"
# Bad files: exit 1, the file and line named.
printf '1\n2\nabc\n' > "$work/bad"
expect "not a number" 1 "bad:3: 'abc' is not a finite number" -- "$bin" "$work/bad" "$work/factors"
printf '1\n0\n' > "$work/zero"
expect "zero factor" 1 "zero:2: a factor must be > 0" -- "$bin" "$work/costs" "$work/zero"
printf '1\n-2\n' > "$work/neg"
expect "negative cost" 1 "neg:2: a cost must be >= 0" -- "$bin" "$work/neg" "$work/factors"
expect "missing file" 1 "cannot open '$work/missing'" -- "$bin" "$work/missing" "$work/factors"
printf '1\n' > "$work/one"
expect "more workers than items" 1 "2 workers" -- "$bin" "$work/one" "$work/factors"
expect_summary
