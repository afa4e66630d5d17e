#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Version 1 compatibility: files in the format bloom 1.0 wrote, built here
# byte by byte (make_v1 in helpers.bash), must keep working: the same
# answers, the same bits set, only the inserted counter changed by add,
# and the same message for each way such a file can be wrong.  The layout
# is in the comment at the top of store/format.c; format2.bats tests version 2.
#
# bloom_header_parse checks a v1 file in this order: length against the
# magic, magic, length against the seed, version, header size, length
# against the header, layout, hash, reserved bytes, bit count, hash count,
# capacity, target fpr, checksum, file size.  A corrupted field is caught
# by its own check before the checksum is compared, so most tests below
# change one field and leave the checksum.

bats_require_minimum_version 1.5.0
load helpers

# The good filter, made once and copied by good().
setup_file() {
	local bloom="$BATS_TEST_DIRNAME/../bloom"

	make_v1 "$BATS_FILE_TMPDIR/good.bf" 1000 0.01 42 10240 7 &&
		keys 10 | "$bloom" add "$BATS_FILE_TMPDIR/good.bf"
}

# Makes f.bf, a v1 filter: 1000 items at 0.01, seed 42, 7 hashes, 10 keys
# added.  1408 bytes: the 128-byte header and 20 blocks of 64 bytes.
good() {
	cp "$BATS_FILE_TMPDIR/good.bf" f.bf
}

# Rewrites the checksum of the v1 header of FILE to match its fields.
fix_checksum() {
	put "$1" 64 "$(xxh3_at "$1" 0 64 0)"
}

# v1_model NBLOCKS HASHES SEED OPS BITS: an implementation of the v1
# layout apart from bloom's, in python3 over the hashes tests/hashsum
# prints: the block is the high 64 bits of hash * NBLOCKS, the positions
# come from the SplitMix64 sequence seeded with the hash, 9 bits each
# (3 for the 64-bit word, 6 for the bit in it), 7 to an output.  Reads
# the file OPS, lines "add KEY", "new KEY" (an add that says whether the
# key was new) or "check KEY", done in order on an empty array; prints
# "new KEY" for a new KEY that set a bit, "in KEY" or "out KEY" for a
# check, then "inserted N"; writes the array to the file BITS.
v1_model() {
	python3 - "$root/tests/hashsum" "$@" <<-'EOF'
	import os, subprocess, sys
	hashsum, nblocks, hashes, seed, ops, out = sys.argv[1:]
	nblocks, hashes = int(nblocks), int(hashes)
	ops = [line.split(" ", 1) for line in open(ops).read().splitlines()]
	keys = sorted({key for _, key in ops})
	os.mkdir("model-keys")
	paths = []
	for i, key in enumerate(keys):
	    paths.append("model-keys/%d" % i)
	    with open(paths[-1], "wb") as f:
	        f.write(key.encode())
	sums = subprocess.run([hashsum, "-s", seed] + paths, check=True,
	    capture_output=True, text=True).stdout.splitlines()
	assert len(sums) == len(keys)
	hash_of = {}
	for line in sums:
	    h, path = line.split("  ", 1)
	    hash_of[keys[int(path.split("/")[1])]] = int(h, 16)
	M = 2**64 - 1
	def splitmix(z):
	    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
	    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
	    return z ^ (z >> 31)
	def positions(h):
	    block = (h * nblocks) >> 64
	    state, left = h, hashes
	    while left > 0:
	        n = min(left, 7)
	        left -= n
	        state = (state + 0x9e3779b97f4a7c15) & M
	        bits = splitmix(state)
	        for _ in range(n):
	            word, bit = (bits >> 6) & 7, bits & 63
	            yield block * 64 + word * 8 + bit // 8, 1 << (bit % 8)
	            bits >>= 9
	array = bytearray(nblocks * 64)
	inserted = 0
	for op, key in ops:
	    pos = list(positions(hash_of[key]))
	    there = all(array[i] & mask for i, mask in pos)
	    if op == "check":
	        print(("in " if there else "out ") + key)
	    elif not there:
	        for i, mask in pos:
	            array[i] |= mask
	        inserted += 1
	        if op == "new":
	            print("new " + key)
	print("inserted %d" % inserted)
	with open(out, "wb") as f:
	    f.write(array)
	EOF
}

# Prints the lines of the model's output that start with WORD, without it.
model_lines() {
	sed -n "s/^$1 //p" model.out
}

# unchanged_v1 NBITS HASHES SEED CAPACITY FPR N: the whole story of a v1
# file f.bf built with these fields, against v1_model: key-1 .. key-N
# added, then add --new over key-(0.8 N + 1) .. key-(1.4 N), then check
# and check -v over key-1 .. key-(2 N).  Each step answers what the model
# does, leaves the bits the model sets and the header as it was but for
# the inserted counter, and stats reads it as a version 1 fixed filter.
unchanged_v1() {
	local nbits=$1 hashes=$2 seed=$3 capacity=$4 fpr=$5 n=$6 size

	need_xxhsum
	need_hashsum
	size=$((128 + nbits / 8))
	make_v1 f.bf "$capacity" "$fpr" "$seed" "$nbits" "$hashes"
	head -c 128 f.bf >header.before
	keys "$n" >first
	keys $((n * 7 / 5)) | sed -n "$((n * 4 / 5 + 1)),\$p" >again
	keys $((n * 2)) >queries
	{
		sed 's/^/add /' first
		sed 's/^/new /' again
		sed 's/^/check /' queries
	} >ops
	v1_model $((nbits / 512)) "$hashes" "$seed" ops model.bits >model.out
	echo "model: $(model_lines new | wc -l) new, $(model_lines in | wc -l) in," \
		"$(model_lines out | wc -l) out, inserted $(model_lines inserted)"
	# Neither the repeats nor the keys never added are all one answer.
	[ "$(model_lines new | wc -l)" -lt "$(wc -l <again)" ]
	[ -n "$(model_lines out)" ]

	# Plain add, then add --new: the new lines are the model's, and so is
	# the inserted counter, the only header field that changes.
	bloom add f.bf first
	run --separate-stderr bloom add --new f.bf again
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "$(model_lines new)" ]
	[ "$(stat -c %s f.bf)" -eq "$size" ]
	cmp <(head -c 72 f.bf) <(head -c 72 header.before)
	cmp <(tail -c +81 f.bf | head -c 48) <(tail -c +81 header.before)
	[ "$(hex_at f.bf 72 8)" = "$(le 8 "$(model_lines inserted)")" ]
	# The bits, byte for byte.
	cmp <(tail -c +129 f.bf) model.bits

	# check and check -v answer as the model does.
	run --separate-stderr bloom check f.bf queries
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "$(model_lines in)" ]
	run --separate-stderr bloom check -v f.bf queries
	[ "$stderr" = "" ]
	[ "$output" = "$(model_lines out)" ]
	[ "$status" -eq "$([ -n "$output" ] && echo 0 || echo 1)" ]

	# stats reads the header as it is.
	[ "$(stats_field format f.bf)" = 1 ]
	[ "$(stats_field mode f.bf)" = fixed ]
	[ "$(stats_field bytes f.bf | cut -d' ' -f1)" = "$size" ]
	[ "$(stats_field bits f.bf)" = "$nbits" ]
	[ "$(stats_field hashes f.bf)" = "$hashes" ]
	[ "$(stats_field seed f.bf)" = "$(printf '%u' "$seed")" ]
	[ "$(stats_field capacity f.bf)" = "$capacity" ]
	[ "$(stats_field inserted f.bf)" = "$(model_lines inserted)" ]
	[ "$(stats_field segments f.bf)" = 1 ]
}

# ---- The header as bloom 1.0 wrote it.

@test "make_v1 writes the header bloom 1.0 create -n 1000 -p 0.01 --seed 42 wrote" {
	local off len want what

	need_xxhsum
	make_v1 f.bf 1000 0.01 42 10240 7
	[ "$(stat -c %s f.bf)" -eq 1408 ]
	# These are the bytes bloom 1.0 wrote, checksum included.
	while read -r off len want what; do
		[ "$(hex_at f.bf "$off" "$len")" = "$want" ] || {
			echo "$what at $off: $(hex_at f.bf "$off" "$len"), want $want"
			return 1
		}
	done <<-EOF
	0	8	89424c4f4f4d0d0a	magic "\211BLOOM\r\n"
	8	4	01000000		format version 1
	12	4	80000000		header size 128
	16	4	01000000		layout 1, blocked 512-bit
	20	4	01000000		hash 1, XXH3-64
	24	8	2a00000000000000	seed 42
	32	8	0028000000000000	bit count 10240
	40	4	07000000		hash count 7
	44	4	00000000		reserved
	48	8	e803000000000000	capacity 1000
	56	8	7b14ae47e17a843f	target fpr 0.01
	64	8	9ce85e69d6b29db0	checksum
	72	8	0000000000000000	inserted 0
	80	48	$(printf '%096d' 0)	reserved
	EOF
	tail -c +129 f.bf | cmp -s - <(head -c 1280 /dev/zero)
}

@test "a version 1 filter is read as such: stats" {
	local name want

	make_v1 f.bf 1000 0.01 42 10240 7
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	while read -r name want; do
		[ "$(printf '%s\n' "$output" | sed -n "s/^$name: //p")" = "$want" ] ||
			{ echo "$name: want '$want'"; return 1; }
	done <<-EOF
	format		1
	layout		blocked512 (512-bit blocks)
	hash		xxh3-64
	mode		fixed
	bytes		1408 (1.4 KiB)
	bits		10240
	hashes		7
	seed		42
	capacity	1000
	target_fpr	0.01
	inserted	0
	bits_set	0
	segments	1
	EOF
}

# ---- Answers and bits unchanged.

@test "a v1 file of 20 blocks and 7 hashes: answers and bits unchanged" {
	unchanged_v1 10240 7 42 1000 0.01 500
}

@test "a v1 file of 3 blocks and 16 hashes (three SplitMix64 outputs a key)" {
	unchanged_v1 1536 16 0xfedcba9876543210 100 0.001 20
}

@test "a v1 file of 1 block and 32 hashes" {
	unchanged_v1 512 32 0 10 0.5 5
}

@test "a v1 file of 257 blocks and 1 hash" {
	unchanged_v1 131584 1 12345 20000 0.3 3000
}

@test "the bits of key-1 .. key-500 in the 20-block filter are those bloom 1.0 set" {
	need_xxhsum
	make_v1 f.bf 1000 0.01 42 10240 7
	keys 500 | bloom add f.bf
	# XXH3-64 of the 1280 bytes of bits that bloom 1.0 (commit 9f0cdde)
	# left after the same add.
	[ "$(xxh3_at f.bf 128 1280 0)" = 33a512f2da63d940 ]
	[ "$(hex_at f.bf 72 8)" = "$(le 8 500)" ]
}

@test "add to a v1 file leaves it version 1, whatever it adds" {
	make_v1 f.bf 1000 0.01 42 10240 7
	keys 5000 | bloom add f.bf
	[ "$(stat -c %s f.bf)" -eq 1408 ]
	[ "$(hex_at f.bf 8 8)" = 0100000080000000 ]
	[ "$(stats_field format f.bf)" = 1 ]
	[ "$(stats_field segments f.bf)" = 1 ]
	run -0 bloom check -c f.bf < <(keys 5000)
	[ "$output" = 5000 ]
}

@test "the inserted counter stops at 2^64 - 1 rather than wrapping" {
	make_v1 f.bf 1000 0.01 42 10240 7
	put f.bf 72 feffffffffffffff
	keys 3 | bloom add f.bf
	[ "$(hex_at f.bf 72 8)" = ffffffffffffffff ]
}

# ---- Files that are not filters at all.

@test "missing file" {
	rejected nofile.bf "No such file or directory" stats check
}

@test "missing directory" {
	rejected nodir/f.bf "No such file or directory" stats check
}

@test "a directory"		{ mkdir d.bf; rejected d.bf "is a directory, not a filter" stats check add rotate route; }
@test "a FIFO"			{ mkfifo p.bf; rejected p.bf "not a regular file"; }
@test "/dev/null"		{ rejected /dev/null "not a regular file" stats check; }
@test "an empty file"		{ : >f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "a 5-byte file"		{ printf abcde >f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "7 bytes of the magic"	{ printf '\211BLOOM\r' >f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "the magic and no more"	{ printf '\211BLOOM\r\n' >f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "a text file"		{ keys 100 >f.bf; rejected f.bf "not a bloom filter (bad magic)"; }
@test "a short text file"	{ echo 'hello, world' >f.bf; rejected f.bf "not a bloom filter (bad magic)"; }
@test "magic byte 1 changed"	{ good; put f.bf 1 62; rejected f.bf "not a bloom filter (bad magic)"; }
@test "magic byte 7 changed"	{ good; put f.bf 7 0d; rejected f.bf "not a bloom filter (bad magic)"; }
@test "a filter cut to 31 bytes" { good; truncate -s 31 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "a filter cut to 100 bytes" { good; truncate -s 100 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "a filter cut to 127 bytes" { good; truncate -s 127 f.bf; rejected f.bf "not a bloom filter (too short)"; }

# ---- One header field wrong: its own message, whatever the checksum.

@test "version 3" {
	good; put f.bf 8 03
	rejected f.bf "unsupported format version 3 (this bloom reads versions 1 and 2)"
}
@test "version 0" {
	good; put f.bf 8 00
	rejected f.bf "unsupported format version 0 (this bloom reads versions 1 and 2)"
}
@test "version 257" {
	good; put f.bf 9 01
	rejected f.bf "unsupported format version 257 (this bloom reads versions 1 and 2)"
}
@test "version 2^32 - 1" {
	good; put f.bf 8 ffffffff
	rejected f.bf "unsupported format version 4294967295 (this bloom reads versions 1 and 2)"
}
@test "version 3 wins over every later problem" {
	good; put f.bf 8 03; put f.bf 16 07; put f.bf 100 01; put f.bf 40 00
	rejected f.bf "unsupported format version 3 (this bloom reads versions 1 and 2)"
}
@test "version 2 with the v1 header size 128" {
	good; put f.bf 8 02
	rejected f.bf "corrupt header (bad header size)"
}
@test "version 2 with the v1 header size, checksum fixed" {
	need_xxhsum
	good; put f.bf 8 02; fix_checksum f.bf
	rejected f.bf "corrupt header (bad header size)"
}
@test "header size 256, that of version 2" {
	good; put f.bf 12 00 01
	rejected f.bf "corrupt header (bad header size)"
}
@test "header size 64"		{ good; put f.bf 12 40; rejected f.bf "corrupt header (bad header size)"; }
@test "header size 129"		{ good; put f.bf 12 81; rejected f.bf "corrupt header (bad header size)"; }
@test "layout 0"		{ good; put f.bf 16 00; rejected f.bf "corrupt header (unknown layout)"; }
@test "layout 2"		{ good; put f.bf 16 02; rejected f.bf "corrupt header (unknown layout)"; }
@test "hash 0"			{ good; put f.bf 20 00; rejected f.bf "corrupt header (unknown hash function)"; }
@test "hash 2"			{ good; put f.bf 20 02; rejected f.bf "corrupt header (unknown hash function)"; }
@test "reserved byte 44 set"	{ good; put f.bf 44 01; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 47 set"	{ good; put f.bf 47 80; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 80 set"	{ good; put f.bf 80 01; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 100 set"	{ good; put f.bf 100 01; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "reserved byte 127 set"	{ good; put f.bf 127 ff; rejected f.bf "corrupt header (reserved bytes not zero)"; }
@test "bit count 0" {
	good; put f.bf 32 00 00 00 00 00 00 00 00
	rejected f.bf "invalid parameters (bit count)"
}
@test "bit count 10241, not whole blocks" {
	good; put f.bf 32 01
	rejected f.bf "invalid parameters (bit count)"
}
@test "bit count 10496, half a block over" {
	good; put f.bf 33 29
	rejected f.bf "invalid parameters (bit count)"
}
@test "bit count absurd: high byte set" {
	good; put f.bf 39 80
	rejected f.bf "invalid parameters (bit count)"
}
@test "bit count 2^49 + 10240: just over 2^40 blocks" {
	good; put f.bf 38 02
	rejected f.bf "invalid parameters (bit count)"
}
@test "hash count 0"		{ good; put f.bf 40 00; rejected f.bf "invalid parameters (hash count)"; }
@test "hash count 33"		{ good; put f.bf 40 21; rejected f.bf "invalid parameters (hash count)"; }
@test "hash count 263"		{ good; put f.bf 41 01; rejected f.bf "invalid parameters (hash count)"; }
@test "capacity 0"		{ good; put f.bf 48 00 00; rejected f.bf "invalid parameters (capacity)"; }
@test "target fpr 0" {
	good; put f.bf 56 00 00 00 00 00 00 00 00
	rejected f.bf "invalid parameters (target fpr)"
}
@test "target fpr 1.0" {
	good; put f.bf 56 00 00 00 00 00 00 f0 3f
	rejected f.bf "invalid parameters (target fpr)"
}
@test "target fpr 2.0" {
	good; put f.bf 56 00 00 00 00 00 00 00 40
	rejected f.bf "invalid parameters (target fpr)"
}
@test "target fpr -0.01" {
	good; put f.bf 63 bf
	rejected f.bf "invalid parameters (target fpr)"
}
@test "target fpr NaN" {
	good; put f.bf 56 00 00 00 00 00 00 f8 7f
	rejected f.bf "invalid parameters (target fpr)"
}
@test "target fpr infinity" {
	good; put f.bf 56 00 00 00 00 00 00 f0 7f
	rejected f.bf "invalid parameters (target fpr)"
}

# ---- Fields changed to other valid values: only the checksum tells.

@test "seed byte flipped"	{ good; put f.bf 24 2b; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "seed high byte flipped"	{ good; put f.bf 31 80; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "capacity 1000 -> 1024"	{ good; put f.bf 48 00 04; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "capacity 1000 -> 200"	{ good; put f.bf 48 c8 00; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "hash count 7 -> 8"	{ good; put f.bf 40 08; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "target fpr 0.01 -> 0.02"	{ good; put f.bf 56 7b 14 ae 47 e1 7a 94 3f; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "bit count doubled"	{ good; put f.bf 33 50; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "bit count 2^48 + 10240, within the limit" {
	good; put f.bf 38 01
	rejected f.bf "corrupt header (checksum mismatch)"
}
@test "checksum byte flipped"	{ good; put f.bf 64 9d; rejected f.bf "corrupt header (checksum mismatch)"; }
@test "checksum zeroed" {
	good; put f.bf 64 00 00 00 00 00 00 00 00
	rejected f.bf "corrupt header (checksum mismatch)"
}

# ---- The header is sound but the file is not the size it implies.

@test "a filter cut by one byte" {
	good; truncate -s 1407 f.bf
	rejected f.bf "size mismatch (file is not the 1408 bytes its header says)"
}
@test "a filter grown by one byte" {
	good; truncate -s 1409 f.bf
	rejected f.bf "size mismatch (file is not the 1408 bytes its header says)"
}
@test "a filter cut to its header" {
	good; truncate -s 128 f.bf
	rejected f.bf "size mismatch (file is not the 1408 bytes its header says)"
}
@test "a filter grown by one block" {
	good; truncate -s 1472 f.bf
	rejected f.bf "size mismatch (file is not the 1408 bytes its header says)"
}
@test "a filter grown to a page, as a v2 segment would be" {
	good; truncate -s 4096 f.bf
	rejected f.bf "size mismatch (file is not the 1408 bytes its header says)"
}

# ---- With the checksum recomputed, a changed header is accepted as such.

@test "capacity changed and checksum fixed: accepted" {
	need_xxhsum
	good; put f.bf 48 d0 07; fix_checksum f.bf	# 2000
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(stats_field capacity f.bf)" = 2000 ]
	run --separate-stderr bloom check f.bf < <(keys 10)
	[ "$status" -eq 0 ]
	[ "$output" = "$(keys 10)" ]
}

@test "bit count doubled and checksum fixed: size mismatch, then accepted" {
	need_xxhsum
	good; put f.bf 33 50; fix_checksum f.bf	# 20480 bits
	rejected f.bf "size mismatch (file is not the 2688 bytes its header says)"
	truncate -s 2688 f.bf
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(stats_field bytes f.bf | cut -d' ' -f1)" = 2688 ]
	[ "$(stats_field bits f.bf)" = 20480 ]
}

@test "bit count near 2^48 and checksum fixed: size mismatch without overflow" {
	need_xxhsum
	good; put f.bf 38 01; fix_checksum f.bf	# 2^48 + 10240 bits
	rejected f.bf "size mismatch (file is not the 35184372090240 bytes its header says)"
}

@test "reserved byte set and checksum fixed: still corrupt" {
	need_xxhsum
	good; put f.bf 44 01; fix_checksum f.bf
	rejected f.bf "corrupt header (reserved bytes not zero)"
}

@test "the inserted counter is outside the checksum" {
	good
	put f.bf 72 39 30	# 12345
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(stats_field inserted f.bf)" = 12345 ]
}
