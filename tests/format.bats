#!/usr/bin/env bats
# Tests of the file format: the header bloom create writes, byte for byte,
# and the validation that stats, check and add do on opening a filter, with
# the message for each way a file can be wrong.
#
# bloom_header_parse checks in this order: length against the magic, magic,
# length against the header, version, header size, layout, hash, reserved
# bytes, bit count, hash count, capacity, target fpr, checksum, file size.
# A corrupted field is caught by its own check before the checksum is
# compared, so most tests below change one field and leave the checksum.

bats_require_minimum_version 1.5.0
load helpers

# The good filter, made once and copied by good(): create syncs, which is
# slow.
setup_file() {
	local bloom="$BATS_TEST_DIRNAME/../bloom"

	"$bloom" create -n 1000 -p 0.01 --seed 42 "$BATS_FILE_TMPDIR/good.bf" &&
		keys 10 | "$bloom" add "$BATS_FILE_TMPDIR/good.bf"
}

# Makes f.bf: 1000 items at 0.01, seed 42, 10 keys added.  1408 bytes:
# the 128-byte header and 20 blocks of 64 bytes.
good() {
	cp "$BATS_FILE_TMPDIR/good.bf" f.bf
}

# put FILE OFFSET HEX...: overwrites the bytes of FILE from OFFSET on.
put() {
	local file=$1 off=$2

	shift 2
	printf "$(printf '\\x%s' "$@")" |
		dd of="$file" bs=1 seek="$off" conv=notrunc status=none
}

# Prints LEN bytes of FILE from OFFSET as one word of hex pairs.
hex_at() {
	od -An -v -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'
}

# Prints XXH3-64, seed 0, of the first 64 bytes of FILE, as its
# little-endian bytes in hex: what the header holds at offset 64.
xxh3_of_header() {
	head -c 64 "$1" | xxhsum -H3 --little-endian | awk '{ print $NF }'
}

# Rewrites the checksum of FILE's header to match its fields.
fix_checksum() {
	local sum

	sum=$(xxh3_of_header "$1")
	[ "${#sum}" -eq 16 ] || { echo "xxhsum printed '$sum'"; return 1; }
	put "$1" 64 $(echo "$sum" | sed 's/../& /g')
}

need_xxhsum() {
	command -v xxhsum >/dev/null ||
		{ echo "xxhsum not found: install xxHash (Debian: xxhash)"; return 1; }
}

# State of FILE to compare before and after: content, or the listing of
# what is not a regular file.
state_of() {
	if [ -f "$1" ] && [ -r "$1" ]; then
		cksum <"$1"
	else
		stat -c %F "$1" 2>&1 || true
	fi
}

# rejected FILE MESSAGE [COMMAND...]: each COMMAND (default stats, check
# and add) on FILE exits 2, prints nothing on stdout and exactly
# "bloom: FILE: MESSAGE" on stderr, and leaves FILE as it was.
rejected() {
	local file=$1 message=$2 cmd before cmds

	shift 2
	cmds=("$@")
	[ "${#cmds[@]}" -gt 0 ] || cmds=(stats check add)
	before=$(state_of "$file")
	for cmd in "${cmds[@]}"; do
		run --separate-stderr bloom "$cmd" "$file" </dev/null
		[ "$status" -eq 2 ] ||
			{ echo "$cmd: status $status, stderr: $stderr"; return 1; }
		[ "$output" = "" ] || { echo "$cmd: stdout: $output"; return 1; }
		[ "$stderr" = "bloom: $file: $message" ] ||
			{ echo "$cmd: stderr: $stderr"; return 1; }
		[ "$(state_of "$file")" = "$before" ] ||
			{ echo "$cmd changed $file"; return 1; }
	done
}

# ---- The header as written.

@test "create -n 1000 -p 0.01 --seed 42 writes the documented header" {
	local off len want what

	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	[ "$(stat -c %s f.bf)" -eq 1408 ]
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
	# The bit array is all zero.
	tail -c +129 f.bf | cmp -s - <(head -c 1280 /dev/zero)
}

@test "the target fpr is stored as a little-endian IEEE 754 double" {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	[ "$(hex_at f.bf 56 8)" = "$(python3 -c 'import struct; print(struct.pack("<d", 0.01).hex())')" ]
}

@test "the checksum is XXH3-64, seed 0, of header bytes 0 to 63" {
	need_xxhsum
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	[ "$(hex_at f.bf 64 8)" = "$(xxh3_of_header f.bf)" ]
	bloom create -s 1M -p 0.001 --seed 0xdeadbeef g.bf
	[ "$(hex_at g.bf 64 8)" = "$(xxh3_of_header g.bf)" ]
}

@test "add changes the inserted counter and the bits, not the checksummed fields" {
	bloom create -n 1000 -p 0.01 --seed 42 f.bf
	head -c 72 f.bf >before
	keys 500 | bloom add f.bf
	head -c 72 f.bf | cmp -s - before
	[ "$(hex_at f.bf 72 8)" = "f401000000000000" ]	# 500
	[ "$(hex_at f.bf 80 48)" = "$(printf '%096d' 0)" ]
}

# ---- Files that are not filters at all.

@test "missing file" {
	rejected nofile.bf "No such file or directory" stats check
}

@test "missing directory" {
	rejected nodir/f.bf "No such file or directory" stats check
}

@test "a directory"		{ mkdir d.bf; rejected d.bf "not a regular file"; }
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
@test "a filter cut to 100 bytes" { good; truncate -s 100 f.bf; rejected f.bf "not a bloom filter (too short)"; }
@test "a filter cut to 127 bytes" { good; truncate -s 127 f.bf; rejected f.bf "not a bloom filter (too short)"; }

# ---- One header field wrong: its own message, whatever the checksum.

@test "version 2" {
	good; put f.bf 8 02
	rejected f.bf "unsupported format version 2 (this bloom reads version 1)"
}
@test "version 0" {
	good; put f.bf 8 00
	rejected f.bf "unsupported format version 0 (this bloom reads version 1)"
}
@test "version 257" {
	good; put f.bf 9 01
	rejected f.bf "unsupported format version 257 (this bloom reads version 1)"
}
@test "version 2 wins over every later problem" {
	good; put f.bf 8 02; put f.bf 16 07; put f.bf 100 01; put f.bf 40 00
	rejected f.bf "unsupported format version 2 (this bloom reads version 1)"
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

# ---- With the checksum recomputed, a changed header is accepted as such.

@test "capacity changed and checksum fixed: accepted" {
	need_xxhsum
	good; put f.bf 48 d0 07; fix_checksum f.bf	# 2000
	run --separate-stderr bloom stats f.bf
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "${lines[7]}" = "capacity: 2000" ]
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
	[ "${lines[3]}" = "bytes: 2688" ]
	[ "${lines[4]}" = "bits: 20480" ]
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
	[ "${lines[9]}" = "inserted: 12345" ]
}
