#!/usr/bin/env bats
# Tests of bloom create: sizing from -n, -p, -s and -k, the seed, replacing
# and refusing to replace, allocation and mode of the new file, and every
# usage error.

bats_require_minimum_version 1.5.0
load helpers

usage='usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--seed n] filter'

# Lists the files of the test's directory but bats' own (run
# --separate-stderr keeps its stderr there).
entries() {
	ls -A --ignore='separate-stderr-*'
}

# Prints the sizing of filter FILE from its stats, on one line.
sizing() {
	bloom stats "$1" | awk -F': ' '
	    $1 ~ /^(bytes|bits|hashes|capacity|target_fpr)$/ {
		printf "%s%s=%s", sep, $1, $2; sep = " "
	    }
	    END { print "" }'
}

# creates SIZING ARGS...: bloom create --seed 7 ARGS... f.bf succeeds
# silently, and the stats of f.bf give SIZING; the file is exactly as large
# as its stats say.
creates() {
	local want=$1 got

	shift
	run --separate-stderr bloom create --seed 7 "$@" f.bf
	[ "$status" -eq 0 ] || { echo "status $status: $stderr"; return 1; }
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	got=$(sizing f.bf)
	[ "$got" = "$want" ] || { echo "got  $got"; echo "want $want"; return 1; }
	[ "bytes=$(stat -c %s f.bf)" = "${got%% *}" ]
}

# usage_fails MESSAGE ARGS...: bloom create ARGS... exits 2 with
# "bloom: create: MESSAGE" and the synopsis on stderr, writes nothing to
# stdout and creates nothing.
usage_fails() {
	local message=$1

	shift
	run --separate-stderr bloom create "$@"
	[ "$status" -eq 2 ] || { echo "status $status"; return 1; }
	[ "$output" = "" ]
	[ "$stderr" = "bloom: create: $message
$usage" ] || { echo "stderr: $stderr"; return 1; }
	[ "$(entries)" = "" ]
}

# ---- Sizing: status 0, and the stats of the new file.

@test "create with no options: n=1000000, p=0.01, and the whole stats" {
	run --separate-stderr bloom create --seed 42 f.bf
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
layout: blocked512 (512-bit blocks)
hash: xxh3-64
bytes: 1237120
bits: 9895936
hashes: 6
seed: 42
capacity: 1000000
target_fpr: 0.01
inserted: 0
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0" ]
}

@test "create -n 1000: the default fpr" {
	creates 'bytes=1408 bits=10240 hashes=7 capacity=1000 target_fpr=0.01' \
	    -n 1000
}

@test "create -p 0.001: the default capacity" {
	creates 'bytes=1936192 bits=15488512 hashes=9 capacity=1000000 target_fpr=0.001' \
	    -p 0.001
}

@test "create -n 1000 -p 0.01" {
	creates 'bytes=1408 bits=10240 hashes=7 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01
}

@test "create -k 3 keeps 3 hashes and grows the array to meet the rate" {
	creates 'bytes=1728 bits=12800 hashes=3 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01 -k 3
}

@test "create -k 32, the most hashes" {
	creates 'bytes=2368 bits=17920 hashes=32 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01 -k 32
}

@test "create -k 1, the fewest hashes" {
	creates 'bytes=12437568 bits=99499520 hashes=1 capacity=1000000 target_fpr=0.01' \
	    -k 1
}

@test "create -s 1M: the array is 1 MiB, capacity derived at the default fpr" {
	creates 'bytes=1048704 bits=8388608 hashes=6 capacity=847685 target_fpr=0.01' \
	    -s 1M
}

@test "create -s 1m: suffixes are case-insensitive" {
	creates 'bytes=1048704 bits=8388608 hashes=6 capacity=847685 target_fpr=0.01' \
	    -s 1m
}

@test "create -s 1K" {
	creates 'bytes=1152 bits=8192 hashes=6 capacity=827 target_fpr=0.01' \
	    -s 1K
}

@test "create -s 64k" {
	creates 'bytes=65664 bits=524288 hashes=6 capacity=52980 target_fpr=0.01' \
	    -s 64k
}

@test "create -s 1000: rounded down to 960 bytes, 15 whole blocks" {
	creates 'bytes=1088 bits=7680 hashes=6 capacity=776 target_fpr=0.01' \
	    -s 1000
}

@test "create -s 64: one block, the smallest filter" {
	creates 'bytes=192 bits=512 hashes=6 capacity=51 target_fpr=0.01' \
	    -s 64
}

@test "create -s 127: rounded down to one block" {
	creates 'bytes=192 bits=512 hashes=6 capacity=51 target_fpr=0.01' \
	    -s 127
}

@test "create -s 128: two blocks" {
	creates 'bytes=256 bits=1024 hashes=6 capacity=103 target_fpr=0.01' \
	    -s 128
}

@test "create -s G and T suffixes are powers of 1024" {
	# Too large to allocate here: the message shows the size parsed.
	run --separate-stderr bloom create -s 1G -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 1073741824 bytes cannot hold one item at fpr 1e-300" ]
	run --separate-stderr bloom create -s 1g -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 1073741824 bytes cannot hold one item at fpr 1e-300" ]
	run --separate-stderr bloom create -s 1T -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 1099511627776 bytes cannot hold one item at fpr 1e-300" ]
	# 64T, the largest size, is accepted.
	run --separate-stderr bloom create -s 64T -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 70368744177664 bytes cannot hold one item at fpr 1e-300" ]
	[ "$(entries)" = "" ]
}

@test "create -s 1M -n 100000: the fpr is derived" {
	creates 'bytes=1048704 bits=8388608 hashes=23 capacity=100000 target_fpr=5.5522e-10' \
	    -s 1M -n 100000
}

@test "create -s 64K -n 10000 -k 4: the fpr is derived for 4 hashes" {
	creates 'bytes=65664 bits=524288 hashes=4 capacity=10000 target_fpr=4.6792e-05' \
	    -s 64K -n 10000 -k 4
}

@test "create -s 1M -p 0.001: the capacity is derived" {
	creates 'bytes=1048704 bits=8388608 hashes=9 capacity=541607 target_fpr=0.001' \
	    -s 1M -p 0.001
}

@test "create -n, -p and -s all given: usage error" {
	usage_fails 'give at most two of -n, -p and -s' -n 1000 -p 0.01 -s 1M f.bf
}

# ---- The seed.

@test "create --seed takes decimal" {
	bloom create -n 1000 --seed 12345 f.bf
	run bloom stats f.bf
	[ "${lines[6]}" = "seed: 12345" ]
}

@test "create --seed takes 0x hex" {
	bloom create -n 1000 --seed 0x2A f.bf
	run bloom stats f.bf
	[ "${lines[6]}" = "seed: 42" ]
}

@test "create --seed takes 0 and 2^64-1" {
	bloom create -n 1000 --seed 0 a.bf
	bloom create -n 1000 --seed=18446744073709551615 b.bf
	run bloom stats a.bf
	[ "${lines[6]}" = "seed: 0" ]
	run bloom stats b.bf
	[ "${lines[6]}" = "seed: 18446744073709551615" ]
}

@test "create --seed with a leading zero is still decimal" {
	# The seed is decimal or 0x hex; 010 is ten, not octal eight, and 09 is
	# nine, not an error.
	bloom create -n 1000 --seed 010 a.bf
	run bloom stats a.bf
	[ "${lines[6]}" = "seed: 10" ]
	run --separate-stderr bloom create -n 1000 --seed 09 b.bf
	[ "$status" -eq 0 ]
	run bloom stats b.bf
	[ "${lines[6]}" = "seed: 9" ]
}

@test "create without --seed draws a random seed" {
	bloom create -n 1000 a.bf
	bloom create -n 1000 b.bf
	run bloom stats a.bf
	seed_a=${lines[6]}
	run bloom stats b.bf
	[[ $seed_a == "seed: "[0-9]* ]]
	[ "${lines[6]}" != "$seed_a" ]
}

# ---- Replacing, refusing, allocation and mode.

@test "create refuses an existing file without -f and leaves it untouched" {
	bloom create -n 1000 --seed 1 f.bf
	keys 100 | bloom add f.bf
	before=$(cksum <f.bf)
	run --separate-stderr bloom create -n 2000 --seed 2 f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: file exists (use -f to replace it)" ]
	[ "$(cksum <f.bf)" = "$before" ]
	[ "$(entries)" = "f.bf" ]
}

@test "create refuses an existing file of any kind without -f" {
	echo precious >notes.txt
	run --separate-stderr bloom create -n 1000 notes.txt
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: notes.txt: file exists (use -f to replace it)" ]
	[ "$(cat notes.txt)" = "precious" ]
}

@test "create -f replaces an existing filter with an empty one" {
	bloom create -n 1000 --seed 1 f.bf
	keys 100 | bloom add f.bf
	run --separate-stderr bloom create -f -n 2000 --seed 2 f.bf
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run bloom stats f.bf
	[ "${lines[6]}" = "seed: 2" ]
	[ "${lines[7]}" = "capacity: 2000" ]
	[ "${lines[9]}" = "inserted: 0" ]
	[ "${lines[10]}" = "bits_set: 0" ]
	[ "$(entries)" = "f.bf" ]
}

@test "create -f on a missing file just creates it" {
	run --separate-stderr bloom create -f -n 1000 --seed 1 f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(sizing f.bf)" = "bytes=1408 bits=10240 hashes=7 capacity=1000 target_fpr=0.01" ]
}

@test "create writes a file of exactly 128 + bits/8 bytes, fully allocated" {
	bloom create --seed 1 f.bf
	[ "$(stat -c %s f.bf)" -eq $((128 + 9895936 / 8)) ]
	# Not sparse: the blocks on disk cover every byte.
	[ "$(($(stat -c %b f.bf) * $(stat -c %B f.bf)))" -ge 1237120 ]
	[ "$(du --block-size=1 f.bf | cut -f1)" -ge 1237120 ]
}

@test "create -f writes a fully allocated file too" {
	bloom create -n 10 --seed 1 f.bf
	bloom create -f -s 1M --seed 1 f.bf
	[ "$(stat -c %s f.bf)" -eq 1048704 ]
	[ "$(($(stat -c %b f.bf) * $(stat -c %B f.bf)))" -ge 1048704 ]
}

@test "create makes the file with mode 666 less the umask" {
	umask 027
	bloom create -n 1000 a.bf
	[ "$(stat -c %a a.bf)" = "640" ]
	umask 077
	bloom create -n 1000 b.bf
	[ "$(stat -c %a b.bf)" = "600" ]
	umask 022
	bloom create -n 1000 c.bf
	[ "$(stat -c %a c.bf)" = "644" ]
}

@test "create -f keeps the mode of the file it replaces, not the umask's" {
	umask 022
	bloom create -n 1000 f.bf
	chmod 600 f.bf
	umask 027
	bloom create -f -n 1000 f.bf
	[ "$(stat -c %a f.bf)" = "600" ]
}

# ---- Failures that are not usage errors: status 2, no synopsis.

@test "create in a missing directory names the file" {
	run --separate-stderr bloom create -n 1000 nodir/f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: nodir/f.bf: cannot create: No such file or directory" ]
	[ "$(entries)" = "" ]
}

@test "create in a directory it cannot write names the file" {
	mkdir ro
	chmod 555 ro
	run --separate-stderr unprivileged bloom create -n 1000 ro/f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: ro/f.bf: cannot create: Permission denied" ]
	[ "$(ls -A ro)" = "" ]
}

@test "create -f does not replace a directory, and leaves nothing behind" {
	mkdir d.bf
	run --separate-stderr bloom create -f -n 1000 d.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: d.bf: cannot create: Is a directory" ]
	[ -d d.bf ]
	[ "$(entries)" = "d.bf" ]
	[ "$(ls -A d.bf)" = "" ]
}

@test "create of an impossibly large filter fails before allocating" {
	run --separate-stderr bloom create -n 1000000000000000000 -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: a filter for 1000000000000000000 items at fpr 1e-300 would exceed 64 TiB" ]
	[ "$(entries)" = "" ]
}

@test "create -n 2^64-1 fails with the size limit" {
	run --separate-stderr bloom create -n 18446744073709551615 -p 0.5 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: a filter for 18446744073709551615 items at fpr 0.5 would exceed 64 TiB" ]
	[ "$(entries)" = "" ]
}

@test "create -s 64 -n 2^64-1 fails at once" {
	# Too many items for one block: the answer is immediate, not a long
	# sum over every possible block load.
	run --separate-stderr timeout 3 bloom create -s 64 -n 18446744073709551615 f.bf
	[ "$status" -eq 2 ] || { echo "status $status"; return 1; }
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: 18446744073709551615 items would fill 64 bytes completely" ]
	[ "$(entries)" = "" ]
}

@test "create -s -n refuses a derived fpr above 0.5" {
	run --separate-stderr bloom create -s 64 -n 1000 f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: 1000 items in 64 bytes would give a false-positive rate of 0.858; give a larger -s or a smaller -n" ]
	[ "$(entries)" = "" ]
}

@test "create -s 64 -n 150 accepts a derived fpr of 0.197" {
	creates 'bytes=192 bits=512 hashes=2 capacity=150 target_fpr=0.197045' \
	    -s 64 -n 150
}

@test "create -s too small for one item at the rate" {
	run --separate-stderr bloom create -s 64 -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 64 bytes cannot hold one item at fpr 1e-300" ]
	[ "$(entries)" = "" ]
}

# ---- Usage errors: status 2, the message and the synopsis on stderr.

@test "create -n 0"		{ usage_fails "-n takes a positive whole number, not '0'" -n 0 f.bf; }
@test "create -n -5"		{ usage_fails "-n takes a positive whole number, not '-5'" -n -5 f.bf; }
@test "create -n +5"		{ usage_fails "-n takes a positive whole number, not '+5'" -n +5 f.bf; }
@test "create -n abc"		{ usage_fails "-n takes a positive whole number, not 'abc'" -n abc f.bf; }
@test "create -n 1e6"		{ usage_fails "-n takes a positive whole number, not '1e6'" -n 1e6 f.bf; }
@test "create -n 2^64"		{ usage_fails "-n takes a positive whole number, not '18446744073709551616'" -n 18446744073709551616 f.bf; }
@test "create -n ''"		{ usage_fails "-n takes a positive whole number, not ''" -n '' f.bf; }
@test "create -p 0"		{ usage_fails "-p takes a rate between 0 and 1, not '0'" -p 0 f.bf; }
@test "create -p 1"		{ usage_fails "-p takes a rate between 0 and 1, not '1'" -p 1 f.bf; }
@test "create -p 1.5"		{ usage_fails "-p takes a rate between 0 and 1, not '1.5'" -p 1.5 f.bf; }
@test "create -p -0.1"		{ usage_fails "-p takes a rate between 0 and 1, not '-0.1'" -p -0.1 f.bf; }
@test "create -p nan"		{ usage_fails "-p takes a rate between 0 and 1, not 'nan'" -p nan f.bf; }
@test "create -p inf"		{ usage_fails "-p takes a rate between 0 and 1, not 'inf'" -p inf f.bf; }
@test "create -p 0.01x"		{ usage_fails "-p takes a rate between 0 and 1, not '0.01x'" -p 0.01x f.bf; }
@test "create -p 1e-400"	{ usage_fails "-p takes a rate between 0 and 1, not '1e-400'" -p 1e-400 f.bf; }
@test "create -s 10"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '10'" -s 10 f.bf; }
@test "create -s 63"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '63'" -s 63 f.bf; }
@test "create -s 0K"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '0K'" -s 0K f.bf; }
@test "create -s 5X"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '5X'" -s 5X f.bf; }
@test "create -s 5MB"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '5MB'" -s 5MB f.bf; }
@test "create -s 1.5M"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '1.5M'" -s 1.5M f.bf; }
@test "create -s -64"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '-64'" -s -64 f.bf; }
@test "create -s 65T"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '65T'" -s 65T f.bf; }
@test "create -s 2^64 bytes"	{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '16777216T'" -s 16777216T f.bf; }
@test "create -k 0"		{ usage_fails "-k takes a number of hashes from 1 to 32, not '0'" -k 0 f.bf; }
@test "create -k 33"		{ usage_fails "-k takes a number of hashes from 1 to 32, not '33'" -k 33 f.bf; }
@test "create -k x"		{ usage_fails "-k takes a number of hashes from 1 to 32, not 'x'" -k x f.bf; }
@test "create --seed -1"	{ usage_fails "--seed takes a 64-bit number, not '-1'" --seed -1 f.bf; }
@test "create --seed 2^64"	{ usage_fails "--seed takes a 64-bit number, not '18446744073709551616'" --seed 18446744073709551616 f.bf; }
@test "create --seed 0x"	{ usage_fails "--seed takes a 64-bit number, not '0x'" --seed 0x f.bf; }
@test "create --seed 0x 2^64"	{ usage_fails "--seed takes a 64-bit number, not '0x10000000000000000'" --seed 0x10000000000000000 f.bf; }
@test "create --seed abc"	{ usage_fails "--seed takes a 64-bit number, not 'abc'" --seed abc f.bf; }
@test "create -n with no value"	{ usage_fails "option '-n' needs a value" f.bf -n; }
@test "create -p with no value"	{ usage_fails "option '-p' needs a value" f.bf -p; }
@test "create -s with no value"	{ usage_fails "option '-s' needs a value" f.bf -s; }
@test "create -k with no value"	{ usage_fails "option '-k' needs a value" f.bf -k; }
@test "create --seed with no value" { usage_fails "option '--seed' needs a value" f.bf --seed; }
@test "create -fn with no value names -n" { usage_fails "option '-n' needs a value" f.bf -fn; }
@test "create -x"		{ usage_fails "unknown option '-x'" -x f.bf; }
@test "create -xf names -x"	{ usage_fails "unknown option '-x'" -xf f.bf; }
@test "create -S, the letter of --seed" { usage_fails "unknown option '-S'" -S 5 f.bf; }
@test "create --bogus"		{ usage_fails "unknown option '--bogus'" --bogus f.bf; }
@test "create with no filter"	{ usage_fails "no filter named" -n 1000; }
@test "create with two filters"	{ usage_fails "one filter at a time" a.bf b.bf; }
