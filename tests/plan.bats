#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# create --dry-run, the free-space check, add --no-create and
# BLOOM_NO_CREATE, and the JSON seed.

bats_require_minimum_version 1.5.0

load helpers

@test "create --dry-run prints the plan of a fixed filter and creates nothing" {
	row 0 "file: f.bf (not created: --dry-run)
mode: fixed
bytes: 1243904 (1.2 MiB)
blocks: 19372
hashes: 6
capacity: 1000000
target_fpr: 0.01" "" create --dry-run --seed 1 f.bf
	[ ! -e f.bf ]
	# The plan is what create makes.
	bloom create --seed 1 f.bf
	[ "$(stat -c %s f.bf)" -eq 1243904 ]
	[ "$(stats_field hashes f.bf)" -eq 6 ]
}

@test "create --dry-run quotes the name, so a newline cannot forge a line of the plan" {
	run --separate-stderr bloom create --dry-run --seed 1 $'a\nfile: forged'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = 'file: a\nfile: forged (not created: --dry-run)' ]
	[ "${lines[1]}" = "mode: fixed" ]
	[ ! -e $'a\nfile: forged' ]
}

@test "create --dry-run of a growable filter shows its first segment and the next" {
	run --separate-stderr bloom create --dry-run --grow -n 1000 g.bf
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "mode: grow" ]
	[ "${lines[5]}" = "capacity: 1000 (first segment)" ]
	[ "${lines[7]}" = "segments: 1" ]
	# At 0.01 (1 - r) r^i, r = 0.9.
	[[ "${lines[8]}" == "  0: "*" capacity 1000, fpr 0.001" ]]
	[[ "${lines[9]}" == "  1, when the one before fills: "*" capacity 2000, fpr 0.0009" ]]
	[ ! -e g.bf ]
}

@test "create --dry-run of a windowed filter lists its generations" {
	run --separate-stderr bloom create --dry-run --generations 3 --layout blocked -n 900 w.bf
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "layout: blocked512 (512-bit blocks)" ]
	[ "${lines[3]}" = "layout_reason: --layout blocked" ]
	[ "${lines[9]}" = "generations: 3" ]
	[ "${lines[10]}" = "renew: yes" ]
	[ "${lines[11]}" = "segments: 3" ]
	[[ "${lines[12]}" == "  0: "*" capacity 450, fpr "* ]]
	[ "${#lines[@]}" -eq 15 ]
	[ ! -e w.bf ]
}

@test "create --dry-run plans the file create makes, for every kind of filter" {
	# One planning module (store/plan.c) sizes both: the plan's bytes and
	# hashes are the file's, whatever the mode, layout or slice.
	while read -r name args; do
		run --separate-stderr bloom create --dry-run --seed 7 $args "$name.bf"
		[ "$status" -eq 0 ]
		[ ! -e "$name.bf" ]
		bytes=$(printf '%s\n' "${lines[@]}" | sed -n 's/^bytes: \([0-9]*\) .*/\1/p')
		hashes=$(printf '%s\n' "${lines[@]}" | sed -n 's/^hashes: //p')
		bloom create --seed 7 $args "$name.bf"
		echo "$name: plan $bytes bytes, $hashes hashes; file $(stat -c %s "$name.bf")"
		[ "$(stat -c %s "$name.bf")" -eq "$bytes" ]
		[ "$(stats_field hashes "$name.bf")" -eq "$hashes" ]
	done <<-'EOF'
	fixed -n 5000 -p 0.001
	sized -n 5000 -s 64K
	rate -s 64K -p 0.01
	hashes -n 5000 -p 0.01 -k 3
	grow --grow -n 3000 -p 0.01
	growth --grow --growth 1.5 -n 3000 -p 0.001
	window --generations 4 -n 4000 -p 0.01
	capped --generations 4 -n 4000 -p 0.01 --max-size 10M
	norenew --generations 4 -n 4000 -p 0.01 --no-renew
	apbf --generations 8 --layout apbf -n 8000 -p 0.01
	slices --slices 6 -n 100000 -p 0.01
	slice --slices 4 --slice 1/4 -n 100000 -p 0.01
	EOF
}

@test "create --dry-run still refuses bad options" {
	run -2 bloom create --dry-run -n 0 f.bf
	[ ! -e f.bf ]
}

@test "create refuses a filter larger than the free space, before allocating" {
	df -B1 --output=avail . | tail -1 >free
	free=$(cat free)
	[ "$free" -lt $((64 << 40)) ]
	run --separate-stderr bloom create -s 64T big.bf
	[ "$status" -eq 2 ]
	[[ "$stderr" =~ ^"bloom: big.bf: needs 70368744181760 bytes (64.0 TiB) but its file system has "[0-9]+" bytes ("[0-9.]+" "[KMGT]"iB) free"$ ]]
	[ ! -e big.bf ]
	# Dry run says what it would take all the same.
	run -0 bloom create --dry-run -s 64T big.bf
	[ "${lines[2]}" = "bytes: 70368744181760 (64.0 TiB)" ]
}

@test "add --no-create and BLOOM_NO_CREATE=1 refuse to make a missing filter" {
	row 2 "" "bloom: sen.bf: no such filter, and auto-create is off (--no-create)" \
		add --no-create --new sen.bf < <(echo a)
	[ ! -e sen.bf ]
	BLOOM_NO_CREATE=1 run --separate-stderr bloom add --new sen.bf < <(echo a)
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[ "$stderr" = "bloom: sen.bf: no such filter, and auto-create is off (BLOOM_NO_CREATE)" ]
	[ ! -e sen.bf ]
	# An existing filter is added to as ever.
	bloom create -n 100 seen.bf
	BLOOM_NO_CREATE=1 run -0 bloom add --no-create --new seen.bf < <(echo a)
	[ "$output" = a ]
}

# The bytes of the filter add creates: create --grow -n 8000000's.
created_bytes() {
	bloom create --dry-run --grow -n 8000000 x.bf |
		sed -n 's/^bytes: \([0-9]*\) .*/\1/p'
}

@test "auto-create stays on by default and with BLOOM_NO_CREATE=0; the message says how to turn it off" {
	BLOOM_NO_CREATE=0 run --separate-stderr bloom add new.bf < <(echo a)
	[ "$status" -eq 0 ]
	[ "$stderr" = "bloom: new.bf: created growable, for 8000000 items at first, at fpr 0.01 ($(created_bytes) bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" ]
	[ -e new.bf ]
}

@test "BLOOM_NO_CREATE: 1, yes, true and on, in any case, refuse; 0, no, false, off and empty create" {
	for word in 1 yes true on YES True ON; do
		BLOOM_NO_CREATE=$word row 2 "" \
			"bloom: sen.bf: no such filter, and auto-create is off (BLOOM_NO_CREATE)" \
			add --new sen.bf < <(echo a)
		[ ! -e sen.bf ]
	done
	for word in 0 no false off "" NO False OFF; do
		BLOOM_NO_CREATE=$word row 0 a \
			"bloom: new.bf: created growable, for 8000000 items at first, at fpr 0.01 ($(created_bytes) bytes); --no-create or BLOOM_NO_CREATE=1 turns this off" \
			add --new new.bf < <(echo a)
		rm new.bf
	done
}

@test "BLOOM_NO_CREATE set to any other word is an error, and nothing is created or added" {
	msg="bloom: BLOOM_NO_CREATE is '%s': set it to 1, yes, true or on to turn auto-create off, or to 0, no, false, off or nothing to leave it on"
	for word in maybe 2 y " 1" "yes please"; do
		# shellcheck disable=SC2059
		BLOOM_NO_CREATE=$word row 2 "" "$(printf "$msg" "$word")" \
			add --new sen.bf < <(echo a)
		[ ! -e sen.bf ]
	done
	# The value is quoted as the messages quote any byte.
	BLOOM_NO_CREATE=$'o\nn' row 2 "" "$(printf "$msg" 'o\nn')" \
		add --new sen.bf < <(echo a)
	[ ! -e sen.bf ]
	# Even for a filter that exists, and with --no-create.
	bloom create -n 100 seen.bf
	BLOOM_NO_CREATE=yess row 2 "" "$(printf "$msg" yess)" add --no-create seen.bf < <(echo a)
	row 1 "" "" check seen.bf < <(echo a)
}

@test "stats --json writes the seed as a string that create --seed takes back" {
	for seed in 0 42 18446744073709551615 9007199254740993; do
		bloom create -f -n 1000 --seed "$seed" a.bf
		json=$(bloom stats --json a.bf)
		[[ "$json" == *"\"seed\":\"$seed\""* ]]
		back=$(printf '%s' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["seed"])')
		[ "$back" = "$seed" ]
		bloom create -f -n 1000 --seed "$back" b.bf
		[ "$(stats_field seed b.bf)" = "$seed" ]
	done
}

@test "stats: percent_of_capacity in both forms, and the size in human units" {
	bloom create --seed 5 -n 1000 -p 1e-6 f.bf
	keys 250 | bloom add f.bf
	[ "$(stats_field percent_of_capacity f.bf)" = "25.0" ]
	[[ "$(stats_field bytes f.bf)" =~ ^[0-9]+" ("[0-9.]+" KiB)"$ ]]
	run -0 bloom stats --json f.bf
	printf '%s' "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["percent_of_capacity"] == 25.0, d["percent_of_capacity"]
assert isinstance(d["bytes"], int)'
}
