#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Slices without the whole filter: made from the parameters, by the task
# index a job engine gives (--slice auto), used as the template of the
# others, cut again into another count, and merged across counts; and
# merge's counter, which stays within the capacity while the fill does.

bats_require_minimum_version 1.5.0
load helpers

# timeless FILE: FILE's bytes without the time it was made: the creation
# time (header bytes 80 to 87), the header checksum over it (128 to 135)
# and the stamp of segment 0 (256 + 56 to 256 + 63), zeroed.
timeless() {
	python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
for lo in (80, 128, 256 + 56):
    b[lo:lo + 8] = bytes(8)
sys.stdout.buffer.write(b)' "$1" | md5sum
}

# Without the task indices of the engine the tests may run under.
unset_tasks() {
	unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_MIN JOB_COMPLETION_INDEX \
	    PSSH_NODENUM BLOOM_SLICE
}

@test "slices from the parameters: the bytes create --like whole --slice makes, 1/n of its size" {
	bloom create -n 200000 -p 0.01 --seed 7 --slices 4 whole.bf
	for i in 0 1 2 3; do
		bloom create --like whole.bf --slice $i/4 like$i.bf
		bloom create -n 200000 -p 0.01 --seed 7 --slices 4 --slice $i/4 p$i.bf
		[ "$(timeless p$i.bf)" = "$(timeless like$i.bf)" ]
	done
	# --slice i/n alone implies --slices n; -s sizes it as well.
	bloom create -n 200000 -p 0.01 --seed 7 --slice 2/4 q2.bf
	[ "$(timeless q2.bf)" = "$(timeless like2.bf)" ]
	bloom create -s 1M --seed 8 --slices 2 w2.bf
	bloom create --like w2.bf --slice 1/2 l1.bf
	bloom create -s 1M --seed 8 --slice 1/2 s1.bf
	[ "$(timeless s1.bf)" = "$(timeless l1.bf)" ]
	# A slice is a quarter of the bits, plus its header page.
	[ "$(json p1.bf 'd["bits"] * 4')" = "$(json whole.bf 'd["bits"]')" ]
	[ $(( $(stat -c %s p1.bf) - 4096 )) -eq $(( ($(stat -c %s whole.bf) - 4096) / 4 )) ]
	[ "$(json p1.bf 'd["capacity"]')" = 50000 ]
	bloom stats p1.bf | grep -qx 'slice: 1/4 (blocks 972 to 1943 of 3888)'
	# Every slice must hash alike: a random seed would not.
	row 2 "" "bloom: create: --slice without --like needs --seed, the same for every slice
usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter" create -n 1000 --slice 0/2 x.bf
	# --slices rounds, --slice cuts: a router needs only a small slice
	# of the same whole filter.
	bloom create -n 200000 -p 0.01 --seed 7 --slices 4 --slice 1/16 r.bf
	[ "$(json r.bf 'd["whole_bits"]')" = "$(json whole.bf 'd["bits"]')" ]
	[ "$(json r.bf 'd["bits"] * 16')" = "$(json whole.bf 'd["bits"]')" ]
	row 2 "" "bloom: x.bf: the whole filter's 3888 blocks do not divide into 7 slices; of the counts --slices rounds for, the most they divide into is 48 (--slice 0/48)" create -n 200000 -p 0.01 --seed 7 --slices 4 --slice 0/7 x.bf
	run -2 bloom create --like whole.bf --slices 3 --slice 0/2 x.bf
	[ "${lines[0]}" = "bloom: create: --slice 0/2 is not one of --slices 3" ]
	run -2 bloom create --grow -n 1000 --seed 1 --slice 0/2 x.bf
	[ "${lines[0]}" = "bloom: create: --slice is for fixed filters" ]
	[ ! -e x.bf ]
	# --dry-run tells of the slice and makes nothing.
	run -0 bloom create --dry-run -n 200000 -p 0.01 --seed 7 --slice 3/4 d.bf
	[[ "$output" == *"slice: 3/4 (blocks 2916 to 3887 of 3888)"* ]]
	[ ! -e d.bf ]
}

@test "slices: --slices rounds the blocks to common counts where that costs at most 1%" {
	# 64 MiB is 1048576 blocks: 1% of them allows a multiple of 5040,
	# which every count up to 10 divides.
	run -0 bloom create --dry-run -s 64M --seed 1 --slices 3 a.bf
	[[ "$output" == *$'\nblocks: 1053360\n'* ]]
	[ $((1053360 % 5040)) -eq 0 ]
	# 16 MiB allows 240 (up to 6, 8, 10, 12, 15, 16 too).
	run -0 bloom create --dry-run -s 16M --seed 1 --slices 3 a.bf
	[[ "$output" == *$'\nblocks: 262320\n'* ]]
	[ $((262320 % 240)) -eq 0 ]
	# A small filter takes only what its 1% allows.
	bloom create -n 1000 -p 0.01 --seed 1 --slices 3 b.bf
	[ $(( $(json b.bf 'd["bits"]') / 512 % 3 )) -eq 0 ]
}

@test "route: a slice alone routes, for its own count or another that divides the whole" {
	bloom create -n 100000 -p 0.01 --seed 4 --slices 4 whole.bf
	bloom create -n 100000 -p 0.01 --seed 4 --slice 1/4 s1.bf
	keys 20000 >in
	bloom route --slices 4 whole.bf in >via-whole
	bloom route s1.bf in >via-slice
	cmp via-whole via-slice
	bloom route --slices 2 whole.bf in >via-whole2
	bloom route --slices 2 s1.bf in >via-slice2
	cmp via-whole2 via-slice2
	# -o writes a file per slice: it wants their count said.
	run -2 --separate-stderr bloom route -o part. s1.bf in
	[ "${stderr_lines[0]}" = "bloom: route: -o writes a file for each slice: say how many with --slices" ]
	[ ! -e part.0 ]
	bloom route --slices 4 -o part. s1.bf in
	[ "$(cat part.0 part.1 part.2 part.3 | sort)" = "$(sort in)" ]
	blocks=$(( $(json s1.bf 'd["whole_bits"]') / 512 ))
	if [ $((blocks % 7)) -ne 0 ]; then
		row 2 "" "bloom: s1.bf: cannot be cut into 7 slices: its blocks do not divide into that many slices (make it with create --slices)" route --slices 7 s1.bf in
	fi
}

@test "slices: a slice is the template of any other slice, and of the whole filter" {
	bloom create -n 200000 -p 0.01 --seed 7 --slices 4 whole.bf
	bloom create -n 200000 -p 0.01 --seed 7 --slice 1/4 s1.bf
	bloom create --like whole.bf --slice 3/4 like3.bf
	bloom create --like s1.bf --slice 3/4 s3.bf
	[ "$(timeless s3.bf)" = "$(timeless like3.bf)" ]
	bloom create --like whole.bf --slice 1/2 like1of2.bf
	bloom create --like s1.bf --slice 1/2 s1of2.bf
	[ "$(timeless s1of2.bf)" = "$(timeless like1of2.bf)" ]
	# One slice of one is the whole filter.
	bloom create --like whole.bf empty.bf
	bloom create --like s1.bf --slice 0/1 w.bf
	[ "$(timeless w.bf)" = "$(timeless empty.bf)" ]
	# Without --slice, --like makes the same slice.
	bloom create --like s1.bf again.bf
	cmp s1.bf again.bf
}

@test "re-slicing: 4 slices cut into 2, 3 and back into 4 answer as the whole filter" {
	keys 100000 >in
	{ keys 50000; keys 50000 z-; } >q
	# Blocks for 12 slices divide into 2, 3 and 4 as well.
	bloom create -n 100000 -p 0.01 --seed 7 --slices 12 serial.bf
	bloom add serial.bf in
	bloom check serial.bf q >serial.yes
	bloom check -v serial.bf q >serial.no
	for i in 0 1 2 3; do
		bloom create --like serial.bf --slice $i/4 s$i.bf
	done
	bloom route --slices 4 -o part. s0.bf in
	for i in 0 1 2 3; do bloom add s$i.bf part.$i 2>/dev/null; done
	# Each new slice takes the blocks it shares with the old ones.
	for j in 0 1; do
		bloom create --like s0.bf --slice $j/2 two$j.bf
		run -0 --separate-stderr bloom merge two$j.bf s0.bf s1.bf s2.bf s3.bf
		[ "$stderr" = "" ]
	done
	row 0 "$(cat serial.yes)" '' check -F two0.bf -F two1.bf q
	row 0 "$(cat serial.no)" '' check -v -F two1.bf -F two0.bf q
	# Three slices' bounds fall inside the old ones.
	for j in 0 1 2; do
		bloom create --like two0.bf --slice $j/3 three$j.bf
		bloom merge three$j.bf two0.bf two1.bf
	done
	row 0 "$(cat serial.yes)" '' check -F three0.bf -F three1.bf -F three2.bf q
	for j in 0 1 2 3; do
		bloom create --like three2.bf --slice $j/4 four$j.bf
		bloom merge four$j.bf three0.bf three1.bf three2.bf
		[ "$(bits four$j.bf)" = "$(bits s$j.bf)" ]
	done
	row 0 "$(cat serial.yes)" '' check -F four0.bf -F four1.bf -F four2.bf -F four3.bf q
	# Joined, they are the serial filter, bit for bit.
	bloom create --like two1.bf --slice 0/1 joined.bf
	bloom merge joined.bf two0.bf two1.bf
	[ "$(bits joined.bf)" = "$(bits serial.bf)" ]
	# A whole filter's part goes into a slice.
	bloom create --like serial.bf --slice 1/2 from-whole.bf
	bloom merge from-whole.bf serial.bf
	[ "$(bits from-whole.bf)" = "$(bits two1.bf)" ]
}

@test "re-slicing: refused where the blocks do not divide, or the filters differ" {
	bloom create -n 100000 -p 0.01 --seed 7 --slice 0/4 s0.bf
	blocks=$(( $(json s0.bf 'd["whole_bits"]') / 512 ))
	if [ $((blocks % 7)) -ne 0 ]; then
		row 2 "" "bloom: s0.bf: cannot make a filter like it: its blocks do not divide into that many slices (make it with create --slices)" create --like s0.bf --slice 0/7 x.bf
	fi
	bloom create -n 100000 -p 0.01 --seed 7 --slice 1/4 s1.bf
	row 2 "" "bloom: s1.bf: slice differs from s0.bf's (1 here, 0 there)" merge s0.bf s1.bf
	bloom create -n 50000 -p 0.01 --seed 7 --slice 0/2 small.bf
	row 2 "" "bloom: small.bf: block count of the whole filter differs from s0.bf's ($(( $(json small.bf 'd["whole_bits"]') / 512 )) here, $blocks there)" merge s0.bf small.bf
	bloom create -n 100000 -p 0.01 --seed 8 --slice 0/2 seed8.bf
	row 2 "" "bloom: seed8.bf: seed differs from s0.bf's (8 here, 7 there)" merge s0.bf seed8.bf
	bloom create --grow -n 1000 --seed 7 g.bf
	row 2 "" "bloom: g.bf: cannot merge into s0.bf: a slice merges only with a fixed filter or another slice" merge s0.bf g.bf
	row 2 "" "bloom: s0.bf: cannot merge into g.bf: a slice merges only with a fixed filter or another slice" merge g.bf s0.bf
}

@test "--slice auto: the slice from the task index of Slurm, Kubernetes, parallel-ssh or BLOOM_SLICE" {
	unset_tasks
	bloom create -n 100000 --seed 3 --slices 4 whole.bf
	for i in 0 1 2 3; do bloom create --like whole.bf --slice $i/4 like$i.bf; done
	# A Slurm array 4-7 is slices 0 to 3.
	SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 bloom create -n 100000 --seed 3 --slices 4 --slice auto a.bf
	[ "$(timeless a.bf)" = "$(timeless like1.bf)" ]
	SLURM_ARRAY_TASK_ID=2 bloom create -n 100000 --seed 3 --slices 4 --slice auto b.bf
	[ "$(timeless b.bf)" = "$(timeless like2.bf)" ]
	JOB_COMPLETION_INDEX=3 bloom create --like whole.bf --slices 4 --slice auto c.bf
	[ "$(timeless c.bf)" = "$(timeless like3.bf)" ]
	# A slice template gives the count.
	PSSH_NODENUM=0 bloom create --like c.bf --slice auto d.bf
	[ "$(timeless d.bf)" = "$(timeless like0.bf)" ]
	BLOOM_SLICE=1 bloom create --like c.bf --slice auto e.bf
	[ "$(timeless e.bf)" = "$(timeless like1.bf)" ]
	# Slurm's comes first.
	SLURM_ARRAY_TASK_ID=2 BLOOM_SLICE=1 bloom create --like c.bf --slice auto f.bf
	[ "$(timeless f.bf)" = "$(timeless like2.bf)" ]
}

@test "--slice auto: errors" {
	unset_tasks
	bloom create -n 100000 --seed 3 --slices 4 whole.bf
	bloom create --like whole.bf --slice 1/4 s1.bf
	row 2 "" "bloom: x.bf: --slice auto: no task index: none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, PSSH_NODENUM or BLOOM_SLICE is set" create --like s1.bf --slice auto x.bf
	BLOOM_SLICE=4 row 2 "" "bloom: x.bf: --slice auto: task 4 (BLOOM_SLICE) is not one of the 4 slices (0 to 3)" create --like s1.bf --slice auto x.bf
	SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=5 row 2 "" "bloom: x.bf: --slice auto: task 4 (SLURM_ARRAY_TASK_ID 9 less SLURM_ARRAY_TASK_MIN 5) is not one of the 4 slices (0 to 3)" create -n 100000 --seed 3 --slices 4 --slice auto x.bf
	SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=2 row 2 "" "bloom: x.bf: --slice auto: SLURM_ARRAY_TASK_MIN is '2', not a task index up to SLURM_ARRAY_TASK_ID's 1" create --like s1.bf --slice auto x.bf
	JOB_COMPLETION_INDEX=one row 2 "" "bloom: x.bf: --slice auto: JOB_COMPLETION_INDEX is 'one', not a task index" create --like s1.bf --slice auto x.bf
	BLOOM_SLICE=0 row 2 "" "bloom: x.bf: --slice auto: whole.bf is not a slice: say how many slices with --slices" create --like whole.bf --slice auto x.bf
	BLOOM_SLICE=0 run -2 bloom create -n 1000 --seed 1 --slice auto x.bf
	[ "${lines[0]}" = "bloom: create: --slice auto needs --slices n (or --like a slice)" ]
	run -2 bloom create --like whole.bf --slices 4 x.bf
	[ "${lines[0]}" = "bloom: create: --slices with --like needs --slice" ]
	run -2 bloom create --slice 5 x.bf
	[ "${lines[0]}" = "bloom: create: --slice takes i/n with 0 <= i < n, such as 0/4, or auto, not '5'" ]
	[ ! -e x.bf ]
}

@test "merge: overlapping shards of an exactly sized filter are not past its capacity" {
	keys 200000 >in
	for seed in 3 4 5 6 7; do
		rm -f t.bf a.bf b.bf serial.bf
		bloom create -n 200000 -p 0.01 --seed $seed t.bf
		bloom create --like t.bf a.bf
		bloom create --like t.bf b.bf
		bloom create --like t.bf serial.bf
		bloom add serial.bf in
		head -n 120000 in | bloom add a.bf
		tail -n 120000 in | bloom add b.bf
		run -0 --separate-stderr bloom merge t.bf a.bf b.bf
		[ "$output" = "" ] && [ "$stderr" = "" ]
		[ "$(bits t.bf)" = "$(bits serial.bf)" ]
		[ "$(json t.bf 'd["over_capacity"], d["inserted"] <= 200000')" = "(False, True)" ]
	done
}

@test "merge: shards past the capacity still say so" {
	keys 230000 >in
	bloom create -n 200000 -p 0.01 --seed 3 t.bf
	bloom create --like t.bf a.bf
	bloom create --like t.bf b.bf
	head -n 120000 in | bloom add a.bf
	tail -n 120000 in | bloom add b.bf
	run -0 --separate-stderr bloom merge t.bf a.bf b.bf
	[[ "$stderr" == "bloom: t.bf: warning: past its capacity of 200000 items; estimated false-positive rate now "*" (target 0.01); a filter made with --grow grows instead" ]]
	[ "$(json t.bf 'd["over_capacity"], d["inserted"] > 220000')" = "(True, True)" ]
}

@test "a router for a small sliced filter: create names the slice count that divides it, and that router routes as the slices" {
	opts="-n 1000000 -p 0.01 --seed 42 --slices 2"
	# shellcheck disable=SC2086 # opts are words
	run -2 --separate-stderr bloom create $opts --slice 0/5040 router.bf
	[ "$stderr" = "bloom: router.bf: the whole filter's 19440 blocks do not divide into 5040 slices; of the counts --slices rounds for, the most they divide into is 240 (--slice 0/240)" ]
	[ ! -e router.bf ]
	# shellcheck disable=SC2086
	bloom create $opts --slice 0/240 router.bf
	# shellcheck disable=SC2086
	bloom create $opts --slice 0/2 s0.bf
	keys 5000 >in
	bloom route --slices 2 router.bf in >via-router
	bloom route s0.bf in >via-slice
	cmp via-router via-slice
}
