#!/usr/bin/env bats
# Hostile surroundings (issue 10): signals, non-blocking descriptors, the
# filter as its own output, odd files and directories, long lines, sparse
# files, terminals and numbers.  Tests that need root or unshare say why
# they skip; CI runs as root and skips none.

bats_require_minimum_version 1.5.0
load helpers

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

# Sends signal SIG to an add --new that writes long lines into a pipe read
# only later, while a write is under way; leaves what the reader got in
# out and the exit status of bloom in status.
signal_mid_write() {
	local sig=$1 i

	rm -f f.bf out pid status
	bloom create -n 1000 -p 1e-6 f.bf
	# env --default-signal: a background job starts with SIGINT ignored.
	(env --default-signal=INT sh -c 'echo $$ >pid
	    exec bloom add --new f.bf' <in || echo $? >status) |
	    { sleep 1; cat >out; } &
	for i in $(seq 100); do
		[ -s pid ] && break
		sleep 0.02
	done
	sleep 0.3
	kill -s "$sig" "$(cat pid)"
	wait
}

@test "a signal never cuts a line in half; every printed line was added" {
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
		# Whole lines only, each in the filter.
		run -0 awk 'length($0) < 100001 { bad++ } END { print bad + 0 }' out
		[ "$output" = 0 ]
		run -1 bloom check -v -c f.bf out
		[ "$output" = 0 ]
	done
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
