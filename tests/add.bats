#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of `bloom add`: where the lines come from, what --new writes, what
# it says when it takes a fixed filter past its capacity, the filter it
# creates when none exists, and how it fails.

bats_require_minimum_version 1.5.0
load helpers

@test "add reads standard input, then files, with - for standard input" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	printf 'one\n' >a
	printf 'three\n' >c
	printf 'zero\nzero\n' | row 0 '' '' add f.bf
	printf 'two\n' | row 0 '' '' add f.bf a - c
	printf 'zero\none\ntwo\nthree\nfour\n' >in
	row 0 $'zero\none\ntwo\nthree' '' check f.bf in
	row 0 four '' check -v f.bf in
}

@test "add --new writes exactly the first occurrence of each line, in order" {
	big_filter f.bf
	# 1000 lines, 309 distinct, repeats both near and far apart.
	awk 'BEGIN { for (i = 1; i <= 1000; i++) print "k" (i * i) % 617 }' >in
	awk '!seen[$0]++' in >want
	[ "$(wc -l <want)" -eq 309 ]
	run -0 bloom add --new f.bf in
	[ "$output" = "$(cat want)" ]
}

# add --new tests a chunk of lines at once and sets their bits after
# writing them; on a crowded filter many lines of one chunk share a block,
# and a line whose bits the lines before it set must be called seen, as
# if the lines were added one at a time.
@test "add --new of a chunk on a crowded filter answers as one line at a time" {
	bloom create --seed 5 -s 256 -k 4 f.bf
	cp f.bf one.bf
	awk 'BEGIN { for (i = 1; i <= 600; i++) print "c" (i * 7) % 450 }' >in
	: >want
	while IFS= read -r line; do
		printf '%s\n' "$line" | bloom add --new one.bf >>want 2>/dev/null
	done <in
	# 450 distinct lines in four blocks: the filter fills past its
	# capacity, and many of them are called seen.
	[ "$(wc -l <want)" -lt 450 ]
	[ "$(wc -l <want)" -gt 20 ]
	bloom add --new f.bf in >got 2>/dev/null
	cmp got want
	cmp f.bf one.bf
}

@test "add -N is --new, and its output matches byte for byte" {
	big_filter f.bf
	awk 'BEGIN { for (i = 1; i <= 1000; i++) print "k" (i * i) % 617 }' >in
	awk '!seen[$0]++' in >want
	bloom add -N f.bf <in >out
	cmp out want
}

@test "a second add --new of the same lines writes nothing and exits 0" {
	big_filter f.bf
	keys 1000 >in
	run -0 bloom add --new f.bf in
	[ "${#lines[@]}" -eq 1000 ]
	row 0 '' '' add --new f.bf in
	row 0 '' '' add -N f.bf - <in
}

@test "add --new writes only the lines not added before" {
	big_filter f.bf
	keys 500 | bloom add f.bf
	keys 1000 >in
	run -0 bloom add --new f.bf in
	[ "$output" = "$(keys 1000 | tail -n 500)" ]
}

@test "the inserted counter of stats counts the new lines" {
	big_filter f.bf
	awk 'BEGIN { for (i = 1; i <= 1000; i++) print "k" (i * i) % 617 }' >in
	[ "$(stats_field inserted f.bf)" = 0 ]
	bloom add f.bf in
	[ "$(stats_field inserted f.bf)" = 309 ]
	# The same lines again are not new.
	bloom add f.bf in
	[ "$(stats_field inserted f.bf)" = 309 ]
	keys 10 | bloom add f.bf
	[ "$(stats_field inserted f.bf)" = 319 ]
}

# The one line an add says when it takes f.bf, made for 1000 items at 0.01,
# past its capacity; the rate in it is BASH_REMATCH[1].
past_capacity='^bloom: f\.bf: warning: past its capacity of 1000 items; estimated false-positive rate now (0\.[0-9]+) \(target 0\.01\); a filter made with --grow grows instead$'

@test "add says once, on stderr, that it took a fixed filter past its capacity" {
	bloom create --seed 42 -n 1000 -p 0.01 f.bf
	keys 1000 >first
	keys 1100 | tail -n 99 >more
	keys 1200 | tail -n 100 >most
	# Exactly at capacity: silent.  Each of the 1000 keys set a bit.
	row 0 '' '' add f.bf first
	[ "$(stats_field inserted f.bf)" = 1000 ]
	# The 1001st key takes it past: one line with the rate, the key still
	# written by --new, and status 0.
	run -0 --separate-stderr bloom add --new f.bf < <(echo key-1001)
	[ "$output" = key-1001 ]
	echo "stderr: $stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr =~ $past_capacity ]]
	[ "$(stats_field inserted f.bf)" = 1001 ]
	# Past it already: more adds, with --new or not, say nothing more.
	run -0 --separate-stderr bloom add --new f.bf more
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -ge 95 ]
	row 0 '' '' add f.bf most
	[ "$(stats_field inserted f.bf)" -gt 1150 ]
}

@test "add past capacity within one input warns once, with the rate it reached" {
	bloom create --seed 42 -n 1000 -p 0.01 f.bf
	keys 2000 >in
	# A file under 1 MiB is read as one group: the rate is that of all
	# the keys that went in, about twice the capacity.
	run -0 --separate-stderr bloom add -N f.bf in
	[ "${#lines[@]}" -eq "$(stats_field inserted f.bf)" ]
	echo "stderr: $stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr =~ $past_capacity ]]
	python3 -c "assert 0.1 < ${BASH_REMATCH[1]} < 0.2, ${BASH_REMATCH[1]}"
	row 0 '' '' add -N f.bf in
}

@test "add creates a missing filter, growable, with the defaults and says so once" {
	local bytes

	keys 3 >in
	run -0 --separate-stderr bloom add new.bf in
	[ "$output" = "" ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[ -f new.bf ]
	[ "$(stats_field mode new.bf)" = grow ]
	[ "$(stats_field capacity new.bf)" = 8000000 ]
	[ "$(stats_field target_fpr new.bf)" = 0.01 ]
	[ "$(stats_field segments new.bf)" = 1 ]
	[ "$(stats_field inserted new.bf)" = 3 ]
	# The size of create --grow -n 8000000.
	bloom create --grow -n 8000000 want.bf
	bytes=$(wc -c <new.bf)
	[ "$bytes" -eq "$(wc -c <want.bf)" ]
	[ "$(stats_field bytes new.bf)" = "$bytes ($(python3 -c "print('%.1f' % ($bytes / 1048576))") MiB)" ]
	[ "$stderr" = "bloom: new.bf: created growable, for 8000000 items at first, at fpr 0.01 ($bytes bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]
	# The keys are in it, and a second add finds the filter and is silent.
	row 0 $'key-1\nkey-2\nkey-3' '' check new.bf in
	row 0 '' '' add new.bf in
}

@test "add --new to a missing filter writes every line once" {
	local bytes

	printf 'a\nb\na\n' >in
	run -0 --separate-stderr bloom add --new new.bf in
	[ "$output" = $'a\nb' ]
	bytes=$(wc -c <new.bf)
	[ "$stderr" = "bloom: new.bf: created growable, for 8000000 items at first, at fpr 0.01 ($bytes bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]
	[ "$(stats_field mode new.bf)" = grow ]
}

@test "add --new to a missing filter grows with 9 M distinct lines and keeps 99 % of them" {
	local bytes

	# The size it says is that of the filter as created, before it grew:
	# the size of one created from no lines.
	bloom add g.bf </dev/null 2>/dev/null
	bytes=$(wc -c <g.bf)
	run -0 --separate-stderr bash -c \
	    'seq 9000000 | bloom add --new f.bf >out; echo "status ${PIPESTATUS[1]}" >&2'
	[ "$(wc -c <f.bf)" -gt "$bytes" ]
	[ "$stderr" = "bloom: f.bf: created growable, for 8000000 items at first, at fpr 0.01 ($bytes bytes); --no-create or BLOOM_NO_CREATE=1 turns this off
status 0" ]
	# What it prints is a subsequence of the input, in order, and all but
	# at most 1 % of it: every line is new, only a false positive is kept.
	[ "$(wc -l <out)" -ge 8910000 ]
	[ "$(sort -un out | wc -l)" -eq "$(wc -l <out)" ]
	sort -c -n out
	[ "$(head -n 1 out)" -ge 1 ]
	[ "$(tail -n 1 out)" -le 9000000 ]
	[ "$(stats_field mode f.bf)" = grow ]
	bloom stats --json f.bf >stats.json
	python3 -c '
import json
d = json.load(open("stats.json"))
assert d["mode"] == "grow", d["mode"]
assert len(d["segments"]) > 1, len(d["segments"])
assert all(s["live"] for s in d["segments"])
assert d["segments"][0]["capacity"] == 8000000
assert sum(s["inserted"] for s in d["segments"]) == d["inserted"]
assert d["inserted"] == '"$(wc -l <out)"', d["inserted"]
assert d["over_capacity"] is False
'
	# Every line printed is in the filter now: no false negative.
	row 1 0 '' check -v -c f.bf out
}

@test "add -n and -p size the growable filter add creates" {
	printf 'a\nb\n' >in
	run -0 --separate-stderr bloom add -n 5M -p 0.001 new.bf in
	bytes=$(wc -c <new.bf)
	[ "$stderr" = "bloom: new.bf: created growable, for 5000000 items at first, at fpr 0.001 ($bytes bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]
	# The same filter as create --grow makes, but for its seed.
	bloom create --grow -n 5000000 -p 0.001 --seed "$(stats_field seed new.bf)" want.bf
	bloom add want.bf in
	same_filter want.bf new.bf
	# -n alone, and -p alone, keep the other default.
	run -0 --separate-stderr bloom add -n 2000 n.bf in
	[ "$(stats_field capacity n.bf)" = 2000 ]
	[ "$(stats_field target_fpr n.bf)" = 0.01 ]
	run -0 --separate-stderr bloom add -p 1e-6 p.bf in
	[ "$(stats_field capacity p.bf)" = 8000000 ]
	[ "$(stats_field target_fpr p.bf)" = 1e-06 ]
}

@test "add -n and -p that match an existing filter add to it; others are refused before adding" {
	bloom create -n 1000 -p 0.001 fixed.bf
	bloom create --grow -n 5K -p 0.01 grow.bf
	echo a >in
	row 0 "" "" add -n 1000 -p 0.001 fixed.bf in
	row 0 "" "" add -n 1K fixed.bf in
	row 0 "" "" add -p 1e-3 fixed.bf in
	row 0 "" "" add -n 5000 -p 0.01 grow.bf in
	row 0 "" "" add --no-create -n 5000 grow.bf in
	echo b >in2
	row 2 "" "bloom: fixed.bf: -n 2000 would change the filter's capacity of 1000: add -n sizes only a filter it creates" \
		add -n 2000 fixed.bf in2
	row 2 "" "bloom: fixed.bf: -p 0.01 would change the filter's false-positive rate of 0.001: add -p sizes only a filter it creates" \
		add -N -n 1000 -p 0.01 fixed.bf in2
	row 2 "" "bloom: grow.bf: -p 0.0010000001 would change the filter's false-positive rate of 0.01: add -p sizes only a filter it creates" \
		add -p 0.0010000001 grow.bf in2
	# Nothing was added.
	row 1 "" "" check fixed.bf in2
	row 1 "" "" check grow.bf in2
	# The values are checked as create checks them.
	row 2 "" "$(printf '%s\n' "bloom: add: -n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '1.5'" \
		"usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]" \
		"                 [-p fpr] [--memory size] [--no-create] [--pass-over]" \
		"                 [--progress] [--sync] filter [file ...]")" add -n 1.5 x.bf in
	row 2 "" "$(printf '%s\n' "bloom: add: -p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '1'" \
		"usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]" \
		"                 [-p fpr] [--memory size] [--no-create] [--pass-over]" \
		"                 [--progress] [--sync] filter [file ...]")" add -p 1 x.bf in
	[ ! -e x.bf ]
}

@test "add reports a missing input file, adds the others and exits 2" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	printf 'one\n' >a
	printf 'three\n' >c
	row 2 '' 'bloom: nofile: No such file or directory' add f.bf a nofile c
	printf 'one\nthree\nnofile\n' >in
	row 0 $'one\nthree' '' check f.bf in
}

@test "add reports a missing input file under --new too" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	printf 'one\n' >a
	printf 'three\n' >c
	row 2 $'one\nthree' 'bloom: nofile: No such file or directory
bloom: nofile2: No such file or directory' add --new f.bf nofile a nofile2 c
}

@test "add exits 2 on an input it cannot read" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	mkdir d
	printf 'one\n' >a
	row 2 '' 'bloom: d: read error: Is a directory' add f.bf d
	row 2 '' 'bloom: (standard input): read error: Is a directory' \
		add f.bf <.
	# The readable input is still added.
	row 2 one 'bloom: d: read error: Is a directory' add -N f.bf d a
}

@test "add exits 2 on a usage error, with the message and synopsis" {
	local synopsis='usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]
                 [-p fpr] [--memory size] [--no-create] [--pass-over]
                 [--progress] [--sync] filter [file ...]'

	row 2 '' "bloom: add: no filter named
$synopsis" add </dev/null
	row 2 '' "bloom: add: unknown option '--bogus'
$synopsis" add --bogus f.bf </dev/null
	row 2 '' "bloom: add: unknown option '-x'
$synopsis" add -x f.bf </dev/null
	# None of them created the filter.
	[ ! -e f.bf ]
}

@test "add names an unknown option letter alone, even among known ones" {
	local synopsis='usage: bloom add [-D | -N] [-z] [-f list [-d delim] [-s]] [-n capacity]
                 [-p fpr] [--memory size] [--no-create] [--pass-over]
                 [--progress] [--sync] filter [file ...]'

	row 2 '' "bloom: add: unknown option '-x'
$synopsis" add -xN f.bf </dev/null
	row 2 '' "bloom: add: unknown option '-x'
$synopsis" add -Nx f.bf </dev/null
	row 2 '' "bloom: add: unknown option '-x'
$synopsis" add -zxN f.bf </dev/null
	[ ! -e f.bf ]
}

@test "add exits 2 on a corrupt filter and leaves it alone" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	poke f.bf 0 0
	cp f.bf before
	printf 'a\n' >in
	row 2 '' 'bloom: f.bf: not a bloom filter (bad magic)' add f.bf in
	cmp f.bf before
	printf 'junk' >short.bf
	row 2 '' 'bloom: short.bf: not a bloom filter (too short)' \
		add short.bf in
	[ "$(cat short.bf)" = junk ]
}

@test "add --new to a full device exits 2 with a write error" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	keys 10 >in
	run -2 --separate-stderr bash -c 'bloom add --new f.bf in >/dev/full'
	[ "$output" = "" ]
	[ "$stderr" = "bloom: write error: No space left on device" ]
}

@test "add --sync adds and exits 0" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	printf 'a\nb\n' >in
	row 0 '' '' add --sync f.bf in
	row 0 c '' add --sync --new f.bf - <<<$'a\nb\nc'
	row 0 $'a\nb' '' check f.bf in
}

# With one of the standard descriptors closed, the filter must not be
# opened in its place: what goes to that stream would go into the filter.
@test "add with standard output closed fails and leaves the filter whole" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	head -c 136 f.bf >header
	printf 'hello\n' >in
	run -2 --separate-stderr bash -c 'bloom add -N f.bf in >&-'
	[ "$stderr" = "bloom: write error: Bad file descriptor" ]
	cmp -n 136 f.bf header
	# Not written, so not marked seen.
	row 1 '' '' check f.bf in
	run -0 --separate-stderr bash -c 'bloom add f.bf in >&-'
	cmp -n 136 f.bf header
	row 0 hello '' check f.bf in
}

@test "add with standard error closed leaves the filter whole" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	head -c 136 f.bf >header
	printf 'hello\n' >in
	run -2 bash -c 'bloom add f.bf in nofile 2>&-'
	[ "$output" = "" ]
	cmp -n 136 f.bf header
	row 0 hello '' check f.bf in
}

@test "add with standard input closed reads no lines from the filter" {
	bloom create --seed 1 -n 1000 -p 0.001 f.bf
	cp f.bf before
	run -2 --separate-stderr bash -c 'bloom add f.bf <&-'
	[ "$output" = "" ]
	[ "$stderr" = 'bloom: (standard input): read error: Bad file descriptor' ]
	cmp f.bf before
}
