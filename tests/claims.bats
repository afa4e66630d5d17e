#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The claims of concurrent add --new (store/claims.c) against other users,
# containers, a full /dev/shm, ulimit -f and sorted batches (issue 34):
# whoever may write the filter shares out its new lines, one writer per
# line; nobody else can block the adders without their saying so, or make
# them write a line twice.  Needs root (other users, mount namespaces);
# CI runs as root.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	drop_claim_tables
	rm -f "${planted[@]}"
	if [ -n "${users:-}" ]; then
		for u in $users; do
			userdel "$u" 2>/dev/null || true
		done
		groupdel "$group" 2>/dev/null || true
	fi
}

pids=()
planted=()

# need_root: skips unless root, saying why.
need_root() {
	[ "$(id -u)" -eq 0 ] || skip "other users and mount namespaces need root"
}

# once OUT1 OUT2 IN: every line of IN is in OUT1 or OUT2, and none in both.
once() {
	local both
	both=$(sort "$1" "$2" | uniq -d | wc -l)
	echo "$(wc -l <"$1") and $(wc -l <"$2") lines, $both in both"
	[ "$both" -eq 0 ]
	run -0 bash -c 'sort -u "$1" "$2" | comm -3 <(sort "$3") -' bash "$@"
	[ "$output" = "" ]
}

# two_adders ARGS... -- RUNNER...: two add --new ARGS f.bf of the lines of
# in at once, fed in lockstep, each started by RUNNER (none if empty),
# writing o1 and o2, their errors to e1 and e2.
two_adders() {
	local args=() runner=()
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	runner=("$@")
	rm -f p1 p2
	mkfifo p1 p2
	chmod 666 p1 p2
	local a1 a2
	"${runner[@]}" bloom add --new "${args[@]}" f.bf <p1 >o1 2>e1 &
	a1=$!
	"${runner[@]}" bloom add --new "${args[@]}" f.bf <p2 >o2 2>e2 &
	a2=$!
	pids+=("$a1" "$a2")
	tee p1 >p2 <in
	wait "$a1"
	wait "$a2"
}

# plant FILE: as nobody, makes FILE (mode 0666) and holds an exclusive
# flock on it until the test ends; waits until it holds.
plant() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
os.fchmod(fd, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(600)' "$1" planted &
	pids+=($!)
	planted+=("$1")
	within 60 test -e planted
	rm -f planted
}

@test "another user's locked file at the claim table's name neither hangs nor doubles add --new" {
	need_root
	chmod 777 .
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	chmod 600 f.bf
	# Where this bloom and the one before look for the table: nobody
	# cannot read the filter's checksum, but is given it here.
	plant "$(claim_table f.bf)"
	plant "$(printf '/dev/shm/bloom-claims-%x-%x' $(stat -c '%d %i' f.bf))"
	# Alone: finishes, every line out.
	run -0 --separate-stderr timeout 120 bloom add --new f.bf <<<first
	[ "$output" = first ]
	# Two at once: the table is not trusted, so each chunk goes alone.
	two_adders --
	once o1 o2 in
}

@test "a reader of the filter cannot make or hold its claim table" {
	need_root
	chmod 777 .
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	chmod 644 f.bf
	# nobody may read the filter, so may name its table, and makes it
	# first, mode 0666, and locks it.
	plant "$(claim_table f.bf)"
	two_adders --
	once o1 o2 in
	[ ! -s e1 ] && [ ! -s e2 ]
}

@test "two users sharing a filter through its group: each line written once" {
	need_root
	group=bloomclaims$$
	users="bca$$ bcb$$"
	groupadd "$group"
	for u in $users; do
		useradd -M -N -g "$group" "$u"
	done
	chmod 777 .
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	chgrp "$group" f.bf
	chmod 660 f.bf
	rm -f p1 p2
	mkfifo p1 p2
	chmod 666 p1 p2
	setpriv --reuid="bca$$" --regid="$group" --init-groups \
		bloom add --new f.bf <p1 >o1 2>e1 &
	setpriv --reuid="bcb$$" --regid="$group" --init-groups \
		bloom add --new f.bf <p2 >o2 2>e2 &
	tee p1 >p2 <in
	wait
	cat e1 e2
	once o1 o2 in
	# The table, if the last one out did not make it (/dev/shm is
	# sticky), is the group's and open to it alone; its maker removes it
	# when it leaves last.
	local table
	table=$(claim_table f.bf)
	if [ -e "$table" ]; then
		[ "$(stat -c '%G %a' "$table")" = "$group 660" ]
		owner=$(stat -c %U "$table")
		echo late | setpriv --reuid="$owner" --regid="$group" \
			--init-groups bloom add --new f.bf
	fi
	[ ! -e "$table" ]
}

@test "adders in containers with a /dev/shm of their own: each line written once" {
	need_root
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	two_adders -- unshare -m sh -c 'mount -t tmpfs none /dev/shm && exec "$@"' sh
	once o1 o2 in
}

@test "a full /dev/shm: add --new still adds, each line once, and says nothing" {
	need_root
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	# A /dev/shm of 1 MiB, too small for a table.
	two_adders -- unshare -m sh -c 'mount -t tmpfs -o size=1m none /dev/shm && exec "$@"' sh
	[ ! -s e1 ] && [ ! -s e2 ]
	once o1 o2 in
	run -0 --separate-stderr unshare -m sh -c \
		'mount -t tmpfs -o size=1m none /dev/shm && exec bloom add --new f.bf' <<<late
	[ "$output" = late ]
	[ "$stderr" = "" ]
}

@test "ulimit -f below the claim table's size: add --new adds; output past it is an error, exit 2" {
	keys 1000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	# 1 MiB: more than the lines, less than the table.
	run -0 --separate-stderr bash -c 'ulimit -f 1024 && bloom add --new f.bf in >out'
	[ "$stderr" = "" ]
	[ "$(wc -l <out)" -eq 1000 ]
	# Output that reaches the limit: told, exit 2, and no line that did
	# not reach it is marked seen.
	keys 300000 more- >in2
	run -2 --separate-stderr bash -c 'ulimit -f 64 && bloom add --new f.bf in2 >out2'
	[ "$stderr" = "bloom: write error: File too large" ]
	# Cut back to its last whole line (a file's output on a failed write).
	size=$(stat -c %s out2)
	[ "$size" -le 65536 ] && [ "$size" -gt 65500 ]
	[ "$(tail -c 1 out2 | od -An -tx1 | tr -d ' ')" = 0a ]
	bloom add --new f.bf in2 >out3
	run -0 bash -c 'cat out2 out3 | sort -u | comm -23 <(sort in2) -'
	[ "$output" = "" ]
	run -2 --separate-stderr bash -c 'ulimit -f 8 && bloom check -H f.bf in2 >out4'
	[ "$stderr" = "bloom: write error: File too large" ]
}

@test "two add --new of one stream in sorted batches: each line written once" {
	awk 'BEGIN { for (i = 1; i <= 1000000; i++) print "url-" i }' >in
	bloom create -s 128M f.bf
	two_adders --memory 32M --
	once o1 o2 in
}

@test "an adder kept waiting by a stuck adder's claim table says so after a second" {
	keys 1000 >in
	bloom create --seed 5 -n 100000 -p 1e-7 f.bf
	echo one | bloom add --new f.bf
	# An adder that holds the table's lock and does not let go (as a
	# stopped one would).
	python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
os.ftruncate(fd, 4096 + 65536 * 64)
os.pwrite(fd, b"bclaims2", 0)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)' "$(claim_table f.bf)" held release &
	pids+=($!)
	within 60 test -e held
	bloom add --new f.bf in >out 2>err &
	local adder=$!
	pids+=("$adder")
	within 60 grep -q 'waiting for a lock' err
	touch release
	wait "$adder"
	[ "$(cat err)" = "bloom: f.bf: waiting for a lock: another add --new of the filter is writing its new lines, or a process holds its lock" ]
	[ "$(wc -l <out)" -eq 1000 ]
}

# Every bucket's lock word of the table written by hand with the tag of a
# live adder (what no adder leaves): another adder takes them over, a
# second for the chunk, rather than spinning for ever.  (The table bloom
# used before this one had another name and layout: bloom from before
# this test does not read this table.)
@test "bucket locks written by hand with a live adder's tag: adders go on" {
	keys 2000 >in
	bloom create --seed 5 -n 100000 -p 1e-7 f.bf
	local w first
	mkfifo feed
	bloom add --new f.bf <feed >o1 &
	first=$!
	pids+=("$first")
	exec {w}>feed
	echo one >&"$w"
	within 60 test -s o1
	local table
	table=$(claim_table f.bf)
	python3 -c 'import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 4096 + 65536 * 64)
for slot in range(63):
    gen, = struct.unpack_from("<Q", m, 64 + 64 * slot)
    if gen:
        break
tag = (slot + 1) << 58 | (gen & 0xffff) << 42
for b in range(65536):
    struct.pack_into("<Q", m, 4096 + 64 * b, tag)
m.close()' "$table"
	run -0 --separate-stderr timeout 120 bloom add --new f.bf in
	[ "${#lines[@]}" -eq 2000 ]
	exec {w}>&-
	wait "$first"
	[ "$(cat o1)" = one ]
}

# blocked_writing PID: PID has all but filled the pipe it writes to (64
# KiB, of whole lines) and waits to write more.
blocked_writing() {
	[ "$(awk '$1 == "wchar:" { print $2 }' "/proc/$1/io")" -ge 60000 ] &&
		grep -q poll "/proc/$1/stack"
}

# An adder killed while it holds claims, then more joins of its slot than
# an 8-bit generation counts: the 256th adder to take the slot must not
# pass for the dead one, whose claims would then look alive and keep the
# live adders from writing those lines (issue 34: 8 163 of 11 808 lines
# written by no one).  The taker of a dead adder's slot clears its claims,
# and a claim holds 16 bits of its slot's generation.
@test "a dead adder's claims outlive no join: 256 joins of its slot later, each line written" {
	keys 20000 lost- >lost
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	mkfifo pk pj dout
	local k j d wk wj i sink
	# The keeper: alive throughout, so that the table stays.
	bloom add --new f.bf <pk >ok &
	k=$!
	pids+=("$k")
	exec {wk}>pk
	echo keeper >&"$wk"
	within 60 test -s ok
	# The dead one: claims its first chunk while the keeper is there,
	# blocks writing it to a pipe nobody reads, and is killed.
	sleep 600 <dout 3>&- &
	sink=$!
	pids+=("$sink")
	bloom add --new f.bf <lost >dout &
	d=$!
	pids+=("$d")
	within 60 blocked_writing "$d"
	kill -9 "$d" "$sink"
	wait "$d" "$sink" || true
	# 255 adders take its slot one after another, then a 256th stays.
	for ((i = 1; i < 256; i++)); do
		echo "joiner-$i" | bloom add --new f.bf >/dev/null
	done
	bloom add --new f.bf <pj >oj &
	j=$!
	pids+=("$j")
	exec {wj}>pj
	echo joiner-256 >&"$wj"
	within 60 test -s oj
	# The dead one's lines, to both: each written by one of them.
	tee /dev/fd/"$wk" <lost >&"$wj"
	exec {wk}>&- {wj}>&-
	wait "$k"
	wait "$j"
	grep -v -e keeper -e joiner-256 ok >o1 || true
	grep -v -e keeper -e joiner-256 oj >o2 || true
	once o1 o2 lost
}

# start_adder NAME: an add --new of f.bf reading the FIFO NAME.in, its
# lines in NAME.out; its pid in $adder, the FIFO held open for writing
# as fd $feed.  Every signal takes its default action in it (a shell's
# background job would ignore SIGINT; a run under nohup, SIGHUP).
start_adder() {
	rm -f "$1.in"
	mkfifo "$1.in"
	env --default-signal bloom add --new f.bf <"$1.in" >"$1.out" 2>"$1.err" &
	adder=$!
	pids+=("$adder")
	exec {feed}>"$1.in"
}

@test "adders that leave together leave no claim table behind" {
	bloom create --seed 5 -n 100000 -p 1e-7 f.bf
	local table round i left=0 adders feeds
	table=$(claim_table f.bf)
	for ((round = 1; round <= 30; round++)); do
		adders=() feeds=()
		for ((i = 1; i <= 8; i++)); do
			start_adder "a$i"
			adders+=("$adder")
			feeds+=("$feed")
			echo "r$round-a$i" >&"$feed"
		done
		for ((i = 1; i <= 8; i++)); do
			within 60 test -s "a$i.out"
		done
		# All at once: each sees its input end together.
		for feed in "${feeds[@]}"; do
			exec {feed}>&-
		done
		wait "${adders[@]}"
		if [ -e "$table" ]; then
			left=$((left + 1))
			rm -f "$table"
		fi
	done
	echo "table left after $left of 30 rounds"
	[ "$left" -eq 0 ]
}

@test "SIGTERM, SIGINT or SIGHUP of a lone adder: it leaves no claim table, and dies of the signal" {
	bloom create --seed 5 -n 100000 -p 1e-7 f.bf
	local table sig st
	table=$(claim_table f.bf)
	for sig in TERM INT HUP; do
		start_adder a
		echo "one-$sig" >&"$feed"
		within 60 test -s a.out
		[ -e "$table" ]
		kill -s "$sig" "$adder"
		st=0
		wait "$adder" || st=$?
		echo "SIG$sig: status $st"
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ]
		[ ! -e "$table" ]
		exec {feed}>&-
		# What it wrote is seen; a rerun adds the rest.
		[ "$(cat a.out)" = "one-$sig" ]
	done
}

@test "a claim table of the wrong size at its name: adders write each line once" {
	keys 300000 >in
	bloom create --seed 5 -n 400000 -p 1e-7 f.bf
	local table
	table=$(claim_table f.bf)
	head -c 8192 /dev/zero >"$table"
	chmod 600 "$table"
	two_adders --
	once o1 o2 in
	[ ! -s e1 ] && [ ! -s e2 ]
}

# A live adder's slot marked by hand as in a chunk begun alone (what an
# adder clears when its chunk ends): a joiner waits a second for it,
# then goes through the gate, rather than waiting for ever.
@test "a chunk begun alone that does not end: a joiner goes on after a second, each line once" {
	keys 2000 >in
	bloom create --seed 5 -n 100000 -p 1e-7 f.bf
	start_adder a
	echo one >&"$feed"
	within 60 test -s a.out
	python3 -c 'import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 4096)
for slot in range(63):
    gen, = struct.unpack_from("<Q", m, 64 + 64 * slot)
    if gen:
        struct.pack_into("<Q", m, 64 + 64 * slot + 8, 1)
m.close()' "$(claim_table f.bf)"
	run -0 --separate-stderr timeout 120 bloom add --new f.bf in
	[ "${#lines[@]}" -eq 2000 ]
	[ "$stderr" = "bloom: f.bf: waiting for a lock: another add --new of the filter is writing its new lines, or a process holds its lock" ]
	# The first adder, fed the same lines now: none is new to it.
	cat in >&"$feed"
	exec {feed}>&-
	wait "$adder"
	[ "$(cat a.out)" = one ]
}
