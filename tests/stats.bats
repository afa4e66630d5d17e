#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of bloom stats: the key: value lines and the JSON object for filters
# of known content, the over-capacity warning, the values recomputed from
# the file's bits, read-only access, write errors and usage errors.

bats_require_minimum_version 1.5.0
load helpers

usage='usage: bloom stats [--json] filter'

# Makes f.bf, sized for 1000 items at 0.01 with seed 42, holding the first
# N keys; what add says on stderr is in add.err.  The hash is fixed, so its
# stats are known exactly.
filter_of() {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	keys "$1" | bloom add f.bf 2>add.err
}

# past_capacity LOW HIGH: add.err is the one line an add says when it takes
# f.bf past its capacity of 1000, with a rate from LOW to HIGH: the rate
# when it passed, which depends on how many lines the add had read then.
past_capacity() {
	local rate

	echo "add said: $(cat add.err)"
	[ "$(wc -l <add.err)" -eq 1 ]
	[[ $(cat add.err) == "bloom: f.bf: warning: past its capacity of 1000 items; estimated false-positive rate now "*" (target 0.01); a filter made with --grow grows instead" ]]
	rate=$(sed 's/.* rate now \([^ ]*\) .*/\1/' add.err)
	python3 -c "assert $1 <= $rate <= $2, $rate"
}

# Makes g.bf, growable from 1000 items at 0.01 with seed 42, grown to three
# segments by 5000 keys.
grown() {
	bloom create --grow -n 1000 -p 0.01 --seed 42 g.bf
	keys 5000 | bloom add g.bf
}

# Makes w.bf, of 3 generations rotated by hand for 2000 lines at 0.01 with
# seed 42: 500 keys, a rotation, then 300 more.
windowed() {
	bloom create --generations 3 --layout blocked -n 2000 -p 0.01 --seed 42 w.bf
	keys 500 | bloom add w.bf
	bloom rotate w.bf
	keys 300 more- | bloom add w.bf
}

# Runs the python3 program $1 with the JSON of stats --json FILE (f.bf
# unless $2) as d; an assert that fails says which.
json_check() {
	bloom stats --json "${2-f.bf}" >stats.json
	python3 -c '
import json, math, sys
d = json.load(open("stats.json"))
'"$1"
}

# Writes the output of the last run with each time replaced by TIME.
untimed() {
	printf '%s\n' "$output" |
	    sed -E 's/20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z/TIME/g'
}

# ---- Human form.

@test "stats of a filter holding 500 keys, line by line" {
	filter_of 500
	[ ! -s add.err ]
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: fixed
bytes: 5376 (5.2 KiB)
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 500
percent_of_capacity: 50.0
bits_set: 2949
fill: 0.287988
estimated_items: 500
estimated_fpr: 0.000242615
segments: 1" ]
}

@test "stats of an empty filter: nothing set, nothing estimated" {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: fixed
bytes: 5376 (5.2 KiB)
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 0
percent_of_capacity: 0.0
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0
segments: 1" ]
}

@test "stats warns when twice the capacity was added" {
	filter_of 2000
	# The add that took it past its capacity said so, once.
	past_capacity 0.008 0.136
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: fixed
bytes: 5376 (5.2 KiB)
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 1947
percent_of_capacity: 194.7
bits_set: 7593
fill: 0.741504
estimated_items: 1991
estimated_fpr: 0.135582
segments: 1
warning: over capacity: about 1991 items in a filter sized for 1000; false positives are above the target rate" ]
}

@test "stats and add never warn at exactly capacity, and always at twice it (6 seeds)" {
	local seed

	for seed in 1 2 3 4 5 6; do
		rm -f f.bf
		bloom create -n 1000 -p 0.01 --seed "$seed" f.bf
		run -0 --separate-stderr bloom add f.bf < <(keys 1000)
		echo "seed $seed, 1000 keys: add said '$stderr'"
		[ "$stderr" = "" ]
		run -0 --separate-stderr bloom stats f.bf
		echo "$output"
		[ "${lines[-1]}" = "segments: 1" ]
		[[ $output != *warning* ]]
		json_check 'assert d["over_capacity"] is False, d'
		# 1000 more keys: twice the capacity.
		run -0 --separate-stderr bloom add f.bf < <(keys 2000 | tail -n 1000)
		echo "seed $seed, 2000 keys: add said '$stderr'"
		[[ $stderr == "bloom: f.bf: warning: past its capacity of 1000 items; estimated false-positive rate now "*" (target 0.01); a filter made with --grow grows instead" ]]
		[ "${#stderr_lines[@]}" -eq 1 ]
		run -0 --separate-stderr bloom stats f.bf
		echo "$output"
		[[ ${lines[-1]} == "warning: over capacity: about "*" items in a filter sized for 1000; false positives are above the target rate" ]]
		json_check 'assert d["over_capacity"] is True, d'
	done
}

@test "just past capacity: add warns once; stats warns only when the rate is past the target" {
	# 1020 keys: past the capacity, but the rate is still within 0.01.
	filter_of 1020
	past_capacity 0.008 0.0096
	run -0 --separate-stderr bloom stats f.bf
	[ "$(printf '%s\n' "${lines[@]:11:7}")" = "inserted: 1020
percent_of_capacity: 102.0
bits_set: 5110
fill: 0.499023
estimated_items: 1017
estimated_fpr: 0.00957428
segments: 1" ]
	[ "${#lines[@]}" -eq 18 ]
	json_check 'assert d["over_capacity"] is False, d'
	# 30 keys more take the rate past 0.01: stats warns, the add does
	# not warn again.
	row 0 '' '' add f.bf < <(keys 1050)
	run -0 --separate-stderr bloom stats f.bf
	[ "${lines[12]}" = "percent_of_capacity: 105.0" ]
	[ "${lines[15]}" = "estimated_items: 1045" ]
	[ "${lines[16]}" = "estimated_fpr: 0.0108082" ]
	[ "${#lines[@]}" -eq 19 ]
	[ "${lines[18]}" = "warning: over capacity: about 1045 items in a filter sized for 1000; false positives are above the target rate" ]
	json_check 'assert d["over_capacity"] is True, d'
}

@test "stats inserted counts only lines that set a bit" {
	filter_of 500
	keys 500 | bloom add f.bf
	[ "$(stats_field inserted f.bf)" = 500 ]
	[ "$(stats_field bits_set f.bf)" = 2949 ]
}

# sized_as I N P: sets bits[I] and hashes[I] to those of a fixed filter
# for N keys at rate P (a Python expression), as segment I is sized.
sized_as() {
	bloom create --seed 42 -n "$2" -p "$(python3 -c "print(repr($3))")" "s$1.bf"
	bits[$1]=$(stats_field bits "s$1.bf")
	hashes[$1]=$(stats_field hashes "s$1.bf")
}

@test "stats of a grown filter: the sums over its segments, and a line for each" {
	local -a bits hashes
	local i

	grown
	# Segment i holds 1000 2^i keys at 0.01 (1 - 0.9) 0.9^i; each
	# starts on a page, after two of header and table.
	for i in 0 1 2; do
		sized_as $i $((1000 << i)) "0.01 * (1 - 0.9) * 0.9 ** $i"
	done
	bytes=$((8192 + (bits[0] / 8 + 4095) / 4096 * 4096 +
	    (bits[1] / 8 + 4095) / 4096 * 4096 + bits[2] / 8))
	run -0 --separate-stderr bloom stats g.bf
	[ "$stderr" = "" ]
	[ "$(untimed)" = "file: g.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: grow
growth: 2
tightening: 0.9
bytes: $bytes ($(python3 -c "print('%.1f' % ($bytes / 1024))") KiB)
bits: $((bits[0] + bits[1] + bits[2]))
hashes: ${hashes[2]}
seed: 42
capacity: 7000
target_fpr: 0.01
inserted: 4995
percent_of_capacity: 71.4
note: it grows: capacity and percent_of_capacity are of its segments so far
bits_set: 37587
fill: 0.335215
estimated_items: 5002
estimated_fpr: 0.00181749
segments: 3
   # live           bits hashes     capacity target_fpr     inserted       bits_set    est_items  created
   0  yes $(printf '%14d %6d' ${bits[0]} ${hashes[0]})         1000      0.001         1000           6843         1003  TIME
   1  yes $(printf '%14d %6d' ${bits[1]} ${hashes[1]})         2000     0.0009         2000          13618         1992  TIME
   2  yes $(printf '%14d %6d' ${bits[2]} ${hashes[2]})         4000    0.00081         1995          17126         2008  TIME" ]
	# Each segment made within the test's run: today's date (or
	# yesterday's, if the run crossed midnight).
	[[ $output == *"  $(date -u +%Y-%m-%d)T"* ||
	    $output == *"  $(date -u -d '-1 hour' +%Y-%m-%d)T"* ]]
	# Grown far enough to be past the first capacity, but not over.
	[[ $output != *warning* ]]
}

@test "stats of a windowed filter: generations, the live ones summed" {
	windowed
	run -0 --separate-stderr bloom stats w.bf
	[ "$stderr" = "" ]
	[ "$output" = "file: w.bf
format: 2
layout: blocked512 (512-bit blocks)
hash: xxh3-64
mode: window
generations: 3
window_seconds: none (rotated by bloom rotate)
generation: 1
renew: yes
bytes: 13888 (13.6 KiB)
bits: 25600
hashes: 8
seed: 42
capacity: 2000
target_fpr: 0.01
inserted: 800
percent_of_capacity: 40.0
bits_set: 5591
fill: 0.218398
estimated_items: 800
estimated_fpr: 5.53995e-05
segments: 3
   # live           bits hashes     capacity target_fpr     inserted       bits_set    est_items  created               expires               generation
   0  yes          12800      8         1000    0.00334          500           3430          503  -                     -                     0
   1  yes          12800      8         1000    0.00334          300           2161          298  -                     -                     1
   2   no          12800      8         1000    0.00334            0              0            0  -                     -                     -" ]
}

@test "stats of a timed window: when each generation was made and is forgotten" {
	bloom create --generations 4 --layout blocked --window 30m -n 3000 --seed 42 w.bf
	keys 100 | bloom add w.bf
	run -0 --separate-stderr bloom stats w.bf
	[ "$stderr" = "" ]
	[ "${lines[6]}" = "window_seconds: 1800" ]
	[ "${lines[7]}" = "generation: 0" ]
	[ "${lines[8]}" = "renew: yes" ]
	[[ ${lines[23]} == "   0  yes "*" 100 "*"  20"??-??-??T??:??:??Z"  20"??-??-??T??:??:??Z"  0" ]]
	[ "${lines[24]}" = "   1   no          13312      8         1000    0.00251            0              0            0  -                     -                     -" ]
	# Forgotten 30 m + 30 m / 3 after it was made.
	created=$(date -u -d "$(echo "${lines[23]}" | awk '{ print $(NF - 2) }')" +%s)
	expires=$(date -u -d "$(echo "${lines[23]}" | awk '{ print $(NF - 1) }')" +%s)
	[ $((expires - created)) -eq 2400 ]
	[ "$created" -le "$(date +%s)" ]
	[ "$created" -ge $(($(date +%s) - 60)) ]
}

@test "stats of a window: the generation now, and the one each segment holds" {
	windowed
	for i in 1 2 3; do
		bloom rotate w.bf
	done
	keys 50 new- | bloom add w.bf
	run -0 --separate-stderr bloom stats w.bf
	[ "$stderr" = "" ]
	[ "${lines[7]}" = "generation: 4" ]
	[ "$(printf '%s\n' "${lines[@]:23}")" = "   0  yes          12800      8         1000    0.00334            0              0            0  -                     -                     3
   1  yes          12800      8         1000    0.00334           50            395           50  -                     -                     4
   2  yes          12800      8         1000    0.00334            0              0            0  -                     -                     2" ]
	json_check '
assert d["generation"] == 4
assert [s["generation"] for s in d["segments"]] == [3, 4, 2]
assert [s["inserted"] for s in d["segments"]] == [0, 50, 0]
' w.bf
	# A fixed filter has no generation.
	filter_of 10
	run -0 bloom stats f.bf
	[[ $output != *generation* ]]
	json_check 'assert "generation" not in d' 
}

# ---- JSON.

@test "stats --json is one line holding one object" {
	filter_of 2000
	run --separate-stderr bloom stats --json f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "{"*"}" ]]
}

@test "stats --json has every required key, with its type and value" {
	filter_of 500
	json_check '
want = {
	"format": 2, "layout": "blocked512", "hash": "xxh3-64", "mode": "fixed",
	"bytes": 5376, "bits": 10240, "hashes": 7, "seed": "42", "capacity": 1000,
	"target_fpr": 0.01, "inserted": 500, "percent_of_capacity": 50.0,
	"bits_set": 2949,
	"fill": 0.287988, "estimated_items": 500, "estimated_fpr": 0.000242615,
}
# The seed as a string of decimal digits: a JSON number may not keep
# all 64 bits.
strings = {"layout", "hash", "mode", "seed"}
integers = {"format", "bytes", "bits", "hashes", "capacity",
	"inserted", "bits_set"}
for key, value in want.items():
	assert key in d, "missing " + key
	got = d[key]
	if key in strings:
		assert isinstance(got, str), key
	elif key in integers:
		assert type(got) is int, key
	else:
		assert type(got) in (int, float), key
	assert got == value, "%s: %r, want %r" % (key, got, value)
assert d["file"] == "f.bf"
assert d["over_capacity"] is False
assert d["sparse"] is False
assert d["grows"] is False
assert set(d) == set(want) | {"file", "over_capacity", "sparse", "grows",
    "segments"}, set(d)
# One segment, the whole filter.
assert len(d["segments"]) == 1
s = d["segments"][0]
assert set(s) == {"live", "bits", "hashes", "capacity", "target_fpr",
    "inserted", "bits_set", "estimated_items", "estimated_fpr", "created"}, set(s)
for key in ("bits", "hashes", "capacity", "target_fpr", "inserted",
    "bits_set", "estimated_items", "estimated_fpr"):
	assert s[key] == d[key] and type(s[key]) is type(d[key]), key
assert s["live"] is True
'
	[ "$(stat -c %s f.bf)" -eq 5376 ]
}

@test "stats --json gives the time a fixed filter was made" {
	before=$(date +%s)
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	after=$(date +%s)
	json_check '
import datetime, os
t = datetime.datetime.strptime(d["segments"][0]["created"], "%Y-%m-%dT%H:%M:%SZ")
t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
# The header holds it in ms, at byte 80.
ms = int.from_bytes(open("f.bf", "rb").read()[80:88], "little")
assert t == ms // 1000, (t, ms)
# Stamped while create ran, by the clock date reads (not the file
# mtime: the kernel stamps files from a coarser clock that can lag).
assert '"$before"' <= t <= '"$after"', t
'
}

@test "stats --json says when the filter is over capacity" {
	filter_of 2000
	json_check '
assert d["estimated_items"] == 1991 and d["capacity"] == 1000
assert d["over_capacity"] is True
'
}

@test "stats --json of an empty filter: fill, estimates and counts are 0" {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	json_check '
for key in ("inserted", "bits_set", "fill", "estimated_items",
    "estimated_fpr"):
	assert d[key] == 0, key
	assert d["segments"][0].get(key, 0) == 0, key
'
}

@test "stats --json of a grown filter: every segment" {
	local -a bits hashes
	local i

	grown
	for i in 0 1 2; do
		sized_as $i $((1000 << i)) "0.01 * (1 - 0.9) * 0.9 ** $i"
	done
	json_check '
assert d["mode"] == "grow" and d["growth"] == 2 and d["tightening"] == 0.9
assert d["capacity"] == 7000 and d["target_fpr"] == 0.01
assert d["over_capacity"] is False
got = [(s["live"], s["bits"], s["hashes"], s["capacity"], s["inserted"],
    s["bits_set"], s["estimated_items"]) for s in d["segments"]]
assert got == [(True, '"${bits[0]}, ${hashes[0]}"', 1000, 1000, 6843, 1003),
    (True, '"${bits[1]}, ${hashes[1]}"', 2000, 2000, 13618, 1992),
    (True, '"${bits[2]}, ${hashes[2]}"', 4000, 1995, 17126, 2008)], got
# Each segment tighter by 0.9, the first at 0.01 (1 - 0.9).
for i, s in enumerate(d["segments"]):
	assert math.isclose(s["target_fpr"], 0.01 * 0.1 * 0.9 ** i,
	    rel_tol=1e-12), s
	assert type(s["created"]) is str and "expires" not in s
assert d["inserted"] == sum(s["inserted"] for s in d["segments"])
assert d["bits"] == sum(s["bits"] for s in d["segments"])
# Its capacity is no limit: it grows past it.
assert d["grows"] is True
' g.bf
}

@test "stats --json of a windowed filter: every generation, live or not" {
	windowed
	json_check '
assert d["mode"] == "window" and d["generations"] == 3
assert d["window_seconds"] is None and d["generation"] == 1
got = [(s["live"], s["bits"], s["capacity"], s["inserted"], s["created"],
    s["expires"], s["generation"]) for s in d["segments"]]
assert got == [(True, 12800, 1000, 500, None, None, 0),
    (True, 12800, 1000, 300, None, None, 1),
    (False, 12800, 1000, 0, None, None, None)], got
assert d["bits"] == 25600 and d["inserted"] == 800
' w.bf
}

# Checks that the human form of stats FILE says what its JSON says, value
# for value, the segment table included.
agrees() {
	bloom stats "$1" >stats.txt
	bloom stats --json "$1" >stats.json
	python3 -c '
import json
text = open("stats.txt").read().splitlines()
# Numbers as the text they were printed as.
d = json.load(open("stats.json"), parse_int=str, parse_float=str)
human, table = {}, []
for line in text:
	if line.startswith("warning: "):
		assert d["over_capacity"] is True
	elif line.startswith("note: it grows: "):
		assert d["grows"] is True
	elif line.startswith("   # live"):
		header = line.split()
	elif ": " in line:
		key, value = line.split(": ", 1)
		human[key] = value
	else:
		table.append(line.split())
assert human.pop("layout").startswith(d.pop("layout") + " "), "layout"
# bytes, then the size in 1024-based units with one decimal.
size, unit = float(d["bytes"]), 0
while size >= 1024 and unit < 6:
	size, unit = size / 1024, unit + 1
want = d["bytes"] + " (" + ("%.0f B" % size if unit == 0 else "%.1f %s" %
    (size, ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")[unit - 1])) + ")"
assert human.pop("bytes") == want, ("bytes", want)
d.pop("bytes")
if "renew" in human:
	assert human.pop("renew") == ("yes" if d.pop("renew") else "no")
if human.get("window_seconds", "").startswith("none "):
	assert d["window_seconds"] is None
	human.pop("window_seconds")
segments = d.pop("segments")
assert human.pop("segments") == str(len(segments))
assert set(human) <= set(d), set(human) - set(d)
for key in human:
	assert human[key] == d[key], "%s: %r and %r" % (key, human[key], d[key])
if d["mode"] == "fixed":
	assert table == [], table
else:
	assert len(table) == len(segments)
	for i, (row, s) in enumerate(zip(table, segments)):
		assert row[0] == str(i)
		assert row[1] == ("yes" if s["live"] else "no")
		for col, key in ((2, "bits"), (3, "hashes"), (4, "capacity"),
		    (6, "inserted"), (7, "bits_set"), (8, "estimated_items")):
			assert row[col] == s[key], (i, key, row[col], s[key])
		assert float(row[5]) == float("%.3g" % float(s["target_fpr"]))
		assert row[9] == (s["created"] or "-"), (row[9], s["created"])
		if "expires" in s:
			assert row[10] == (s["expires"] or "-")
			assert row[11] == (s["generation"] or "-")
'
}

@test "stats --json agrees with the human form, value for value" {
	filter_of 2000
	agrees f.bf
	grown
	agrees g.bf
	windowed
	agrees w.bf
	bloom create --generations 4 --window 2w -n 3000 --seed 42 t.bf
	keys 10 | bloom add t.bf
	agrees t.bf
	bloom create --grow --growth 1.3333333 -n 10 --seed 42 u.bf
	keys 100 | bloom add u.bf
	agrees u.bf
	[ "$(stats_field growth u.bf)" = 1.3333333 ]
}

@test "stats --json keeps a 64-bit seed exact" {
	bloom create -n 1000 --seed 18446744073709551615 f.bf
	json_check 'assert d["seed"] == str(2**64 - 1), d["seed"]'
}

@test "stats --json escapes the file name" {
	name=$'q"b\\s\tt.bf'
	bloom create -n 1000 --seed 1 "$name"
	run --separate-stderr bloom stats --json "$name"
	[ "$status" -eq 0 ]
	[[ $output == '{"file":"q\"b\\s\u0009t.bf",'* ]]
	printf '%s' "$output" | python3 -c '
import json, sys
assert json.load(sys.stdin)["file"] == "q\"b\\s\tt.bf"
'
}

# ---- The values, recomputed from the bits in the file.

# Checks bits_set, fill, estimated_items and estimated_fpr of FILE (f.bf
# unless $1), and of each of its segments, against the popcount of each
# 64-byte block of their bit arrays, found from the segment table:
#   fill = set / bits
#   estimated_items = blocks * -ln(1 - fill) / (1 - (1 - 1/512)^k)
#   estimated_fpr = mean over blocks of (set in block / 512)^k
# and for the whole filter, the sums over the live segments, with
#   estimated_fpr = 1 - product of (1 - estimated_fpr) of each.
recomputed() {
	json_check '
raw = open("'"${1-f.bf}"'", "rb").read()
u64 = lambda o: int.from_bytes(raw[o:o + 8], "little")
u32 = lambda o: int.from_bytes(raw[o:o + 4], "little")
assert u32(8) == 2 and u32(12) == 256
assert d["bytes"] == len(raw)
bits = bits_set = 0
items = 0.0
passes = 1.0
end = 0
for i, s in enumerate(d["segments"]):
	entry = 256 + 64 * i
	offset, blocks, k = u64(entry), u64(entry + 8), u32(entry + 16)
	assert offset % 4096 == 0 and offset >= u64(88) and offset >= end
	end = offset + 64 * blocks
	assert s["bits"] == blocks * 512 and s["hashes"] == k
	counts = [bin(int.from_bytes(raw[offset + 64 * b:offset + 64 * b + 64],
	    "little")).count("1") for b in range(blocks)]
	seg_set = sum(counts)
	seg_items = blocks * -math.log1p(-seg_set / (blocks * 512)) / \
	    (1 - (1 - 1 / 512) ** k)
	seg_fpr = sum((c / 512) ** k for c in counts) / blocks
	assert s["bits_set"] == seg_set, (i, s["bits_set"], seg_set)
	assert abs(s["estimated_items"] - seg_items) <= 0.5 + 1e-9, (i, s["estimated_items"], seg_items)
	assert math.isclose(s["estimated_fpr"], seg_fpr, rel_tol=1e-5, abs_tol=1e-300), (i, s["estimated_fpr"], seg_fpr)
	if s["live"]:
		bits += blocks * 512
		bits_set += seg_set
		items += seg_items
		passes *= 1 - seg_fpr
assert end == len(raw), (end, len(raw))
fill = bits_set / bits
assert d["bits"] == bits
assert d["bits_set"] == bits_set, (d["bits_set"], bits_set)
assert abs(d["fill"] - fill) <= 5e-7, (d["fill"], fill)
assert abs(d["estimated_items"] - items) <= 0.5 + 1e-9, (d["estimated_items"], items)
assert math.isclose(d["estimated_fpr"], 1 - passes, rel_tol=1e-5), (d["estimated_fpr"], 1 - passes)
' "${1-f.bf}"
}

@test "stats values match the bits of a filter under capacity" {
	filter_of 500
	recomputed
}

@test "stats values match the bits of a filter over capacity" {
	filter_of 2000
	recomputed
}

@test "stats values match the bits of a larger filter" {
	bloom create -s 64K -k 4 --seed 9 f.bf
	keys 20000 x | bloom add f.bf
	recomputed
}

@test "stats values match the bits of a grown filter, segment by segment" {
	grown
	recomputed g.bf
}

@test "stats values match the bits of a windowed filter, live generations only" {
	windowed
	recomputed w.bf
}

# ---- Access.

@test "stats reads a filter whose mode is 444" {
	filter_of 500
	chmod 444 f.bf
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${lines[11]}" = "inserted: 500" ]
}

@test "stats needs only read permission; add needs write permission" {
	filter_of 500
	chmod 444 f.bf
	run --separate-stderr unprivileged bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${lines[11]}" = "inserted: 500" ]
	# The same file is really read-only to us: add is refused.
	run --separate-stderr unprivileged bloom add f.bf </dev/null
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bf: Permission denied" ]
}

@test "stats of a filter it cannot read" {
	filter_of 10
	chmod 000 f.bf
	run --separate-stderr unprivileged bloom stats f.bf
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: f.bf: Permission denied" ]
}

@test "stats leaves the file as it was" {
	filter_of 500
	touch -d '2001-02-03 04:05:06' f.bf
	before=$(cksum <f.bf; stat -c %Y f.bf)
	bloom stats f.bf >/dev/null
	bloom stats --json f.bf >/dev/null
	[ "$(cksum <f.bf; stat -c %Y f.bf)" = "$before" ]
}

# ---- Write errors.

@test "stats > /dev/full fails loudly" {
	filter_of 10
	run --separate-stderr sh -c 'bloom stats f.bf >/dev/full'
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: write error: No space left on device" ]
}

@test "stats --json > /dev/full fails loudly" {
	filter_of 10
	run --separate-stderr sh -c 'bloom stats --json f.bf >/dev/full'
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: write error: No space left on device" ]
}

# ---- Usage errors: status 2, the message and the synopsis on stderr.

# usage_fails MESSAGE ARGS...: bloom stats ARGS... exits 2 with
# "bloom: stats: MESSAGE" and the synopsis on stderr and nothing on stdout.
usage_fails() {
	local message=$1

	shift
	run --separate-stderr bloom stats "$@"
	[ "$status" -eq 2 ] || { echo "status $status"; return 1; }
	[ "$output" = "" ]
	[ "$stderr" = "bloom: stats: $message
$usage" ] || { echo "stderr: $stderr"; return 1; }
}

@test "stats with no filter"	{ usage_fails "no filter named"; }
@test "stats --json with no filter" { usage_fails "no filter named" --json; }
@test "stats with two filters"	{ filter_of 1; usage_fails "one filter at a time" f.bf f.bf; }
@test "stats --bogus"		{ filter_of 1; usage_fails "unknown option '--bogus'" --bogus f.bf; }
@test "stats -j"		{ filter_of 1; usage_fails "unknown option '-j'" -j f.bf; }
@test "stats --json=yes"	{ filter_of 1; usage_fails "option '--json' takes no value" --json=yes f.bf; }
@test "stats -xy names -x"	{ filter_of 1; usage_fails "unknown option '-x'" -xy f.bf; }

@test "stats: inserted counts the lines add --new wrote, false positives not, so below the distinct lines" {
	bloom create --seed 42 -n 20000 -p 0.01 f.bf
	keys 20000 >in
	bloom add --new f.bf in >new
	written=$(wc -l <new)
	[ "$written" -lt 20000 ]
	[ "$(stats_field inserted f.bf)" = "$written" ]
	# The same for a growable filter, which also says its capacity is
	# no limit.
	bloom create --grow --seed 42 -n 2000 -p 0.01 g.bf
	bloom add --new g.bf in >new
	[ "$(stats_field inserted g.bf)" = "$(wc -l <new)" ]
	run -0 bloom stats g.bf
	[[ "$output" == *"
note: it grows: capacity and percent_of_capacity are of its segments so far
"* ]]
	[ "$(json g.bf 'd["grows"], d["capacity"] < 20000')" = "(True, False)" ]
}
