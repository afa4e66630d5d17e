#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Filters of several segments: growable filters (create --grow) and
# windows of generations (create --generations), alone and with several
# processes at once.

bats_require_minimum_version 1.5.0
load helpers

# json_check PROGRAM FILE: runs the python3 PROGRAM with FILE's stats
# --json as d; an assert that fails says which.
json_check() {
	bloom stats --json "$2" >stats.json
	python3 -c 'import json; d = json.load(open("stats.json"))
'"$1"
}

# until_traced FILE PATTERN: waits until strace has written PATTERN to FILE,
# 60 s at most (a loaded machine, bloom built with AddressSanitizer).
until_traced() {
	local i

	for i in $(seq 1 1200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "after 60 s, no '$2' in $1"
	return 1
}

# A test that stops a traced bloom ($stopped, under strace $tracer) ends
# both, whether it passed or failed.
teardown() {
	if [ -n "${stopped:-}" ]; then
		kill -9 "$stopped" 2>/dev/null || true
	fi
	if [ -n "${tracer:-}" ]; then
		# shellcheck disable=SC2046 # its children's PIDs, if any
		kill -9 $(cat "/proc/$tracer/task/$tracer/children" 2>/dev/null) \
			2>/dev/null || true
		kill -9 "$tracer" 2>/dev/null || true
		wait "$tracer" 2>/dev/null || true
	fi
	drop_claim_tables
}

@test "grow: 40 times the first capacity, nothing new is lost" {
	bloom create --grow --seed 7 -n 1000 -p 0.01 g.bf
	keys 40000 >in
	run -0 --separate-stderr bloom add --new g.bf in
	[ "$stderr" = "" ]
	new=$(printf '%s\n' "$output" | wc -l)
	echo "new lines: $new of 40000"
	# Only false positives may be missing: at most the filter's rate.
	[ "$new" -ge 39600 ] && [ "$new" -le 40000 ]
	run -1 bloom check -v g.bf in
	[ "$output" = "" ]
	[ "$(json g.bf 'd["mode"]')" = grow ]
	[ "$(json g.bf 'len(d["segments"])')" = 6 ]
	[ "$(json g.bf '[s["capacity"] for s in d["segments"]]')" = \
		"[1000, 2000, 4000, 8000, 16000, 32000]" ]
	# One process: every segment but the newest takes exactly its
	# capacity, and the newest the rest.
	[ "$(json g.bf '[s["inserted"] for s in d["segments"]][:5]')" = \
		"[1000, 2000, 4000, 8000, 16000]" ]
	[ "$(json g.bf 'd["inserted"]')" -eq "$new" ]
	# Tighter rates: P (1 - r) r^i with r = 0.9.
	[ "$(json g.bf '" ".join("%.6g" % s["target_fpr"] for s in d["segments"])')" = \
		"$(python3 -c 'print(" ".join("%.6g" % (0.01 * (1 - 0.9) * 0.9 ** i) for i in range(6)))')" ]
	[ "$(json g.bf 'd["over_capacity"]')" = False ]
	# The file holds its segments, each on a page boundary.
	[ "$(stat -c %s g.bf)" -eq "$(json g.bf 'd["bytes"]')" ]
}

@test "grow: a 32-times grown filter keeps its rate at or below -p" {
	bloom create --grow --seed 11 -n 10000 -p 0.01 g.bf
	keys 320000 in- | bloom add g.bf
	[ "$(json g.bf 'len(d["segments"])')" = 6 ]
	fp=$(keys 1000000 out- | bloom check -c g.bf || true)
	est=$(json g.bf 'd["estimated_fpr"]')
	echo "false positives: $fp of 1000000; estimated_fpr $est"
	# The bound on the whole filter is 0.01; the segments' rates sum
	# to less than that before the newest is full: 0.01 (1 - 0.9^5),
	# about 0.004 here.
	[ "$fp" -le 10000 ]
	awk -v e="$est" 'BEGIN { exit !(e <= 0.01) }'
	run -1 bloom check -v g.bf <(keys 320000 in-)
	[ "$output" = "" ]
}

@test "grow: a growable filter grown and checked by several processes at once loses nothing" {
	bloom create --grow --seed 3 -n 2000 -p 0.01 g.bf
	keys 5000 w0- >in0
	bloom add g.bf in0
	for w in 1 2 3 4; do
		keys 30000 "w$w-" >in$w
	done
	for w in 1 2 3 4; do
		bloom add --new g.bf in$w >new$w &
	done
	# Checkers of lines an add that ended put in, while the writers grow
	# the filter.  (Not of what a writer printed: add --new writes a
	# line before it sets its bits, so for an instant a check may not
	# find a line just printed.)
	for i in 1 2 3; do
		sleep 0.05
		run bloom check -v g.bf in0
		[ "$output" = "" ]
	done
	wait
	for w in 1 2 3 4; do
		run -1 bloom check -v g.bf in$w
		[ "$output" = "" ]
		# Distinct keys: each writer's new lines are its own.
		[ "$(wc -l <new$w)" -ge 29700 ]
	done
	# Exactly one process appended each segment: the capacities double
	# with no gap or repeat, and the file is exactly as long as them.
	n=$(json g.bf 'len(d["segments"])')
	[ "$(json g.bf '[s["capacity"] for s in d["segments"]]')" = \
		"$(python3 -c "print([2000 * 2**i for i in range($n)])")" ]
	[ "$(json g.bf 'sum(s["capacity"] for s in d["segments"][:-1]) < d["inserted"]')" = True ]
	# Four writers pass a segment's capacity by at most 1/32 each.
	[ "$(json g.bf 'all(s["inserted"] <= s["capacity"] * (1 + 4 / 32) for s in d["segments"])')" = True ]
	[ "$(json g.bf 'd["over_capacity"]')" = False ]
	[ "$(stat -c %s g.bf)" -eq "$(json g.bf 'd["bytes"]')" ]
}

@test "grow: kill -9 at any moment leaves a valid file; a rerun writes every line not printed" {
	keys 200000 >in
	for round in 1 2 3 4 5 6 7 8; do
		rm -f g.bf
		# Killed before its shell opened out, add printed nothing.
		: >out
		bloom create --grow --seed "$round" -n 500 -p 0.01 g.bf
		bloom add --new g.bf in >out &
		pid=$!
		sleep "0.0$round"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" || true
		run -0 bloom stats g.bf
		# A line is marked seen only once printed: what was printed
		# and what a rerun prints hold every line.  A last line cut
		# short by the kill is no line of in.
		echo "round $round: $(wc -l <out) lines printed, $(json g.bf 'len(d["segments"])') segments"
		bloom add --new g.bf in >again
		# Only false positives may be missing, at most the rate of
		# 1 %; and every line is in the filter.
		missing=$(sort -u out again | comm -23 <(sort in) - | wc -l)
		[ "$missing" -le 2000 ]
		run -1 bloom check -v g.bf in
		[ "$output" = "" ]
	done
}

@test "grow: a file longer than its segments (a growth killed early) is valid and grows on" {
	bloom create --grow --seed 5 -n 1000 -p 0.01 g.bf
	size=$(stat -c %s g.bf)
	# As a growth killed after allocating, before its table entry.
	truncate -s $((size + 65536)) g.bf
	run -0 bloom stats g.bf
	keys 5000 | bloom add g.bf
	run -1 bloom check -v g.bf <(keys 5000)
	[ "$output" = "" ]
	[ "$(json g.bf 'len(d["segments"])')" = 3 ]
}

@test "grow: a command opening the filter while another grows it sees the new segment whole" {
	command -v strace >/dev/null || skip "strace not found: install strace"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	bloom create --grow --seed 1 -n 1000 -p 0.01 g.bf
	keys 1000 | bloom add g.bf
	# stats is stopped once it has opened the file and taken its shared
	# lock (SIGSTOP on its first flock, delivered as that call returns),
	# before it reads the header; an add grows the filter meanwhile, and
	# only then does stats go on.
	strace -o trace -e trace=openat,flock,pread64 \
		-e inject=flock:signal=SIGSTOP:when=1 \
		bloom stats g.bf >out 2>err &
	tracer=$!
	until_traced trace 'stopped by SIGSTOP'
	stopped=$(cat "/proc/$tracer/task/$tracer/children")
	stopped=${stopped% }
	# Stopped with g.bf open, its header not yet read.
	grep -q 'openat(.*"g.bf"' trace
	[ "$(sed -n '/"g\.bf"/,$p' trace | grep -c '^pread64')" = 0 ]
	keys 2000 more- | bloom add g.bf
	kill -CONT "$stopped"
	status=0
	wait "$tracer" || status=$?
	stopped=
	tracer=
	cat trace err
	[ "$status" -eq 0 ]
	[ "$(cat err)" = "" ]
	[ "$(sed -n 's/^segments: //p' out)" = 2 ]
}

@test "fixed: a plain filter never grows, and warns once when it passes its capacity" {
	bloom create --seed 9 -n 1000 -p 0.01 f.bf
	run -0 --separate-stderr bloom add f.bf <(keys 1000)
	[ "$stderr" = "" ]
	run -0 --separate-stderr bloom add --new f.bf <(keys 3000)
	[ "${#lines[@]}" -gt 1500 ]
	[[ "$stderr" =~ ^"bloom: f.bf: warning: past its capacity of 1000 items; estimated false-positive rate now "[0-9.e-]+" (target 0.01); a filter made with --grow grows instead"$ ]]
	run -0 --separate-stderr bloom add f.bf <(keys 5000 more-)
	[ "$stderr" = "" ]
	[ "$(json f.bf 'len(d["segments"])')" = 1 ]
	[ "$(json f.bf 'd["over_capacity"]')" = True ]
}

@test "window: rotate by hand forgets the oldest generation" {
	bloom create --generations 3 --layout blocked --seed 1 -n 1000 -p 0.01 w.bf
	run -0 bloom add --new w.bf <(printf 'a\nb\n')
	[ "$output" = "$(printf 'a\nb')" ]
	bloom rotate w.bf
	# a is seen again: not new, but remembered from now on.
	run -0 bloom add --new w.bf <(printf 'a\nc\n')
	[ "$output" = c ]
	bloom rotate w.bf
	run -0 bloom add --new w.bf <(printf 'd\n')
	[ "$output" = d ]
	run -0 bloom check w.bf <(printf 'a\nb\nc\nd\n')
	[ "$output" = "$(printf 'a\nb\nc\nd')" ]
	bloom rotate w.bf
	# b was only in the first generation: forgotten.
	run -0 bloom check w.bf <(printf 'a\nb\nc\nd\n')
	[ "$output" = "$(printf 'a\nc\nd')" ]
	run -0 bloom add --new w.bf <(printf 'b\n')
	[ "$output" = b ]
	bloom rotate w.bf
	bloom rotate w.bf
	run -0 bloom check -v w.bf <(printf 'a\nb\nc\nd\n')
	[ "$output" = "$(printf 'a\nc\nd')" ]
	[ "$(json w.bf 'd["mode"]')" = window ]
	[ "$(json w.bf 'd["generations"]')" = 3 ]
	[ "$(json w.bf 'sum(s["live"] for s in d["segments"])')" = 3 ]
}

@test "window: rotate refuses a filter without generations" {
	bloom create -n 1000 f.bf
	row 2 "" "bloom: f.bf: cannot rotate: a fixed filter has no generations (make one with create --generations)" rotate f.bf
	bloom create --grow -n 1000 g.bf
	row 2 "" "bloom: g.bf: cannot rotate: a growable filter has no generations (make one with create --generations)" rotate g.bf
	row 2 "" "bloom: rotate: no filter named
usage: bloom rotate filter" rotate
}

@test "window: by time, a line is remembered for the window and forgotten after, even by a read-only check" {
	# Two generations of 2 s each: a line added now lives at least 2 s
	# and at most 4 s.
	bloom create --generations 2 --layout blocked --window 2s --seed 1 -n 1000 -p 0.01 w.bf
	start=$(date +%s.%N)
	echo x | bloom add w.bf
	run -0 bloom check -c w.bf <<<x
	[ "$output" = 1 ]
	chmod 444 w.bf
	# Nothing writes from here on: the reader works out that the
	# generation expired.
	sleep 4.2
	run -1 unprivileged bloom check -c w.bf <<<x
	[ "$output" = 0 ]
	[ "$(json w.bf 'sum(s["live"] for s in d["segments"])')" -le 1 ]
	chmod 644 w.bf
	run -0 bloom add --new w.bf <<<x
	[ "$output" = x ]
	[ "$(json w.bf '"expires" in d["segments"][0]')" = True ]
}

# generation_of FILE: window FILE's generation by the clock, read from
# stats --json without a python start, so that a test can tell soon after a
# command whether the generation moved on while it ran.
generation_of() {
	bloom stats --json "$1" | grep -o '"generation":[0-9]*' | head -n 1 | cut -d: -f2
}

# generation_reaches FILE N: waits up to 8 s for window FILE's generation
# to be N by the clock.  Returns 1, saying what it is, if it has not come;
# 2 if it was already past N when looked at (a loaded machine).
generation_reaches() {
	local g end=$((SECONDS + 8))
	while :; do
		g=$(generation_of "$1")
		[ "$g" -ge "$2" ] || [ "$SECONDS" -ge "$end" ] && break
		sleep 0.1
	done
	echo "generation $g, waiting for $2"
	[ "$g" -gt "$2" ] && return 2
	[ "$g" = "$2" ]
}

# rotated_by_hand: the scenario of the test below, once.  Returns 2 when the
# machine was too slow to tell: a step meant for one generation ended in
# the next, so its answer belongs to no one generation.
rotated_by_hand() {
	local g count rc
	rm -f w.bf
	bloom create --generations 3 --window 4s --seed 1 -n 1000 -p 0.01 w.bf || return 1
	for _ in $(seq 30); do bloom rotate w.bf || return 1; done
	echo x | bloom add w.bf || return 1
	g=$(generation_of w.bf)
	echo "after 30 rotations and an add: generation $g"
	[ "$g" = 30 ] || { [ "$g" -gt 30 ] && return 2; return 1; }
	# The line is remembered for the window, two generations, and
	# forgotten in the third, by the clock alone.
	for g in 31 32; do
		generation_reaches w.bf $g || return
		rc=0
		count=$(bloom check -c w.bf <<<x) || rc=$?
		[ "$(generation_of w.bf)" = $g ] || return 2
		echo "check -c in generation $g: exit $rc, $count"
		[ "$rc" = 0 ] && [ "$count" = 1 ] || return 1
	done
	generation_reaches w.bf 33
	[ $? = 1 ] && return 1
	rc=0
	count=$(bloom check -c w.bf <<<x) || rc=$?
	echo "check -c in generation 33 or later: exit $rc, $count"
	[ "$rc" = 1 ] && [ "$count" = 0 ]
}

@test "window: a rotation by hand of a timed window starts a generation now, and the clock rotates on from it" {
	# Three generations of 2 s; 30 rotations by hand put the file at
	# generation 30, which the clock reaches from the creation only
	# after 60 s: from then on, it rotates 2 s after the last.  A loaded
	# machine can let a generation pass between two steps: each step
	# checks that it ran in its generation, and the scenario starts over,
	# up to three times, when one did not.
	local rc attempt
	for attempt in 1 2 3; do
		rc=0
		rotated_by_hand || rc=$?
		[ "$rc" = 2 ] || break
		echo "attempt $attempt: a generation passed between two steps; again"
	done
	[ "$rc" = 0 ]
	# A rotation by hand of a window without --window moves no clock.
	bloom create --generations 3 --seed 1 -n 1000 -p 0.01 h.bf
	bloom rotate h.bf
	[ "$(json h.bf 'd["generation"]')" = 1 ]
	[ "$(od -An -tx1 -j152 -N8 h.bf | tr -d ' ')" = 0000000000000000 ]
}

@test "window: an add whose rotations are slower than its generations still adds" {
	command -v strace >/dev/null || skip "strace not found: install strace"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	# Generations of 8/63 s; each fdatasync takes 160 ms, as on a slow
	# disk: the clock has gone on by the time a rotation ends.  (The add
	# makes some 60 of them: about 10 s.)
	bloom create --generations 64 --layout blocked --window 8s --seed 1 -n 100000 w.bf
	keys 3000 >in
	run timeout 120 strace -f -o /dev/null -e trace=fdatasync \
		-e inject=fdatasync:delay_enter=160000 bloom add w.bf in
	[ "$status" -eq 0 ]
	# The last lines are in a generation still live: for the 8 s of the
	# window from the add's end, room for this check to start on a
	# loaded machine.
	run -0 bloom check -c w.bf <(tail -n 20 in)
	[ "$output" = 20 ]
}

@test "window: a burst grows the generation instead of forgetting within the window" {
	# Issue 19's case, scaled down: each of 8 generations holds 3000 / 7
	# lines, and 2500 distinct lines, each twice, come at once.
	bloom create --generations 8 --layout blocked --window 7d --seed 1 -n 3000 -p 0.001 w.bf
	{ keys 2500; keys 2500; } | shuf --random-source=<(yes) >in
	run -0 --separate-stderr bloom add --new w.bf in
	# No line written twice, none lost but a false positive or two.
	[ "$(printf '%s\n' "${lines[@]}" | sort | uniq -d)" = "" ]
	[ "${#lines[@]}" -ge 2490 ]
	[ "$stderr" = "bloom: w.bf: warning: a generation filled before its time and took more room: the window has grown past its sizing, and its false-positive rate may pass its target until that generation expires" ]
	# The same lines seconds later: all remembered.
	run -0 bloom add --new w.bf in
	[ "$output" = "" ]
	run -1 bloom check -v w.bf in
	[ "$output" = "" ]
	# Still the first generation, grown into extra segments.
	json_check '
assert d["generation"] == 0
segs = d["segments"]
assert len(segs) > 8
assert [s["generation"] for s in segs[8:]] == [0] * (len(segs) - 8)
assert all(s["live"] for s in segs[8:])
assert segs[0]["inserted"] + sum(s["inserted"] for s in segs[8:]) >= 2490
assert all(s["inserted"] <= s["capacity"] for s in segs)
assert [s["capacity"] for s in segs[8:11]] == [429, 858, 1716]
' w.bf
}

@test "window: grown generations expire with theirs, and their room is given back" {
	bloom create --generations 3 --layout blocked --seed 1 -n 200 -p 0.01 w.bf
	size=$(stat -c %s w.bf)
	keys 500 >in
	bloom add w.bf in 2>/dev/null
	[ "$(json w.bf 'len(d["segments"])')" = 6 ]
	[ "$(stat -c %s w.bf)" -gt "$size" ]
	# Rotation by hand keeps its meaning: remembered for 2 more
	# rotations, forgotten at the third.
	bloom rotate w.bf
	bloom rotate w.bf
	run -1 bloom check -v w.bf in
	[ "$output" = "" ]
	bloom rotate w.bf
	run bloom check -c w.bf in
	[ "$output" -le 5 ]
	# Expired a whole generation: the extra segments are given back.
	[ "$(json w.bf 'len(d["segments"])')" = 6 ]
	bloom rotate w.bf
	[ "$(json w.bf 'len(d["segments"])')" = 3 ]
	[ "$(stat -c %s w.bf)" -eq "$size" ]
	# And taken again by the next burst.
	run -0 bloom add --new w.bf in
	[ "${#lines[@]}" -ge 495 ]
	run -1 bloom check -v w.bf in
	[ "$output" = "" ]
	[ "$(json w.bf 'd["generation"]')" = 4 ]
}

@test "window: an expired extra segment is taken over before the file grows" {
	bloom create --generations 2 --layout blocked --seed 1 -n 100 -p 0.01 w.bf
	keys 150 a >a
	bloom add w.bf a 2>/dev/null
	bloom rotate w.bf
	bloom rotate w.bf
	size=$(stat -c %s w.bf)
	[ "$(json w.bf 'len(d["segments"])')" = 3 ]
	keys 150 b >b
	run -0 --separate-stderr bloom add --new w.bf b
	[ "${#lines[@]}" -ge 148 ]
	[ "$(stat -c %s w.bf)" -eq "$size" ]
	json_check '
assert [s["generation"] for s in d["segments"]] == [2, 1, 2], d["segments"]
' w.bf
}

@test "window: past --max-size a generation full before its time closes early, with a warning" {
	# Two generations of 1536 bytes from 4096 and 8192 on, one extra of
	# 1536 from 12288: a second extra would pass 16K.
	bloom create --generations 2 --layout blocked --window 1w --max-size 16K --seed 1 -n 100 -p 0.01 w.bf
	run -0 --separate-stderr bloom add --new w.bf <(keys 250)
	[ "${#lines[@]}" -ge 245 ]
	[[ "$stderr" == *"bloom: w.bf: warning: a generation filled before its time and took more room"* ]]
	[[ "$stderr" == *"bloom: w.bf: warning: a generation filled with 100 items before its time and was closed early, the window being at its size limit; lines may be forgotten sooner than the window"* ]]
	[ "$(json w.bf 'len(d["segments"])')" = 3 ]
	[ "$(stat -c %s w.bf)" -le 16384 ]
	# Never more than a segment's capacity in one segment.
	[ "$(json w.bf 'max(s["inserted"] - s["capacity"] for s in d["segments"])')" -le 0 ]
	[ "$(json w.bf 'd["generation"]')" -ge 1 ]
}

@test "window: --max-size needs --generations and a size" {
	row 2 "" "bloom: create: --max-size needs --generations
usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter" create --max-size 1M w.bf
	run -2 bloom create --generations 3 --max-size 0 w.bf
	[[ "$output" =~ "--max-size takes a size from 1 byte to 128T, such as 64M, not '0'" ]]
	# Less than the window takes at the start: no generation could
	# ever widen.  Refused, by a dry run too; nothing is made.
	row 2 "" "bloom: w.bf: --max-size 1024 (1.0 KiB) is less than the window takes at the start, 13120 bytes (12.8 KiB): no generation could ever widen" create -n 1000 --generations 3 --layout blocked --max-size 1K w.bf
	[ ! -e w.bf ]
	row 2 "" "bloom: w.bf: --max-size 1024 (1.0 KiB) is less than the window takes at the start, 13120 bytes (12.8 KiB): no generation could ever widen" create --dry-run -n 1000 --generations 3 --layout blocked --max-size 1K w.bf
	[ ! -e w.bf ]
	# As much as it takes at the start: made, closing early when full.
	run -0 bloom create -n 1000 --generations 3 --layout blocked --max-size 13120 w.bf
	[ -e w.bf ]
}

@test "window: merge refuses a window grown past its sizing; --like makes it as sized" {
	bloom create --generations 2 --layout blocked --seed 1 -n 100 -p 0.01 w.bf
	bloom create --like w.bf v.bf
	keys 150 | bloom add w.bf 2>/dev/null
	run -2 bloom merge v.bf w.bf
	[[ "$output" == *"a window whose generations grew past their sizing merges only once those generations have expired"* ]]
	bloom create --like w.bf u.bf
	[ "$(json u.bf 'len(d["segments"])')" = 2 ]
	[ "$(stat -c %s u.bf)" -eq "$(stat -c %s v.bf)" ]
}

@test "window: once the generation that grew has expired, merge takes its generations' own segments" {
	bloom create --generations 2 --layout blocked --seed 1 -n 100 -p 0.01 w.bf
	bloom create --like w.bf v.bf
	keys 150 | bloom add w.bf 2>/dev/null
	# Expired, its extra segments not yet given back.
	bloom rotate w.bf
	bloom rotate w.bf
	bloom rotate v.bf
	bloom rotate v.bf
	[ "$(json w.bf '[s["live"] for s in d["segments"]]')" = \
		"[True, True, False]" ]
	keys 40 w >inw
	keys 40 v >inv
	bloom add w.bf inw
	bloom add v.bf inv
	run -0 bloom merge v.bf w.bf
	[ "$output" = "" ]
	run -1 bloom check -v v.bf inw inv
	[ "$output" = "" ]
	[ "$(json v.bf 'len(d["segments"])')" = 2 ]
	run -0 bloom merge w.bf v.bf
	run -1 bloom check -v w.bf inw inv
	[ "$output" = "" ]
	[ "$(json w.bf 'len(d["segments"])')" = 3 ]
}

@test "window: merge by time takes a target or source idle since a generation began" {
	need_xxhsum
	# Three generations of an hour.  The target and one source are idle
	# while the clock starts generation 1: both at generation 1, as
	# stats says, and merged as such.
	bloom create --generations 3 --layout blocked --window 2h --seed 1 -n 1000 -p 0.01 t.bf
	bloom create --like t.bf old.bf
	bloom create --like t.bf new.bf
	keys 50 old- >old
	keys 50 new- >new
	bloom add old.bf old
	# Rather than wait an hour, the three (which share a creation time,
	# as merge wants) are set back to have been made an hour less 1.5 s
	# ago: header bytes 80-87, ms since 1970, little-endian, then the
	# header's checksum made anew.  Generation 1 begins 1.5 s from now
	# and lasts an hour, however slowly what follows runs.
	begins=$(($(date +%s%3N) + 1500))
	for f in t.bf old.bf new.bf; do
		put "$f" 80 "$(le 8 $((begins - 3600000)))"
		put "$f" 128 "$(xxh3_at "$f" 0 128 0)"
	done
	until [ "$(date +%s%3N)" -gt $((begins + 200)) ]; do
		sleep 0.05
	done
	bloom add new.bf new
	[ "$(json t.bf 'd["generation"]')" = 1 ]
	[ "$(json old.bf 'd["generation"]')" = 1 ]
	run -0 bloom merge t.bf old.bf new.bf
	[ "$output" = "" ]
	run -1 bloom check -v t.bf old new
	[ "$output" = "" ]
	[ "$(json t.bf '[s["generation"] for s in d["segments"]]')" = \
		"[0, 1, None]" ]
	# Into an idle target that never held generation 0.
	bloom create --like t.bf u.bf
	run -0 bloom merge u.bf new.bf old.bf
	run -1 bloom check -v u.bf old new
	[ "$output" = "" ]
}

@test "window: adds, checks and rotations at once lose no line inside its window" {
	bloom create --generations 8 --layout blocked --seed 2 -n 2000000 -p 0.01 w.bf
	for w in 1 2 3; do
		keys 40000 "w$w-" >in$w
	done
	for w in 1 2 3; do
		bloom add w.bf in$w &
	done
	# Fewer rotations than generations: every line stays in the window.
	for i in 1 2 3 4 5; do
		bloom rotate w.bf
		run bloom check -v w.bf <(head -n 100 in1)
		sleep 0.02
	done
	wait
	for w in 1 2 3; do
		run -1 bloom check -v w.bf in$w
		[ "$output" = "" ]
	done
	[ "$(json w.bf 'sum(s["live"] for s in d["segments"])')" = 6 ]
}

# burst_window FILE: a window of 2 generations grown past its sizing by a
# burst, its keys 1 to 1000 in generation 0's own segment.
burst_window() {
	bloom create --generations 2 --layout blocked --seed 5 -n 20000 -p 0.01 "$1"
	seq 1 200000 | bloom add "$1" 2>/dev/null
	[ "$(json "$1" 'len(d["segments"])')" = 6 ]
}

@test "window: a check reading the extra segments while rotations expire them is not cut short" {
	command -v strace >/dev/null || skip "strace not found: install strace"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	burst_window w.bf
	size=$(stat -c %s w.bf)
	seq 1 1000 >in
	# Out of core (2M: of which a 4th, 512K, for the filter's windows
	# and the batch, the rest being what bloom takes whatever the filter:
	# windows of 16K), each window of the file read slowly: three rotations
	# run in the middle of the check's one pass, and would give back
	# the extra segments it has yet to read.
	strace -f -o trace -e trace=pread64 \
		-e inject=pread64:delay_enter=50000 \
		bloom check -c --memory 2M w.bf in >out 2>err &
	pid=$!
	until_traced trace "pread64([0-9]*, .*, 16384, "
	bloom rotate w.bf
	bloom rotate w.bf
	bloom rotate w.bf
	# Left for a later rotation while the check reads.
	[ "$(stat -c %s w.bf)" -eq "$size" ]
	status=0
	wait $pid || status=$?
	cat err
	# Keys of a generation forgotten meanwhile may be found or not.
	[ "$status" -le 1 ]
	[ "$(cat err)" = "" ]
	[ "$(json w.bf 'len(d["segments"])')" = 6 ]
	bloom rotate w.bf
	[ "$(json w.bf 'len(d["segments"])')" = 2 ]
	[ "$(stat -c %s w.bf)" -lt "$size" ]
}

@test "window: stats reading the extra segments while rotations expire them is not cut short" {
	command -v strace >/dev/null || skip "strace not found: install strace"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	burst_window w.bf
	# Each segment's pages taken in slowly: three rotations run while
	# stats counts the bits, and would give back the extra segments it
	# has yet to count.
	strace -o trace -e trace=madvise \
		-e inject=madvise:delay_enter=100000 \
		bloom stats --json w.bf >out 2>err &
	pid=$!
	until_traced trace 'MADV_POPULATE_READ\|MADV_WILLNEED'
	bloom rotate w.bf
	bloom rotate w.bf
	bloom rotate w.bf
	status=0
	wait $pid || status=$?
	cat err
	[ "$status" -eq 0 ]
	[ "$(cat err)" = "" ]
	python3 -c 'import json; d = json.load(open("out")); assert len(d["segments"]) == 6, d'
}

@test "window: --window and --growth need their mode; modes do not mix" {
	row 2 "" "bloom: create: --window needs --generations
usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter" create --window 1h w.bf
	run -2 bloom create --growth 3 g.bf
	[[ "$output" =~ "--growth needs --grow" ]]
	run -2 bloom create --grow --generations 3 g.bf
	[[ "$output" =~ "--grow and --generations do not go together" ]]
	run -2 bloom create --generations 1 g.bf
	[[ "$output" =~ "--generations takes a count from 2 to 64, not '1'" ]]
	run -2 bloom create --generations 3 --window 5y g.bf
	[[ "$output" =~ "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '5y'" ]]
	run -2 bloom create --grow -s 1M g.bf
	[[ "$output" =~ "-s and -k are for fixed filters" ]]
	run -2 bloom create --grow --growth 1.1 g.bf
	[[ "$output" =~ "--growth takes a factor from 1.25 to 16, not '1.1'" ]]
	[ ! -e g.bf ] && [ ! -e w.bf ]
}

@test "window and grow: stats --json describes every segment" {
	bloom create --generations 4 --layout blocked --window 7d --seed 1 -n 3000 -p 0.01 w.bf
	keys 500 | bloom add w.bf
	run -0 python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output(["bloom", "stats", "--json", "w.bf"]))
assert d["mode"] == "window" and d["generations"] == 4
assert d["window_seconds"] == 7 * 86400
assert len(d["segments"]) == 4
for s in d["segments"]:
    for k in ("live", "bits", "hashes", "capacity", "target_fpr", "inserted",
              "bits_set", "estimated_items", "created", "expires"):
        assert k in s, k
    assert s["capacity"] == 1000
    # 1 - (1 - 0.01)^(1/4)
    assert abs(s["target_fpr"] - (1 - 0.99 ** 0.25)) < 1e-12
assert d["segments"][0]["inserted"] == 500
assert d["inserted"] == 500
assert d["bits"] == sum(s["bits"] for s in d["segments"] if s["live"])
'
}

@test "window: add --new with generations tested in passes calls new the lines no live generation holds; it and add set them all in the current one" {
	# Six generations of more than 1 MiB, which a test visits four at a
	# time, against plain filters of the same size, hashes and keys.
	bloom create --generations 6 --layout blocked --seed 9 -n 7000000 -p 0.2 w.bf
	[ "$(json w.bf 'd["segments"][0]["bits"] // 8 > 1 << 20')" = True ]
	bytes=$(json w.bf 'd["segments"][0]["bits"] // 8')
	k=$(json w.bf 'd["segments"][0]["hashes"]')
	filters=()
	for g in 1 2 3 4 5 6 7; do
		keys 3000 "g$g-" >in$g
		bloom add w.bf in$g
		[ "$g" -eq 7 ] || bloom rotate w.bf
		bloom create -s "$bytes" -k "$k" -p 0.2 --seed 9 f$g.bf
		bloom add f$g.bf in$g
		[ "$g" -eq 1 ] || filters+=(-F f$g.bf)
	done
	# The first generation is forgotten: its lines are new again.
	{ keys 6000 no-; cat in1 in2 in5 in7; } >probe
	run -0 bloom check -v "${filters[@]}" probe
	want=$output
	[ "$(printf '%s\n' "$want" | grep -c '^g1-')" = 3000 ]
	[ "$(printf '%s\n' "$want" | grep -c '^g[257]-' || true)" = 0 ]
	cp w.bf p.bf
	run -0 --separate-stderr bloom add --new w.bf probe
	[ "$output" = "$want" ]
	[ "$stderr" = "" ]
	# A plain add sets them all in the current generation as well.
	run -0 --separate-stderr bloom add p.bf probe
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	# Five rotations later only the generation the add went to holds
	# the lines of the probe: every one, the old ones too; one more and
	# none is left.
	for f in w.bf p.bf; do
		for g in 1 2 3 4 5; do
			bloom rotate $f
		done
		run -1 bloom check -v $f probe
		[ "$output" = "" ]
		bloom rotate $f
		run -1 bloom check $f probe
		[ "$output" = "" ]
	done
}

@test "window and grow: answers are those of each segment alone, with every generation live" {
	# Five generations live, each of its own keys, at a rate where many
	# absent keys are found: a line is found exactly when one of five
	# plain filters of the generations' size, hashes and keys has it.
	bloom create --generations 5 --layout blocked --seed 9 -n 4000 -p 0.2 w.bf
	for g in 1 2 3 4 5; do
		keys 1000 "g$g-" >in$g
		bloom add w.bf in$g
		[ "$g" -eq 5 ] || bloom rotate w.bf
	done
	[ "$(json w.bf 'len(d["segments"])')" = 5 ]
	[ "$(json w.bf 'sum(s["live"] for s in d["segments"])')" = 5 ]
	bytes=$(json w.bf 'd["segments"][0]["bits"] // 8')
	k=$(json w.bf 'd["segments"][0]["hashes"]')
	filters=()
	for g in 1 2 3 4 5; do
		bloom create -s "$bytes" -k "$k" -p 0.2 --seed 9 f$g.bf
		bloom add f$g.bf in$g
		filters+=(-F f$g.bf)
	done
	cat in1 in2 in3 in4 in5 >all
	run -1 bloom check -v w.bf all
	[ "$output" = "" ]
	keys 20000 no- >probe
	cat all >>probe
	run -0 bloom check "${filters[@]}" probe
	want=$output
	found=$(printf '%s\n' "$want" | grep -c '^no-' || true)
	echo "absent keys found: $found of 20000"
	[ "$found" -gt 1000 ]
	run -0 bloom check w.bf probe
	[ "$output" = "$want" ]
	# A sorted pass tests segment by segment: the same lines.
	run -0 bloom check --memory 4K w.bf probe
	[ "$output" = "$want" ]
	# The oldest generation forgotten: the four others answer.
	bloom rotate w.bf
	run -0 bloom check "${filters[@]:2}" probe
	want=$output
	run -0 bloom check w.bf probe
	[ "$output" = "$want" ]

	# Generations of more than 1 MiB are tested four at a time, the
	# smaller ones in passes of a few MiB: the same answers.
	bloom create --generations 3 --layout blocked --seed 9 -n 28000000 -p 0.2 b.bf
	[ "$(json b.bf 'd["segments"][0]["bits"] // 8 > 8 << 20')" = True ]
	bytes=$(json b.bf 'd["segments"][0]["bits"] // 8')
	k=$(json b.bf 'd["segments"][0]["hashes"]')
	filters=()
	for g in 1 2 3; do
		bloom add b.bf in$g
		[ "$g" -eq 3 ] || bloom rotate b.bf
		bloom create -s "$bytes" -k "$k" -p 0.2 --seed 9 b$g.bf
		bloom add b$g.bf in$g
		filters+=(-F b$g.bf)
	done
	run -0 bloom check "${filters[@]}" probe
	want=$output
	run -0 bloom check b.bf probe
	[ "$output" = "$want" ]
	[ "$(printf '%s\n' "$output" | grep -vc '^no-')" = 3000 ]

	# A filter grown 4 times, its segments of two hash counts: found
	# are its keys, and the others as a sorted pass finds them.
	bloom create --grow --seed 9 -n 500 -p 0.25 g.bf
	keys 16000 k- >gin
	bloom add g.bf gin
	[ "$(json g.bf 'len(d["segments"])')" = 5 ]
	[ "$(json g.bf 'len(set(s["hashes"] for s in d["segments"]))')" = 2 ]
	run -1 bloom check -v g.bf gin
	[ "$output" = "" ]
	cat gin >>probe
	run -0 bloom check --memory 4K g.bf probe
	want=$output
	[ "$(printf '%s\n' "$want" | grep -c '^no-')" -gt 1000 ]
	run -0 bloom check g.bf probe
	[ "$output" = "$want" ]
	run -0 bloom check -c g.bf probe
	[ "$output" = "$(printf '%s\n' "$want" | wc -l)" ]

	# From a pipe or a file of 1 MiB or more, the reader thread tests a
	# share of each group's lines against every segment and the main
	# thread the others: the same lines, in order.
	for i in 1 2 3 4 5 6 7 8; do cat probe; done >big
	[ "$(wc -c <big)" -gt 1048576 ]
	bloom check --memory 4K g.bf big >want
	[ "$(wc -l <want)" -eq $((8 * $(printf '%s\n' "$want" | wc -l))) ]
	bloom check g.bf big >got
	cmp want got
	cat big | bloom check g.bf >got
	cmp want got
	cat big | bloom check -v g.bf >got
	grep -vxF -f want big | cmp - got
}
