#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Version 2 of the file format: the header, segment table and segments
# bloom create writes for fixed, growable and windowed filters, byte for
# byte against the layout in the comment at the top of store/format.c, and the
# message stats, check and add give for each way such a file can be wrong.
# format.bats tests version 1.
#
# bloom_header_parse checks a v2 file in this order: what every version
# has (format.bats), then reserved bytes, the mode and what it implies
# (table size, growth and ratio, window length), capacity, target fpr,
# data offset, slice fields, header checksum, segments in use, generation
# number, length against the table, then each entry in use (reserved
# bytes, block count, hash count, capacity, target fpr, checksum, page
# boundary, overlap, end of the largest file a filter may have,
# generation), then the slice's blocks and the file size.  A test of one
# check makes the file wrong for that check only: it mends the checksums
# over what it changed, so that an earlier or later check would not give
# the message instead.

bats_require_minimum_version 1.5.0
load helpers

# The filters the validation tests start from, made once and copied by
# fixed, grow and window: create syncs, which is slow.
setup_file() {
	local bloom="$BATS_TEST_DIRNAME/../bloom" dir=$BATS_FILE_TMPDIR

	"$bloom" create -n 1000 -p 0.01 --seed 42 "$dir/fixed.bf" &&
		"$bloom" create --grow -n 1000 -p 0.01 --seed 42 "$dir/grow.bf" &&
		"$bloom" create -n 1000 --seed 42 -p \
			"$(python3 -c 'print(repr(0.01 * (1 - 0.9)))')" \
			"$dir/first.bf" &&
		"$bloom" create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 42 \
			"$dir/window.bf" &&
		keys 10 | "$bloom" add "$dir/fixed.bf" &&
		keys 10 | "$bloom" add "$dir/grow.bf" &&
		keys 10 | "$bloom" add "$dir/window.bf"
}

# Make f.bf, a copy of a filter with key-1 .. key-10 added, all 1000 keys
# at 0.01 and seed 42: fixed is 5376 bytes, a page of header and table and
# 20 blocks; grow has a table of 64 entries (two pages), one segment in
# use, of grow_blocks blocks (grow_size bytes); window has 4 generations
# rotated by hand, segments of 9 blocks on pages 1 to 4, 16960 bytes.
fixed()  { cp "$BATS_FILE_TMPDIR/fixed.bf" f.bf; }
grow()   { cp "$BATS_FILE_TMPDIR/grow.bf" f.bf; }
window() { cp "$BATS_FILE_TMPDIR/window.bf" f.bf; }

# The first segment of a growable filter for 1000 keys at 0.01 is sized as
# a fixed filter for 1000 keys at 0.01 (1 - r), r = 0.9 (first.bf): its
# blocks, its hashes, and the size of grow.bf, two pages and the segment.
grow_blocks() { echo $(($(stats_field bits "$BATS_FILE_TMPDIR/first.bf") / 512)); }
grow_hashes() { stats_field hashes "$BATS_FILE_TMPDIR/first.bf"; }
grow_size()   { echo $((8192 + 64 * $(grow_blocks))); }

# Byte offset of table entry I.
entry() {
	echo $((256 + 64 * $1))
}

# Rewrites the header checksum of FILE: XXH3-64, seed 0, of bytes 0..127.
fix_header() {
	put "$1" 128 "$(xxh3_at "$1" 0 128 0)"
}

# fix_entry FILE I: rewrites the checksum of table entry I of FILE:
# XXH3-64, seed I, of the entry's bytes 0..39.
fix_entry() {
	put "$1" $(($(entry "$2") + 40)) "$(xxh3_at "$1" "$(entry "$2")" 40 "$2")"
}

# set_header FILE OFFSET HEX: changes header bytes, checksum mended.
set_header() {
	put "$1" "$2" "$3"
	fix_header "$1"
}

# set_entry FILE I OFFSET HEX: changes bytes of table entry I from OFFSET
# in it, checksum mended.
set_entry() {
	put "$1" $(($(entry "$2") + $3)) "$4"
	fix_entry "$1" "$2"
}

# Prints the little-endian unsigned 64-bit word at OFFSET of FILE.
u64_at() {
	od -An --endian=little -tu8 -j "$2" -N 8 "$1" | tr -d ' '
}

# Prints the little-endian unsigned 32-bit word at OFFSET of FILE.
u32_at() {
	od -An --endian=little -tu4 -j "$2" -N 4 "$1" | tr -d ' '
}

# layout_is FILE: checks the lines "OFFSET LENGTH HEX WHAT" of stdin
# against the bytes of FILE.
layout_is() {
	local off len want what got

	while read -r off len want what; do
		got=$(hex_at "$1" "$off" "$len")
		[ "$got" = "$want" ] ||
			{ echo "$what at $off: $got, want $want"; return 1; }
	done
}

# zero_at FILE OFFSET LENGTH: those bytes of FILE are all zero.
zero_at() {
	tail -c +"$(($2 + 1))" "$1" | head -c "$3" |
		cmp - <(head -c "$3" /dev/zero) ||
		{ echo "bytes $2 to $(($2 + $3 - 1)) are not all zero"; return 1; }
}

# within FILE OFFSET FROM TO: the little-endian word at OFFSET is in
# [FROM, TO].
within() {
	local v

	v=$(u64_at "$1" "$2")
	[ "$v" -ge "$3" ] && [ "$v" -le "$4" ] ||
		{ echo "word at $2 is $v, not in [$3, $4]"; return 1; }
}

# entry_is FILE I OFFSET NBLOCKS HASHES CAPACITY FPR: table entry I holds
# these, zero reserved bytes and its checksum (inserted counter and stamp
# are the caller's to check).
entry_is() {
	local at

	at=$(entry "$2")
	layout_is "$1" <<-EOF
	$at		8	$(le 8 "$3")	entry $2: offset $3
	$((at + 8))	8	$(le 8 "$4")	entry $2: block count $4
	$((at + 16))	4	$(le 4 "$5")		entry $2: hash count $5
	$((at + 20))	4	00000000		entry $2: reserved
	$((at + 24))	8	$(le 8 "$6")	entry $2: capacity $6
	$((at + 32))	8	$(dbl "$7")	entry $2: target fpr $7
	$((at + 40))	8	$(xxh3_at "$1" "$at" 40 "$2")	entry $2: checksum, seed $2
	EOF
}

# Milliseconds since 1970.
now_ms() {
	date +%s%3N
}

# ---- The layout as written.

@test "create -n 1000 -p 0.01 --seed 42: a fixed filter, byte for byte" {
	local t0 t1

	need_xxhsum
	need_hashsum
	t0=$(now_ms)
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	t1=$(now_ms)
	[ "$(stat -c %s f.bf)" -eq 5376 ]
	layout_is f.bf <<-EOF
	0	8	89424c4f4f4d0d0a	magic "\211BLOOM\r\n"
	8	4	02000000		format version 2
	12	4	00010000		header size 256
	16	4	01000000		layout 1, blocked 512-bit
	20	4	01000000		hash 1, XXH3-64
	24	8	2a00000000000000	seed 42
	32	4	00000000		mode 0, fixed
	36	4	01000000		table entries 1
	40	8	e803000000000000	capacity 1000
	48	8	7b14ae47e17a843f	target fpr 0.01
	56	8	0000000000000000	growth: none
	64	8	0000000000000000	ratio: none
	72	8	0000000000000000	window: none
	88	8	0010000000000000	data offset 4096
	96	32	$(printf '%064d' 0)	slice fields (not a slice) and reserved
	128	8	$(xxh3_at f.bf 0 128 0)	checksum of bytes 0 to 127
	136	8	0100000000000000	segments in use 1
	144	8	0000000000000000	newest generation: none
	EOF
	within f.bf 80 "$t0" "$t1"		# created
	zero_at f.bf 152 104
	entry_is f.bf 0 4096 20 7 1000 0.01
	[ "$(hex_at f.bf 304 8)" = 0000000000000000 ]	# inserted
	within f.bf 312 "$t0" "$t1"		# stamp: made then
	zero_at f.bf 320 $((4096 - 320))	# rest of the table's page
	zero_at f.bf 4096 1280			# the bits
}

@test "create --grow -n 1000 -p 0.01 --seed 42: a growable filter, byte for byte" {
	local t0 t1 i at

	need_xxhsum
	need_hashsum
	t0=$(now_ms)
	bloom create --grow -n 1000 -p 0.01 --seed 42 f.bf
	t1=$(now_ms)
	# Header, 64 entries (4352 bytes, to 8192), one segment.
	[ "$(stat -c %s f.bf)" -eq "$(grow_size)" ]
	layout_is f.bf <<-EOF
	0	8	89424c4f4f4d0d0a	magic
	8	4	02000000		format version 2
	12	4	00010000		header size 256
	16	4	01000000		layout 1
	20	4	01000000		hash 1
	24	8	2a00000000000000	seed 42
	32	4	01000000		mode 1, grow
	36	4	40000000		table entries 64
	40	8	e803000000000000	capacity 1000, of the first segment
	48	8	7b14ae47e17a843f	target fpr 0.01, of the whole filter
	56	8	$(dbl 2.0)	growth 2.0
	64	8	$(dbl 0.9)	ratio 0.9
	72	8	0000000000000000	window: none
	88	8	0020000000000000	data offset 8192
	96	32	$(printf '%064d' 0)	slice fields and reserved
	128	8	$(xxh3_at f.bf 0 128 0)	checksum of bytes 0 to 127
	136	8	0100000000000000	segments in use 1
	144	8	0000000000000000	newest generation: none
	EOF
	within f.bf 80 "$t0" "$t1"
	zero_at f.bf 152 104
	# The first segment: P (1 - r) of the rate.
	entry_is f.bf 0 8192 "$(grow_blocks)" "$(grow_hashes)" 1000 "0.01 * (1 - 0.9)"
	[ "$(hex_at f.bf 304 8)" = 0000000000000000 ]
	within f.bf 312 "$t0" "$t1"
	# The entries not in use are empty, with their checksums.
	for i in $(seq 1 63); do
		at=$(entry "$i")
		zero_at f.bf "$at" 40
		[ "$(hex_at f.bf $((at + 40)) 8)" = "$(head -c 40 /dev/zero | xxh3 "$i")" ] ||
			{ echo "entry $i: checksum $(hex_at f.bf $((at + 40)) 8)"; return 1; }
		zero_at f.bf $((at + 48)) 16
	done
	zero_at f.bf 4352 $((8192 - 4352))
	zero_at f.bf 8192 1728
}

# window_layout FILE WINDOW_MS T0 T1: FILE is what create --generations 4 --layout blocked
# -n 1000 -p 0.01 --seed 42 wrote between T0 and T1, with that window.
window_layout() {
	local f=$1 i

	[ "$(stat -c %s "$f")" -eq 16960 ]
	layout_is "$f" <<-EOF
	0	8	89424c4f4f4d0d0a	magic
	8	4	02000000		format version 2
	12	4	00010000		header size 256
	16	4	01000000		layout 1
	20	4	01000000		hash 1
	24	8	2a00000000000000	seed 42
	32	4	02000000		mode 2, window
	36	4	04000000		table entries 4, the generations
	40	8	e803000000000000	capacity 1000, per window
	48	8	7b14ae47e17a843f	target fpr 0.01
	56	8	0000000000000000	growth: none
	64	8	0000000000000000	ratio: none
	72	8	$(le 8 "$2")	window length $2 ms
	88	8	0010000000000000	data offset 4096
	96	32	$(printf '%064d' 0)	slice fields and reserved
	128	8	$(xxh3_at "$f" 0 128 0)	checksum of bytes 0 to 127
	136	8	0400000000000000	segments in use 4
	144	8	0000000000000000	newest generation 0
	EOF
	within "$f" 80 "$3" "$4"
	zero_at "$f" 152 104
	# A generation holds what arrives in W / (G - 1): 1000 / 3 keys,
	# rounded up; the G generations share the rate.
	for i in 0 1 2 3; do
		entry_is "$f" "$i" $((4096 * (i + 1))) 9 8 334 \
			"-expm1(log1p(-0.01) / 4)"
		[ "$(hex_at "$f" $(($(entry "$i") + 48)) 8)" = 0000000000000000 ]
		zero_at "$f" $((4096 * (i + 1) + 576)) $((i < 3 ? 4096 - 576 : 0))
	done
	# Stamps: 1 + the generation held; only generation 0 is made.
	[ "$(u64_at "$f" $(($(entry 0) + 56)))" -eq 1 ]
	[ "$(u64_at "$f" $(($(entry 1) + 56)))" -eq 0 ]
	[ "$(u64_at "$f" $(($(entry 2) + 56)))" -eq 0 ]
	[ "$(u64_at "$f" $(($(entry 3) + 56)))" -eq 0 ]
	zero_at "$f" 512 $((4096 - 512))
	zero_at "$f" 4096 576
}

@test "create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 42: a window, byte for byte" {
	local t0 t1

	need_xxhsum
	need_hashsum
	t0=$(now_ms)
	bloom create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 42 f.bf
	t1=$(now_ms)
	window_layout f.bf 0 "$t0" "$t1"
}

@test "create --generations 4 --layout blocked --window 1h: the window length in ms" {
	local t0 t1

	need_xxhsum
	need_hashsum
	t0=$(now_ms)
	bloom create --generations 4 --layout blocked --window 1h -n 1000 -p 0.01 --seed 42 f.bf
	t1=$(now_ms)
	window_layout f.bf 3600000 "$t0" "$t1"
}

@test "add changes the counters and the bits, not the checksummed bytes" {
	need_xxhsum
	need_hashsum
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	head -c 4096 f.bf >before
	keys 500 | bloom add f.bf
	cmp <(head -c 304 f.bf) <(head -c 304 before)
	[ "$(hex_at f.bf 304 8)" = "$(le 8 500)" ]	# entry 0 inserted
	cmp <(tail -c +313 f.bf | head -c $((4096 - 312))) <(tail -c +313 before)
	[ "$(stats_field inserted f.bf)" = 500 ]
	run -1 zero_at f.bf 4096 1280
}

@test "a grown filter: each segment on a page, after the last, checksummed" {
	local t0 t1 n i at prev_end=8192 offset nblocks

	need_xxhsum
	need_hashsum
	t0=$(now_ms)
	bloom create --grow -n 1000 -p 0.01 --seed 42 f.bf
	head -c 136 f.bf >before
	keys 10000 | bloom add f.bf
	t1=$(now_ms)
	cmp <(head -c 136 f.bf) before
	n=$(u64_at f.bf 136)
	[ "$n" -eq 4 ]		# 1000 + 2000 + 4000 + 8000
	for i in $(seq 0 $((n - 1))); do
		at=$(entry "$i")
		offset=$(u64_at f.bf "$at")
		nblocks=$(u64_at f.bf $((at + 8)))
		[ $((offset % 4096)) -eq 0 ]
		[ "$offset" -eq $(((prev_end + 4095) / 4096 * 4096)) ]
		entry_is f.bf "$i" "$offset" "$nblocks" \
			"$(u32_at f.bf $((at + 16)))" \
			$((1000 << i)) "0.01 * (1.0 - 0.9) * pow(0.9, $i)"
		within f.bf $((at + 56)) "$t0" "$t1"
		prev_end=$((offset + nblocks * 64))
	done
	[ "$(stat -c %s f.bf)" -eq "$prev_end" ]
}

@test "a window after bloom rotate: the newest generation and the stamps" {
	need_xxhsum
	bloom create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 42 f.bf
	head -c 136 f.bf >before
	bloom rotate f.bf
	bloom rotate f.bf
	cmp <(head -c 136 f.bf) before
	[ "$(u64_at f.bf 136)" -eq 4 ]
	[ "$(u64_at f.bf 144)" -eq 2 ]
	[ "$(u64_at f.bf $(($(entry 0) + 56)))" -eq 1 ]
	[ "$(u64_at f.bf $(($(entry 1) + 56)))" -eq 2 ]
	[ "$(u64_at f.bf $(($(entry 2) + 56)))" -eq 3 ]
	[ "$(u64_at f.bf $(($(entry 3) + 56)))" -eq 0 ]
}

# ---- Too short for the header or the table.

@test "fixed: cut to 255 bytes"  { fixed; truncate -s 255 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "fixed: cut inside the table" { fixed; truncate -s 319 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "grow: cut inside the table" { grow; truncate -s 4351 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "window: cut inside the table" { window; truncate -s 511 f.bf; rejected f.bf "not a bloom filter (too short)"; }

# ---- What every version has, on a v2 file.

@test "v2: version 3" {
	fixed; put f.bf 8 03; fix_header f.bf
	rejected f.bf "unsupported format version 3 (this bloom reads versions 1 and 2)"
}
@test "v2: version 1 with the v2 header size 256" {
	fixed; set_header f.bf 8 01
	rejected f.bf "corrupt header (bad header size)"
}
@test "v2: header size 128" {
	fixed; set_header f.bf 12 80000000
	rejected f.bf "corrupt header (bad header size)"
}
@test "v2: layout 2" { fixed; set_header f.bf 16 02; rejected f.bf "corrupt header (unknown layout)"; }
@test "v2: hash 2"   { fixed; set_header f.bf 20 02; rejected f.bf "corrupt header (unknown hash function)"; }

# ---- The header: one field wrong, checksum mended.

@test "reserved byte 112 set"	{ fixed; set_header f.bf 112 01; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 127 set"	{ grow; set_header f.bf 127 80; rejected f.bf "corrupt header (reserved bytes not zero)"; }
# Past the checksum: no checksum to mend.
@test "reserved byte 152 set"	{ fixed; put f.bf 152 01; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 255 set"	{ window; put f.bf 255 ff; rejected f.bf "corrupt header (reserved bytes not zero)"; }

@test "mode 3"			{ fixed; set_header f.bf 32 03; rejected f.bf "corrupt header (unknown mode)"; }
@test "mode 2^32 - 1"		{ grow; set_header f.bf 32 ffffffff; rejected f.bf "corrupt header (unknown mode)"; }

@test "fixed: 2 table entries" {
	fixed; set_header f.bf 36 02
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "fixed: 0 table entries" {
	fixed; set_header f.bf 36 00
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "grow: 1 table entry" {
	grow; set_header f.bf 36 01
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "grow: 65 table entries" {
	grow; set_header f.bf 36 41
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "window: 1 table entry" {
	window; set_header f.bf 36 01
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "window: 65 table entries" {
	window; set_header f.bf 36 41
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}
@test "a fixed filter read as a window: 1 table entry" {
	fixed; set_header f.bf 32 02
	rejected f.bf "corrupt header (segment table size absurd for the mode)"
}

@test "grow: growth 1.24" {
	grow; set_header f.bf 56 "$(dbl 1.24)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: growth 16.5" {
	grow; set_header f.bf 56 "$(dbl 16.5)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: growth NaN" {
	grow; set_header f.bf 56 "$(dbl nan)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: ratio 0" {
	grow; set_header f.bf 64 "$(dbl 0)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: ratio 1" {
	grow; set_header f.bf 64 "$(dbl 1)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: ratio NaN" {
	grow; set_header f.bf 64 "$(dbl nan)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "fixed: growth 2" {
	fixed; set_header f.bf 56 "$(dbl 2)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "fixed: ratio 0.8" {
	fixed; set_header f.bf 64 "$(dbl 0.8)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "window: growth 2" {
	window; set_header f.bf 56 "$(dbl 2)"
	rejected f.bf "invalid parameters (growth factor or tightening ratio)"
}
@test "grow: growth 1.25 and 16, the bounds, are accepted" {
	grow; set_header f.bf 56 "$(dbl 1.25)"
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
	[ "$(stats_field growth f.bf)" = 1.25 ]
	set_header f.bf 56 "$(dbl 16)"
	run -0 --separate-stderr bloom stats f.bf
	[ "$(stats_field growth f.bf)" = 16 ]
}

@test "fixed: window 1000 ms" {
	fixed; set_header f.bf 72 "$(le 8 1000)"
	rejected f.bf "invalid parameters (window length)"
}
@test "grow: window 1000 ms" {
	grow; set_header f.bf 72 "$(le 8 1000)"
	rejected f.bf "invalid parameters (window length)"
}
@test "window: 2 ms for 4 generations, under 1 ms a generation" {
	window; set_header f.bf 72 "$(le 8 2)"
	rejected f.bf "invalid parameters (window length)"
}
@test "window: 2^52 + 1 ms" {
	window; set_header f.bf 72 "$(le 8 $(((1 << 52) + 1)))"
	rejected f.bf "invalid parameters (window length)"
}
@test "window: 3 ms and 2^52 ms, the bounds, are accepted" {
	window; set_header f.bf 72 "$(le 8 3)"
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
	set_header f.bf 72 "$(le 8 $((1 << 52)))"
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
}

@test "fixed: capacity 0"	{ fixed; set_header f.bf 40 0000; rejected f.bf "invalid parameters (capacity)"; }
@test "grow: capacity 0"	{ grow; set_header f.bf 40 0000; rejected f.bf "invalid parameters (capacity)"; }
@test "window: capacity 0"	{ window; set_header f.bf 40 0000; rejected f.bf "invalid parameters (capacity)"; }
@test "fixed: target fpr 0"	{ fixed; set_header f.bf 48 "$(dbl 0)"; rejected f.bf "invalid parameters (target fpr)"; }
@test "grow: target fpr 1"	{ grow; set_header f.bf 48 "$(dbl 1)"; rejected f.bf "invalid parameters (target fpr)"; }
@test "window: target fpr NaN"	{ window; set_header f.bf 48 "$(dbl nan)"; rejected f.bf "invalid parameters (target fpr)"; }
@test "fixed: target fpr -0.01"	{ fixed; set_header f.bf 48 "$(dbl -0.01)"; rejected f.bf "invalid parameters (target fpr)"; }

@test "fixed: data offset 8192" {
	fixed; set_header f.bf 88 "$(le 8 8192)"
	rejected f.bf "corrupt header (data offset is not the end of the segment table)"
}
@test "fixed: data offset 320, the table's end not rounded to a page" {
	fixed; set_header f.bf 88 "$(le 8 320)"
	rejected f.bf "corrupt header (data offset is not the end of the segment table)"
}
@test "grow: data offset 4096" {
	grow; set_header f.bf 88 "$(le 8 4096)"
	rejected f.bf "corrupt header (data offset is not the end of the segment table)"
}
@test "window: data offset 0" {
	window; set_header f.bf 88 "$(le 8 0)"
	rejected f.bf "corrupt header (data offset is not the end of the segment table)"
}

@test "slice index 1 of no slices" {
	fixed; set_header f.bf 96 01
	rejected f.bf "corrupt header (slice fields absurd)"
}
@test "whole block count without slices" {
	fixed; set_header f.bf 104 "$(le 8 40)"
	rejected f.bf "corrupt header (slice fields absurd)"
}
@test "grow: slice 0 of 2" {
	grow; set_header f.bf 100 02; set_header f.bf 104 "$(le 8 54)"
	rejected f.bf "corrupt header (slice fields absurd)"
}
@test "fixed: slice 2 of 2" {
	fixed; set_header f.bf 96 02; set_header f.bf 100 02
	set_header f.bf 104 "$(le 8 40)"
	rejected f.bf "corrupt header (slice fields absurd)"
}
@test "fixed: slice 0 of 2 of 60 blocks, not the 20 of its segment" {
	fixed; set_header f.bf 100 02; set_header f.bf 104 "$(le 8 60)"
	rejected f.bf "corrupt header (slice fields absurd)"
}

# ---- Checksummed header fields changed to other valid values.

@test "seed byte flipped"	{ fixed; put f.bf 24 2b; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "capacity 1000 -> 1001"	{ grow; put f.bf 40 e9; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "growth 2 -> 3"		{ grow; put f.bf 56 "$(dbl 3)"; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "creation time changed" {
	# Its lowest byte flipped: a fixed value would change nothing one
	# run in 256, when the clock's milliseconds end in it.
	window; put f.bf 80 "$(printf '%02x' $(($(byte_at f.bf 80) ^ 0xff)))"
	rejected f.bf "corrupt header (checksum mismatch)"
}
@test "window length 0 -> 1 h"	{ window; put f.bf 72 "$(le 8 3600000)"; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "header checksum byte flipped" {
	fixed; put f.bf 128 "$(printf '%02x' $(($(byte_at f.bf 128) ^ 1)))"
	rejected f.bf "corrupt header (checksum mismatch)"
}

# ---- Segments in use and the generation: outside the checksum.

@test "fixed: 0 segments in use" {
	fixed; put f.bf 136 00
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "fixed: 2 segments in use" {
	fixed; put f.bf 136 02
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "grow: 0 segments in use" {
	grow; put f.bf 136 00
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "grow: 65 segments in use, more than the table holds" {
	grow; put f.bf 136 41
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "grow: 2^64 - 1 segments in use" {
	grow; put f.bf 136 ffffffffffffffff
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "window: 3 segments in use of 4" {
	window; put f.bf 136 03
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "window: 5 segments in use of 4, the fifth entry empty" {
	window; put f.bf 136 05
	rejected f.bf "invalid parameters (bit count)"
}
@test "window: 61 segments in use, more than its table's page holds" {
	window; put f.bf 136 3d
	rejected f.bf "corrupt header (segment count absurd for the table)"
}
@test "grow: 2 segments in use, the second entry empty" {
	grow; put f.bf 136 02
	rejected f.bf "invalid parameters (bit count)"
}
@test "fixed: generation 1" {
	fixed; put f.bf 144 01
	rejected f.bf "corrupt header (generation number)"
}
@test "grow: generation 2^63" {
	grow; put f.bf 151 80
	rejected f.bf "corrupt header (generation number)"
}

# ---- A table entry wrong, its checksum mended.

@test "entry reserved byte 20 set" {
	fixed; set_entry f.bf 0 20 01
	rejected f.bf "corrupt segment table (reserved bytes not zero)"
}
@test "window entry 3: reserved byte 23 set" {
	window; set_entry f.bf 3 23 80
	rejected f.bf "corrupt segment table (reserved bytes not zero)"
}
@test "entry block count 0" {
	fixed; set_entry f.bf 0 8 "$(le 8 0)"
	rejected f.bf "invalid parameters (bit count)"
}
@test "entry block count 2^40 + 1" {
	grow; set_entry f.bf 0 8 "$(le 8 $(((1 << 40) + 1)))"
	rejected f.bf "invalid parameters (bit count)"
}
@test "entry hash count 0" {
	window; set_entry f.bf 1 16 00
	rejected f.bf "invalid parameters (hash count)"
}
@test "entry hash count 33" {
	fixed; set_entry f.bf 0 16 21
	rejected f.bf "invalid parameters (hash count)"
}
@test "entry capacity 0" {
	grow; set_entry f.bf 0 24 0000
	rejected f.bf "invalid parameters (capacity)"
}
@test "entry target fpr 0" {
	fixed; set_entry f.bf 0 32 "$(dbl 0)"
	rejected f.bf "invalid parameters (target fpr)"
}
@test "entry target fpr 1" {
	window; set_entry f.bf 2 32 "$(dbl 1)"
	rejected f.bf "invalid parameters (target fpr)"
}
@test "entry target fpr infinity" {
	grow; set_entry f.bf 0 32 "$(dbl inf)"
	rejected f.bf "invalid parameters (target fpr)"
}

@test "entry capacity changed, checksum not mended" {
	fixed; put f.bf $(($(entry 0) + 24)) e9
	rejected f.bf "corrupt segment table (checksum mismatch)"
}
@test "entry checksum byte flipped" {
	grow; put f.bf $(($(entry 0) + 47)) 00
	rejected f.bf "corrupt segment table (checksum mismatch)"
}
@test "entry 1's checksum with seed 0 rather than its index" {
	window
	put f.bf $(($(entry 1) + 40)) "$(xxh3_at f.bf "$(entry 1)" 40 0)"
	rejected f.bf "corrupt segment table (checksum mismatch)"
}
@test "entry 0's checksum with seed 1" {
	window
	put f.bf $(($(entry 0) + 40)) "$(xxh3_at f.bf "$(entry 0)" 40 1)"
	rejected f.bf "corrupt segment table (checksum mismatch)"
}

@test "entry offset 4097, not on a page" {
	fixed; set_entry f.bf 0 0 "$(le 8 4097)"
	rejected f.bf "corrupt segment table (segment not on a page boundary)"
}
@test "entry offset 4160, on a block but not a page" {
	fixed; set_entry f.bf 0 0 "$(le 8 4160)"
	rejected f.bf "corrupt segment table (segment not on a page boundary)"
}
@test "entry offset 0, over the header" {
	fixed; set_entry f.bf 0 0 "$(le 8 0)"
	rejected f.bf "corrupt segment table (segments overlap)"
}
@test "grow: entry offset 4096, over the table" {
	grow; set_entry f.bf 0 0 "$(le 8 4096)"
	rejected f.bf "corrupt segment table (segments overlap)"
}
@test "window: entry 1 at entry 0's offset" {
	window; set_entry f.bf 1 0 "$(le 8 4096)"
	rejected f.bf "corrupt segment table (segments overlap)"
}
@test "window: entry 2 before entry 1" {
	window; set_entry f.bf 2 0 "$(le 8 4096)"; set_entry f.bf 1 0 "$(le 8 12288)"
	rejected f.bf "corrupt segment table (segments overlap)"
}
@test "window: entry 1 on the page entry 0 ends in, a block after it" {
	# Entry 0 of 64 blocks reaches into page 2, where entry 1 starts.
	window; set_entry f.bf 0 8 "$(le 8 65)"
	rejected f.bf "corrupt segment table (segments overlap)"
}
# A segment past the end of the largest file a filter may have, 2^47
# bytes, is absurd; one past the end of the file only says that the file
# is shorter than the table says (below).
@test "fixed: entry offset 2^47, past the largest file" {
	fixed; set_entry f.bf 0 0 "$(le 8 $((1 << 47)))"
	rejected f.bf "corrupt segment table (segment past the end of file)"
}
@test "fixed: entry offset 2^63, past the largest file" {
	fixed; set_entry f.bf 0 0 "$(le 8 $((1 << 63)))"
	rejected f.bf "corrupt segment table (segment past the end of file)"
}
@test "fixed: 65 blocks on the last page of the largest file" {
	fixed; set_entry f.bf 0 0 "$(le 8 $(((1 << 47) - 4096)))"
	set_entry f.bf 0 8 "$(le 8 65)"
	rejected f.bf "corrupt segment table (segment past the end of file)"
}
@test "fixed: 64 blocks on the last page of the largest file: the file is short" {
	fixed; set_entry f.bf 0 0 "$(le 8 $(((1 << 47) - 4096)))"
	set_entry f.bf 0 8 "$(le 8 64)"
	rejected f.bf "size mismatch (file is not the 140737488355328 bytes its header says)"
}
@test "window: the last entry at 2^47, the others sound" {
	window; set_entry f.bf 3 0 "$(le 8 $((1 << 47)))"
	rejected f.bf "corrupt segment table (segment past the end of file)"
}

@test "window: entry 1 holds generation 1 of a filter at 0" {
	# Stamp 2: 1 + generation 1.  The stamps are outside the checksum.
	window; put f.bf $(($(entry 1) + 56)) 02
	rejected f.bf "corrupt segment table (generation newer than the filter's)"
}
@test "window: entry 0 stamped 2^64 - 1" {
	window; put f.bf $(($(entry 0) + 56)) ffffffffffffffff
	rejected f.bf "corrupt segment table (generation newer than the filter's)"
}
@test "window: a generation one ahead of the filter's, mid-rotation, is accepted" {
	window; put f.bf $(($(entry 1) + 56)) 01
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
	run -0 bloom check f.bf < <(keys 10)
}
@test "fixed and grow: the stamp is a time, any value accepted" {
	fixed; put f.bf $(($(entry 0) + 56)) ffffffffffffffff
	run -0 bloom check f.bf < <(keys 10)
	grow; put f.bf $(($(entry 0) + 56)) ffffffffffffffff
	run -0 bloom check f.bf < <(keys 10)
}
@test "grow: entries past the segments in use are not read" {
	grow; put f.bf "$(entry 5)" ffffffffffffffff
	run -0 bloom check f.bf < <(keys 10)
}

# ---- The file size.

@test "fixed: one byte longer" {
	fixed; truncate -s 5377 f.bf
	rejected f.bf "size mismatch (file is not the 5376 bytes its header says)"
}
@test "fixed: a page longer" {
	fixed; truncate -s $((5376 + 4096)) f.bf
	rejected f.bf "size mismatch (file is not the 5376 bytes its header says)"
}
@test "window: one byte longer, as a rotation killed as it gave back room leaves it, is accepted" {
	window; truncate -s 16961 f.bf
	run -0 --separate-stderr bloom check f.bf < <(keys 10)
	[ "$stderr" = "" ]
}
@test "fixed: one byte shorter" {
	fixed; truncate -s 5375 f.bf
	rejected f.bf "size mismatch (file is not the 5376 bytes its header says)"
}
@test "window: cut to the table's page" {
	window; truncate -s 4096 f.bf
	rejected f.bf "size mismatch (file is not the 16960 bytes its header says)"
}
@test "fixed: cut inside the table's page, after the table" {
	fixed; truncate -s 4095 f.bf
	rejected f.bf "size mismatch (file is not the 5376 bytes its header says)"
}
@test "grow: cut inside the table's pages, after the table" {
	grow; truncate -s 8000 f.bf
	rejected f.bf "size mismatch (file is not the $(grow_size) bytes its header says)"
}
@test "grow: one byte shorter" {
	grow; truncate -s $(($(grow_size) - 1)) f.bf
	rejected f.bf "size mismatch (file is not the $(grow_size) bytes its header says)"
}
@test "fixed: entry offset 8192, past the end of the file" {
	fixed; set_entry f.bf 0 0 "$(le 8 8192)"
	rejected f.bf "size mismatch (file is not the 9472 bytes its header says)"
}
@test "fixed: 21 blocks, one past the end of the file" {
	fixed; set_entry f.bf 0 8 "$(le 8 21)"
	rejected f.bf "size mismatch (file is not the 5440 bytes its header says)"
}
@test "fixed: 2^40 blocks, without overflow" {
	fixed; set_entry f.bf 0 8 "$(le 8 $((1 << 40)))"
	rejected f.bf "size mismatch (file is not the 70368744181760 bytes its header says)"
}
@test "window: the last entry 10 blocks, one past the end of the file" {
	window; set_entry f.bf 3 8 "$(le 8 10)"
	rejected f.bf "size mismatch (file is not the 17024 bytes its header says)"
}
@test "grow: longer than its segments, as a growth killed early leaves it, is accepted" {
	grow; truncate -s $(($(grow_size) + 4096)) f.bf
	run -0 --separate-stderr bloom stats f.bf
	[ "$stderr" = "" ]
	run -0 --separate-stderr bloom check f.bf < <(keys 10)
	[ "$output" = "$(keys 10)" ]
	# The next growth takes the space: segment 1 on the page after
	# segment 0, the file as long as its segments again.
	run -0 --separate-stderr bloom add f.bf < <(keys 3000)
	[ "$stderr" = "" ]
	[ "$(u64_at f.bf 136)" -eq 2 ]
	[ "$(u64_at f.bf "$(entry 1)")" -eq 12288 ]
	[ "$(stat -c %s f.bf)" -eq $((12288 + 64 * $(u64_at f.bf $(($(entry 1) + 8))))) ]
	run -1 bloom check -v f.bf < <(keys 3000)
}
@test "grow: one byte longer is accepted" {
	grow; truncate -s $(($(grow_size) + 1)) f.bf
	run -0 --separate-stderr bloom check f.bf < <(keys 10)
	[ "$stderr" = "" ]
}

@test "grow: a file made with tightening 0.8 (before issue 19) grows at 0.8" {
	grow; set_header f.bf 64 "$(dbl 0.8)"
	run -0 --separate-stderr bloom add f.bf < <(keys 3000)
	[ "$stderr" = "" ]
	# Segment 0 as made; segment 1 at 0.01 (1 - 0.8) 0.8, for 2000 keys.
	bloom stats --json f.bf | python3 -c '
import json, math, sys
d = json.load(sys.stdin)
assert d["tightening"] == 0.8, d["tightening"]
rates = [s["target_fpr"] for s in d["segments"]]
want = [0.01 * (1 - 0.9), 0.01 * (1 - 0.8) * 0.8]
assert len(rates) == 2 and all(math.isclose(r, w, rel_tol=1e-12)
    for r, w in zip(rates, want)), rates
'
	bloom create -n 2000 --seed 42 -p "$(python3 -c 'print(repr(0.01 * (1 - 0.8) * 0.8))')" s.bf
	[ "$(u64_at f.bf $(($(entry 1) + 8)))" -eq $(($(stats_field bits s.bf) / 512)) ]
	run -1 bloom check -v f.bf < <(keys 3000)
}
