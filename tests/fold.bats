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
	# It is as small as it goes: folding again says so, writing nothing.
	run -2 --separate-stderr bloom fold g.bf g2.bf
	[ "$stderr" = "bloom: g.bf: no segment folds and keeps its rate with the keys it holds: nothing written (--by n folds past the rate)" ]
	[ ! -e g2.bf ]
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
	bloom create --seed 1 -s 64K --slices 4 whole.bf
	bloom create --like whole.bf --slice 1/4 s.bf
	row 2 "" "bloom: s.bf: cannot fold a slice without --by: fold every slice of the filter by the same --by n" fold s.bf out.bf
	row 2 "" "bloom: s.bf: cannot fold by 3: segment 0 has 256 blocks, not a multiple of 3" fold --by 3 s.bf out.bf
	bloom create --seed 1 -n 1000 --generations 3 --layout apbf a.bf
	groups=$(( $(json a.bf 'd["bits"]') / 1024 ))
	row 2 "" "bloom: a.bf: cannot fold by 64: the window has $groups groups of 2 blocks, not a multiple of 64" fold --by 64 a.bf out.bf
	# A window whose generation grew past its sizing: the extra
	# segment's place is its own; folded once that generation expired.
	bloom create --seed 1 -n 100 --generations 2 --layout blocked g.bf
	keys 1000 | bloom add g.bf 2>/dev/null
	row 2 "" "bloom: g.bf: cannot fold a window whose generations grew past their sizing until those generations expire (bloom rotate)" fold g.bf out.bf
	bloom rotate g.bf
	bloom rotate g.bf
	run -0 bloom fold g.bf out.bf
	[ "$(json out.bf 'd["segments"].__len__()')" = 2 ]
	rm out.bf
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

# window_fold LAYOUT: a window of LAYOUT folded by 2 and by default keeps
# every live line, its generation and its stamps, and rotates on as the
# window it was: the lines of a generation that expires are forgotten.
window_fold() {
	bloom create --seed 5 -n 40000 -p 0.001 --generations 3 --layout "$1" w.bf
	keys 3000 old- | bloom add w.bf
	bloom rotate w.bf
	keys 3000 new- | bloom add w.bf
	for by in "--by 2" ""; do
		rm -f f.bf
		run -0 --separate-stderr bloom fold $by w.bf f.bf
		[ "$output" = "" ] && [ "$stderr" = "" ]
		[ "$(json f.bf 'd["bits"] * 2 <= '"$(json w.bf 'd["bits"]')")" = True ]
		[ "$(json f.bf 'd["generation"]')" = 1 ]
		[ "$(json f.bf '[s["generation"] for s in d["segments"]]')" = \
		    "$(json w.bf '[s["generation"] for s in d["segments"]]')" ]
		[ "$(json f.bf 'd["inserted"]')" = 6000 ]
		run -1 bloom check -v f.bf <(keys 3000 old-; keys 3000 new-)
		[ "$output" = "" ]
		# Lines added to the folded window stay while it rotates on,
		# and the oldest generation expires as it would have.
		keys 3000 more- | bloom add f.bf
		bloom rotate f.bf
		bloom rotate f.bf
		run -1 bloom check -v f.bf <(keys 3000 new-; keys 3000 more-)
		[ "$output" = "" ]
		[ "$(json f.bf '[s["live"] for s in d["segments"][:3]].count(True)')" = 3 ]
		[ "$(bloom check -c f.bf <(keys 3000 old-))" -lt 300 ]
	done
}

@test "fold of a window, blocked layout: generations folded alike, every live line kept" {
	window_fold blocked
}

@test "fold of a window, age-partitioned layout: its groups folded, every live line kept" {
	window_fold apbf
}

@test "fold of slices by n: each the same slice of the whole filter folded by n" {
	bloom create --seed 7 -n 20000 -p 0.001 --slices 4 whole.bf
	keys 8000 >in
	bloom add whole.bf in
	bloom fold --by 2 whole.bf wf.bf
	# Not i: bats's run sets it.
	for sl in 0 1 2 3; do
		bloom create --like whole.bf --slice $sl/4 s$sl.bf
		bloom add --pass-over s$sl.bf in 2>/dev/null
		run -0 --separate-stderr bloom fold --by 2 s$sl.bf f$sl.bf
		[ "$stderr" = "" ]
		# The folded whole filter cut into the same slice, bit for bit.
		bloom create --like wf.bf --slice $sl/4 c$sl.bf
		bloom merge c$sl.bf wf.bf
		cmp <(tail -c +4097 c$sl.bf) <(tail -c +4097 f$sl.bf)
		[ "$(json f$sl.bf 'd["whole_bits"] * 2')" = "$(json whole.bf 'd["bits"]')" ]
	done
	# Together they answer for every line, and route as the whole does.
	run -1 bloom check -v -F f0.bf -F f1.bf -F f2.bf -F f3.bf in
	[ "$output" = "" ]
	cmp <(bloom route --slices 4 wf.bf in) <(bloom route f2.bf in)
}

@test "fold that cannot shrink a filter says so, exits 2 and writes nothing" {
	bloom create --seed 1 -n 1000 full.bf
	keys 1000 | bloom add full.bf
	row 2 "" "bloom: full.bf: no segment folds and keeps its rate with the keys it holds: nothing written (--by n folds past the rate)" fold full.bf out.bf
	[ ! -e out.bf ]
	# A grown filter whose every segment is full, likewise.
	bloom create --grow --seed 1 -n 1000 grown.bf
	keys 3000 | bloom add grown.bf
	run -2 --separate-stderr bloom fold grown.bf out.bf
	[ "$stderr" = "bloom: grown.bf: no segment folds and keeps its rate with the keys it holds: nothing written (--by n folds past the rate)" ]
	[ ! -e out.bf ]
	# --by 1 asks for the copy.
	bloom fold --by 1 full.bf out.bf
	[ "$(bits out.bf)" = "$(bits full.bf)" ]
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
