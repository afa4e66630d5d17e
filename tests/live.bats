#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# add --new as a live stage of a pipeline that never ends (issue 17):
# a line trickled in comes out within a second whatever the filter's size
# and mode; whatever stops add --new, the lines it wrote and the lines a
# rerun writes hold every distinct line (a line is marked seen only once
# it is written); and of two adders of the same lines at once, one writes
# each line.

bats_require_minimum_version 1.5.0
load helpers

# Under make check SANITIZE=1: LeakSanitizer cannot run under strace
# (ptrace).  ASan and UBSan still check every run.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

teardown() {
	if [ -n "${pid:-}" ]; then
		kill -9 "$pid" 2>/dev/null || true
	fi
	drop_claim_tables
	if [ -n "${mnt:-}" ] && mountpoint -q "$mnt"; then
		umount "$mnt"
	fi
	return 0
}

# past_dirty_limit COMMAND...: runs COMMAND in a mount namespace where the
# kernel's dirty limits (vm.dirty_bytes, vm.dirty_background_bytes) read
# 4096 bytes: any filter is past them, and add works in sorted batches.
past_dirty_limit() {
	echo 4096 >"$BATS_TEST_TMPDIR/dirty"
	unshare -m bash -c '
		for f in dirty_bytes dirty_background_bytes; do
			mount --bind "$0" /proc/sys/vm/$f || exit 3
		done
		exec "$@"' "$BATS_TEST_TMPDIR/dirty" "$@"
}

# appears FILE TEXT [SECONDS]: succeeds if FILE holds exactly TEXT within
# SECONDS (1 unless given).
appears() {
	local i
	for i in $(seq $((20 * ${3:-1}))); do
		[ "$(cat "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	echo "after ${3:-1} s $1 holds '$(cat "$1")', not '$2'"
	return 1
}

# trickle RUNNER ARGS...: feeds add --new ARGS a line at a time through a
# fifo, with RUNNER (a command prefix, or "") before bloom, and asserts
# that each line is out within 1 s, before the next comes.  The first
# line also waits for bloom to start, which takes seconds when it is
# built with AddressSanitizer (it poisons the batch buffers it allocates):
# it may take 30 s; the lines after it are the trickle.
trickle() {
	local runner=$1
	shift
	mkfifo feed
	$runner bloom add --new "$@" <feed >out &
	pid=$!
	exec 4>feed
	echo first >&4
	appears out first 30
	echo first >&4
	echo second >&4
	appears out $'first\nsecond'
	keys 3 >&4
	appears out $'first\nsecond\nkey-1\nkey-2\nkey-3'
	exec 4>&-
	wait "$pid"
	pid=
}

@test "a trickled line is out within 1 s: line by line" {
	big_filter f.bf
	trickle "" f.bf
	row 1 '' '' check -v f.bf out
}

@test "a trickled line is out within 1 s: a filter past the dirty limit" {
	echo 4096 >dirty
	need_to_run "a filter past the dirty limit takes unshare -m and a bind mount on /proc/sys/vm" \
		unshare -m sh -c 'mount --bind "$0" /proc/sys/vm/dirty_bytes' dirty
	big_filter f.bf
	trickle past_dirty_limit f.bf
	row 1 '' '' check -v f.bf out
}

@test "a trickled line is out within 1 s: a filter out of core (--memory 64K)" {
	big_filter f.bf
	trickle "" --memory 64K f.bf
	row 1 '' '' check -v f.bf out
}

@test "a trickled line is out within 1 s after a plentiful input, sorted" {
	big_filter f.bf
	keys 20000 a >a
	mkfifo feed
	bloom add --new --memory 64K f.bf <feed >out &
	pid=$!
	exec 4>feed
	cat a >&4
	echo last >&4
	# Working through the 20000 lines may take seconds (a loaded
	# machine, bloom built with AddressSanitizer); once they are out,
	# a line trickled after them is out within 1 s.
	appears out "$(cat a; echo last)" 60
	echo trickled >&4
	appears out "$(cat a; echo last; echo trickled)"
	exec 4>&-
	wait "$pid"
	pid=
}

# throttled: writes the lines of "in" 10000 at a time, 50 ms apart.
throttled() {
	awk '{ print } NR % 10000 == 0 { fflush(); system("sleep 0.05") }' in
}

# stopped SIGNAL ARGS...: runs add --new ARGS of the lines of "in" into
# f.bf, fed by throttled, sends SIGNAL once some output is out and a
# random while later, then reruns it: the lines of the two outputs hold
# every line of in.
stopped() {
	local sig=$1
	shift
	bloom create -f --seed 5 -n 400000 -p 1e-7 f.bf
	mkfifo feed
	# Started in the background, it would ignore SIGINT; under nohup,
	# SIGHUP.
	env --default-signal bloom add --new "$@" f.bf <feed >out 2>err &
	pid=$!
	throttled >feed 2>/dev/null &
	for _ in $(seq 200); do
		[ "$(wc -c <out)" -gt 10000 ] && break
		sleep 0.01
	done
	sleep "0.$((RANDOM % 5))"
	kill -s "$sig" "$pid"
	wait "$pid" || true
	pid=
	wait
	rm feed
	echo "$sig $*: $(wc -l <out) lines before"
	[ "$(wc -l <out)" -lt 200000 ]
	bloom add --new "$@" f.bf in >again
	# A last line cut short by SIGKILL is no line of in.
	run -0 bash -c 'sort -u out again | comm -23 <(sort in) -'
	[ "$output" = "" ]
}

@test "SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGKILL, then a rerun: no line is lost" {
	keys 200000 >in
	for sig in INT TERM HUP PIPE KILL; do
		stopped "$sig"
		stopped "$sig" --memory 1M
	done
}

@test "SIGKILL at random points, then a rerun: no line is lost" {
	keys 200000 >in
	for _ in 1 2 3; do
		stopped KILL
		stopped KILL --memory 1M
	done
	# From a big file, with the reader thread.
	keys 3000000 >in
	bloom create -f --seed 5 -n 3000000 -p 1e-7 f.bf
	bloom add --new f.bf in >out &
	pid=$!
	sleep "0.$((RANDOM % 5))"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" || true
	pid=
	bloom add --new f.bf <in >again
	run -0 bash -c 'sort -u out again | comm -23 <(sort in) -'
	[ "$output" = "" ]
}

@test "an output file system that fills: exit 2, then a rerun: no line is lost" {
	keys 300000 >in
	mnt=$BATS_TEST_TMPDIR/small
	mkdir "$mnt"
	need_to_run "a file system that fills takes a tmpfs mount" \
		mount -t tmpfs -o size=512k tmpfs "$mnt"
	for memory in "" "--memory 1M"; do
		bloom create -f --seed 5 -n 400000 -p 1e-7 f.bf
		run -2 --separate-stderr bash -c \
		    "bloom add --new $memory f.bf in >'$mnt/out'"
		[ "$stderr" = "bloom: write error: No space left on device" ]
		cp "$mnt/out" out
		rm "$mnt/out"
		# shellcheck disable=SC2086 # memory is options or nothing
		bloom add --new $memory f.bf in >again
		[ "$(wc -l <again)" -gt 200000 ]
		run -0 bash -c 'sort -u out again | comm -23 <(sort in) -'
		[ "$output" = "" ]
	done
}

@test "an output file that fills its disk ends with a whole line: a rerun with >> glues none" {
	keys 300000 >in
	mnt=$BATS_TEST_TMPDIR/small
	mkdir "$mnt"
	mount -t tmpfs -o size=512k tmpfs "$mnt"
	for memory in "" "--memory 1M"; do
		bloom create -f --seed 5 -n 400000 -p 1e-9 f.bf
		# Appended to a file that already holds a line of another's.
		echo header >"$mnt/out"
		run -2 --separate-stderr bash -c \
		    "bloom add --new $memory f.bf in >>'$mnt/out'"
		[ "$stderr" = "bloom: write error: No space left on device" ]
		[ "$(tail -c 1 "$mnt/out" | od -An -c | tr -d ' ')" = '\n' ]
		[ "$(head -n 1 "$mnt/out")" = header ]
		# More room, and the same run again, appending.
		mount -o remount,size=8m "$mnt"
		# shellcheck disable=SC2086 # memory is options or nothing
		bloom add --new $memory f.bf in >>"$mnt/out"
		# Every line whole (a glued one is no line of in), and every
		# line of in there: the lines of the chunk that failed may be
		# there twice, never lost.
		sed 1d "$mnt/out" | sort -u | cmp - <(sort in)
		rm "$mnt/out"
		mount -o remount,size=512k "$mnt"
	done
}

# take N [kill]: reads N lines of its standard input into "taken", a byte
# at a time (the read builtin on a pipe), so that it takes no line past
# the Nth out of the pipe (head would take its whole buffer), then exits,
# or with kill is killed by SIGKILL.
take() {
	local i line
	for ((i = 0; i < $1; i++)); do
		IFS= read -r line || break
		printf '%s\n' "$line"
	done >taken
	if [ "${2:-}" = kill ]; then
		kill -9 "$BASHPID"
	fi
}

# reader_dies HOW ARGS...: add --new ARGS of 300000 lines to a pipe whose
# reader takes 1000 of them and dies HOW (exit or kill): bloom dies of
# SIGPIPE, and a rerun writes exactly the lines the reader never got.
reader_dies() {
	local how=$1
	shift
	keys 300000 >in
	bloom create -f --seed 5 -n 400000 -p 1e-9 "$@" f.bf
	run bash -c "source '$BATS_TEST_DIRNAME/helpers.bash'
		$(declare -f take)
		bloom add --new f.bf in | take 1000 $how
		echo \"\${PIPESTATUS[0]}\" >status"
	[ "$(cat status)" = 141 ]
	head -n 1000 in | cmp - taken
	bloom add --new f.bf in >again
	tail -n +1001 in | cmp - again
}

@test "a pipe whose reader exits: a rerun writes exactly the lines it did not take" {
	reader_dies exit
	reader_dies exit --grow
}

@test "a pipe whose reader is killed by SIGKILL: a rerun writes exactly the lines it did not take" {
	reader_dies kill
	reader_dies kill --generations 4
}

@test "a reader that takes its lines late: add --new waits for it, then every line is marked" {
	keys 3000 >in
	bloom create --seed 5 -n 400000 -p 1e-9 f.bf
	# The reader reads nothing until add has read its whole input.
	run -0 bash -c 'bloom add --new f.bf in | { sleep 1; cat; }'
	[ "$output" = "$(cat in)" ]
	run -0 bloom add --new f.bf in
	[ "$output" = "" ]
}

@test "a line repeated while its first copy waits in the pipe is written once" {
	# 1000 lines, 8192 others (a chunk), the 1000 again: the reader takes
	# nothing until all are read, so the first copies still wait.
	keys 1000 a >a
	keys 8192 b >b
	cat a b a >in
	for mode in "" --grow "--generations 4"; do
		# shellcheck disable=SC2086 # mode is options or nothing
		bloom create -f --seed 5 -n 400000 -p 1e-9 $mode f.bf
		run -0 bash -c 'bloom add --new f.bf in | { sleep 1; cat; }'
		[ "$output" = "$(cat a b)" ]
		run -0 bloom check -c f.bf in
		[ "$output" = 10192 ]
	done
}

# same_stream ARGS...: two add --new ARGS of the same 200000 lines into one
# filter at once, fed in lockstep by tee: at most 1 line in 10000 is
# written by both, and every line by one of them.
same_stream() {
	keys 200000 >in
	bloom create -f --seed 7 -n 400000 -p 1e-7 f.bf
	rm -f p1 p2
	mkfifo p1 p2
	bloom add --new "$@" f.bf <p1 >o1 &
	bloom add --new "$@" f.bf <p2 >o2 &
	tee p1 >p2 <in
	wait
	both=$(sort o1 o2 | uniq -d | wc -l)
	echo "$*: $(wc -l <o1) and $(wc -l <o2) lines, $both by both"
	[ "$both" -le 20 ]
	run -0 bash -c 'sort -u o1 o2 | comm -3 <(sort in) -'
	[ "$output" = "" ]
}

@test "two add --new of one stream at once: each line written once" {
	same_stream
	same_stream --memory 1M
	# From files, each at its own pace.
	bloom create -f --seed 7 -n 400000 -p 1e-7 f.bf
	bloom add --new f.bf in >o1 &
	bloom add --new f.bf in >o2 &
	wait
	[ "$(sort o1 o2 | uniq -d | wc -l)" -le 20 ]
	run -0 bash -c 'sort -u o1 o2 | comm -3 <(sort in) -'
	[ "$output" = "" ]
}

@test "an adder killed among others: its claims are disregarded, no line is lost" {
	keys 300000 >in
	bloom create --seed 7 -n 400000 -p 1e-7 f.bf
	bloom add --new f.bf in >o1 &
	pid=$!
	bloom add --new f.bf in >o2 &
	local other=$!
	sleep "0.$((RANDOM % 3))"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" || true
	pid=
	wait "$other"
	# A line the dead adder claimed and did not write is not marked
	# seen: the next run writes it.
	bloom add --new f.bf in >o3
	run -0 bash -c 'sort -u o1 o2 o3 | comm -23 <(sort in) -'
	[ "$output" = "" ]
	# The killed adder left the claim table; the last one out removed it.
	[ ! -e "$(claim_table f.bf)" ]
}

# fed_adder FILTER OUT: starts add --new FILTER reading the fifo feed and
# writing OUT, sends it the line "one" and waits until it has written it:
# its first line makes it join the filter's claim table, and then it waits
# for more.  Sets pid, and w to the fifo's writing end.
fed_adder() {
	mkfifo feed
	bloom add --new "$1" <feed >"$2" &
	pid=$!
	exec {w}>feed
	echo one >&"$w"
	for _ in $(seq 200); do
		[ -s "$2" ] && break
		sleep 0.05
	done
	[ "$(cat "$2")" = one ]
}

# The claim table of a filter (4 MiB in /dev/shm) goes with the last adder
# to leave it: not while another still adds, and not left for a reboot.
@test "the claim table goes with the last adder of a filter, not before" {
	bloom create --seed 3 -n 1000 -p 0.01 f.bf
	local table w
	table=$(claim_table f.bf)
	fed_adder f.bf o1
	[ -e "$table" ]
	echo two | bloom add --new f.bf >o2
	[ "$(cat o2)" = two ]
	[ -e "$table" ]
	exec {w}>&-
	wait "$pid"
	pid=
	[ ! -e "$table" ]
}

# A killed adder cannot remove its filter's claim table; create -f, which
# waits until no process has the old filter open, removes it with the file.
@test "create -f removes the claim table a killed adder left" {
	bloom create --seed 3 -n 1000 -p 0.01 f.bf
	local table w
	table=$(claim_table f.bf)
	fed_adder f.bf o1
	kill -9 "$pid"
	wait "$pid" || true
	pid=
	exec {w}>&-
	[ -e "$table" ]
	run -0 bloom create -f --seed 3 -n 1000 -p 0.01 f.bf
	[ ! -e "$table" ]
	# The new filter's adders make a table of their own and remove it.
	echo one | bloom add --new f.bf >o2
	[ "$(cat o2)" = one ]
	[ ! -e "$(claim_table f.bf)" ]
}

# An add --new alone with a filter sets bits with plain stores, which
# would lose bits another process set in the same word at the same
# instant; a writer that opens the filter makes it use atomic ones.  On a
# small, crowded filter, a build that took no account of the other writer
# lost keys in 2 runs of 3.
@test "an add --new alone, then an add at once: no bit is lost" {
	keys 3000000 a- >a
	keys 3000000 b- >b
	local i
	for i in 0 1 2; do
		bloom create -f --seed 7 -s 4M -k 2 f.bf
		bloom add --new f.bf a >oa 2>/dev/null &
		sleep "0.0$i"
		bloom add f.bf b 2>/dev/null
		wait
		run -0 bloom check -c f.bf a b
		[ "$output" = "$(printf 'a:3000000\nb:3000000')" ]
	done
}

@test "--sync syncs the output before its lines are marked seen; a pipe needs none" {
	big_filter f.bf
	keys 1000 >in
	strace -f -e trace=fdatasync -o trace bloom add --new --sync f.bf in \
	    >out
	cmp out in
	grep -q 'fdatasync(1) *= 0' trace
	keys 2000 >in
	run -0 bash -c 'bloom add --new --sync f.bf in | cat >out'
	[ "$(wc -l <out)" -eq 1000 ]
}

# fetch [N]: the README's fetcher: each URL read is fetched (logged to
# "fetched") and then confirmed on the standard output; with N, it dies of
# SIGKILL in the middle of the URL after the Nth.
fetch() {
	local n=0 url
	while IFS= read -r url; do
		printf '%s\n' "$url" >>fetched
		if [ "$((++n))" = "$((${1:--1} + 1))" ]; then
			kill -9 "$BASHPID"
		fi
		printf '%s\n' "$url"
	done
}

@test "the README's confirming fetcher: a crash loses nothing, a rerun fetches only what was not confirmed" {
	keys 3000 https://example.org/ >urls
	keys 1000 https://example.org/ >>urls
	# Each run, as the README says, fetcher crashing mid-URL or not.
	day() {
		bloom create -n 1000000 -p 1e-9 done.bf
		bloom create -f -n 100000 -p 1e-9 queued.bf
		cat urls | bloom check -v done.bf | bloom add --new queued.bf |
			fetch "$@" | bloom add done.bf
	}
	day 1200 || true
	[ "$(wc -l <fetched)" = 1201 ]
	head -n 1200 fetched >confirmed
	mv fetched first
	day
	# The URL it died on, and every one never confirmed, once each.
	[ "$(head -n 1 fetched)" = "$(sed -n 1201p first)" ]
	[ "$(wc -l <fetched)" = 1800 ]
	sort -u confirmed fetched | cmp - <(sort -u urls)
	rm fetched
	day
	[ ! -e fetched ]
}
