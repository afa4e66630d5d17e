#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# add and check --progress, and the status line SIGUSR1 asks for.

bats_require_minimum_version 1.5.0

load helpers

# Stops what a test left running in the background, however it ended (a
# reader waiting for the file sent goes on), then drops the claim tables of
# its filters as helpers.bash does.
teardown() {
	touch "$BATS_TEST_TMPDIR/sent"
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	drop_claim_tables
}

# wchar PID: the bytes process PID has passed to write(2) and the like.
wchar() {
	sed -n 's/^wchar: //p' "/proc/$1/io" 2>/dev/null
}

status_re='[0-9]+ lines, [0-9.]+ (B|KiB|MiB|GiB) in [0-9.:]+( s)?, [0-9.]+ (B|KiB|MiB|GiB)/s, [0-9.]+ M lines/s'

@test "--progress leaves stdout alone and ends with a summary on stderr" {
	keys 50000 >in
	big_filter f.bf
	bloom add --new f.bf <in >want
	bloom create -f --seed 42 -n 100000 -p 1e-6 f.bf
	run --separate-stderr bloom add --new --progress f.bf in
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat want)" ]
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" =~ ^"bloom: done: "$status_re$ ]]
	[[ "${stderr_lines[0]}" == "bloom: done: 50000 lines, 477.4 KiB in "* ]]
	run --separate-stderr bloom check -c --progress f.bf in
	[ "$status" -eq 0 ]
	[ "$output" = 50000 ]
	[[ "${stderr_lines[0]}" == "bloom: done: 50000 lines, 477.4 KiB in "* ]]
}

@test "without --progress, nothing on stderr" {
	keys 1000 | bloom add f.bf 2>err
	run --separate-stderr bloom check -c f.bf <(keys 1000)
	[ "$output" = 1000 ]
	[ "$stderr" = "" ]
}

@test "--progress on a terminal redraws one line in place" {
	command -v script >/dev/null || skip "script(1) not installed"
	keys 200000 >in
	big_filter f.bf
	script -qec "bloom add --progress f.bf in" /dev/null >tty
	# A carriage return, the line, and erase to the end of the line.
	grep -q $'\rbloom: done: 200000 lines, ' tty
	grep -q $'\e\\[K' tty
}

@test "SIGUSR1 prints one status line, without --progress, and stdout is unchanged" {
	big_filter f.bf
	mkfifo in
	bloom add --new f.bf <in >out 2>err &
	pid=$!
	exec 5>in
	echo a >&5
	# Wait until bloom has written the first line: its handler is set up
	# before it reads (cli/cmd_stream.c, start_progress).
	within 60 test -s out
	kill -USR1 "$pid"
	sleep 0.2
	echo b >&5
	exec 5>&-
	wait "$pid"
	[ "$(cat out)" = "$(printf 'a\nb')" ]
	cat err
	[ "$(wc -l <err)" -eq 1 ]
	grep -Eq "^bloom: [12] lines, [0-9]+ B in " err
}

@test "with the size known, the status line has percent and ETA" {
	keys 300000 >in
	big_filter f.bf
	bloom add f.bf in
	# The output fills the pipe to a reader that reads only once the
	# signal is sent (or after 60 s): bloom cannot end before it.  Once
	# bloom has written output it is streaming, with its handler set.
	bloom check --progress f.bf in 2>err > >(
		for _ in $(seq 1200); do
			[ -e sent ] && break
			sleep 0.05
		done
		cat >/dev/null) &
	pid=$!
	for _ in $(seq 1200); do
		[ "$(wchar "$pid")" -gt 0 ] 2>/dev/null && break
		sleep 0.05
	done
	echo "bloom has written $(wchar "$pid") bytes"
	[ "$(wchar "$pid")" -gt 0 ]
	kill -USR1 "$pid"
	touch sent
	wait "$pid"
	cat err
	[ "$(wc -l <err)" -eq 2 ]
	grep -Eq "^bloom: [0-9]+ lines, .*, [0-9]{1,2} %, ETA [0-9.:]+( s)?$" err
	grep -Eq "^bloom: done: 300000 lines, " err
}

# human BYTES: BYTES as the status line writes a size: "692 B", "477.4 KiB".
human() {
	awk -v b="$1" 'BEGIN {
		split("B KiB MiB GiB", unit, " ")
		for (u = 1; b >= 1024 && u < 4; u++)
			b /= 1024
		printf(u == 1 ? "%.0f %s\n" : "%.1f %s\n", b, unit[u])
	}'
}

# Under --memory 4K or 64K the filter of big_filter (about 350 KiB) is out
# of core: add and check work on it in sorted batches.

@test "--progress in sorted batches ends with the lines and bytes read, as line by line" {
	big_filter f.bf
	keys 100 >in
	# 692 bytes, in batches of a few dozen lines.
	run --separate-stderr bloom add --new --progress --memory 4K f.bf in
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat in)" ]
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ "${stderr_lines[0]}" =~ ^"bloom: done: "$status_re$ ]]
	[[ "${stderr_lines[0]}" == "bloom: done: 100 lines, 692 B in "* ]]
	# From a pipe, the last line without its newline.
	run --separate-stderr bash -c \
	    'head -c -1 in | bloom check -c --progress --memory 4K f.bf'
	[ "$status" -eq 0 ]
	[ "$output" = 100 ]
	[[ "${stderr_lines[0]}" == "bloom: done: 100 lines, 691 B in "* ]]
	# 50000 lines may take more than the five seconds after which a
	# status line is written (a sanitized build, a loaded machine): the
	# summary is the last line, and the only one.
	keys 50000 >in
	run --separate-stderr bloom check -c --progress --memory 64K f.bf in
	[ "$output" = 100 ]
	[[ "${stderr_lines[-1]}" == "bloom: done: 50000 lines, 477.4 KiB in "* ]]
	[ "$(grep -c '^bloom: done: ' <<<"$stderr")" -eq 1 ]
	run --separate-stderr bloom add --progress --memory 64K f.bf in
	[ "$status" -eq 0 ]
	[[ "${stderr_lines[-1]}" == "bloom: done: 50000 lines, 477.4 KiB in "* ]]
	[ "$(grep -c '^bloom: done: ' <<<"$stderr")" -eq 1 ]
}

@test "SIGUSR1 in sorted batches: the lines done so far, and exactly their bytes" {
	big_filter f.bf
	keys 5000 >first
	mkfifo in
	bloom add --new --memory 64K f.bf <in >out 2>err &
	pid=$!
	exec 5>in
	cat first >&5
	# Wait until a batch was added and written: bloom has its handler.
	for i in $(seq 100); do
		[ -s out ] && break
		sleep 0.05
	done
	sleep 0.2
	kill -USR1 "$pid"
	sleep 0.2
	echo last >&5
	exec 5>&-
	wait "$pid"
	[ "$(cat out)" = "$(cat first; echo last)" ]
	cat err
	[ "$(wc -l <err)" -eq 1 ]
	n=$(sed -n 's/^bloom: \([0-9]*\) lines, .*/\1/p' err)
	[ "$n" -gt 0 ] && [ "$n" -le 5000 ]
	grep -q "^bloom: $n lines, $(human "$(head -n "$n" first | wc -c)") in " err
}

@test "--progress on a terminal redraws in sorted batches too" {
	command -v script >/dev/null || skip "script(1) not installed"
	big_filter f.bf
	keys 5000 >first
	# The input pauses for a second: the group after it finds a status
	# line due (every 250 ms on a terminal).
	script -qec "sh -c '{ cat first; sleep 1; echo last; } |
	    bloom add --progress --memory 64K f.bf'" /dev/null >tty
	grep -aEq $'\rbloom: [1-9][0-9]* lines, [1-9][0-9.]* (B|KiB) in ' tty
	grep -aq $'\rbloom: done: 5001 lines, ' tty
}
