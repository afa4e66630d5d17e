#!/usr/bin/env bats
# add and check --progress, and the status line SIGUSR1 asks for.

bats_require_minimum_version 1.5.0

load helpers

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
	# Wait until bloom has read the first line and set up its handler.
	for i in $(seq 100); do
		[ -s out ] && break
		sleep 0.05
	done
	sleep 0.2
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
	# The output fills the pipe to a reader that sleeps: bloom is
	# surely running, with its handler, when SIGUSR1 comes.
	bloom check --progress f.bf in 2>err > >(sleep 1; cat >/dev/null) &
	pid=$!
	sleep 0.5
	kill -USR1 "$pid"
	wait "$pid"
	cat err
	[ "$(wc -l <err)" -eq 2 ]
	grep -Eq "^bloom: [0-9]+ lines, .*, [0-9]{1,2} %, ETA [0-9.:]+( s)?$" err
	grep -Eq "^bloom: done: 300000 lines, " err
}
