#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Hostile surroundings (issue 10): signals, non-blocking descriptors, the
# filter as its own output, odd files and directories, long lines, sparse
# files, terminals and numbers.  Tests that need root or unshare say why
# they skip; CI runs as root and skips none.

bats_require_minimum_version 1.5.0
load helpers

# Lists the test's directory, without what bats's run leaves there.
entries() {
	ls -A --ignore='separate-stderr-*' "$@"
}

# Runs "$@" with descriptor FD set O_NONBLOCK, as node leaves it.
#	nonblock FD COMMAND...
nonblock() {
	local fd=$1

	shift
	python3 -c 'import fcntl, os, sys
fd = int(sys.argv[1])
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
os.execvp(sys.argv[2], sys.argv[2:])' "$fd" "$@"
}

# Writes COUNT distinct lines of about LEN bytes each.
long_lines() {
	awk -v n="$1" -v len="$2" 'BEGIN {
		for (s = "x"; length(s) < len; s = s s) ;
		s = substr(s, 1, len)
		for (i = 1; i <= n; i++) print i s }'
}

# The processes a test leaves running in the background: teardown ends
# those still running, however the test ended.
pids=()

teardown() {
	local pid

	for pid in ${pids[@]+"${pids[@]}"}; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	drop_claim_tables
}

# Prints the time in milliseconds since the epoch.
now_ms() {
	date +%s%3N
}

# wrote PID BYTES: true once process PID has written more than BYTES
# bytes with write(2) and its like (/proc/PID/io, wchar).
wrote() {
	local n

	n=$(sed -n 's/^wchar: //p' "/proc/$1/io" 2>/dev/null)
	[ "${n:-0}" -gt "$2" ]
}

# Sends signal SIG to an add --new that writes long lines into a pipe read
# only later, while a write is under way; leaves what the reader got in
# out and the exit status of bloom in status.
signal_mid_write() {
	local sig=$1

	rm -f f.bf out pid status sent
	bloom create -n 1000 -p 1e-6 f.bf
	# env --default-signal: a background job starts with SIGINT ignored,
	# and a run under nohup with SIGHUP ignored.  The reader takes
	# nothing until the signal is sent (sent).
	(env --default-signal sh -c 'echo $$ >pid
	    exec bloom add --new f.bf' <in || echo $? >status) |
	    { i=0
	      while [ ! -e sent ] && [ "$i" -lt 1200 ]; do
		sleep 0.05; i=$((i + 1))
	      done
	      cat >out; } &
	pids+=("$!")
	within 60 test -s pid
	pids+=("$(cat pid)")
	# The first write fills the empty pipe (a page or more) with the start
	# of a line of 100001 bytes; the rest waits for room: mid-line.  (The
	# shell's echo above counts too, a few bytes.)
	within 60 wrote "$(cat pid)" 4096
	kill -s "$sig" "$(cat pid)"
	touch sent
	wait
	pids=()
}

@test "a signal never cuts a line in half; a rerun writes every line not printed" {
	long_lines 300 100000 >in
	for sig in TERM INT HUP; do
		signal_mid_write "$sig"
		local want
		want=$((128 + $(kill -l "$sig")))
		[ -e status ] || echo 0 >status
		echo "SIG$sig: status $(cat status) (want $want), $(wc -c <out) bytes out"
		[ "$(cat status)" -eq "$want" ]
		[ -s out ]
		[ "$(tail -c 1 out | od -An -c | tr -d ' ')" = '\n' ]
		# Whole lines only; a line is marked seen only once written,
		# so what was printed and what a rerun prints hold them all.
		run -0 awk 'length($0) < 100001 { bad++ } END { print bad + 0 }' out
		[ "$output" = 0 ]
		bloom add --new f.bf in >again
		run -0 bash -c 'sort -u out again | comm -3 <(sort in) -'
		[ "$output" = "" ]
	done
}

# Runs bloom with ARGS for at most 5 s (timeout(1): time enough for a
# slow start to fill the pipe), its output going to a reader that takes
# nothing until bloom has ended, or for 60 s: leaves its exit status in
# status, the tenths of a second the reader waited in waited and what it
# then read in out.
stalled_reader() {
	rm -f status waited out
	(timeout 5 bloom "$@" <in || echo $? >status) |
	    { for i in $(seq 600); do [ -e status ] && break; sleep 0.1; done
	      echo "$i" >waited; cat >out; }
	[ -e status ] || echo 0 >status
}

@test "a signal ends add --new and check whose pipe's reader takes nothing, between two lines" {
	keys 300000 >in
	bloom create -n 1000000 -p 1e-6 --seed 42 full.bf
	bloom add full.bf in
	for args in "check full.bf" "add --new f.bf"; do
		rm -f f.bf
		bloom create -n 1000000 -p 1e-6 --seed 42 f.bf
		stalled_reader $args
		echo "$args: status $(cat status), $(wc -l <out) lines out after $(cat waited) tenths"
		[ "$(cat status)" -eq 124 ]
		[ "$(cat waited)" -lt 100 ]
		[ -s out ]
		[ "$(tail -c 1 out | od -An -c | tr -d ' ')" = '\n' ]
		run -0 bash -c 'sort out | comm -23 - <(sort in) | wc -l'
		[ "$output" = 0 ]
	done
	# No line was marked seen unwritten: a rerun writes all the others
	# (and the written lines of the chunk that was cut short, again).
	bloom add --new f.bf in >again
	run -0 bash -c 'sort -u out again | comm -3 <(sort in) -'
	[ "$output" = "" ]
}

@test "a non-blocking standard output is waited for, not fatal" {
	keys 200000 >in
	bloom create --seed 42 -n 200000 -p 1e-9 f.bf
	export -f nonblock
	run -0 --separate-stderr bash -c 'nonblock 1 bloom add --new f.bf <in |
	    { sleep 0.5; cat >out; }; exit ${PIPESTATUS[0]}'
	[ "$stderr" = "" ]
	cmp out in
}

# Reports (stats, create --dry-run, check -c's count) into a pipe that is
# already full and non-blocking: written once the reader drains it, as the
# selected lines are, where stdio would give up on EAGAIN.
@test "a report to a full non-blocking standard output is waited for" {
	bloom create --seed 42 -n 1000 f.bf
	bloom stats f.bf >stats.want
	bloom stats --json f.bf >json.want
	bloom create --dry-run -n 1000 g.bf >plan.want
	keys 10 >in
	export -f nonblock
	for cmd in "stats f.bf" "stats --json f.bf" \
	    "create --dry-run -n 1000 g.bf" "add f.bf in" "check -c f.bf in"; do
		run -0 --separate-stderr bash -c '{ head -c 65536 /dev/zero
		    nonblock 1 bloom '"$cmd"' </dev/null; echo "status $?" >&2; } |
		    { sleep 0.3; cat >out; }'
		echo "$cmd: $stderr"
		[ "$stderr" = "status 0" ]
		[ "$(head -c 65536 out | tr -d '\0' | wc -c)" -eq 0 ]
		tail -c +65537 out >report
		case $cmd in
		stats\ f.bf) cmp report stats.want ;;
		stats\ --json*) cmp report json.want ;;
		create*) cmp report plan.want ;;
		add*) [ ! -s report ] ;;
		check*) [ "$(cat report)" = 10 ] ;;
		esac
	done
	[ ! -e g.bf ]
}

@test "a non-blocking standard input works alike on one processor or two" {
	{ keys 3000 a; } >want
	{ keys 3000 b; } >>want
	for cpus in all 0; do
		rm -f f.bf out
		bloom create --seed 42 -n 100000 -p 1e-9 f.bf
		local run=()
		[ "$cpus" = all ] || run=(taskset -c "$cpus")
		{ keys 3000 a; sleep 0.3; keys 3000 b; } |
		    nonblock 0 "${run[@]}" bloom add --new f.bf >out
		echo "cpus $cpus: $(wc -l <out) lines"
		cmp out want
	done
}

@test "the filter is never its own output: refused before writing, exit 2" {
	big_filter f.bf
	keys 1000 >in
	bloom add f.bf <in
	cp f.bf before.bf
	msg="bloom: f.bf: is also the standard output: refusing to write into the filter"
	run -2 --separate-stderr bash -c 'bloom add -N f.bf <in 1<>f.bf'
	[ "$stderr" = "$msg" ]
	run -2 --separate-stderr bash -c 'bloom check f.bf <in >>f.bf'
	[ "$stderr" = "$msg" ]
	run -2 --separate-stderr bash -c 'bloom check -c f.bf <in >>f.bf'
	[ "$stderr" = "$msg" ]
	run -2 --separate-stderr bash -c 'bloom stats f.bf >>f.bf'
	[ "$stderr" = "$msg" ]
	cmp f.bf before.bf
	# Writing nothing to it is no harm.
	run -0 bash -c 'bloom check -q f.bf <in >>f.bf'
	run -0 bash -c 'bloom add f.bf <in >>f.bf'
	cmp f.bf before.bf
}

# Asserts that create -f refuses FILE with REASON, leaving it and nothing
# else.
refuses_to_replace() {
	local before
	before=$(entries)
	run -2 --separate-stderr bloom create -f -n 1000 "$1"
	echo "stderr: $stderr"
	[ "$output" = "" ]
	[ "$stderr" = "bloom: $1: will not replace: $2; create -f replaces only bloom filters" ]
	[ "$(entries)" = "$before" ]
}

@test "create -f refuses a FIFO, a socket and a device, and opens none" {
	mkfifo fifo
	refuses_to_replace fifo "not a regular file"
	[ -p fifo ]
	python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
	refuses_to_replace sock "not a regular file"
	[ -S sock ]
	# Through a symbolic link: the file it leads to is what counts.
	ln -s /dev/null null
	refuses_to_replace null "not a regular file"
	[ -L null ] && [ -c /dev/null ]
	need_to_run "a device node takes mknod" mknod zero c 1 5
	refuses_to_replace zero "not a regular file"
	[ -c zero ]
}

@test "create -f refuses a regular file that is not a filter, unless empty" {
	echo "my notes" >notes
	refuses_to_replace notes "not a bloom filter (bad magic)"
	[ "$(cat notes)" = "my notes" ]
	printf 'ab' >short
	refuses_to_replace short "not a bloom filter (too short)"
	: >empty
	run -0 --separate-stderr bloom create -f -n 1000 empty
	[ "$stderr" = "" ]
	bloom stats empty >/dev/null
	# A damaged filter is still a filter: replacing it is the way out.
	bloom create -n 1000 bad.bf
	truncate -s 100 bad.bf
	run -0 bloom create -f -n 1000 bad.bf
	bloom stats bad.bf >/dev/null
}

# A link to nothing is not written through, as cp(1) will not: the new
# file would go wherever whoever made the link chose.
@test "create -f and create -f --like refuse a symbolic link to nothing" {
	ln -s nothere.bf dangling
	ln -s nodir/f.bf dangling2
	refuses_to_replace dangling "a symbolic link to a file that does not exist"
	refuses_to_replace dangling2 "a symbolic link to a file that does not exist"
	[ -L dangling ] && [ ! -e nothere.bf ]
	bloom create -n 1000 t.bf
	run -2 --separate-stderr bloom create -f --like t.bf dangling
	[ "$output" = "" ]
	[ "$stderr" = "bloom: dangling: will not replace: a symbolic link to a file that does not exist; create -f replaces only bloom filters" ]
	[ ! -e nothere.bf ]
	# Without -f the link is a file that exists.
	run -2 --separate-stderr bloom create -n 1000 dangling
	[ "$stderr" = "bloom: dangling: file exists (use -f to replace it)" ]
	# create -f --like refuses what create -f refuses, in the same words.
	echo "my notes" >notes
	run -2 --separate-stderr bloom create -f --like t.bf notes
	[ "$stderr" = "bloom: notes: will not replace: not a bloom filter (bad magic); create -f replaces only bloom filters" ]
	[ "$(cat notes)" = "my notes" ]
}

@test "create -f keeps the mode and the group of the filter it replaces" {
	local gid
	bloom create -n 1000 f.bf
	chmod 664 f.bf
	if [ "$(id -u)" -eq 0 ]; then
		gid=4242
	else
		gid=$(id -G | tr ' ' '\n' | grep -vx "$(id -g)" | head -n 1)
	fi
	[ -z "$gid" ] || chgrp "$gid" f.bf
	umask 077
	bloom create -f -n 1000 --seed 9 f.bf
	[ "$(stat -c %a f.bf)" = 664 ]
	[ -z "$gid" ] || [ "$(stat -c %g f.bf)" = "$gid" ]
	[ "$(stats_field seed f.bf)" = 9 ]
}

@test "create -f replaces what a symbolic link leads to, not the link" {
	mkdir real
	bloom create -n 1000 --seed 1 real/f.bf
	ln -s real/f.bf link.bf
	run -0 --separate-stderr bloom create -f -n 1000 --seed 2 link.bf
	[ -L link.bf ]
	[ "$(readlink link.bf)" = real/f.bf ]
	[ "$(stats_field seed real/f.bf)" = 2 ]
	[ "$(ls -A real)" = f.bf ]
}

@test "create -f replaces its owner's unreadable filter (mode 0200 and 000)" {
	for mode in 200 000; do
		rm -f f.bf
		bloom create -n 1000 --seed 1 f.bf
		chmod "$mode" f.bf
		run -0 --separate-stderr unprivileged bloom create -f -n 1000 \
		    --seed 2 f.bf
		echo "mode $mode: $stderr"
		[ "$stderr" = "" ]
		[ "$(stat -c %a f.bf)" = "$(printf %o "0$mode")" ]
		chmod 600 f.bf
		[ "$(stats_field seed f.bf)" = 2 ]
		[ "$(entries)" = f.bf ]
	done
}

@test "create -f works on a path as long as create accepts (4080 bytes)" {
	local dir=. i
	long=$(printf '%0255d' 0)
	for i in $(seq 15); do
		dir=$dir/$long
	done
	dir=$dir/$(printf '%0233d' 0)
	mkdir -p "$dir"
	local path=$dir/f.bf
	echo "path: ${#path} bytes"
	[ "${#path}" -ge 4080 ]
	bloom create -n 1000 --seed 1 "$path"
	run -0 --separate-stderr bloom create -f -n 1000 --seed 2 "$path"
	[ "$stderr" = "" ]
	[ "$(cd "$dir" && ls -A)" = f.bf ]
}

@test "in a directory it may write but not list (0333), success is success" {
	mkdir d
	chmod 333 d
	run -0 --separate-stderr unprivileged bloom create -n 1000 d/f.bf
	[ "$stderr" = "" ]
	run -0 --separate-stderr unprivileged bloom create -f -n 1000 \
	    --seed 3 d/f.bf
	[ "$stderr" = "" ]
	run -0 --separate-stderr unprivileged bloom add d/g.bf <<<key
	[[ "$stderr" == "bloom: d/g.bf: created growable"* ]]
	run -0 unprivileged bloom check d/g.bf <<<key
	[ "$output" = key ]
	chmod 755 d
	[ "$(ls -A d | sort | tr '\n' ' ')" = "f.bf g.bf " ]
	[ "$(stats_field seed d/f.bf)" = 3 ]
}

# Runs the shell command CMD and prints the peak resident memory of bloom
# in it, in MiB (the largest of its processes).  Under AddressSanitizer,
# without the quarantine that keeps freed buffers resident.
peak_mib() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
	    python3 -c 'import resource, subprocess, sys
subprocess.run(["bash", "-c", sys.argv[1]], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$1"
}

# Writes a line of MIB MiB of CHAR and a newline.
big_line() {
	head -c "$1M" /dev/zero | tr '\0' "$2"
	echo
}

@test "check -c, check -q and add without -N hash a 300 MiB line in little memory" {
	export -f big_line
	bloom create -n 1000 -p 1e-6 f.bf
	run -0 peak_mib 'big_line 300 x | bloom add f.bf'
	echo "add: $output MiB"
	[ "$output" -lt 64 ]
	run -0 peak_mib 'big_line 300 x | bloom check -c f.bf >count'
	echo "check -c: $output MiB"
	[ "$output" -lt 64 ]
	[ "$(cat count)" = 1 ]
	run -0 peak_mib 'big_line 300 x | bloom check -q f.bf'
	[ "$output" -lt 64 ]
	run -0 peak_mib '{ big_line 300 x; echo; } | taskset -c 0 bloom check -c f.bf >count'
	[ "$(cat count)" = 1 ]
	run -0 peak_mib '{ big_line 300 y; } | bloom check -c f.bf >count || true'
	[ "$(cat count)" = 0 ]
}

@test "a long line hashed in stream is the key of the same line read whole" {
	local s
	s=$(head -c 3000000 /dev/zero | tr '\0' x)
	printf 'a\n%s1\nb\n%s2\n%s3' "$s" "$s" "$s" >long
	printf 'a\n%s1\nb\n%s2\n%s3\n' "$s" "$s" "$s" >want
	bloom create -n 1000 -p 1e-6 f.bf
	bloom add f.bf <long
	bloom check f.bf <long >out
	cmp out want
	printf '%s4\n%s1\n%s\n' "$s" "$s" "$s" >other
	run -0 bloom check -c f.bf <other
	[ "$output" = 1 ]
	bloom create -f -n 1000 -p 1e-6 f.bf
	bloom add -N f.bf <long >out
	cmp out want
	run -0 bloom check -c f.bf <long
	[ "$output" = 5 ]
	run -0 bash -c 'cat long | taskset -c 0 bloom check -c f.bf'
	[ "$output" = 5 ]
}

@test "printing three 100 MiB lines takes memory for about one" {
	export -f big_line
	bloom create -n 1000 -p 1e-6 f.bf
	run -0 peak_mib '{ big_line 100 a; big_line 100 b; big_line 100 c; } |
	    bloom add -N f.bf | wc -c >bytes'
	echo "add -N: $output MiB, $(cat bytes) bytes out"
	[ "$(cat bytes)" = 314572803 ]
	[ "$output" -lt 180 ]
	run -0 peak_mib '{ big_line 100 a; big_line 100 b; big_line 100 c; } |
	    bloom check f.bf | wc -c >bytes'
	echo "check: $output MiB"
	[ "$(cat bytes)" = 314572803 ]
	[ "$output" -lt 180 ]
}

@test "a sparse filter on tmpfs: stats and check allocate nothing, stats says sparse" {
	# Root mounts in a mount namespace of its own; anyone else in a user
	# namespace too, where it is root.
	local ns=(unshare -m)
	[ "$(id -u)" -eq 0 ] || ns=(unshare -rm)
	mkdir mnt
	need_to_run "a tmpfs of its own takes ${ns[*]} and a mount" \
		"${ns[@]}" mount -t tmpfs -o size=32M none mnt
	bloom create --seed 1 -s 1G big.bf
	keys 1000 >in
	run -0 --separate-stderr "${ns[@]}" bash -c '
		mount -t tmpfs -o size=32M none mnt || exit 3
		cp --sparse=always big.bf mnt/f.bf
		before=$(df -k --output=used mnt | tail -n 1)
		bloom stats mnt/f.bf >stats.out || exit 4
		bloom check -c mnt/f.bf <in >count.out
		[ $? -eq 1 ] || exit 5
		after=$(df -k --output=used mnt | tail -n 1)
		echo "$before $after"'
	echo "used KiB before and after: $output; stderr: $stderr"
	set -- $output
	[ "$2" -le $(($1 + 64)) ]
	[ "$(cat count.out)" = 0 ]
	grep -qx 'bits_set: 0' stats.out
	grep -q '^warning: sparse file' stats.out
	# The same filter allocated: no warning.
	run -0 bloom stats big.bf
	[[ "$output" != *sparse* ]]
}

@test "a sparse filter: stats counts its holes without reading them" {
	bloom create --seed 1 -s 1G big.bf
	keys 1000 | bloom add big.bf
	cp --sparse=always big.bf sparse.bf
	run -0 bloom stats big.bf
	local want=$output
	run -0 timeout 10 bloom stats sparse.bf
	[ "${output/$'\n'warning: sparse file*/}" = "${want/big.bf/sparse.bf}" ]
	[[ "$output" == *"warning: sparse file"* ]]
	run -0 bloom stats --json sparse.bf
	[[ "$output" == *',"over_capacity":false,"sparse":true,"grows":false,"segments":['* ]]
	run -0 bloom stats --json big.bf
	[[ "$output" == *',"sparse":false,'* ]]
	keys 2000 | bloom check -c sparse.bf >count || true
	[ "$(cat count)" = 1000 ]
}

@test "names in stats and in messages are quoted: no forged line, no raw escape" {
	local name
	name=$(printf 'a\nwarning: forged\033[31m\\z')
	bloom create -n 100 --seed 1 "$name"
	run -0 bloom stats "$name"
	[ "${lines[0]}" = 'file: a\nwarning: forged\x1b[31m\\z' ]
	[ "$(bloom stats "$name" | grep -c '^warning')" = 0 ]
	run -0 bloom stats --json "$name"
	[[ "$output" == '{"file":"a\u000awarning: forged\u001b[31m\\z",'* ]]
	run -2 --separate-stderr bloom check "$name.missing" </dev/null
	[ "$stderr" = 'bloom: a\nwarning: forged\x1b[31m\\z.missing: No such file or directory' ]
	run -2 --separate-stderr bloom create -n 200 "$name"
	[ "$stderr" = 'bloom: a\nwarning: forged\x1b[31m\\z: exists and differs: -n 100, not 200 (use -f to replace it, losing its lines)' ]
	run -2 --separate-stderr bloom create -n "$(printf '1\n\0332')" f.bf
	[ "${stderr%%$'\n'*}" = "bloom: create: -n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '1\\n\\x1b2'" ]
	# UTF-8 names are shown as they are; C1 controls and stray bytes are not.
	run -2 --separate-stderr bloom stats "$(printf 'caf\303\251 \302\233 \377')"
	[ "$stderr" = "bloom: café \\xc2\\x9b \\xff: No such file or directory" ]
}

@test "numbers mean what they say: --seed 0x0x10, -p 1e-310, -p 0.9999999999999999" {
	local s
	for s in 0x0x10 00x10 0x-1 0x+5 ' 16' '16 ' 0x; do
		run -2 --separate-stderr bloom create -n 10 --seed "$s" f.bf
		[ "${stderr%%$'\n'*}" = "bloom: create: --seed takes a 64-bit number, not '$s'" ]
	done
	[ ! -e f.bf ]
	run -2 --separate-stderr bloom create -p 1e-310 f.bf
	[ "${stderr%%$'\n'*}" = "bloom: create: -p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '1e-310' (too small: the smallest rate is 2.2e-308)" ]
	run -2 --separate-stderr bloom create -p 0.9999999999999999 f.bf
	[ "${stderr%%$'\n'*}" = "bloom: create: -p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '0.9999999999999999' (too close to 1: the largest rate is 0.999999)" ]
	[ ! -e f.bf ]
	bloom create -n 10 --seed 0x1F -p 0.999999 f.bf
	[ "$(stats_field seed f.bf)" = 31 ]
	[ "$(stats_field target_fpr f.bf)" = 0.999999 ]
}

@test "the inserted counter stops at 2^64-1 rather than wrapping" {
	bloom create -n 1000 --seed 1 f.bf
	# The fixed filter's one segment entry starts at 256; its counter at 48.
	local i
	for i in 0 1 2 3 4 5 6 7; do
		poke f.bf $((256 + 48 + i)) 255
	done
	[ "$(stats_field inserted f.bf)" = 18446744073709551615 ]
	printf 'one\ntwo\n' | bloom add f.bf
	[ "$(stats_field inserted f.bf)" = 18446744073709551615 ]
}

# hold KIND FILE [SECONDS]: takes a lock on FILE in the background and
# holds it until FILE.release exists, or for SECONDS (default 60) from when
# it has it; FILE.held says it has it (see held).  KIND is flock-sh or
# flock-ex (flock(2), as bloom's readers and create -f take it), alone
# (byte 2^62 exclusively, as an adder alone with the filter holds it) or
# byte0 (byte 0 exclusively, as a growth or a rotation holds it).
hold() {
	python3 -c 'import fcntl, os, sys, time
kind, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR)
if kind == "alone":
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, 1 << 62)
elif kind == "byte0":
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, 0)
else:
    fcntl.flock(fd, fcntl.LOCK_SH if kind == "flock-sh" else fcntl.LOCK_EX)
open(path + ".held", "w").close()
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end and not os.path.exists(path + ".release"):
    time.sleep(0.02)' "$1" "$2" "${3:-60}" 3>&- &
	holder=$!
	pids+=("$holder")
}

# release FILE: ends the hold on FILE and waits for the holder to end.
release() {
	touch "$1.release"
	wait "$holder"
	rm -f "$1.release"
}

# held FILE: waits (up to a minute: an interpreter starts slowly on a
# loaded machine) until hold holds FILE's lock.
held() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ -e "$1.held" ] && { rm -f "$1.held"; return 0; }
		sleep 0.1
	done
	echo "hold never took $1's lock" >&2
	return 1
}

EXCLUSIVE="another process holds the filter exclusively (a create -f replacing it, an adder alone with it, or any process that may open it)"
GROWING="another process is adding a segment to the filter or rotating its generations"

# told_after KIND FILE REASON ARGS...: holds a lock of KIND on FILE (see
# hold), runs bloom ARGS in the background, its output to out, until it
# says it waits, lets go, and checks that bloom ends with status 0, having
# said only that it waits for REASON, once a second had passed.
told_after() {
	local f=$2 why=$3 pid t0 t1

	hold "$1" "$f"
	held "$f"
	shift 3
	# A previous call's err must not answer for this one: the shell of
	# the background job may truncate it only after grep has looked.
	rm -f out err
	t0=$(now_ms)
	bloom "$@" >out 2>err &
	pid=$!
	pids+=("$pid")
	within 60 grep -qs 'waiting for a lock' err
	t1=$(now_ms)
	echo "told after at least $((t1 - t0)) ms"
	release "$f"
	wait "$pid"
	[ "$(cat err)" = "bloom: $f: waiting for a lock: $why" ]
	# Told once the wait has lasted a second by the monotonic clock
	# (store/locks.c); t0 and t1 bracket the wait, each read to the
	# millisecond below.
	[ "$((t1 - t0))" -ge 999 ]
}

@test "a command kept waiting for a lock says so after a second" {
	bloom create -n 1000 f.bf
	echo key >key
	bloom add f.bf key
	told_after flock-ex f.bf "$EXCLUSIVE" check f.bf key
	[ "$(cat out)" = key ]
	# Not a word when the wait is short.
	hold flock-ex f.bf 0.3
	held f.bf
	run -0 --separate-stderr bloom add f.bf <<<other
	[ "$stderr" = "" ]
	wait
	pids=()
}

# An adder alone with a filter holds byte 2^62 of it exclusively while it
# sets bits with plain stores; a writer that opens the filter waits for
# it, a reader does not.
@test "an add kept waiting by a writer alone with the filter says so; check is not kept" {
	bloom create -n 1000 f.bf
	echo key | bloom add f.bf
	hold alone f.bf
	held f.bf
	run -0 --separate-stderr bloom check f.bf <<<key
	[ "$output" = key ]
	[ "$stderr" = "" ]
	release f.bf
	echo other >other
	told_after alone f.bf "$EXCLUSIVE" add --new f.bf other
	[ "$(cat out)" = other ]
	pids=()
}

@test "a writer kept waiting by a growth or rotation says so after a second" {
	bloom create --generations 3 --window 1h -n 1000 w.bf
	bloom create --grow -n 10 g.bf
	echo key >key
	told_after byte0 w.bf "$GROWING" add w.bf key
	row 0 key '' check w.bf key
	# Said once, however many waits; rotate waits alike.
	told_after byte0 w.bf "$GROWING" rotate w.bf
	# An add that must grow the filter waits for the one growing it.
	keys 10 >in
	bloom add g.bf in
	keys 30 more >in2
	told_after byte0 g.bf "$GROWING" add g.bf in2
	row 1 '' '' check -v g.bf in in2
	# Not a word when the wait is short.
	hold byte0 w.bf 0.3
	held w.bf
	run -0 --separate-stderr bloom add w.bf <<<other
	[ "$stderr" = "" ]
	wait "$holder"
	pids=()
}

# flocked PID FILE: true once process PID holds a flock(2) lock on FILE
# (/proc/locks).
flocked() {
	awk -v pid="$1" -v ino=":$(stat -c %i "$2")" \
	    '$2 == "FLOCK" && $5 == pid && substr($6, length($6) - length(ino) + 1) == ino { found = 1 }
	    END { exit !found }' /proc/locks
}

@test "create -f kept waiting by a running add says so after a second" {
	local t0 t1 add create
	bloom create -n 1000 --seed 1 f.bf
	mkfifo feed
	bloom add f.bf <feed &
	add=$!
	pids+=("$add")
	exec 5>feed
	within 60 flocked "$add" f.bf
	t0=$(now_ms)
	bloom create -f -n 1000 --seed 2 f.bf 2>err 5>&- &
	create=$!
	pids+=("$create")
	within 60 grep -qs 'waiting for a lock' err
	t1=$(now_ms)
	echo "told after at least $((t1 - t0)) ms"
	exec 5>&-
	wait "$create"
	wait
	pids=()
	[ "$(cat err)" = "bloom: f.bf: waiting for a lock: another process has the filter open, and create -f replaces it only once nothing uses it" ]
	[ "$(stats_field seed f.bf)" = 2 ]
	# Told once the wait has lasted a second, as above.
	[ "$((t1 - t0))" -ge 999 ]
}

# Runs "$@" in a mount namespace where /proc is an empty tmpfs, as in a
# minimal container or chroot; prints nothing more.
without_proc() {
	# LeakSanitizer needs /proc: under SANITIZE=1 it would fail the run.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	exec unshare -m bash -c 'mount -t tmpfs none /proc && exec "$@"' bash "$@"
}

# The command prefix that drops root's power over file modes and
# AT_EMPTY_PATH (CAP_DAC_READ_SEARCH); for a test run as root.
drop_caps=(setpriv --bounding-set -dac_override,-dac_read_search)

# Skips unless without_proc can run here.
need_unshare() {
	need_to_run "a run without /proc takes unshare -m and a tmpfs mount on /proc" \
		unshare -m sh -c 'mount -t tmpfs none /proc'
}

@test "without /proc, a create -f killed while it waits for the lock leaves nothing" {
	need_unshare
	local how
	bloom create -n 1000 --seed 1 f.bf
	cp f.bf before
	# As root, the new file is named with AT_EMPTY_PATH; without that
	# privilege, a hidden name removed on the signal.
	for how in root unprivileged; do
		hold flock-sh f.bf
		held f.bf
		# Its stderr outside the directory, which must hold nothing new.
		if [ "$how" = root ]; then
			without_proc bloom create -f -n 1000000 --seed 2 f.bf \
			    2>"$BATS_TEST_TMPDIR.err" &
		else
			without_proc "${drop_caps[@]}" bloom create -f \
			    -n 1000000 --seed 2 f.bf 2>"$BATS_TEST_TMPDIR.err" &
		fi
		local create=$!
		pids+=("$create")
		# Killed once it says it waits for the lock: its new file made.
		within 60 grep -q 'waiting for a lock' "$BATS_TEST_TMPDIR.err"
		kill -TERM "$create"
		wait "$create" || true
		release f.bf
		pids=()
		rm -f "$BATS_TEST_TMPDIR.err"
		echo "$how: $(entries | tr '\n' ' ')"
		cmp f.bf before
		[ "$(entries | tr '\n' ' ')" = "before f.bf " ]
	done
}

@test "without /proc, a create over the file size limit fails cleanly and leaves nothing" {
	need_unshare
	local how
	for how in root unprivileged; do
		local run=()
		[ "$how" = root ] || run=("${drop_caps[@]}")
		run -2 --separate-stderr without_proc "${run[@]}" bash -c \
		    'ulimit -f 1024; exec bloom create -s 64M f.bf'
		echo "$how: $stderr; left: $(entries | tr '\n' ' ')"
		# Less AddressSanitizer's warnings that it cannot read /proc.
		[ "$(grep -v '^==' <<<"$stderr")" = "bloom: f.bf: cannot create: File too large" ]
		[ "$(entries)" = "" ]
	done
	# With /proc too.
	run -2 --separate-stderr bash -c 'ulimit -f 1024; exec bloom create -s 64M f.bf'
	[ "$stderr" = "bloom: f.bf: cannot create: File too large" ]
	[ "$(entries)" = "" ]
}

@test "stress: 200 rounds of 4 concurrent adders creating the filter lose nothing" {
	local round i
	for i in 1 2 3 4; do
		keys 5000 "w$i-" >"in.$i"
	done
	cat in.? >all
	for round in $(seq 200); do
		rm -f f.bf
		for i in 1 2 3 4; do
			bloom add f.bf "in.$i" 2>"err.$i" &
		done
		wait
		run bloom check -c f.bf all
		if [ "$status" -ne 0 ] || [ "$output" != 20000 ] ||
		    [ "$(cat err.? | grep -vc 'created growable')" != 0 ]; then
			echo "round $round: status $status, $output of 20000 found"
			cat err.?
			ls -la
			return 1
		fi
		# Exactly one of them created it and said so.
		[ "$(cat err.? | grep -c 'created growable')" = 1 ]
	done
}
