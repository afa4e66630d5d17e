#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of how lines stream through add and check: the reader thread that
# reads, splits and hashes ahead of the filter work, the groups of lines it
# hands over, output that goes on before more input comes, and stopping
# early.  Inputs of 1 MiB or more, and pipes, go through the thread; smaller
# files, and any input when one processor only may run bloom, are read
# without one.

bats_require_minimum_version 1.5.0
load helpers

# Waits up to 60 s for FILE to hold exactly the bytes of the string TEXT.
wait_for() {
	local i
	for i in $(seq 1200); do
		[ "$(cat "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	echo "after 60 s $1 holds '$(cat "$1")', not '$2'"
	return 1
}

@test "add --new passes each new line on before more input comes" {
	big_filter f.bf
	mkfifo feed
	bloom add -N f.bf <feed >out 3>&- &
	local pid=$!
	exec 4>feed
	echo first >&4
	wait_for out first
	echo first >&4
	echo second >&4
	wait_for out $'first\nsecond'
	exec 4>&-
	wait "$pid"
	bytes=$(wc -c <out)
	[ "$bytes" -eq 13 ]
}

@test "check -q ends at a selected line without waiting for more input" {
	big_filter f.bf
	echo key | bloom add f.bf
	mkfifo feed
	exec 4<>feed
	echo other >&4
	echo key >&4
	# The writer stays open: -q must not wait for the end of the input.
	SECONDS=0
	run -0 timeout 10 bloom check -q f.bf <feed
	exec 4>&-
	[ "$output" = "" ]
	[ "$SECONDS" -lt 5 ]
}

@test "a write error stops a run whose input never ends" {
	big_filter f.bf
	run bash -c 'yes | cat -n | timeout 10 bloom add -N f.bf >/dev/full
		echo "${PIPESTATUS[2]}"'
	[ "${lines[0]}" = "bloom: write error: No space left on device" ]
	[ "${lines[1]}" = 2 ]
}

@test "more short lines than a group holds, from a file and from a pipe" {
	# 700000 lines of 1 to 6 digits: over 100000 lines to a 1 MiB read.
	seq 700000 >in
	bloom create --seed 3 -n 700000 -p 1e-7 f.bf
	bloom create --seed 3 -n 700000 -p 1e-7 g.bf
	bloom add -N f.bf in >out
	cmp out in
	cat in | bloom add -N g.bf >out
	cmp out in
	same_filter f.bf g.bf
	run -0 bloom check -c f.bf in
	[ "$output" = 700000 ]
	cat in | bloom check f.bf >out
	cmp out in
}

@test "1.5 million empty lines are one key" {
	big_filter f.bf
	yes '' | head -n 1500000 >in
	bloom add -N f.bf in >out
	[ "$(wc -c <out)" -eq 1 ]
	[ "$(od -An -c out | tr -d ' ')" = '\n' ]
	run -0 bloom check -c f.bf in
	[ "$output" = 1500000 ]
	run -0 bloom check -c f.bf - <in
	[ "$output" = 1500000 ]
}

@test "with the thread or without, from files or a pipe: the same answers" {
	# 4 MB of lines, about half of them repeats, in a fixed order.
	awk 'BEGIN { srand(7)
		for (i = 0; i < 150000; i++)
			printf "https://host%d.example/path/%d\n",
			    int(rand() * 50), int(rand() * 2000) }' >in
	[ "$(wc -c <in)" -gt 3000000 ]
	# Files under 1 MiB are read without the thread.
	split -l 20000 in part.
	[ "$(wc -c <part.aa)" -lt 1048576 ]
	for f in one many pipe solo solopipe; do
		bloom create --seed 9 -n 150000 -p 1e-4 "$f.bf"
	done
	bloom add -N one.bf in >one
	bloom add -N many.bf part.* >many
	cat in | bloom add -N pipe.bf >pipe
	# Bound to one processor, bloom reads without the thread.
	taskset -c 0 bloom add -N solo.bf in >solo
	cat in | taskset -c 0 bloom add -N solopipe.bf >solopipe
	for f in many pipe solo solopipe; do
		cmp one "$f"
		same_filter one.bf "$f.bf"
	done
	perl -ne 'print unless $seen{$_}++' in >want
	# The filter may call a few new lines old (false positives), never
	# the reverse: what add wrote is the first occurrences minus those.
	[ "$(comm -13 <(sort want) <(sort one) | wc -l)" -eq 0 ]
	[ "$(($(wc -l <want) - $(wc -l <one)))" -le 20 ]
}

# random_urls SEED N PATHS: N URLs drawn with awk's srand(SEED), each of
# one of 50 hosts and one of PATHS paths.
random_urls() {
	awk -v seed="$1" -v n="$2" -v paths="$3" 'BEGIN { srand(seed)
		for (i = 0; i < n; i++)
			printf "https://host%d.example/path/%d\n",
			    int(rand() * 50), int(rand() * paths) }'
}

@test "a crowded filter: the reader's tests ahead answer as one line at a time" {
	# 4 MB of lines, about half of them repeats, into a filter sized
	# for 5000: most lines are false positives as it fills, and many of
	# a chunk share a block.  With the thread, the reader tests lines
	# ahead against the bits the adder is setting; bound to one
	# processor, nothing is tested ahead.
	random_urls 11 150000 2000 >in
	for f in file pipe solo; do
		bloom create --seed 3 -n 5000 -p 0.01 "$f.bf"
	done
	bloom add -N file.bf in >file 2>/dev/null
	cat in | bloom add -N pipe.bf >pipe 2>/dev/null
	taskset -c 0 bloom add -N solo.bf in >solo 2>/dev/null
	cmp file solo
	cmp pipe solo
	same_filter file.bf solo.bf
	same_filter pipe.bf solo.bf
	# Crowded indeed: of the 77504 distinct lines, fewer than half are new.
	[ "$(wc -l <solo)" -gt 1000 ]
	[ "$(wc -l <solo)" -lt 30000 ]
}

# The reader marks the keys of a chunk that may share a block with another
# (store/mates.c), and the adder looks only at those for repeats inside
# the chunk: on a filter where most blocks of a chunk hold one new key,
# one missed mark would make a line new that one line at a time calls
# seen.
@test "filters from crowded to roomy: the reader's marks answer as one line at a time" {
	random_urls 12 600000 8000 >in
	for n in 2000 20000 150000 400000; do
		for f in file solo; do
			rm -f "$f.bf"
			bloom create --seed 3 -n "$n" -p 0.01 "$f.bf"
		done
		bloom add -N file.bf in >file 2>/dev/null
		taskset -c 0 bloom add -N solo.bf in >solo 2>/dev/null
		echo "n = $n: $(wc -l <solo) new"
		cmp file solo
		same_filter file.bf solo.bf
	done
	# Of the 310 621 distinct lines, the largest filter calls few seen.
	[ "$(wc -l <solo)" -gt 305000 ]
}

@test "a big input whose last line has no terminator" {
	bloom create --seed 4 -n 300001 -p 1e-7 f.bf
	seq 300000 >in
	printf 'last' >>in
	cat in | bloom add -N f.bf >out
	printf '\n' >>in
	cmp out in
	run -0 bloom check -c f.bf in
	[ "$output" = 300001 ]
}

@test "a line that fills a 1 MiB read, then one longer than a read" {
	big_filter f.bf
	# A 1048575-byte line and its newline fill the first read exactly;
	# the next line does not end within the second read.
	head -c 1048575 /dev/zero | tr '\0' a >in
	printf '\n' >>in
	head -c 1048580 /dev/zero | tr '\0' b >>in
	printf '\nc\n' >>in
	bloom add -N f.bf in >out
	cmp out in
	run -0 bloom check -c f.bf in
	[ "$output" = 3 ]
}

# Runs "$@" with its standard input a pipe of 1 MiB holding 70000 empty
# lines and then "y", and the pipe left open; prints the exit status, or
# "waiting" if the command has not ended 60 s later.
feed_and_hold() {
	python3 - "$@" <<'PY'
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: one read takes it all
p = subprocess.Popen(sys.argv[1:], stdin=r)
os.close(r)
os.write(w, b'\n' * 70000 + b'y\n')
for i in range(1200):
    if p.poll() is not None:
        break
    time.sleep(0.05)
print(p.poll() if p.poll() is not None else "waiting")
os.close(w)
p.wait()
PY
}

@test "lines after the first 65536 of a read do not wait for more input" {
	big_filter f.bf
	echo y | bloom add f.bf
	# More lines than a group holds arrive in one read; the rest of them,
	# y among them, must be tested before bloom waits for input again.
	run -0 feed_and_hold bloom check -q f.bf
	[ "$output" = 0 ]
}

@test "a big file of short lines takes memory like any other" {
	# 4 million lines of at most 8 bytes, 30 MB: a 1 MiB read holds twice
	# the 65536 lines of a group, so half of it is carried to the next.
	seq 4000000 >in
	bloom create --seed 1 -n 4000000 -p 0.01 f.bf
	run -0 python3 -c '
import resource, subprocess, sys
rc = subprocess.call(["bloom", "check", "-c", "f.bf", "in"],
    stdout=subprocess.DEVNULL)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)'
	echo "status and peak RSS in MiB: $output"
	# The filter is 4.7 MiB; the reader's buffers some more.  Carrying
	# every read over whole made this 80 MiB and more.
	set -- $output
	[ "$1" = 1 ]
	[ "$2" -lt 40 ]
}
