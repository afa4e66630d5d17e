#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# bloom fold: a filter made smaller by ORing groups of its blocks, exactly
# the filter that fewer blocks would have made of the same keys.

bats_require_minimum_version 1.5.0
load helpers

# The bit arrays of v2 filter FILE, from its first segment on.
bits_of() {
	tail -c +$(($(json "$1" '4096 if d["mode"] != "grow" else 8192') + 1)) "$1"
}

@test "fold --by n is the filter made with 1/n of the blocks, bit for bit and answer for answer" {
	bloom create --seed 9 -s 128K -k 7 f.bf
	keys 10000 >in
	{ keys 10000; keys 40000 other-; } >probe
	bloom add f.bf in
	before=$(cksum <f.bf)
	for n in 2 4 8 16; do
		run -0 --separate-stderr bloom fold --by "$n" f.bf g$n.bf
		[ "$output" = "" ]
		bloom create --seed 9 -s $((128 / n))K -k 7 h$n.bf
		bloom add h$n.bf in
		cmp <(bits_of g$n.bf) <(bits_of h$n.bf)
		[ "$(json g$n.bf 'd["bits"]')" -eq $((128 * 1024 * 8 / n)) ]
		bloom check g$n.bf probe >g.out || true
		bloom check h$n.bf probe >h.out || true
		cmp g.out h.out
		# No key added is lost.
		run -1 bloom check -v g$n.bf in
		[ "$output" = "" ]
	done
	# More false positives as it shrinks, the same keys found.
	[ "$(bloom check -c g2.bf probe)" -lt "$(bloom check -c g16.bf probe)" ]
	# The input is left as it was.
	[ "$(cksum <f.bf)" = "$before" ]
}

@test "fold without --by: as small as the target rate allows at the count" {
	bloom create --seed 3 -n 100000 -p 0.01 f.bf
	keys 5000 >in
	bloom add f.bf in
	run -0 --separate-stderr bloom fold f.bf g.bf
	[ "$stderr" = "" ]
	run -1 bloom check -v g.bf in
	[ "$output" = "" ]
	json_ok() {
		bloom stats --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["segments"][0]
assert s["inserted"] == '"$(json f.bf 'd["inserted"]')"', s
assert s["capacity"] >= s["inserted"], s
assert not d["over_capacity"]
# At most twice what a filter sized for the count takes.
assert d["bits"] <= 2 * 9.6 * 5000 * 1.1, d["bits"]
print(d["bits"])'
	}
	json_ok g.bf
	# Folding again changes nothing: it is as small as it goes.
	bloom fold g.bf g2.bf
	[ "$(json g2.bf 'd["bits"]')" = "$(json g.bf 'd["bits"]')" ]
	# Still at the rate: at most about 1 % of absent keys found.
	[ "$(bloom check -c g.bf <(keys 20000 absent-))" -le 300 ]
}

@test "fold of a grown filter: each segment folded, every key kept, fewer bits per key" {
	bloom create --grow --seed 5 -n 1000 -p 0.01 f.bf
	keys 20000 >in
	bloom add f.bf in
	run -0 --separate-stderr bloom fold f.bf g.bf
	[ "$stderr" = "" ]
	run -1 bloom check -v g.bf in
	[ "$output" = "" ]
	[ "$(json g.bf 'd["mode"]')" = grow ]
	[ "$(json g.bf 'len(d["segments"])')" = "$(json f.bf 'len(d["segments"])')" ]
	bloom stats --json f.bf >f.json
	bloom stats --json g.bf >g.json
	run -0 python3 -c '
import json
f, g = json.load(open("f.json")), json.load(open("g.json"))
for s, t in zip(g["segments"], f["segments"]):
	assert s["bits"] <= t["bits"] and t["bits"] % s["bits"] == 0, (s, t)
	assert s["inserted"] == t["inserted"]
	assert s["capacity"] >= s["inserted"], s
print(f["bits"] / 20000, g["bits"] / 20000)
assert g["bits"] < f["bits"]
assert g["estimated_fpr"] <= 0.01, g["estimated_fpr"]
'
	echo "bits per key before and after: $output"
	# It grows on from there.
	keys 30000 | bloom add g.bf
	run -1 bloom check -v g.bf <(keys 30000)
	[ "$output" = "" ]
}

@test "the filter add creates folds to what its count needs, its first segment too" {
	# add makes a first segment for 8 M keys, most of a filter that
	# stays small: its block count is one fold divides.
	keys 100000 >in
	bloom add f.bf in 2>/dev/null
	[ "$(json f.bf 'd["segments"][0]["capacity"]')" = 8000000 ]
	[ "$(json f.bf 'd["bits"] // 512 % 1024')" = 0 ]
	run -0 --separate-stderr bloom fold f.bf g.bf
	[ "$stderr" = "" ]
	run -1 bloom check -v g.bf in
	[ "$output" = "" ]
	bloom stats --json f.bf >f.json
	bloom stats --json g.bf >g.json
	run -0 python3 -c '
import json
f, g = json.load(open("f.json")), json.load(open("g.json"))
s, t = g["segments"][0], f["segments"][0]
assert t["bits"] % s["bits"] == 0, (s, t)
assert s["inserted"] == t["inserted"] == 100000, (s, t)
# At most twice the bits of a filter sized for 100 000 keys at the
# segment rate of 0.001 (14.4 per key), 64 times fewer than before.
assert s["bits"] <= 2 * 14.4 * 100000 * 1.1, s["bits"]
assert t["bits"] // s["bits"] >= 32, (s, t)
assert g["estimated_fpr"] <= 0.001, g["estimated_fpr"]
print(t["bits"], s["bits"])
'
	echo "bits before and after: $output"
}

@test "fold of a v1 file writes the v2 filter of half the blocks" {
	need_xxhsum
	make_v1 v.bf 1000 0.01 7 $((64 * 512)) 7
	keys 800 >in
	bloom add v.bf in
	run -0 bloom fold --by 2 v.bf g.bf
	bloom create --seed 7 -s 2K -k 7 h.bf
	bloom add h.bf in
	cmp <(bits_of g.bf) <(bits_of h.bf)
	[ "$(json g.bf 'd["format"]')" = 2 ]
	[ "$(head -c 8 v.bf | od -An -c | tr -d ' ')" = "211BLOOM\r\n" ]
}

@test "fold refuses what it cannot fold exactly, and leaves everything as it was" {
	bloom create --generations 3 -n 1000 w.bf
	row 2 "" "bloom: w.bf: cannot fold a window: its generations rotate in place (only fixed and growable filters fold)" fold w.bf out.bf
	bloom create --seed 1 -s 64K --slices 4 whole.bf
	bloom create --like whole.bf --slice 1/4 s.bf
	row 2 "" "bloom: s.bf: cannot fold a slice: fold the whole filter, then cut it" fold s.bf out.bf
	bloom create --seed 1 -s 64K f.bf
	row 2 "" "bloom: f.bf: cannot fold by 3: segment 0 has 1024 blocks, not a multiple of 3" fold --by 3 f.bf out.bf
	row 2 "" "bloom: f.bf: cannot fold a filter into itself" fold -f f.bf f.bf
	[ ! -e out.bf ]
	echo x >out.bf
	row 2 "" "bloom: out.bf: file exists (use -f to replace it)" fold f.bf out.bf
	[ "$(cat out.bf)" = x ]
	bloom create -s 4K old.bf
	bloom fold -f f.bf old.bf
	[ "$(json old.bf 'd["bits"]')" -lt $((64 * 1024 * 8)) ]
	row 2 "" "bloom: nope.bf: No such file or directory" fold nope.bf out2.bf
	[ ! -e out2.bf ]
}

@test "fold --by past the rate: made, with a warning" {
	bloom create --seed 1 -n 1000 -s 8K f.bf
	keys 1000 | bloom add f.bf
	run -0 --separate-stderr bloom fold --by 8 f.bf g.bf
	[[ $stderr == "bloom: g.bf: warning: segment 0 holds "*" items, past the "*" its 16 blocks hold at fpr "* ]]
	run -1 bloom check -v g.bf <(keys 1000)
	[ "$output" = "" ]
}

@test "fold: usage" {
	run -2 bloom fold
	[ "${lines[0]}" = "bloom: fold: no filter named" ]
	[ "${lines[1]}" = "usage: bloom fold [-f] [--by n] filter output" ]
	run -2 bloom fold f.bf
	[ "${lines[0]}" = "bloom: fold: no output named" ]
	run -2 bloom fold a b c
	[ "${lines[0]}" = "bloom: fold: one filter and one output" ]
	run -2 bloom fold --by 0 a b
	[ "${lines[0]}" = "bloom: fold: --by takes a positive whole number, not '0'" ]
	run -0 bloom fold --help
	[[ $output == *"--by n"* ]]
}
