#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The other bloom (issue 38): Debian's golang-github-dcso-bloom-cli installs
# DCSO's Bloom filter tool as /usr/bin/bloom, with its own file format.  A
# file of theirs named as a filter is recognised, said to be theirs, and
# left as it was, rather than refused for its "bad magic".
#
# The fixtures in tests/data were made by that program, version 0.2.4-3+b5
# (dpkg-deb -x of the Debian 12 package, run from a temporary directory):
#	bloom create -p 0.01 -n 100 dcso.bloom
#	seq -f 'key-%g' 1 10 | bloom insert dcso.bloom
#	bloom --gzip create -p 0.01 -n 100 dcso.bloom.gz
#	seq -f 'key-%g' 1 10 | bloom --gzip insert dcso.bloom.gz
#	cp dcso.bloom dcso-data.bloom
#	echo "generated test data" | bloom set-data dcso-data.bloom

bats_require_minimum_version 1.5.0
load helpers

theirs="a filter of DCSO's bloom (Debian's golang-github-dcso-bloom-cli), not of this bloom: capacity 100, fpr 0.01, 7 hashes, 958 bits, 10 elements; use that program, or add the original lines to a filter of this one"
gzipped="gzip-compressed, not a bloom filter: DCSO's bloom (Debian's golang-github-dcso-bloom-cli) writes its filters so with --gzip; use that program, or gunzip the file if it holds a filter of this bloom"

# Writes a DCSO header and bits to FILE, as their Write does: VERSION-FLAGS
# n p k m N, then WORDS 64-bit words of bits (default ceil(m / 64)).
dcso() {
	python3 - "$@" <<'PY'
import struct, sys, math
path, flags, n, p, k, m, N = sys.argv[1:8]
m = int(m)
words = int(sys.argv[8]) if len(sys.argv) > 8 else math.ceil(m / 64)
with open(path, "wb") as f:
    f.write(struct.pack("<QQdQQQ", int(flags), int(n), float(p), int(k), m,
        int(N)))
    f.write(b"\x55" * 8 * words)
PY
}

@test "a DCSO filter made by their tool is said to be theirs, and left as it was" {
	cp "$root/tests/data/dcso.bloom" f.bloom
	rejected f.bloom "$theirs" stats check add rotate
	run --separate-stderr bloom fold f.bloom out.bf
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bloom: $theirs" ]
	[ ! -e out.bf ]
	cmp f.bloom "$root/tests/data/dcso.bloom"
}

@test "a DCSO filter with data attached (set-data) is theirs too" {
	cp "$root/tests/data/dcso-data.bloom" f.bloom
	rejected f.bloom "$theirs"
}

@test "a DCSO filter compressed with --gzip: gzip-compressed, and whose it may be" {
	cp "$root/tests/data/dcso.bloom.gz" f.bloom.gz
	rejected f.bloom.gz "$gzipped"
}

@test "a DCSO filter as a source of merge, or with -F, names the file" {
	cp "$root/tests/data/dcso.bloom" f.bloom
	bloom create --seed 1 -n 1000 ours.bf
	run --separate-stderr bloom check -F f.bloom -F ours.bf </dev/null
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bloom: $theirs" ]
	run --separate-stderr bloom merge ours.bf f.bloom
	[ "$status" -eq 2 ]
	[ "$stderr" = "bloom: f.bloom: $theirs" ]
}

@test "a filter of this bloom gzipped is gzip-compressed, whoever made it" {
	bloom create -n 1000 f.bf
	gzip -k f.bf
	rejected f.bf.gz "$gzipped"
	gunzip -c f.bf.gz >g.bf
	run -1 bloom check g.bf </dev/null
}

@test "a header built as DCSO's Write builds it is theirs; one whose fields cannot be is bad magic" {
	dcso a.bloom 1 1000 0.001 10 14378 0
	rejected a.bloom "a filter of DCSO's bloom (Debian's golang-github-dcso-bloom-cli), not of this bloom: capacity 1000, fpr 0.001, 10 hashes, 14378 bits, 0 elements; use that program, or add the original lines to a filter of this one" stats
	# Flags above the version byte are theirs to set.
	dcso b.bloom $(( (1 << 8) | 1 )) 1 0.5 1 1 1
	rejected b.bloom "a filter of DCSO's bloom (Debian's golang-github-dcso-bloom-cli), not of this bloom: capacity 1, fpr 0.5, 1 hashes, 1 bits, 1 elements; use that program, or add the original lines to a filter of this one" stats
	# Not theirs: another version, a rate out of (0, 1), no hashes, no
	# bits, bits past the end of the file, more bits than 64 bits count.
	dcso c1 2 1000 0.001 10 14378 0
	dcso c2 1 1000 1.5 10 14378 0
	dcso c3 1 1000 0 10 14378 0
	dcso c4 1 1000 nan 10 14378 0
	dcso c5 1 1000 0.001 0 14378 0
	dcso c6 1 1000 0.001 10 0 0
	dcso c7 1 1000 0.001 10 14378 0 224
	dcso c8 1 1000 0.001 10 18446744073709551615 0 1
	dcso c9 1 0 0.001 10 14378 0
	for f in c1 c2 c3 c4 c5 c6 c7 c8 c9; do
		rejected $f "not a bloom filter (bad magic)" stats
	done
	# Shorter than their header.
	head -c 47 a.bloom >short
	rejected short "not a bloom filter (bad magic)" stats
}
