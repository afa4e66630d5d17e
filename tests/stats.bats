#!/usr/bin/env bats
# Tests of bloom stats: the key: value lines and the JSON object for filters
# of known content, the over-capacity warning, the values recomputed from
# the file's bits, read-only access, write errors and usage errors.

bats_require_minimum_version 1.5.0
load helpers

usage='usage: bloom stats [--json] filter'

# Makes f.bf, sized for 1000 items at 0.01 with seed 42, holding the first
# N keys.  The hash is fixed, so its stats are known exactly.
filter_of() {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	keys "$1" | bloom add f.bf
}

# Runs the python3 program $1 with the JSON of stats --json f.bf as d; an
# assert that fails says which.
json_check() {
	bloom stats --json f.bf >stats.json
	python3 -c '
import json, math, sys
d = json.load(open("stats.json"))
'"$1"
}

# ---- Human form.

@test "stats of a filter holding 500 keys, line by line" {
	filter_of 500
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
layout: blocked512 (512-bit blocks)
hash: xxh3-64
bytes: 1408
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 500
bits_set: 2949
fill: 0.287988
estimated_items: 500
estimated_fpr: 0.000242615" ]
}

@test "stats of an empty filter: nothing set, nothing estimated" {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
layout: blocked512 (512-bit blocks)
hash: xxh3-64
bytes: 1408
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 0
bits_set: 0
fill: 0.000000
estimated_items: 0
estimated_fpr: 0" ]
}

@test "stats warns when twice the capacity was added" {
	filter_of 2000
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "file: f.bf
layout: blocked512 (512-bit blocks)
hash: xxh3-64
bytes: 1408
bits: 10240
hashes: 7
seed: 42
capacity: 1000
target_fpr: 0.01
inserted: 1947
bits_set: 7593
fill: 0.741504
estimated_items: 1991
estimated_fpr: 0.135582
warning: over capacity: about 1991 items in a filter sized for 1000; false positives are above the target rate" ]
}

@test "stats does not warn at capacity (1000 keys, about 997 estimated)" {
	filter_of 1000
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "${lines[12]}" = "estimated_items: 997" ]
	[ "${#lines[@]}" -eq 14 ]
	[[ $output != *warning* ]]
}

@test "stats warns just over capacity (1020 keys, about 1017 estimated)" {
	filter_of 1020
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 15 ]
	[ "${lines[14]}" = "warning: over capacity: about 1017 items in a filter sized for 1000; false positives are above the target rate" ]
}

@test "stats inserted counts only lines that set a bit" {
	filter_of 500
	keys 500 | bloom add f.bf
	run bloom stats f.bf
	[ "${lines[9]}" = "inserted: 500" ]
	[ "${lines[10]}" = "bits_set: 2949" ]
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
	"layout": "blocked512", "bytes": 1408, "bits": 10240, "hashes": 7,
	"seed": 42, "capacity": 1000, "target_fpr": 0.01, "inserted": 500,
	"bits_set": 2949, "fill": 0.287988, "estimated_items": 500,
	"estimated_fpr": 0.000242615,
}
integers = {"bytes", "bits", "hashes", "seed", "capacity", "inserted",
	"bits_set"}
for key, value in want.items():
	assert key in d, "missing " + key
	got = d[key]
	if key == "layout":
		assert isinstance(got, str), key
	elif key in integers:
		assert type(got) is int, key
	else:
		assert type(got) in (int, float), key
	assert got == value, "%s: %r, want %r" % (key, got, value)
assert d["file"] == "f.bf"
assert d["over_capacity"] is False
'
	[ "$(stat -c %s f.bf)" -eq 1408 ]
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
'
}

@test "stats --json agrees with the human form, value for value" {
	filter_of 2000
	bloom stats f.bf >stats.txt
	bloom stats --json f.bf >stats.json
	python3 -c '
import json
human = dict(line.split(": ", 1) for line in open("stats.txt").read().splitlines()
    if not line.startswith("warning: "))
# Numbers as the text they were printed as.
d = json.load(open("stats.json"), parse_int=str, parse_float=str)
assert human.pop("layout").startswith(d.pop("layout") + " "), "layout"
assert set(human) <= set(d), set(human) - set(d)
for key in human:
	assert human[key] == d[key], "%s: %r and %r" % (key, human[key], d[key])
'
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

# Checks bits_set, fill, estimated_items and estimated_fpr of f.bf against
# the popcount of each 64-byte block of its bit array:
#   fill = set / bits
#   estimated_items = blocks * -ln(1 - fill) / (1 - (1 - 1/512)^k)
#   estimated_fpr = mean over blocks of (set in block / 512)^k
recomputed() {
	json_check '
raw = open("f.bf", "rb").read()[128:]
k = d["hashes"]
blocks = len(raw) // 64
counts = [bin(int.from_bytes(raw[64 * b:64 * b + 64], "little")).count("1")
    for b in range(blocks)]
bits_set = sum(counts)
fill = bits_set / (blocks * 512)
items = blocks * -math.log1p(-fill) / (1 - (1 - 1 / 512) ** k)
fpr = sum((c / 512) ** k for c in counts) / blocks
assert d["bits"] == blocks * 512
assert d["bits_set"] == bits_set, (d["bits_set"], bits_set)
assert abs(d["fill"] - fill) <= 5e-7, (d["fill"], fill)
assert abs(d["estimated_items"] - items) <= 0.5 + 1e-9, (d["estimated_items"], items)
assert math.isclose(d["estimated_fpr"], fpr, rel_tol=1e-5), (d["estimated_fpr"], fpr)
'
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

# ---- Access.

@test "stats reads a filter whose mode is 444" {
	filter_of 500
	chmod 444 f.bf
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${lines[9]}" = "inserted: 500" ]
}

@test "stats needs only read permission; add needs write permission" {
	filter_of 500
	chmod 444 f.bf
	run --separate-stderr unprivileged bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${lines[9]}" = "inserted: 500" ]
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
