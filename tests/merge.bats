#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# merge, create --like, slices and route: filters built in parts, on one
# machine with GNU parallel --pipe and across ssh hosts with parallel -S,
# give exactly the filter one serial add would.

bats_require_minimum_version 1.5.0
load helpers

@test "create --like: an empty filter with the template's seed, geometry and mode" {
	bloom create -n 5000 -p 0.001 --seed 77 t.bf
	keys 100 | bloom add t.bf
	bloom create --like t.bf l.bf
	[ "$(stat -c %s l.bf)" -eq "$(stat -c %s t.bf)" ]
	# The checksummed header is the template's, creation time included;
	# the counters and the bits are empty.
	cmp -n 136 t.bf l.bf
	[ "$(json l.bf 'd["inserted"], d["bits_set"], d["seed"], d["hashes"]')" = \
		"(0, 0, '77', $(json t.bf 'd["hashes"]'))" ]
	# Again: the filter asked for is there, untouched.
	before=$(cksum <l.bf)
	row 0 "" "" create --like t.bf l.bf
	[ "$(cksum <l.bf)" = "$before" ]
	bloom create -f --like t.bf l.bf
	run -2 bloom create --like t.bf -n 10 m.bf
	[[ "$output" =~ "--like takes everything from the template" ]]
	run -2 bloom create --slice 1/2 m.bf
	[[ "$output" =~ "--slice without --like needs --seed, the same for every slice" ]]
	run -2 bloom create --like missing.bf m.bf
	[ "$output" = "bloom: missing.bf: No such file or directory" ]
}

@test "merge: the OR of two halves is the filter of the whole, bit for bit" {
	bloom create -n 100000 -p 0.01 --seed 5 whole.bf
	bloom create --like whole.bf a.bf
	bloom create --like whole.bf b.bf
	keys 60000 >in
	head -n 30000 in | bloom add a.bf
	tail -n +30001 in | bloom add b.bf
	bloom add whole.bf in
	bloom create --like whole.bf m.bf
	run -0 --separate-stderr bloom merge m.bf a.bf b.bf
	[ "$output" = "" ] && [ "$stderr" = "" ]
	[ "$(bits m.bf)" = "$(bits whole.bf)" ]
	# Counters cannot be summed (parts may share keys): the merged one
	# is what the fill says, within a percent of the keys.
	[ "$(json m.bf 'd["inserted"] == d["estimated_items"]')" = True ]
	[ "$(json m.bf 'abs(d["inserted"] - 60000) < 600')" = True ]
	run -1 bloom check -v m.bf in
	[ "$output" = "" ]
}

@test "merge: every incompatible field is named with both values, and the target is left untouched" {
	bloom create -n 1000 -p 0.01 --seed 1 a.bf
	keys 10 | bloom add a.bf
	cp a.bf before
	bloom create -n 1000 -p 0.01 --seed 2 seed.bf
	bloom create -n 2000 -p 0.01 --seed 1 size.bf
	bloom create -s 10K -k 3 --seed 1 k3.bf
	bloom create -s 10K -k 4 --seed 1 k4.bf
	bloom create --grow -n 1000 -p 0.01 --seed 1 grow.bf
	bloom create --like a.bf ok.bf
	keys 10 x | bloom add ok.bf
	row 2 "" "bloom: seed.bf: seed differs from a.bf's (2 here, 1 there)" merge a.bf ok.bf seed.bf
	row 2 "" "bloom: size.bf: block count of segment 0 differs from a.bf's ($(json size.bf 'd["bits"] // 512') here, $(json a.bf 'd["bits"] // 512') there)" merge a.bf size.bf
	row 2 "" "bloom: k4.bf: hash count of segment 0 differs from k3.bf's (4 here, 3 there)" merge k3.bf k4.bf
	row 2 "" "bloom: grow.bf: mode differs from a.bf's (grow here, fixed there)" merge a.bf grow.bf
	row 2 "" "bloom: a.bf: cannot merge a filter into itself" merge a.bf ok.bf a.bf
	row 2 "" "bloom: nope.bf: No such file or directory" merge a.bf ok.bf nope.bf
	row 2 "" "bloom: merge: no source named
usage: bloom merge filter source ..." merge a.bf
	# ok.bf came first and was fine: still nothing was written.
	cmp a.bf before
	bloom create --grow -n 1000 -p 0.01 --seed 1 g1.bf
	bloom create --grow -n 1000 -p 0.02 --seed 1 g2.bf
	bloom create --grow -n 999 -p 0.01 --seed 1 g3.bf
	bloom create --grow --growth 3 -n 1000 -p 0.01 --seed 1 g4.bf
	row 2 "" "bloom: g2.bf: target rate differs from g1.bf's (0.02 here, 0.01 there)" merge g1.bf g2.bf
	row 2 "" "bloom: g3.bf: first capacity differs from g1.bf's (999 here, 1000 there)" merge g1.bf g3.bf
	row 2 "" "bloom: g4.bf: growth factor differs from g1.bf's (3 here, 2 there)" merge g1.bf g4.bf
	bloom create --generations 3 -n 1000 --seed 1 w1.bf
	bloom create --generations 4 -n 1000 --seed 1 w2.bf
	row 2 "" "bloom: w2.bf: generations differs from w1.bf's (4 here, 3 there)" merge w1.bf w2.bf
	bloom create --like w1.bf w3.bf
	bloom rotate w3.bf
	row 2 "" "bloom: w3.bf: current generation differs from w1.bf's (1 here, 0 there)" merge w1.bf w3.bf
	bloom create --generations 3 -n 1000 --seed 1 w4.bf
	run -2 bloom merge w1.bf w4.bf
	[[ "$output" =~ ^"bloom: w4.bf: creation time (ms) differs from w1.bf's (" ]]
}

@test "merge: windows line up generation by generation" {
	bloom create --generations 3 -n 30000 -p 0.01 --seed 4 w.bf
	bloom create --like w.bf a.bf
	bloom create --like w.bf b.bf
	keys 1000 old- | bloom add a.bf
	bloom rotate a.bf
	bloom rotate b.bf
	bloom rotate w.bf
	keys 1000 new- | bloom add b.bf
	bloom merge w.bf a.bf b.bf
	run -1 bloom check -v w.bf <(keys 1000 old-; keys 1000 new-)
	[ "$output" = "" ]
	# The old keys are in the older generation: two rotations more
	# forget them, and keep the new ones.
	bloom rotate w.bf
	bloom rotate w.bf
	[ "$(bloom check -c w.bf <(keys 1000 old-) || true)" -lt 50 ]
	run -0 bloom check -c w.bf <(keys 1000 new-)
	[ "$output" = 1000 ]
}

@test "merge: age-partitioned windows at the same generation: the array of both adds, bit for bit" {
	bloom create --generations 3 -n 30000 -p 0.01 --seed 4 --layout apbf w.bf
	bloom create --like w.bf a.bf
	bloom create --like w.bf b.bf
	keys 2000 a0- | bloom add a.bf
	keys 2000 b0- | bloom add b.bf
	keys 2000 a0- | bloom add w.bf
	keys 2000 b0- | bloom add w.bf
	for f in a b w; do bloom rotate $f.bf; done
	keys 2000 a1- | bloom add a.bf
	keys 2000 b1- | bloom add b.bf
	keys 2000 a1- | bloom add w.bf
	keys 2000 b1- | bloom add w.bf
	run -0 --separate-stderr bloom merge a.bf b.bf
	[ "$output" = "" ] && [ "$stderr" = "" ]
	# The array after the table, bit for bit the one of all the adds.
	cmp <(tail -c +4097 a.bf) <(tail -c +4097 w.bf)
	run -1 bloom check -v a.bf <(keys 2000 a0-; keys 2000 b0-; keys 2000 a1-; keys 2000 b1-)
	[ "$output" = "" ]
	[ "$(json a.bf 'd["segments"][1]["inserted"]')" = 2000 ]
	# As windows do, they merge only at the same generation.
	bloom rotate a.bf
	row 2 "" "bloom: b.bf: current generation differs from a.bf's (1 here, 2 there)" merge a.bf b.bf
	# And with the same layout.
	bloom create --generations 3 --layout blocked -n 30000 -p 0.01 --seed 4 c.bf
	row 2 "" "bloom: c.bf: layout differs from a.bf's (blocked here, apbf there)" merge a.bf c.bf
}

@test "merge: a growable target gains the segments it lacks" {
	bloom create --grow -n 1000 -p 0.01 --seed 8 t.bf
	bloom create --like t.bf a.bf
	bloom create --like t.bf b.bf
	keys 6000 a- | bloom add a.bf
	keys 500 b- | bloom add b.bf
	[ "$(json a.bf 'len(d["segments"])')" = 3 ]
	bloom merge t.bf b.bf a.bf
	[ "$(json t.bf 'len(d["segments"])')" = 3 ]
	[ "$(json t.bf '[s["bits"] for s in d["segments"]]')" = \
		"$(json a.bf '[s["bits"] for s in d["segments"]]')" ]
	run -1 bloom check -v t.bf <(keys 6000 a-; keys 500 b-)
	[ "$output" = "" ]
}

@test "merge: while other processes add to the target, no key is lost" {
	bloom create -n 400000 -p 0.01 --seed 3 t.bf
	bloom create --like t.bf s.bf
	keys 200000 s- | bloom add s.bf
	keys 200000 t- >tkeys
	bloom add t.bf tkeys &
	bloom merge t.bf s.bf
	wait
	run -1 bloom check -v t.bf <(keys 200000 s-; cat tkeys)
	[ "$output" = "" ]
}

@test "parallel --pipe: four shards made with --like and merged are the serial filter" {
	command -v parallel >/dev/null || skip "needs GNU parallel (apt-get install parallel): .ci/run installs it"
	keys 400000 url- >in
	bloom create -n 400000 -p 0.01 --seed 9 serial.bf
	bloom add serial.bf in
	bloom create --like serial.bf whole.bf
	for i in 1 2 3 4; do bloom create --like serial.bf shard$i.bf; done
	# Job slot {%} runs one job at a time: each slot has its shard.
	parallel --will-cite --pipe --block 512k -j4 "bloom add shard{%}.bf" <in
	bloom merge whole.bf shard1.bf shard2.bf shard3.bf shard4.bf
	[ "$(bits whole.bf)" = "$(bits serial.bf)" ]
}

@test "slices: route, add --new on each slice, join: the serial filter and its new lines" {
	keys 100000 >in
	printf '%s\n' "$(keys 20000)" >>in	# repeats
	bloom create -n 100000 -p 0.01 --slices 4 --seed 6 whole.bf
	[ $(( $(json whole.bf 'd["bits"]') / 512 % 4 )) -eq 0 ]
	for i in 0 1 2 3; do bloom create --like whole.bf --slice $i/4 s$i.bf; done
	[ "$(json s2.bf 'd["bits"] * 4')" = "$(json whole.bf 'd["bits"]')" ]
	# A slice is sized for its share of the keys.
	[ "$(json s2.bf 'd["capacity"]')" = 25000 ]
	bloom route --slices 4 -o part. whole.bf in
	[ "$(cat part.0 part.1 part.2 part.3 | wc -l)" -eq 120000 ]
	for n in 0 1 2 3; do
		bloom add --new s$n.bf part.$n >new$n 2>err$n
		# A slice that was routed more than its share says so once,
		# as a fixed filter past its capacity does; the others are
		# silent.
		if [ "$(json s$n.bf 'd["inserted"] > d["capacity"]')" = True ]; then
			[ "$(wc -l <err$n)" -eq 1 ]
			[[ $(cat err$n) == "bloom: s$n.bf: warning: past its capacity of 25000 items; estimated false-positive rate now "*" (target 0.01); a filter made with --grow grows instead" ]]
		else
			[ ! -s err$n ]
		fi
	done
	# With this seed, one slice went past its share: slice 2.
	[ "$(cat err0 err1 err2 err3 | wc -l)" -eq 1 ] && [ -s err2 ]
	bloom create --like whole.bf serial.bf
	bloom add --new serial.bf in >serial.new
	[ "$(cat new0 new1 new2 new3 | sort)" = "$(sort serial.new)" ]
	bloom merge whole.bf s0.bf s1.bf s2.bf s3.bf
	[ "$(bits whole.bf)" = "$(bits serial.bf)" ]
	# A slice routes by itself, and agrees with the whole.
	bloom route s1.bf in | awk -F'\t' '$1 == 1 { print $2 }' >via-slice
	cmp via-slice part.1
}

@test "slices: a slice passes over the lines of other slices, and says how many" {
	bloom create -n 10000 --slices 2 --seed 1 whole.bf
	bloom create --like whole.bf --slice 0/2 s0.bf
	keys 1000 >in
	bloom route --slices 2 -o p. whole.bf in
	n1=$(wc -l <p.1)
	# add loses them to the stage: an error, unless asked for.
	run -2 --separate-stderr bloom add --new s0.bf in
	[ "$output" = "$(cat p.0)" ]
	[ "$stderr" = "bloom: s0.bf: $n1 lines of other slices of the filter not added (bloom route splits a stream by slice; --pass-over passes them over)" ]
	bloom create -f --like whole.bf --slice 0/2 s0.bf
	run -0 --separate-stderr bloom add --new --pass-over s0.bf in
	[ "$output" = "$(cat p.0)" ]
	[ "$stderr" = "bloom: s0.bf: $n1 lines belong to other slices of the filter and were passed over (bloom route splits a stream by slice)" ]
	head -n 1 p.1 >one
	run -1 --separate-stderr bloom check s0.bf one
	[ "$output" = "" ]
	[ "$stderr" = "bloom: s0.bf: 1 line belongs to other slices of the filter and was passed over (bloom route splits a stream by slice)" ]
	run -0 --separate-stderr bloom check s0.bf in
	[ "$output" = "$(cat p.0)" ]
	run -1 --separate-stderr bloom check -v s0.bf in
	[ "$output" = "" ]
	run -1 bloom check -v s0.bf p.1
	run -0 bloom check -c s0.bf p.0
	[ "$output" = "$(wc -l <p.0)" ]
}

@test "route: errors" {
	bloom create -n 10000 --seed 1 odd.bf
	bloom create --grow -n 1000 g.bf
	row 2 "" "bloom: odd.bf: not a slice: say how many slices with --slices" route odd.bf
	blocks=$(json odd.bf 'd["bits"] // 512')
	if [ $((blocks % 7)) -ne 0 ]; then
		row 2 "" "bloom: odd.bf: cannot be cut into 7 slices: its blocks do not divide into that many slices (make it with create --slices)" route --slices 7 odd.bf
	fi
	row 2 "" "bloom: g.bf: cannot be cut into 2 slices: only a fixed filter can be sliced" route --slices 2 g.bf
	run -2 bloom create --like g.bf --slice 0/2 s.bf
	[ "$output" = "bloom: g.bf: cannot make a filter like it: only a fixed filter can be sliced" ]
}

@test "route -o: an output that is an input is refused before any is truncated" {
	bloom create -n 1000 --slices 4 --seed 1 whole.bf
	keys 100 >in
	echo keep >part.0
	cp in part.2
	row 2 "" "bloom: part.2: is also an input: refusing to truncate it" route --slices 4 -o part. whole.bf part.2
	[ "$(cat part.0)" = keep ]
	cmp in part.2
	row 2 "" "bloom: part.2: is also an input: refusing to truncate it" route --slices 4 -o part. whole.bf - <part.2
	cmp in part.2
	ln -s in part.3
	run --separate-stderr bloom route --slices 4 -o part. whole.bf <in
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: part.3: is also an input: refusing to truncate it" ]
	cmp in part.2
	# Nor is the filter routed by: one named as a part is kept whole.
	cp whole.bf part.1
	cp whole.bf kept.bf
	row 2 "" "bloom: part.1: is also the filter: refusing to truncate it" route --slices 4 -o part. part.1 in
	cmp kept.bf part.1
	[ "$(cat part.0)" = keep ]
	rm part.1
	# Routed again from a copy, the parts are rewritten whole.
	rm part.3
	bloom route --slices 4 -o part. whole.bf in
	[ "$(cat part.0 part.1 part.2 part.3 | sort)" = "$(sort in)" ]
}

@test "route -o names the output that cannot be written" {
	bloom create -n 1000 --slices 4 --seed 1 whole.bf
	keys 100 >in
	ln -s /dev/full part.1
	row 2 "" "bloom: part.1: write error: No space left on device" route --slices 4 -o part. whole.bf in
}

@test "route | parallel --pipe --bin: each slice gets its own lines, on one machine" {
	command -v parallel >/dev/null || skip "needs GNU parallel (apt-get install parallel): .ci/run installs it"
	keys 50000 >in
	keys 10000 >>in
	bloom create -n 50000 --slices 4 --seed 2 whole.bf
	for i in 0 1 2 3; do bloom create --like whole.bf --slice $i/4 s$i.bf; done
	bloom create --like whole.bf serial.bf
	bloom add --new serial.bf in >serial.new
	# --bin sends slice i to job slot i + 1.
	bloom route --slices 4 whole.bf in |
		parallel --will-cite --pipe --bin '1 $_++' --colsep '\t' -j4 \
		    'cut -f2- | bloom add --new s$(({%} - 1)).bf' >new
	# The slices hold the serial filter's bits.
	bloom create --like whole.bf joined.bf
	bloom merge joined.bf s0.bf s1.bf s2.bf s3.bf
	[ "$(bits joined.bf)" = "$(bits serial.bf)" ]
	# parallel --bin reorders the lines of a slot, so which new lines
	# were false positives may differ: the new lines are distinct keys,
	# all but the false positives of the 50000.
	[ "$(sort new | uniq -d)" = "" ]
	[ "$(sort new | comm -23 - <(sort -u in))" = "" ]
	[ "$(wc -l <new)" -ge 49500 ] && [ "$(wc -l <serial.new)" -ge 49500 ]
}

# The multi-host test: two sshd "hosts" on the loopback, each with its own
# port, key and directory; tests/hosts starts them (.ci/run does too and
# says where in BLOOM_TEST_HOSTS).
teardown() {
	drop_claim_tables
	teardown_hosts
}

@test "two hosts: parallel -S builds and dedups a sliced filter, exactly as one serial add" {
	setup_multi_host
	keys 80000 u- >in
	keys 20000 u- >>in
	bloom create -n 80000 -p 0.01 --slices 2 --seed 12 "$PWD/whole.bf"
	# Each host keeps its slice in its own directory.
	i=0
	while read -r login; do
		ssh_cmd=${login#@*/}
		$ssh_cmd "$root/bloom create -f --like $PWD/whole.bf --slice $i/2 \$BLOOM_HOST_DIR/slice.bf" </dev/null
		i=$((i + 1))
	done <"$hosts/sshlogins"
	bloom route --slices 2 -o part. whole.bf in
	# Part i goes to host group hi, where slice i lives; the new lines
	# come back.
	parallel --will-cite --hostgroups --slf "$hosts/sshlogins" --wd ... \
	    --transferfile {} --return {}.new --cleanup \
	    "$root/bloom add --new \$BLOOM_HOST_DIR/slice.bf {} >{}.new" \
	    ::: part.0@h0 part.1@h1
	bloom create --like whole.bf serial.bf
	# Into a file: to a pipe, lines tested while others wait for the
	# reader may dodge a false positive their bits would have made.
	bloom add --new serial.bf in >serial.out
	sort serial.out >serial.new
	[ "$(sort part.0.new part.1.new)" = "$(cat serial.new)" ]
	# The slices, joined, are the serial filter.
	bloom merge whole.bf "$hosts/host0/slice.bf" "$hosts/host1/slice.bf"
	[ "$(bits whole.bf)" = "$(bits serial.bf)" ]
}

@test "merge: a source whose next segment the target cannot match is refused before the target grows" {
	need_xxhsum
	need_hashsum
	bloom create --grow -n 1000 --seed 8 t.bf
	cp t.bf s.bf
	keys 3000 | bloom add s.bf
	# Segment 1 of the source says 10 hashes where the target's header
	# plans 9; its entry's checksum (seed 1) made to match.
	put s.bf $((256 + 64 + 16)) "$(le 4 10)"
	put s.bf $((256 + 64 + 40)) "$(xxh3_at s.bf $((256 + 64)) 40 1)"
	run -0 bloom stats s.bf
	cp t.bf before
	row 2 "" "bloom: s.bf: hash count of segment 1 differs from t.bf's (10 here, 9 there)" merge t.bf s.bf
	cmp t.bf before
}
