#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Many writers, crashes, full disks and files that change under us: no
# inserted key is ever lost, and every failure is a message and exit 2.

bats_require_minimum_version 1.5.0
load helpers
bats_require_minimum_version 1.5.0

# Stops what a test left running in the background, however it ended,
# then drops the claim tables of its filters as helpers.bash does.
teardown() {
	jobs -p | xargs -r kill -9 2>/dev/null || true
	wait 2>/dev/null || true
	drop_claim_tables
}

# wait_flock PID FILE: waits up to 60 s until process PID holds a flock(2)
# on FILE, as /proc/locks lists it: by the device and inode of FILE.
wait_flock() {
	local dev ino

	dev=$((0x$(stat -c %D "$2"))) && ino=$(stat -c %i "$2") || return 1
	# /proc/locks writes MAJOR:MINOR:INODE, the numbers of the device in hex.
	dev=$(printf '%02x:%02x' $(((dev >> 8) & 0xfff)) \
		$(((dev & 0xff) | ((dev >> 12) & 0xfff00))))
	within 60 grep -Eq \
		"^[0-9]+: FLOCK +ADVISORY +(READ|WRITE) +$1 $dev:$ino " /proc/locks ||
		{ cat /proc/locks >&2; return 1; }
}

# wait_grep FILE TEXT: waits up to 60 s until FILE holds the string TEXT.
wait_grep() {
	within 60 grep -qsF -- "$2" "$1" ||
		{ echo "$1 holds: '$(cat "$1" 2>&1)'" >&2; return 1; }
}

# wait_mapped PID FILE: waits up to 60 s until process PID has FILE mapped.
wait_mapped() {
	within 60 grep -qsF -- "$2" "/proc/$1/maps"
}

@test "8 concurrent adders of disjoint sets lose no key (5 rounds)" {
	local round i
	for i in 1 2 3 4 5 6 7 8; do
		keys 100000 "w$i-" >"in.$i"
	done
	cat in.? >all
	for round in 1 2 3 4 5; do
		rm -f f.bf
		bloom create -n 800000 -p 0.01 f.bf
		for i in 1 2 3 4 5 6 7 8; do
			bloom add f.bf "in.$i" &
		done
		wait
		run bloom check -c f.bf all
		echo "round $round: $output"
		[ "$status" -eq 0 ]
		[ "$output" = 800000 ]
	done
}

@test "8 concurrent adds to a missing filter: one creates it, it grows, no key is lost (3 rounds)" {
	local round i bytes
	for i in 1 2 3 4 5 6 7 8; do
		keys 1100000 "w$i-" >"in.$i"
	done
	cat in.? >all
	# The size of the filter as created, before it grows.
	bloom add g.bf </dev/null 2>/dev/null
	bytes=$(wc -c <g.bf)
	for round in 1 2 3; do
		rm -f f.bf err.*
		for i in 1 2 3 4 5 6 7 8; do
			bloom add f.bf "in.$i" 2>"err.$i" &
		done
		wait
		# Exactly one of them says it created the filter; the others
		# found it, whole.
		run cat err.1 err.2 err.3 err.4 err.5 err.6 err.7 err.8
		echo "round $round: $output"
		[ "$output" = "bloom: f.bf: created growable, for 8000000 items at first, at fpr 0.01 ($bytes bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]
		# 8.8 M keys: past the first segment's 8 M.
		[ "$(stats_field mode f.bf)" = grow ]
		[ "$(stats_field segments f.bf)" -ge 2 ]
		run bloom check -c f.bf all
		echo "round $round: $output"
		[ "$status" -eq 0 ]
		[ "$output" = 8800000 ]
	done
}

# Prints "capacity inserted est_items" for each live segment of FILE.
segment_fill() {
	bloom stats "$1" | awk '$1 ~ /^[0-9]+$/ && $2 == "yes" { print $5, $7, $9 }'
}

# within_capacity FILE ADDERS: fails, saying which, if a live segment of
# FILE holds more past its capacity, by its counter or by its fill, than
# ADDERS adders at once may put there: a share of its room each, at most
# capacity / 32 + 1 (store/segments.c).
within_capacity() {
	local capacity inserted estimated bound bad=0

	while read -r capacity inserted estimated; do
		bound=$((capacity + $2 * (capacity / 32 + 1)))
		echo "capacity $capacity, inserted $inserted, estimated $estimated, at most $bound"
		[ "$inserted" -le "$bound" ] || bad=1
		[ "$estimated" -le "$bound" ] || bad=1
	done < <(segment_fill "$1")
	return "$bad"
}

@test "4 concurrent sorted adds fill no segment past its capacity (window, growable)" {
	local i
	for i in 1 2 3 4; do
		keys 300000 "w$i-" >"in.$i"
	done
	# 1.3 MB and 350 KB filters, out of core in 1 MiB and 100 KiB:
	# sorted batches.
	bloom create --generations 4 --layout blocked -n 600000 --seed 4 w.bf
	bloom create --grow -n 200000 --seed 4 g.bf
	for i in 1 2 3 4; do
		bloom add --memory 1M w.bf "in.$i" 2>/dev/null &
	done
	wait
	within_capacity w.bf 4
	for i in 1 2 3 4; do
		bloom add --memory 100K g.bf "in.$i" &
	done
	wait
	[ "$(stats_field segments g.bf)" -ge 3 ]
	within_capacity g.bf 4
	run bloom check -c g.bf < <(cat in.1 in.2 in.3 in.4)
	[ "$output" = 1200000 ]
}

@test "concurrent add --new of the same lines prints each at least once" {
	keys 50000 >in
	bloom create -n 200000 -p 0.001 f.bf
	bloom add --new f.bf in >out.1 &
	bloom add --new f.bf in >out.2 &
	bloom add --new f.bf in >out.3 &
	wait
	run sh -c 'sort -u out.1 out.2 out.3 | wc -l'
	[ "$output" -ge 49990 ]
	run bloom check -v -c f.bf in
	[ "$status" -eq 1 ]
	[ "$output" = 0 ]
}

@test "kill -9 during add --new, then a rerun: every line is written by one" {
	keys 3000000 k >in
	bloom create -n 3000000 -p 1e-7 f.bf
	bloom add --new f.bf <in >out &
	local pid=$!
	# Wait until some output exists, then kill mid-stream.
	for i in $(seq 100); do
		[ -s out ] && break
		sleep 0.02
	done
	kill -9 "$pid"
	wait "$pid" || true
	echo "written before the kill: $(wc -l <out) lines"
	bloom add --new f.bf <in >again
	# A last line the kill cut short is not a line of in.  At 1e-7, 3 M
	# lines make a false positive in a few runs of a hundred: such a line
	# is not written, and not lost.
	run -0 --separate-stderr lost f.bf in out again
	[ "$output" = "" ]
}

@test "add --sync exits 0 and the lines are in" {
	keys 1000 >in
	run bloom add --sync f.bf in
	[ "$status" -eq 0 ]
	run bloom check -c f.bf in
	[ "$output" = 1000 ]
}

@test "create that hits the file size limit: exit 2, message, nothing left" {
	mkdir d
	run bash -c 'trap "" XFSZ; ulimit -f 1024; bloom create -s 64M d/f.bf'
	[ "$status" -eq 2 ]
	[ "$output" = "bloom: d/f.bf: cannot create: File too large" ]
	run ls -A d
	[ "$output" = "" ]
}

@test "auto-create in add that hits the size limit: exit 2, nothing left" {
	mkdir d
	run bash -c 'trap "" XFSZ; ulimit -f 64; echo x | bloom add d/f.bf'
	[ "$status" -eq 2 ]
	[ "$output" = "bloom: d/f.bf: cannot create: File too large" ]
	run ls -A d
	[ "$output" = "" ]
}

@test "growth past the file size limit: exit 2, File too large, the filter still whole" {
	bloom create --grow -n 100000 --seed 1 f.bf
	keys 300000 >in
	head -n 100000 in >first
	# 400 KiB: room for the first segment, not for the second.
	run --separate-stderr bash -c 'ulimit -f 400; bloom add f.bf in'
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: File too large" ]
	run -0 bloom stats f.bf
	[ "$(stats_field segments f.bf)" = 1 ]
	[ "$(stats_field inserted f.bf)" = 100000 ]
	run bloom check -c f.bf first
	[ "$status" -eq 0 ]
	[ "$output" = 100000 ]
}

@test "create -f that fails leaves the old filter as it was" {
	bloom create -n 1000 --seed 5 f.bf
	echo hello | bloom add f.bf
	cp f.bf before
	run bash -c 'trap "" XFSZ; ulimit -f 1024; bloom create -f -s 64M f.bf'
	[ "$status" -eq 2 ]
	cmp f.bf before
	run ls -A
	[ "$output" = "$(printf 'before\nf.bf')" ]
}

@test "a create killed at any moment leaves no file or a whole one" {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rm -f f.bf
		timeout -s KILL "0.0$i" bloom create -s 256M f.bf || true
		if [ -e f.bf ]; then
			run bloom stats f.bf
			[ "$status" -eq 0 ]
		fi
		run ls -A
		[ "$output" = "" ] || [ "$output" = f.bf ]
	done
}

@test "create -f waits for a running add, which keeps its keys" {
	bloom create -n 1000 --seed 1 f.bf
	mkfifo feed
	bloom add f.bf <feed &
	local add=$!
	exec 5>feed
	echo first >&5
	wait_flock "$add" f.bf
	bloom create -f -n 1000 --seed 2 f.bf 5>&- 2>err &
	local create=$!
	# The add holds its shared lock: create -f must still be waiting,
	# and says so after a second.
	wait_grep err "waiting for a lock"
	kill -0 "$create"
	exec 5>&-
	wait "$add"
	wait "$create"
	[ "$(cat err)" = "bloom: f.bf: waiting for a lock: another process has the filter open, and create -f replaces it only once nothing uses it" ]
	run bloom stats f.bf
	[[ "$output" == *"seed: 2"* ]]
	[[ "$output" == *"inserted: 0"* ]]
}

@test "create -f killed while it waits for the lock leaves nothing behind" {
	bloom create -n 1000 --seed 1 f.bf
	cp f.bf before
	mkfifo feed
	bloom add f.bf <feed &
	local add=$!
	exec 5>feed
	wait_flock "$add" f.bf
	bloom create -f -n 1000000 --seed 2 f.bf 5>&- 2>err &
	local create=$!
	wait_grep err "waiting for a lock"
	kill -TERM "$create"
	wait "$create" || true
	exec 5>&-
	wait "$add"
	cmp f.bf before
	run ls -A
	[ "$output" = "$(printf 'before\nerr\nf.bf\nfeed')" ]
}

@test "a filter truncated while mapped: message and exit 2, no crash" {
	bloom create -s 64M f.bf
	mkfifo feed
	bloom check f.bf <feed >out 2>err &
	local pid=$!
	exec 5>feed
	echo warmup >&5
	wait_mapped "$pid" f.bf
	truncate -s 4096 f.bf
	# check dies of the truncation mid-stream, so this write may fail.
	keys 200000 >&5 || true
	exec 5>&-
	run wait "$pid"
	[ "$status" -eq 2 ]
	[ "$(cat err)" = "bloom: f.bf: file was truncated, or could not be read, while in use" ]
}

@test "add with a missing input among several: reports it, adds the rest" {
	keys 10 a >one
	keys 10 b >two
	run bloom add f.bf one nosuch two
	[ "$status" -eq 2 ]
	# The filter was missing: add created it first.
	[[ ${lines[0]} == "bloom: f.bf: created growable, for 8000000 items at first, at fpr 0.01 ("*" bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]]
	[ "${lines[-1]}" = "bloom: nosuch: No such file or directory" ]
	[ "${#lines[@]}" -eq 2 ]
	run bloom check -c f.bf one two
	[ "$output" = $'one:10\ntwo:10' ]
}

@test "a 100 MB line is a key like any other" {
	head -c 100000000 /dev/zero | tr '\0' x >big
	echo >>big
	run bloom add --new f.bf big
	[ "$status" -eq 0 ]
	run bloom check -c f.bf big
	[ "$output" = 1 ]
	run bloom add --new f.bf big
	[ "$output" = "" ]
}

@test "check with output to /dev/full: exit 2 and a message" {
	keys 10 >in
	bloom add f.bf in
	run bash -c 'bloom check f.bf in >/dev/full'
	[ "$status" -eq 2 ]
	[ "$output" = "bloom: write error: No space left on device" ]
}

@test "add with an input that fails to read: exit 2 naming the input" {
	mkdir dir
	run bloom add f.bf dir
	[ "$status" -eq 2 ]
	[ "${lines[-1]}" = "bloom: dir: read error: Is a directory" ]
}
