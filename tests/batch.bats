#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Sorted batches: add and check with a --memory too small for the filter
# work in batches sorted by block, and must write the same output, exit
# with the same status and leave the same filter as line by line.

bats_require_minimum_version 1.5.0
load helpers

# Stops what a test left running in the background, however it ended,
# then drops the claim tables of its filters as helpers.bash does.
teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -n "${CGROUP:-}" ] && [ -d "$CGROUP" ]; then
		rmdir "$CGROUP"
	fi
	drop_claim_tables
}

# memory_cgroup LIMIT: makes a real memory cgroup of LIMIT (v2 memory.max
# or v1 memory.limit_in_bytes) and sets CGROUP to its directory, which
# teardown removes.
memory_cgroup() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			echo +memory >/sys/fs/cgroup/cgroup.subtree_control
		CGROUP=/sys/fs/cgroup/bloom-test.$$
		mkdir "$CGROUP"
		echo "$1" >"$CGROUP/memory.max"
	else
		CGROUP=/sys/fs/cgroup/memory/bloom-test.$$
		mkdir "$CGROUP"
		echo "$1" >"$CGROUP/memory.limit_in_bytes"
	fi
}

# 3000 lines, 1300 distinct, repeats near and far apart.
input() {
	awk 'BEGIN { for (i = 1; i <= 3000; i++) print "u" (i * i) % 1300 "/x" }'
}

# same FILTER ARGS...: runs `bloom ARGS` with FILTER line by line on a copy
# and with --memory $MEMORY, 4K unless set (batches of a few dozen lines),
# on another copy, and
# asserts that status, stdout, stderr and the two filters are the same.
# The input, if any, is in the file "in" and read as standard input when
# no file is named.  ARGS has the word FILTER where the filter goes.
same() {
	local filter=$1 a b
	shift
	cp "$filter" line.bf
	cp "$filter" sorted.bf
	a=("${@/#FILTER/line.bf}")
	b=("${@/#FILTER/sorted.bf}")
	run --separate-stderr bloom "${a[@]}" <in
	local want_status=$status want_out=$output want_err=${stderr//line.bf/F}
	run --separate-stderr bloom "${b[0]}" --memory "${MEMORY:-4K}" \
		"${b[@]:1}" <in
	echo "line by line: status $want_status, ${#want_out} bytes out"
	echo "sorted:       status $status, ${#output} bytes out"
	[ "$status" -eq "$want_status" ]
	[ "$output" = "$want_out" ]
	[ "${stderr//sorted.bf/F}" = "$want_err" ]
	cmp line.bf sorted.bf
}

@test "batch: add and add --new from a file and a pipe, as line by line" {
	bloom create --seed 3 -n 2000 -p 0.01 f.bf
	input >in
	same f.bf add FILTER
	same f.bf add FILTER in
	same f.bf add --new FILTER
	same f.bf add --new FILTER in
	same f.bf add -N FILTER - in -
	# What add --new wrote is the first occurrence of each line.
	run -0 bloom add --new --memory 4K f.bf in
	[ "$output" = "$(awk '!seen[$0]++' in)" ]
}

# The lines of a regular file are read again by offset to be written;
# those of a pipe are kept in memory.  Both give what line by line gives.
@test "batch: lines re-read from a file or kept from a pipe, as line by line" {
	bloom create --seed 3 -n 2000 -p 0.01 f.bf
	input >in
	printf 'no newline at the end' >>in
	awk '!seen[$0]++' in >want
	cp f.bf g.bf
	cp f.bf h.bf
	run -0 bloom add --new --memory 4K f.bf in
	[ "$output" = "$(cat want)" ]
	run -0 bloom add --new --memory 4K g.bf <in
	[ "$output" = "$(cat want)" ]
	run -0 bash -c 'cat in | bloom add --new --memory 4K h.bf'
	[ "$output" = "$(cat want)" ]
	cmp f.bf g.bf
	cmp f.bf h.bf
	# Not in f.bf: the line without a newline, read back from a file and
	# from a pipe.
	printf 'a\nno newline at the end\nb' >in2
	row 0 $'a\nb' '' check -v --memory 4K f.bf in2
	run -0 bash -c 'cat in2 | bloom check -v --memory 4K f.bf'
	[ "$output" = $'a\nb' ]
}

@test "batch: a file read from where its descriptor is, not from its start" {
	bloom create --seed 3 -n 2000 -p 0.01 f.bf
	input >in
	cp f.bf g.bf
	# head leaves a seekable input just after the lines it read.
	{ head -n 1000 >/dev/null; bloom add --new --memory 4K f.bf >out; } <in
	tail -n +1001 in | bloom add --new g.bf >want
	cmp out want
	[ -s out ]
	cmp f.bf g.bf
}

@test "batch: a file rewritten while it is read is told, not trusted" {
	bloom create --seed 3 -n 2000000 -p 0.01 f.bf
	keys 600000 a >in
	keys 600000 b >other
	[ "$(wc -c <in)" -eq "$(wc -c <other)" ]
	# After the first line out, in holds other lines at the same offsets.
	run --separate-stderr bash -c 'bloom add --new --memory 4K f.bf in |
	    { head -n 1; dd if=other of=in conv=notrunc status=none
	      cat >/dev/null; }'
	[ "$output" = a1 ]
	[ "$stderr" = "bloom: in: changed while it was read" ]
}

@test "batch: a line repeated inside a batch is new only once" {
	bloom create --seed 3 -n 2000 -p 0.001 f.bf
	printf 'a\nb\na\na\nc\nb\n' >in
	run -0 bloom add --new --memory 4K f.bf <in
	[ "$output" = $'a\nb\nc' ]
	[ "$(stats_field inserted f.bf)" = 3 ]
}

# A sorted batch finds the lines whose bits the lines before them in the
# batch set (store/mates.c, a window at a time) by walking the keys that
# share a block in the order of the blocks: in a crowded filter many
# distinct lines share one, and each must still be answered as one line
# at a time would.  Written to a file: to a pipe, lines wait for their
# reader before they are marked seen (engine.c), so that a line whose
# bits only waiting lines set is new or not by the reader's pace.
@test "batch: a crowded filter in sorted batches answers as line by line" {
	awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++)
		printf "https://host%d.example/path/%d\n", int(rand() * 50),
		    int(rand() * 3000) }' >in
	bloom create --seed 3 -s 16K f.bf
	cp f.bf line.bf
	bloom add --new line.bf in >want 2>/dev/null
	for memory in 4K 256K 1M; do
		cp f.bf sorted.bf
		bloom add --new --memory "$memory" sorted.bf in >got 2>/dev/null
		echo "--memory $memory: $(wc -l <got) new of $(wc -l <want)"
		cmp want got
		cmp line.bf sorted.bf
	done
	# Crowded indeed: of the 110 705 distinct lines, half are seen.
	[ "$(awk '!seen[$0]++' in | wc -l)" -eq 110705 ]
	[ "$(wc -l <want)" -lt 60000 ]
}

# past_dirty_limit COMMAND...: runs COMMAND in a mount namespace where the
# kernel's dirty limits read 4096 bytes: any filter is past them, and add
# works in sorted batches through the mapping (as live.bats's).
past_dirty_limit() {
	echo 4096 >"$BATS_TEST_TMPDIR/dirty"
	unshare -m bash -c '
		for f in dirty_bytes dirty_background_bytes; do
			mount --bind "$0" /proc/sys/vm/$f || exit 3
		done
		exec "$@"' "$BATS_TEST_TMPDIR/dirty" "$@"
}

# A filter mapped whole is swept in windows of 1 MiB (lib/memory.c): an
# 8 MiB one in eight, the repeats of each found in it.
@test "batch: a filter past the dirty limit, in windows of 1 MiB, answers add --new as line by line" {
	echo 4096 >dirty
	need_to_run "a filter past the dirty limit takes unshare -m and a bind mount on /proc/sys/vm" \
		unshare -m sh -c 'mount --bind "$0" /proc/sys/vm/dirty_bytes' dirty
	awk 'BEGIN { srand(11); for (i = 0; i < 300000; i++)
		printf "https://host%d.example/path/%d\n", int(rand() * 500),
		    int(rand() * 400) }' >in
	bloom create --seed 3 -s 8M f.bf
	cp f.bf line.bf
	bloom add --new line.bf in >want
	cp f.bf sorted.bf
	past_dirty_limit bloom add --new sorted.bf in >got
	cmp want got
	cmp line.bf sorted.bf
	# Repeats indeed, within a window and across them: of the 300 000
	# lines, fewer than 200 000 are distinct, and most of those new.
	[ "$(wc -l <want)" -gt 100000 ]
	[ "$(wc -l <want)" -lt 200000 ]
}

# Past the dirty limit a batch of many keys (store/sweep.c's SPLIT_KEYS,
# 65 536) is sorted by window in two halves on two threads, and a filter
# mapped whole is tested in two runs of windows, one on each thread.
# Every kind of filter, sized to several windows of 1 MiB, through both:
# a first add --new into an empty filter, then one of other lines, half
# of them held, where a grown filter's and a window's older segments are
# tested.
@test "batch: past the dirty limit, every kind of filter of several windows, on two threads, as line by line" {
	echo 4096 >dirty
	need_to_run "a filter past the dirty limit takes unshare -m and a bind mount on /proc/sys/vm" \
		unshare -m sh -c 'mount --bind "$0" /proc/sys/vm/dirty_bytes' dirty
	awk 'BEGIN { srand(5); for (i = 0; i < 300000; i++)
		printf "https://host%d.example/p/%d\n", int(rand() * 600),
		    int(rand() * 400) }' >in1
	awk 'BEGIN { srand(6); for (i = 0; i < 200000; i++)
		printf "https://host%d.example/p/%d\n", int(rand() * 900),
		    int(rand() * 400) }' >in2
	for kind in fixed grow window apbf slice; do
		rm -f f.bf line.bf
		case $kind in
		fixed) bloom create --seed 3 -s 4M f.bf ;;
		grow) bloom create --seed 3 --grow -n 60000 -p 1e-7 f.bf ;;
		window) bloom create --seed 3 --generations 3 --layout blocked \
			-n 150000 -p 1e-6 f.bf ;;
		apbf) bloom create --seed 3 --generations 3 --layout apbf \
			-n 150000 -p 1e-6 f.bf ;;
		slice) bloom create --seed 3 -s 8M --slice 1/2 f.bf ;;
		esac
		cp f.bf line.bf
		for in in in1 in2; do
			bloom add --new --pass-over line.bf $in >want 2>want.err
			sed 's/line\.bf/f.bf/' want.err >want.err2
			past_dirty_limit bloom add --new --pass-over f.bf $in \
				>got 2>got.err
			echo "$kind $in: $(wc -l <got) new of $(wc -l <want)"
			cmp want got
			cmp want.err2 got.err
			[ "$(wc -l <want)" -gt 30000 ]
		done
		table=$(json f.bf '4096 if d["mode"] != "grow" else 8192')
		cmp <(tail -c +$((table + 1)) f.bf) <(tail -c +$((table + 1)) line.bf)
		[ "$(past_dirty_limit bloom check -c --pass-over f.bf in1 in2 2>/dev/null)" = \
		  "$(bloom check -c --pass-over line.bf in1 in2 2>/dev/null)" ]
	done
	# Both inputs hold repeats, and the second half its lines the first.
	[ "$(sort -u in1 | wc -l)" -eq 171095 ]
	[ "$(sort -u in1 in2 | wc -l)" -eq 251552 ]
}

# Past the dirty limit a filter mapped whole is swept in windows, and an
# add --new's set sweep has the windows of its new keys made writable
# ahead (store/sweep.c): a page made writable is dirty, and the file's
# mtime moves, though no bit changes.  A plain add's keys may all be
# held, so its sweep makes nothing writable ahead.
@test "batch: past the dirty limit, adding lines the filter holds dirties no page; new lines are set" {
	[[ $(uname -m) == x86_64 ]] || skip "cachestat(2) is called by its x86-64 number"
	echo 4096 >dirty
	need_to_run "a filter past the dirty limit takes unshare -m and a bind mount on /proc/sys/vm" \
		unshare -m sh -c 'mount --bind "$0" /proc/sys/vm/dirty_bytes' dirty
	keys 20000 held- >held
	keys 20000 new- >new
	bloom create --seed 3 -s 8M f.bf
	bloom add f.bf held
	synced_clean f.bf
	before=$(mtime f.bf)
	# 2 500 keys a window of 1 MiB (256 pages), all held.
	past_dirty_limit bloom add f.bf held
	[ "$(dirty f.bf)" -eq 0 ]
	run -0 --separate-stderr past_dirty_limit bloom add --new f.bf held
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ "$(dirty f.bf)" -eq 0 ]
	[ "$(mtime f.bf)" = "$before" ]
	# New lines, through the windows made writable ahead: each written
	# once, then found, and the file as line by line makes it.
	cp f.bf line.bf
	bloom add --new line.bf new >want
	past_dirty_limit bloom add --new f.bf new >got
	cmp want got
	[ "$(wc -l <got)" -ge 19990 ]
	cmp line.bf f.bf
	[ "$(bloom check -c f.bf new)" = 20000 ]
	[ "$(mtime f.bf)" != "$before" ]
}

@test "batch: check, check -v, -c and -q on a filled filter, as line by line" {
	bloom create --seed 5 -n 2000 -p 0.05 f.bf
	input | head -n 1500 | bloom add f.bf
	input >in
	keys 3000 u >>in
	same f.bf check FILTER
	same f.bf check FILTER in
	same f.bf check -v FILTER
	same f.bf check -v FILTER - in
	same f.bf check -c FILTER in
	same f.bf check -cv FILTER
	same f.bf check -q FILTER
	keys 10 nothing >in
	same f.bf check FILTER
	same f.bf check -c FILTER
}

@test "batch: -z, NUL-terminated lines with newlines inside" {
	bloom create --seed 9 -n 2000 -p 0.01 f.bf
	input | tr '\n' '\0' | sed 's/u1/u\n1/g' >in
	same f.bf add -z --new FILTER
	cp sorted.bf g.bf
	same g.bf check -z FILTER in
	same g.bf check -zv FILTER
	same g.bf check -zc FILTER
}

@test "batch: a line longer than the whole batch" {
	bloom create --seed 9 -n 2000 -p 0.01 f.bf
	{ input | head -n 100; head -c 20000 /dev/zero | tr '\0' x; echo
	  input | head -n 200; } >in
	same f.bf add --new FILTER
	cp sorted.bf g.bf
	same g.bf check FILTER
}

@test "batch: a growable filter of three segments, as line by line" {
	bloom create --seed 11 --grow -n 500 -p 0.01 f.bf
	keys 2000 old- | bloom add f.bf
	[ "$(stats_field segments f.bf)" = 3 ]
	# Fewer new lines than the newest segment has room for: both modes
	# add the same chunks to the same segment.
	{ keys 800 old-; keys 300 new- | sed p; keys 300 new-; } >in
	same f.bf add --new FILTER
	cp line.bf g.bf
	same g.bf check FILTER
	same g.bf check -v FILTER
	same g.bf check -c FILTER
}

@test "batch: a growable filter grows in sorted batches, and keeps every line" {
	bloom create --seed 11 --grow -n 500 -p 0.001 f.bf
	keys 5000 >in
	run -0 bloom add --new --memory 4K f.bf in
	[ "${#lines[@]}" -ge 4990 ]
	[ "$(stats_field segments f.bf)" -ge 4 ]
	row 1 '' '' check -v --memory 4K f.bf in
	row 1 '' '' check -v f.bf in
}

# At 1 % a generation of 3000 fills early in the middle of the input, and
# a chunk tested whole (a group line by line) is tested against the
# generations as they were before it: when the rotation comes inside a
# chunk depends on the chunk's size.  At 1e-4 none fills early.
@test "batch: a window of generations, across a rotation, as line by line" {
	bloom create --seed 13 --generations 3 -n 3000 -p 0.0001 f.bf
	keys 1000 gen1- | bloom add f.bf
	bloom rotate f.bf
	keys 1000 gen2- | bloom add f.bf
	{ keys 500 gen1-; keys 500 gen2-; keys 500 gen3- | sed p; } >in
	same f.bf add --new FILTER
	cp line.bf g.bf
	same g.bf check -v FILTER
}

# An age-partitioned window (issue 33): its generations are slots of one
# array, tested once a pass, and a burst's extra segments are blocked.
@test "batch: an age-partitioned window, across a rotation and a burst, as line by line" {
	bloom create --seed 13 --layout apbf --generations 4 -n 3000 \
		-p 0.0001 f.bf
	keys 1000 gen1- | bloom add f.bf
	bloom rotate f.bf
	keys 1000 gen2- | bloom add f.bf
	{ keys 500 gen1-; keys 500 gen2-; keys 500 gen3- | sed p; } >in
	same f.bf add --new FILTER
	cp line.bf g.bf
	same g.bf check -v FILTER
	same g.bf check -c FILTER
	same g.bf add --dups FILTER
	# 3000 more lines in the generation: it bursts into extra segments
	# of the blocked layout, which the sorted passes visit too.
	{ keys 3000 gen3-; keys 3000 gen4- | sed p; } >in
	same g.bf add --new FILTER
	[ "$(stats_field segments sorted.bf)" -gt 4 ]
	cp line.bf h.bf
	{ keys 3000 gen4-; keys 3000 gen1-; keys 3000 none-; } >in
	same h.bf check FILTER
	same h.bf check -v FILTER
	same h.bf add FILTER
}

# Out of core, the array is read a window at a time, each window's keys
# tested against the copy, and only the keys an add finds not held in its
# newest slots set through the mapping.
@test "batch: an age-partitioned window out of core, as line by line" {
	bloom create --seed 5 --layout apbf --generations 8 -n 4000000 \
		-p 0.01 f.bf
	keys 300000 a >a
	bloom add f.bf a
	bloom rotate f.bf
	{ keys 300000 b; keys 300000 a | awk 'NR % 3 == 1'; } >in
	MEMORY=4M same f.bf add --new FILTER in
	# The b lines are new (but for a false positive or so), the a lines
	# were added a generation ago.
	[ "$(echo "$output" | wc -l)" -gt 299900 ]
	[ "$(echo "$output" | grep -c '^a')" -eq 0 ]
	cp sorted.bf g.bf
	MEMORY=4M same g.bf add FILTER a
	MEMORY=4M same g.bf check -c FILTER in
	keys 300000 c >in
	MEMORY=4M same g.bf check -v FILTER in
}

@test "batch: a slice passes over other slices' lines, as line by line" {
	bloom create --seed 17 --slices 4 -n 4000 -p 0.01 whole.bf
	bloom create --like whole.bf --slice 1/4 s.bf
	keys 2000 >in
	same s.bf add --new FILTER
	cp line.bf g.bf
	same g.bf check FILTER in
}

# same_union FILTER... -- ARGS...: runs `bloom check -F FILTER... ARGS`
# line by line and with --memory $MEMORY, the input the file "in" as
# standard input, and asserts that status, stdout and stderr are the
# same, byte for byte (stderr but for -q, whose count of lines passed over
# is of the lines read before it stopped: a group, or a batch).
same_union() {
	local -a fs=()
	local want=0 got=0

	while [ "$1" != -- ]; do
		fs+=(-F "$1")
		shift
	done
	shift
	bloom check "${fs[@]}" "$@" <in >line.out 2>line.err || want=$?
	bloom check "${fs[@]}" --memory "$MEMORY" "$@" <in >sorted.out \
		2>sorted.err || got=$?
	echo "check ${fs[*]} $* --memory $MEMORY: status $got, $(wc -c <sorted.out) bytes; line by line: status $want, $(wc -c <line.out) bytes"
	[ "$got" -eq "$want" ]
	cmp line.out sorted.out
	[[ " $* " == *" -q "* ]] || cmp line.err sorted.err
}

# A union (check -F) of filters that do not fit --memory goes in sorted
# batches, each filter in turn sweeping the lines no filter before it may
# hold: every kind of member, of other seeds and sizes, every way of
# answering, as line by line.  The slices 1 and 2 of 4 of one filter pass
# over the lines of slices 0 and 3 that no other filter holds.
@test "batch: a union of every kind of filter in sorted batches answers as line by line" {
	bloom create --seed 41 -s 64K -p 0.001 fixed.bf
	bloom create --seed 42 --grow -n 400 -p 0.001 grow.bf
	bloom create --seed 43 --generations 3 --layout blocked -n 6000 \
		-p 0.001 window.bf
	bloom create --seed 44 --generations 3 --layout apbf -n 6000 \
		-p 0.001 apbf.bf
	bloom create --seed 45 --slices 4 -n 4000 -p 0.001 whole.bf
	bloom create --like whole.bf --slice 1/4 s1.bf
	bloom create --like whole.bf --slice 2/4 s2.bf
	keys 2000 f- | bloom add fixed.bf
	keys 2000 g- | bloom add grow.bf 2>/dev/null
	[ "$(stats_field segments grow.bf)" -gt 2 ]
	for w in window apbf; do
		keys 1000 "$w"1- | bloom add "$w.bf"
		bloom rotate "$w.bf"
		keys 1000 "$w"2- | bloom add "$w.bf"
	done
	keys 3000 s- | bloom add --pass-over s1.bf
	keys 3000 s- | bloom add --pass-over s2.bf
	# Lines of each, lines of none, repeats near and far apart; the key
	# in field 2 of a line with a field before it.
	for p in f- g- window1- window2- apbf1- apbf2- s- none-; do
		keys 1000 "$p"
	done | awk '{ print; if (NR % 7 == 0) print prev; prev = $0 }' >keys
	cp keys in
	awk '{ print NR "," $0 }' keys >csv
	for MEMORY in 4K 256K; do
		for order in "fixed grow window apbf s1 s2" \
		    "s1 apbf fixed s2 window grow"; do
			# shellcheck disable=SC2086
			set -- $order
			cp keys in
			for opts in "" -v -c -cv --which; do
				# shellcheck disable=SC2086
				same_union "${@/%/.bf}" -- $opts
			done
			same_union "${@/%/.bf}" -- -q
			cp csv in
			same_union "${@/%/.bf}" -- -f 2 -d ,
			same_union "${@/%/.bf}" -- -v -f 2 -d ,
			same_union "${@/%/.bf}" -- --which -f 2 -d ,
		done
		# No slices: nothing passed over, and -q's stderr too.
		cp keys in
		same_union fixed.bf grow.bf window.bf apbf.bf -- -q
		same_union apbf.bf fixed.bf -- -v
		# Kept from a pipe rather than read again from the file.
		bloom check --which -F s2.bf -F grow.bf in >line.out 2>line.err
		cat in | bloom check --which --memory "$MEMORY" -F s2.bf \
			-F grow.bf >sorted.out 2>sorted.err
		cmp line.out sorted.out
		cmp line.err sorted.err
	done
	# The answers themselves: every line some filter holds, of no slice
	# but the two named, is selected; what only other slices may hold,
	# passed over, and told of.
	cp keys in
	run --separate-stderr bloom check -v --memory 4K -F fixed.bf \
		-F grow.bf -F window.bf -F apbf.bf -F s1.bf -F s2.bf in
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -vc "^none-")" -eq 0 ]
	[[ $stderr == "bloom: s1.bf: "*" lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" ]]
}

# Out of core, a union reads each of its filters by windows, as a single
# filter's check does: in the mapping, each line looked up in each filter
# it reaches is a page fault from the disk.  Two 32 MiB filters, dropped
# from the page cache, in a cgroup of 24 MiB; the major faults counted as
# in the add --new test below.  Measured here: line by line, as a union
# went before, 85749; by windows, 0.
@test "batch: a union out of core reads its filters by windows, never a page at a time" {
	not_sanitized
	bloom create --seed 39 -s 32M a.bf
	bloom create --seed 40 -s 32M b.bf
	keys 100000 >in
	head -n 50000 in | bloom add a.bf
	tail -n 50000 in | bloom add b.bf
	memory_cgroup 24M
	sync a.bf b.bf
	dd if=a.bf iflag=nocache count=0 status=none
	dd if=b.bf iflag=nocache count=0 status=none
	run -0 bash -c 'echo $$ >"$0/cgroup.procs" &&
	    bloom check -c --memory 8M -F a.bf -F b.bf in &&
	    awk "{ print \$13 }" /proc/$$/stat' "$CGROUP"
	echo "count, major faults: $output"
	[ "${lines[0]}" -eq 100000 ]
	[ "${lines[1]}" -lt 1000 ]
}

# A filter of a union is tested even for a chunk whose every line a
# filter before it holds: that test refreshes its view, so a filter
# damaged while the check runs fails it, as line by line did before
# unions went by batches (then it was passed over: exit 0, a count).
@test "batch: a union fails on a filter damaged under it though the filters before it hold every line" {
	bloom create --seed 51 -n 2000 -p 0.01 a.bf
	seq 1 1000 | bloom add a.bf
	for mem in "" 4K; do
		bloom create --seed 52 --grow -n 100 -p 0.01 g.bf
		seq 1 50 | bloom add g.bf
		rm -f in.fifo
		mkfifo in.fifo
		bloom check -c ${mem:+--memory $mem} -F a.bf -F g.bf \
			<in.fifo >out 2>err &
		pid=$!
		exec 7>in.fifo
		seq 1 100 >&7
		# The check has g.bf open and mapped: damage its header.
		for i in $(seq 100); do
			grep -q 'g\.bf' "/proc/$pid/maps" 2>/dev/null && break
			sleep 0.05
		done
		grep -q 'g\.bf' "/proc/$pid/maps"
		head -c 200 /dev/zero | tr '\0' '\377' |
			dd of=g.bf bs=1 seek=8 conv=notrunc status=none
		seq 101 300 >&7
		exec 7>&-
		rc=0
		wait "$pid" || rc=$?
		echo "memory ${mem:-none}: rc $rc, out $(cat out), err $(cat err)"
		[ "$rc" -eq 2 ]
		grep -q '^bloom: g\.bf: corrupt header' err
		rm -f g.bf
	done
}

@test "batch: concurrent sorted adds lose nothing" {
	bloom create --seed 19 -n 40000 -p 0.001 f.bf
	keys 20000 a >a
	keys 20000 b >b
	bloom add --memory 8K f.bf a &
	bloom add --memory 8K f.bf b &
	bloom add f.bf b &
	wait
	row 1 '' '' check -v f.bf a b
}

# With --memory 64M a 64 MiB filter is out of core in windows of 2 MiB
# (512 pages): a window with few keys to set (here about 16) is written
# a page at a time through the mapping, one with many (about 3000) is
# mapped writable at once.  Both set what line by line sets, also with
# other adders at work.
@test "batch: sparse and dense windows out of core, as line by line" {
	bloom create --seed 29 -s 64M f.bf
	keys 500 s >in
	MEMORY=64M same f.bf add --new FILTER
	cp sorted.bf f.bf
	keys 100000 d >in
	MEMORY=64M same f.bf add --new FILTER in
	cp sorted.bf f.bf
	MEMORY=64M same f.bf check -c FILTER in
	keys 100000 e >e
	keys 100000 g >g
	cp line.bf f.bf
	bloom add --memory 64M f.bf e &
	bloom add --memory 64M f.bf g &
	bloom add f.bf g &
	wait
	row 1 '' '' check -v f.bf e g in
	# The bits are those of a serial add (the counters may differ, since
	# two adders of g may each count some of its keys new).
	bloom add line.bf e g
	cmp <(tail -c +4097 line.bf) <(tail -c +4097 f.bf)
}

@test "batch: kill -9, then a rerun: every line is printed by one of them" {
	bloom create --seed 23 -n 400000 -p 1e-7 f.bf
	keys 300000 >in
	bloom add --new --memory 16K f.bf in >out &
	pid=$!
	# Up to 60 s for the first 100000 bytes of output.
	for _ in $(seq 1200); do
		[ "$(wc -c <out)" -gt 100000 ] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	[ "$(wc -l <out)" -gt 1000 ]
	bloom add --new --memory 16K f.bf in >again
	# The last line of out may have been cut short by the kill.
	run -0 bash -c 'sort -u out again | comm -23 <(sort in) -'
	[ "$output" = "" ]
}

@test "batch: --memory takes a size of a page or more" {
	bloom create -n 100 f.bf
	run -2 bloom add --memory 0 f.bf
	[ "${lines[0]}" = "bloom: add: --memory takes a size of 4K or more, such as 512M or 1GB, not '0'" ]
	run -2 bloom check --memory 2X f.bf
	[ "${lines[0]}" = "bloom: check: --memory takes a size of 4K or more, such as 512M or 1GB, not '2X'" ]
	run -2 bloom check --memory 99999999999999999999 f.bf
	[ "${lines[0]}" = "bloom: check: --memory takes a size of 4K or more, such as 512M or 1GB, not '99999999999999999999'" ]
	printf 'x\n' | row 0 '' '' add --memory=1G f.bf
	printf 'x\n' | row 0 x '' check --memory 4k f.bf
}

# fake_cgroup V LIMIT COMMAND...: runs COMMAND in a mount namespace where
# /proc/self/cgroup puts it in memory cgroup /t/u of cgroup version V (1 or
# 2), whose parent /t has the memory limit LIMIT and /t/u none, and where
# 16 GiB are available (/proc/meminfo): a machine like a container's.
fake_cgroup() {
	local v=$1 limit=$2
	shift 2
	# LeakSanitizer needs /proc: under SANITIZE=1 it would fail the run.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	unshare -m bash -c '
		v=$1 limit=$2
		shift 2
		mount -t tmpfs none /proc || exit 3
		mkdir /proc/self
		echo "MemAvailable: 16777216 kB" >/proc/meminfo
		mount -t tmpfs none /sys/fs/cgroup || exit 3
		if [ "$v" = 2 ]; then
			echo "0::/t/u" >/proc/self/cgroup
			mkdir -p /sys/fs/cgroup/t/u
			echo "$limit" >/sys/fs/cgroup/t/memory.max
			echo max >/sys/fs/cgroup/t/u/memory.max
		else
			printf "4:cpu,cpuacct:/x\n7:memory:/t/u\n" \
			    >/proc/self/cgroup
			mkdir -p /sys/fs/cgroup/memory/t/u
			echo "$limit" \
			    >/sys/fs/cgroup/memory/t/memory.limit_in_bytes
			echo 9223372036854771712 \
			    >/sys/fs/cgroup/memory/t/u/memory.limit_in_bytes
		fi
		exec "$@"' bash "$v" "$limit" "$@"
}

# The budget is seen in what bloom does: out of core, a 64 MiB filter
# under a 64 MiB budget is read with pread(2) in windows of a 32nd of
# what the budget leaves once the process's fixed bytes are taken (about
# 15 MiB for add: lib/memory.c): 1 MiB, cut at multiples of 1 MiB in the
# file, so 63 whole windows, the first less the header page and a last
# page; in memory it is not read with pread at all.
@test "batch: the budget is the cgroup's limit, v1 and v2, from an ancestor" {
	need_to_run "faking a cgroup takes unshare -m and tmpfs mounts on /proc and /sys/fs/cgroup" \
		unshare -m sh -c 'mount -t tmpfs none /proc && mount -t tmpfs none /sys/fs/cgroup'
	export -f fake_cgroup
	bloom create --seed 31 -s 64M f.bf
	keys 100000 >in
	cp f.bf want.bf
	bloom add want.bf in
	for v in 1 2; do
		for case in "64M" "1G" "64M --memory 1G"; do
			set -- $case
			cp f.bf g.bf
			run -0 strace -f -o trace -e trace=pread64 bash -c \
			    'fake_cgroup "$@"' bash "$v" $(numfmt --from=iec "$1") \
			    bloom add ${2-} ${3-} g.bf in
			windows=$(grep -c ', 1048576, [0-9]*) = 1048576$' trace || true)
			ends=$(grep -c -e ', 1044480, 4096) = 1044480$' \
			    -e ', 4096, 67108864) = 4096$' trace || true)
			echo "v$v, limit $case: $windows whole windows read, $ends ends"
			case $case in
			64M)
				[ "$windows" -eq 63 ]
				[ "$ends" -eq 2 ]
				# every whole window at a multiple of 1 MiB
				sed -n 's/.*, 1048576, \([0-9]*\)) = 1048576$/\1/p' trace |
				    awk '$1 % 1048576 { bad = 1 } END { exit bad }'
				;;
			*)
				[ "$windows" -eq 0 ]
				[ "$ends" -eq 0 ]
				;;
			esac
			cmp g.bf want.bf
		done
	done
}

# Out of core, add --new tests a batch in one sweep of windows read with
# pread(2), and finds the lines of the batch that repeat others there,
# from the same windows (issue 39): looking their blocks up in the mapping
# afterwards faulted the filter in from the disk a page at a time once the
# sweep had let its windows go (848613 major faults, 80 s, for 1 M lines
# into a 4 GiB filter in a 1 GiB cgroup).  Here a 64 MiB filter, dropped
# from the page cache, in a cgroup of 24 MiB; the major faults of bloom
# are those its shell counts for its children (cmajflt, /proc/PID/stat
# field 13).  Measured here: looking 100000 lines up in the mapping of
# that filter in that cgroup takes about 70000 major faults; by windows,
# only those of loading bloom itself under the cgroup's pressure, 18 to
# 114 (110 once in CI), as many as `bloom stats` takes there.  Hence a
# bound of 1000, far from both.
@test "batch: add --new out of core reads its filter by windows, never a page at a time" {
	not_sanitized
	bloom create --seed 39 -s 64M f.bf
	keys 50000 >in
	keys 50000 >>in
	memory_cgroup 24M
	sync f.bf
	dd if=f.bf iflag=nocache count=0 status=none
	run -0 bash -c 'echo $$ >"$0/cgroup.procs" &&
	    bloom add --new --memory 8M f.bf in >out &&
	    awk "{ print \$13 }" /proc/$$/stat' "$CGROUP"
	echo "major faults: $output"
	[ "$output" -lt 1000 ]
	cmp out <(keys 50000)
}

# huge_kib PID: the KiB of PID's anonymous memory in huge pages.
huge_kib() {
	awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"
}

# advised_kib PID: the KiB resident in PID's mappings advised for huge
# pages (madvise MADV_HUGEPAGE: "hg" among their VmFlags).
advised_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { rss = 0 }
	    /^Rss:/ { rss = $2 }
	    /^VmFlags:.* hg( |$)/ { kib += rss }
	    END { print kib + 0 }' "/proc/$1/smaps"
}

# thp_refused: how many times the kernel has given small pages to a fault
# that asked for a huge one (the whole machine's count, /proc/vmstat):
# memory too fragmented, or a memory cgroup at its limit.
thp_refused() {
	awk '$1 ~ /^thp_fault_fallback/ { n += $2 } END { print n + 0 }' \
	    /proc/vmstat
}

# has_lines FILE N: FILE has N lines or more.
has_lines() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}

@test "batch: a big batch's arrays are in huge pages past their first MiBs, a trickle's are not" {
	thp=/sys/kernel/mm/transparent_hugepage/enabled
	[ -r "$thp" ] || skip "$thp is missing: this kernel has no transparent huge pages"
	grep -q '\[never\]' "$thp" && skip "transparent huge pages are off here ($thp: $(cat "$thp"))"
	[ -r /proc/self/smaps_rollup ] || skip "/proc/PID/smaps_rollup is missing: Linux 4.14 or later tells a process's huge pages"
	if grep -q '^THP_enabled:[[:space:]]*0' /proc/self/status; then
		skip "transparent huge pages are off for this process and its children (prctl PR_SET_THP_DISABLE, /proc/self/status THP_enabled: 0)"
	fi
	attempt=
	bloom create --seed 40 -s 256M f.bf
	# Out of core in 384M: batches of millions of lines, their keys,
	# hashes and ends in arrays of tens of MiB.  The big batch runs
	# twice if the kernel refused it huge pages the first time, after
	# (as root) a compaction of the machine's memory.
	for n in 12 1000000 1000000; do
		rm -f in in.fifo out
		# The lines in a regular file, which never makes bloom wait,
		# so that they go in one batch however slow the machine:
		# from a pipe, a writer that falls behind has bloom answer
		# what it holds each time it waits, in small batches.
		keys "$n" "k$n-$attempt-" >in
		mkfifo in.fifo
		refused=$(thp_refused)
		bloom add --new --memory 384M f.bf in - <in.fifo >out &
		pid=$!
		exec 7>in.fifo
		# Then standard input, open and empty: the file's batch is
		# answered and its arrays stay as they are while bloom
		# waits for more.
		within 30 has_lines out "$n"
		kib=$(huge_kib "$pid")
		advised=$(advised_kib "$pid")
		exec 7>&-
		wait "$pid"
		refused=$(($(thp_refused) - refused))
		echo "$n lines: $kib KiB in huge pages; $advised KiB resident where advised; the kernel refused $refused huge pages meanwhile"
		cmp out <(keys "$n" "k$n-$attempt-")
		if [ "$n" -eq 12 ]; then
			# A trickle never touches the arrays past their
			# first MiBs, the only part advised.
			[ "$advised" -eq 0 ]
			if grep -q '\[madvise\]' "$thp"; then
				[ "$kib" -eq 0 ]
			fi
			continue
		fi
		# A big batch reaches past its arrays' first MiBs.
		[ "$advised" -ge 2048 ]
		[ "$kib" -ge 2048 ] && break
		# The kernel gives small pages where it has no huge one
		# (fragmented memory, a memory cgroup at its limit), and
		# counts each such fault: without one, bloom asked for none.
		[ "$refused" -gt 0 ]
		if [ "$attempt" ]; then
			skip "the kernel refused huge pages twice ($refused faults fell back to small pages: /proc/vmstat thp_fault_fallback*), though bloom advised them and used $advised KiB of them"
		fi
		attempt=2
		if [ -w /proc/sys/vm/compact_memory ]; then
			echo 1 >/proc/sys/vm/compact_memory
		fi
	done
}
