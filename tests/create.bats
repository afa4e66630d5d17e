#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of bloom create: sizing from -n, -p, -s and -k, the seed, replacing
# and refusing to replace, allocation and mode of the new file, and every
# usage error.

bats_require_minimum_version 1.5.0
load helpers

usage='usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter'

# Lists the files of the test's directory but bats' own (run
# --separate-stderr keeps its stderr there).
entries() {
	ls -A --ignore='separate-stderr-*'
}

# Prints the sizing of filter FILE from its stats, on one line: bytes as
# the number alone, without the size in 1024-based units that follows it.
sizing() {
	bloom stats "$1" | awk -F': ' '
	    $1 ~ /^(bytes|bits|hashes|capacity|target_fpr)$/ {
		if ($1 == "bytes")
			sub(/ \([0-9.]+ [KMGT]?i?B\)$/, "", $2)
		printf "%s%s=%s", sep, $1, $2; sep = " "
	    }
	    END { print "" }'
}

# creates SIZING ARGS...: bloom create --seed 7 ARGS... f.bf succeeds
# silently, and the stats of f.bf give SIZING; the file is exactly as large
# as its stats say: a 4096-byte header page, then the bit array.
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
	local bits=${got#* bits=}
	bits=${bits%% *}
	[ "$(stat -c %s f.bf)" -eq $((4096 + bits / 8)) ]
	[ "$(stats_field mode f.bf)" = fixed ]
	[ "$(stats_field segments f.bf)" = 1 ]
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
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: fixed
bytes: 1243904 (1.2 MiB)
bits: 9918464
hashes: 6
seed: 42
capacity: 1000000
target_fpr: 0.01
inserted: 0
percent_of_capacity: 0.0
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0
segments: 1" ]
}

@test "create -n 1000: the default fpr" {
	creates 'bytes=5376 bits=10240 hashes=7 capacity=1000 target_fpr=0.01' \
	    -n 1000
}

@test "create -p 0.001: the default capacity" {
	creates 'bytes=1947328 bits=15545856 hashes=9 capacity=1000000 target_fpr=0.001' \
	    -p 0.001
}

@test "create -n 1000 -p 0.01" {
	creates 'bytes=5376 bits=10240 hashes=7 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01
}

@test "create -k 3 keeps 3 hashes and grows the array to meet the rate" {
	creates 'bytes=5696 bits=12800 hashes=3 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01 -k 3
}

@test "create -k 32, the most hashes" {
	creates 'bytes=6400 bits=18432 hashes=32 capacity=1000 target_fpr=0.01' \
	    -n 1000 -p 0.01 -k 32
}

@test "create -k 1, the fewest hashes" {
	creates 'bytes=12441536 bits=99499520 hashes=1 capacity=1000000 target_fpr=0.01' \
	    -k 1
}

@test "create -s 1M: the array is 1 MiB, capacity derived at the default fpr" {
	creates 'bytes=1052672 bits=8388608 hashes=6 capacity=845797 target_fpr=0.01' \
	    -s 1M
}

@test "create -s 1m: suffixes are case-insensitive" {
	creates 'bytes=1052672 bits=8388608 hashes=6 capacity=845797 target_fpr=0.01' \
	    -s 1m
}

@test "create -s 1K" {
	creates 'bytes=5120 bits=8192 hashes=6 capacity=825 target_fpr=0.01' \
	    -s 1K
}

@test "create -s 64k" {
	creates 'bytes=69632 bits=524288 hashes=6 capacity=52862 target_fpr=0.01' \
	    -s 64k
}

@test "create -s 1000: rounded down to 960 bytes, 15 whole blocks" {
	creates 'bytes=5056 bits=7680 hashes=6 capacity=774 target_fpr=0.01' \
	    -s 1000
}

@test "create -s 64: one block, the smallest filter" {
	creates 'bytes=4160 bits=512 hashes=6 capacity=51 target_fpr=0.01' \
	    -s 64
}

@test "create -s 127: rounded down to one block" {
	creates 'bytes=4160 bits=512 hashes=6 capacity=51 target_fpr=0.01' \
	    -s 127
}

@test "create -s 128: two blocks" {
	creates 'bytes=4224 bits=1024 hashes=6 capacity=103 target_fpr=0.01' \
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
	creates 'bytes=1052672 bits=8388608 hashes=22 capacity=100000 target_fpr=6.372248770362543e-10' \
	    -s 1M -n 100000
}

@test "create -s 64K -n 10000 -k 4: the fpr is derived for 4 hashes" {
	creates 'bytes=69632 bits=524288 hashes=4 capacity=10000 target_fpr=4.704065833587459e-05' \
	    -s 64K -n 10000 -k 4
}

@test "create -s 1M -p 0.001: the capacity is derived" {
	creates 'bytes=1052672 bits=8388608 hashes=9 capacity=539616 target_fpr=0.001' \
	    -s 1M -p 0.001
}

@test "create -n, -p and -s all given: usage error" {
	usage_fails 'give at most two of -n, -p and -s' -n 1000 -p 0.01 -s 1M f.bf
}

# ---- Growable and windowed filters: status 0, and the segments made.

# Prints header bytes 88 to 95 of FILE, the offset of its first segment.
data_offset() {
	od -An -tu8 -j 88 -N 8 "$1" | tr -d ' '
}

# segments_are FILE PYTHON-LIST: the segments of FILE, each as (live, bits,
# hashes, capacity, target_fpr), are those of the list (the rates to 12
# digits).
segments_are() {
	bloom stats --json "$1" >stats.json
	python3 -c '
import json, math
d = json.load(open("stats.json"))
got = [(s["live"], s["bits"], s["hashes"], s["capacity"], s["target_fpr"])
    for s in d["segments"]]
want = '"$2"'
assert len(got) == len(want) and all(g[:4] == w[:4] and
    math.isclose(g[4], w[4], rel_tol=1e-12) for g, w in zip(got, want)), \
    "got %r\nwant %r" % (got, want)
'
}

@test "create --grow: one segment for -n, at the part of -p that leaves room to grow" {
	before=$(date +%s)
	run --separate-stderr bloom create --seed 7 --grow -n 1000 f.bf
	after=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	# 0.01 (1 - 0.9): the segments' rates 0.001, 0.0009, ... sum to 0.01;
	# the first is sized as a fixed filter for 1000 at that rate, after a
	# header and table of two pages.
	bloom create --seed 7 -n 1000 -p "$(python3 -c 'print(repr(0.01 * (1 - 0.9)))')" fixed.bf
	bits=$(stats_field bits fixed.bf)
	hashes=$(stats_field hashes fixed.bf)
	bytes=$((8192 + bits / 8))
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
	[ "${output%  *}" = "file: f.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: grow
growth: 2
tightening: 0.9
bytes: $bytes ($(python3 -c "print('%.1f' % ($bytes / 1024))") KiB)
bits: $bits
hashes: $hashes
seed: 7
capacity: 1000
target_fpr: 0.01
inserted: 0
percent_of_capacity: 0.0
note: it grows: capacity and percent_of_capacity are of its segments so far
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0
segments: 1
   # live           bits hashes     capacity target_fpr     inserted       bits_set    est_items  created
   0  yes $(printf '%14d %6d' "$bits" "$hashes")         1000      0.001            0              0            0" ]
	# Stamped while create ran, by the clock date reads.  (Not by the
	# file's mtime: the kernel stamps files from a coarser clock that can
	# lag it across a second's boundary.)
	[[ ${output##*  } == 20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z ]]
	[ "$(date -u -d "${output##*  }" +%s)" -ge "$before" ]
	[ "$(date -u -d "${output##*  }" +%s)" -le "$after" ]
	# The table of 64 entries ends past the first page: the segment
	# starts on the third.
	[ "$(od -An -tu4 -j 36 -N 4 f.bf | tr -d ' ')" -eq 64 ]
	[ "$(data_offset f.bf)" -eq 8192 ]
	[ "$(stat -c %s f.bf)" -eq "$bytes" ]
	segments_are f.bf "[(True, $bits, $hashes, 1000, 0.01 * (1 - 0.9))]"
	# The rates in full, with the fewest digits that read back the same.
	bloom stats --json f.bf >stats.json
	grep -q '"growth":2,"tightening":0.9,' stats.json
	grep -q '"target_fpr":0.01,' stats.json
	grep -q "\"target_fpr\":$(python3 -c 'print(repr(0.01 * (1 - 0.9)))')," stats.json
}

@test "create --grow sizes its first segment as a fixed filter of its capacity and rate" {
	# Below 256 blocks; larger ones are rounded up to a count fold
	# divides (the next test).
	bloom create --seed 7 --grow -n 1000 -p 0.001 --growth 4 g.bf
	bloom create --seed 7 -n 1000 -p "$(python3 -c 'print(repr(0.001 * (1 - 0.9)))')" f.bf
	[ "$(stats_field growth g.bf)" = 4 ]
	[ "$(stats_field target_fpr g.bf)" = 0.001 ]
	[ "$(stats_field bits g.bf)" = "$(stats_field bits f.bf)" ]
	want="[(True, $(stats_field bits f.bf), $(stats_field hashes f.bf), 1000, 0.001 * (1 - 0.9))]"
	segments_are g.bf "$want"
	segments_are f.bf "$want"
}

@test "create --grow without -n or -p: 1000000 items at first, at 0.01" {
	bloom create --seed 7 --grow f.bf
	[ "$(stats_field mode f.bf)" = grow ]
	[ "$(stats_field capacity f.bf)" = 1000000 ]
	[ "$(stats_field target_fpr f.bf)" = 0.01 ]
	bloom create --seed 7 -n 1000000 -p "$(python3 -c 'print(repr(0.01 * (1 - 0.9)))')" fixed.bf
	# The fixed filter's blocks, rounded up to a multiple of the largest
	# power of two (up to 4096) that adds at most 1/128: a count that
	# fold divides.
	bits=$(python3 -c '
import sys
nblocks = int(sys.argv[1]) // 512
unit = 1
while unit < 4096 and unit * 2 <= nblocks // 128:
	unit *= 2
print(-(-nblocks // unit) * unit * 512)' "$(stats_field bits fixed.bf)")
	[ "$bits" -gt "$(stats_field bits fixed.bf)" ]
	[ "$(stat -c %s f.bf)" -eq $((8192 + bits / 8)) ]
	segments_are f.bf "[(True, $bits, $(stats_field hashes fixed.bf), 1000000, 0.01 * (1 - 0.9))]"
}

@test "create --generations 4: four equal generations, the first live, none timed" {
	local p

	run --separate-stderr bloom create --seed 7 --generations 4 --layout blocked -n 3000 f.bf
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	# Each generation holds the lines of a third of the window, at the
	# rate that makes 0.01 over all four: 1 - 0.99^(1/4).
	p=$(python3 -c 'print(repr(1 - 0.99 ** 0.25))')
	segments_are f.bf "[(True, 13312, 8, 1000, $p)] + [(False, 13312, 8, 1000, $p)] * 3"
	run -0 bloom stats f.bf
	[ "$(printf '%s\n' "${lines[@]:0:24}")" = "file: f.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: window
generations: 4
window_seconds: none (rotated by bloom rotate)
generation: 0
renew: yes
bytes: 18048 (17.6 KiB)
bits: 13312
hashes: 8
seed: 7
capacity: 3000
target_fpr: 0.01
inserted: 0
percent_of_capacity: 0.0
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0
segments: 4
   # live           bits hashes     capacity target_fpr     inserted       bits_set    est_items  created               expires               generation
   0  yes          13312      8         1000    0.00251            0              0            0  -                     -                     0" ]
	[ "${lines[24]}" = "   1   no          13312      8         1000    0.00251            0              0            0  -                     -                     -" ]
	[ "${#lines[@]}" -eq 27 ]
	# Each segment on a page of its own; the last one not padded.
	[ "$(data_offset f.bf)" -eq 4096 ]
	[ "$(stat -c %s f.bf)" -eq $((4096 + 3 * 4096 + 13312 / 8)) ]
	# Sized as a fixed filter of the same capacity and rate.
	bloom create --seed 7 -n 1000 -p 0.0025094300663188952 g.bf
	segments_are g.bf "[(True, 13312, 8, 1000, $p)]"
}

@test "create --generations 2 and 64, the fewest and the most" {
	bloom create --seed 7 --generations 2 --layout blocked -n 1000 -p 0.001 a.bf
	p=$(python3 -c 'print(repr(1 - 0.999 ** 0.5))')
	segments_are a.bf "[(True, 17408, 10, 1000, $p), (False, 17408, 10, 1000, $p)]"
	[ "$(stat -c %s a.bf)" -eq $((4096 + 4096 + 17408 / 8)) ]
	bloom create --seed 7 --generations 64 --layout blocked -n 1000 b.bf
	# 1000 / 63 lines a generation, rounded up.
	p=$(python3 -c 'print(repr(1 - 0.99 ** (1 / 64)))')
	segments_are b.bf "[(True, 512, 15, 16, $p)] + [(False, 512, 15, 16, $p)] * 63"
	[ "$(data_offset b.bf)" -eq 8192 ]
	[ "$(stat -c %s b.bf)" -eq $((8192 + 63 * 4096 + 64)) ]
}

# window SECONDS DURATION: create --generations 3 --window DURATION makes a
# filter whose window is SECONDS, and whose first generation, made now, is
# forgotten 1.5 windows from now.
window() {
	local want=$1

	rm -f w.bf
	run --separate-stderr bloom create --generations 3 --window "$2" w.bf
	[ "$status" -eq 0 ] || { echo "$2: status $status: $stderr"; return 1; }
	[ "$(stats_field window_seconds w.bf)" = "$want" ] ||
		{ echo "$2: window_seconds $(stats_field window_seconds w.bf)"; return 1; }
	bloom stats --json w.bf >stats.json
	python3 -c '
import json, datetime
d = json.load(open("stats.json"))
assert d["window_seconds"] == '"$want"', d["window_seconds"]
s = d["segments"][0]
t = lambda x: datetime.datetime.strptime(x, "%Y-%m-%dT%H:%M:%SZ")
assert abs((t(s["expires"]) - t(s["created"])).total_seconds() - 1.5 * '"$want"') <= 1, s
assert [x["created"] for x in d["segments"][1:]] == [None, None]
assert [x["expires"] for x in d["segments"][1:]] == [None, None]
'
}

@test "create --window takes s, m, h, d and w, and bare seconds" {
	window 90 90s
	window 1800 30m
	window 43200 12h
	window 604800 7d
	window 1209600 2w
	window 90 90
	window 1 1s
}

# ---- The seed.

@test "create --seed takes decimal" {
	bloom create -n 1000 --seed 12345 f.bf
	[ "$(stats_field seed f.bf)" = 12345 ]
}

@test "create --seed takes 0x hex" {
	bloom create -n 1000 --seed 0x2A f.bf
	[ "$(stats_field seed f.bf)" = 42 ]
}

@test "create --seed takes 0 and 2^64-1" {
	bloom create -n 1000 --seed 0 a.bf
	bloom create -n 1000 --seed=18446744073709551615 b.bf
	[ "$(stats_field seed a.bf)" = 0 ]
	[ "$(stats_field seed b.bf)" = 18446744073709551615 ]
}

@test "create --seed with a leading zero is still decimal" {
	# The seed is decimal or 0x hex; 010 is ten, not octal eight, and 09 is
	# nine, not an error.
	bloom create -n 1000 --seed 010 a.bf
	[ "$(stats_field seed a.bf)" = 10 ]
	run --separate-stderr bloom create -n 1000 --seed 09 b.bf
	[ "$status" -eq 0 ]
	[ "$(stats_field seed b.bf)" = 9 ]
}

@test "create without --seed draws a random seed" {
	bloom create -n 1000 a.bf
	bloom create -n 1000 b.bf
	seed_a=$(stats_field seed a.bf)
	[[ $seed_a == [0-9]* ]]
	[ "$(stats_field seed b.bf)" != "$seed_a" ]
}

# ---- Replacing, refusing, allocation and mode.

@test "create refuses an existing filter made otherwise without -f and leaves it untouched" {
	bloom create -n 1000 --seed 1 f.bf
	keys 100 | bloom add f.bf
	before=$(cksum <f.bf)
	run --separate-stderr bloom create -n 2000 --seed 2 f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: exists and differs: -n 1000, not 2000 (use -f to replace it, losing its lines)" ]
	[ "$(cksum <f.bf)" = "$before" ]
	[ "$(entries)" = "f.bf" ]
}

@test "create of an existing filter made as asked exits 0 and leaves it untouched, as mkdir -p" {
	bloom create -n 1000 --seed 1 f.bf
	keys 100 | bloom add f.bf
	bloom create --grow -n 1000 -p 0.001 g.bf
	bloom create --generations 4 --window 1h w.bf
	bloom create -n 100000 -p 0.01 --seed 42 --slices 2 --slice 1/2 s.bf
	bloom create --like f.bf l.bf
	before=$(cksum f.bf g.bf w.bf s.bf l.bf)
	# The seed counts only when given: none drawn at random differs.
	for args in "-n 1000 --seed 1 f.bf" "-n 1000 f.bf" \
	    "--grow -n 1000 -p 0.001 g.bf" "--generations 4 --window 1h w.bf" \
	    "-n 100000 -p 0.01 --seed 42 --slices 2 --slice 1/2 s.bf" \
	    "--like f.bf l.bf"; do
		# shellcheck disable=SC2086 # args are words
		run -0 --separate-stderr bloom create $args
		[ "$output$stderr" = "" ]
	done
	[ "$(cksum f.bf g.bf w.bf s.bf l.bf)" = "$before" ]
	# Each parameter that differs is named, with both values.
	while IFS='|' read -r args said; do
		# shellcheck disable=SC2086 # args are words
		run -2 --separate-stderr bloom create $args
		[ "$stderr" = "bloom: ${args##* }: exists and differs: $said (use -f to replace it, losing its lines)" ]
	done <<-'EOF'
	-n 1000 --seed 2 f.bf|--seed 1, not 2
	-n 1000 -p 0.001 f.bf|-p 0.01, not 0.001
	-n 1000 -s 8K f.bf|-p 0.01, not 7.32119e-09
	-n 1000 -k 3 f.bf|-s (bytes) 1280, not 1600
	--grow -n 1000 f.bf|a fixed filter, not a growable one
	--grow -n 1000 -p 0.001 --growth 4 g.bf|--growth 2, not 4
	--generations 5 --window 1h w.bf|--generations 4, not 5
	--generations 4 --window 2h w.bf|--window (ms) 3600000, not 7200000
	--generations 4 --window 1h --no-renew w.bf|renewal, not --no-renew
	-n 100000 -p 0.01 --seed 42 --slices 2 --slice 0/2 s.bf|--slice 1/2, not 0/2
	--like g.bf l.bf|a fixed filter, not a growable one
	EOF
	[ "$(cksum f.bf g.bf w.bf s.bf l.bf)" = "$before" ]
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
	[ "$(stats_field seed f.bf)" = 2 ]
	[ "$(stats_field capacity f.bf)" = 2000 ]
	[ "$(stats_field inserted f.bf)" = 0 ]
	[ "$(stats_field bits_set f.bf)" = 0 ]
	[ "$(entries)" = "f.bf" ]
}

@test "create -f on a missing file just creates it" {
	run --separate-stderr bloom create -f -n 1000 --seed 1 f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(sizing f.bf)" = "bytes=5376 bits=10240 hashes=7 capacity=1000 target_fpr=0.01" ]
}

@test "create writes a file of exactly 4096 + bits/8 bytes, fully allocated" {
	bloom create --seed 1 f.bf
	[ "$(stat -c %s f.bf)" -eq $((4096 + 9918464 / 8)) ]
	# Not sparse: the blocks on disk cover every byte.
	[ "$(($(stat -c %b f.bf) * $(stat -c %B f.bf)))" -ge 1243904 ]
	[ "$(du --block-size=1 f.bf | cut -f1)" -ge 1243904 ]
}

@test "create -f writes a fully allocated file too" {
	bloom create -n 10 --seed 1 f.bf
	bloom create -f -s 1M --seed 1 f.bf
	[ "$(stat -c %s f.bf)" -eq $((4096 + 1048576)) ]
	[ "$(($(stat -c %b f.bf) * $(stat -c %B f.bf)))" -ge 1052672 ]
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

@test "create, with or without -f, says that a directory is one, and leaves it as it was" {
	mkdir d.bf
	bloom create -n 10 t.bf
	ln -s d.bf link.bf
	for args in "-n 1000 d.bf" "-f -n 1000 d.bf" "--like t.bf d.bf" \
	    "-f --like t.bf d.bf" "-f -n 1000 link.bf" "-n 1000 link.bf"; do
		# shellcheck disable=SC2086
		row 2 "" "bloom: ${args##* }: is a directory, not a filter" create $args
		[ -d d.bf ]
		[ "$(entries | tr "\n" " ")" = "d.bf link.bf t.bf " ]
		[ "$(ls -A d.bf)" = "" ]
	done
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
	creates 'bytes=4160 bits=512 hashes=2 capacity=150 target_fpr=0.1971718855019716' \
	    -s 64 -n 150
}

@test "create -n takes K, M and G as powers of 1000; -s keeps powers of 1024" {
	for pair in 5k:5000 5K:5000 1M:1000000 1m:1000000 2G:2000000000 \
	    007K:7000; do
		run -0 bloom create --dry-run -n "${pair%%:*}" f.bf
		[ "${lines[5]}" = "capacity: ${pair#*:}" ]
	done
	run -0 bloom create --dry-run -n 1M -s 1M f.bf
	[ "${lines[2]}" = "bytes: $((4096 + 1048576)) (1.0 MiB)" ]
	[ "${lines[5]}" = "capacity: 1000000" ]
	[ ! -e f.bf ]
	bloom create --seed 7 -n 1M a.bf
	bloom create --seed 7 -n 1000000 b.bf
	same_filter a.bf b.bf
	# --help and the manual say which powers.
	[[ "$(bloom create --help)" == *"-n capacity  items the filter is sized for (default 1000000), with
               suffix K, M or G (powers of 1000: 5M is 5000000)"* ]]
	man=$(mandoc -Tascii "$root/man/bloom.1" | col -bx | tr -s ' \n' '  ')
	[[ "$man" == *"-n capacity A positive decimal number, by default 1000000, optionally followed by K, M or G (in either case) for a thousand, a million or a billion times it: items are counted in powers of 1000, where the bytes of -s are counted in powers of 1024."* ]]
}

@test "create -s too small for one item at the rate" {
	run --separate-stderr bloom create -s 64 -p 1e-300 f.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: 64 bytes cannot hold one item at fpr 1e-300" ]
	[ "$(entries)" = "" ]
}

# ---- Usage errors: status 2, the message and the synopsis on stderr.

@test "create -n 0"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '0'" -n 0 f.bf; }
@test "create -n -5"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '-5'" -n -5 f.bf; }
@test "create -n +5"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '+5'" -n +5 f.bf; }
@test "create -n abc"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not 'abc'" -n abc f.bf; }
@test "create -n 1e-6"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '1e-6'" -n 1e-6 f.bf; }
@test "create -n 2^64"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '18446744073709551616'" -n 18446744073709551616 f.bf; }
@test "create -n ''"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not ''" -n '' f.bf; }
@test "create -n 1.0000005M"	{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '1.0000005M'" -n 1.0000005M f.bf; }
@test "create -n 1T"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '1T'" -n 1T f.bf; }
@test "create -n 5KB"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '5KB'" -n 5KB f.bf; }
@test "create -n 0K"		{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '0K'" -n 0K f.bf; }
@test "create -n 2^64 in G"	{ usage_fails "-n takes a positive whole number such as 1000000, 1M or 1e6 (K, M, G: powers of 1000), not '18446744074G'" -n 18446744074G f.bf; }
@test "create -p 0"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '0'" -p 0 f.bf; }
@test "create -p 1"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '1'" -p 1 f.bf; }
@test "create -p 1.5"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '1.5'" -p 1.5 f.bf; }
@test "create -p -0.1"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '-0.1'" -p -0.1 f.bf; }
@test "create -p nan"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not 'nan'" -p nan f.bf; }
@test "create -p inf"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not 'inf'" -p inf f.bf; }
@test "create -p 0.01x"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '0.01x'" -p 0.01x f.bf; }
@test "create -p 0x0.1"		{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '0x0.1'" -p 0x0.1 f.bf; }
@test "create -p ' 0.01'"	{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not ' 0.01'" -p ' 0.01' f.bf; }
@test "create -p 1e-400"	{ usage_fails "-p takes a rate between 0 and 1 such as 0.01, 1e-3 or 1%, not '1e-400'" -p 1e-400 f.bf; }
@test "create -s 10"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '10'" -s 10 f.bf; }
@test "create -s 63"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '63'" -s 63 f.bf; }
@test "create -s 0K"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '0K'" -s 0K f.bf; }
@test "create -s 5X"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '5X'" -s 5X f.bf; }
@test "create -s 5MiBs"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '5MiBs'" -s 5MiBs f.bf; }
@test "create -s 100.5"		{ usage_fails "-s takes a size from 64 bytes to 64T, such as 64M, not '100.5'" -s 100.5 f.bf; }
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
@test "create --growth 1.2"	{ usage_fails "--growth takes a factor from 1.25 to 16, not '1.2'" --grow --growth 1.2 f.bf; }
@test "create --growth 16.01"	{ usage_fails "--growth takes a factor from 1.25 to 16, not '16.01'" --grow --growth 16.01 f.bf; }
@test "create --growth nan"	{ usage_fails "--growth takes a factor from 1.25 to 16, not 'nan'" --grow --growth nan f.bf; }
@test "create --growth 2x"	{ usage_fails "--growth takes a factor from 1.25 to 16, not '2x'" --grow --growth 2x f.bf; }
@test "create --growth 0x2"	{ usage_fails "--growth takes a factor from 1.25 to 16, not '0x2'" --grow --growth 0x2 f.bf; }
@test "create --growth ''"	{ usage_fails "--growth takes a factor from 1.25 to 16, not ''" --grow --growth '' f.bf; }
@test "create --growth without --grow" { usage_fails "--growth needs --grow" --growth 2 f.bf; }
@test "create --generations 1"	{ usage_fails "--generations takes a count from 2 to 64, not '1'" --generations 1 f.bf; }
@test "create --generations 65"	{ usage_fails "--generations takes a count from 2 to 64, not '65'" --generations 65 f.bf; }
@test "create --generations x"	{ usage_fails "--generations takes a count from 2 to 64, not 'x'" --generations x f.bf; }
@test "create --generations +3"	{ usage_fails "--generations takes a count from 2 to 64, not '+3'" --generations +3 f.bf; }
@test "create --window 0s"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '0s'" --generations 3 --window 0s f.bf; }
@test "create --window 1.5s"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '1.5s'" --generations 3 --window 1.5s f.bf; }
@test "create --window 5y"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '5y'" --generations 3 --window 5y f.bf; }
@test "create --window 1Wk"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '1Wk'" --generations 3 --window 1Wk f.bf; }
@test "create --window 5ss"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '5ss'" --generations 3 --window 5ss f.bf; }
@test "create --window -5s"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '-5s'" --generations 3 --window -5s f.bf; }
@test "create --window 2^64 s"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not '18446744073709551616s'" --generations 3 --window 18446744073709551616s f.bf; }
@test "create --window ''"	{ usage_fails "--window takes a duration such as 90s, 30m, 12h, 7d or 2w, not ''" --generations 3 --window '' f.bf; }
@test "create --window without --generations" { usage_fails "--window needs --generations" --window 1h f.bf; }
@test "create --grow --generations" { usage_fails "--grow and --generations do not go together" --grow --generations 3 f.bf; }
@test "create --generations --grow" { usage_fails "--grow and --generations do not go together" --generations 3 --grow f.bf; }
@test "create --grow -s"	{ usage_fails "-s and -k are for fixed filters: a growable filter sizes each segment from -n and -p" --grow -s 1M f.bf; }
@test "create --grow -k"	{ usage_fails "-s and -k are for fixed filters: a growable filter sizes each segment from -n and -p" --grow -k 3 f.bf; }
@test "create --generations -s"	{ usage_fails "-s and -k are for fixed filters: a windowed filter sizes each segment from -n and -p" --generations 2 -s 1M f.bf; }
@test "create --generations -k"	{ usage_fails "-s and -k are for fixed filters: a windowed filter sizes each segment from -n and -p" -k 4 --generations 2 f.bf; }
@test "create --grow=yes"	{ usage_fails "option '--grow' takes no value" --grow=yes f.bf; }
@test "create --growth with no value" { usage_fails "option '--growth' needs a value" --grow f.bf --growth; }
@test "create --generations with no value" { usage_fails "option '--generations' needs a value" f.bf --generations; }
@test "create --window with no value" { usage_fails "option '--window' needs a value" --generations 2 f.bf --window; }
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
