#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# doc/FORMAT.md is complete: contrib/bloomfile.py, a reader written from it
# alone, answers as bloom check does on every kind of filter (issue 37).

bats_require_minimum_version 1.5.0
load helpers

# The reader is imported from the source tree: no __pycache__ left there.
export PYTHONDONTWRITEBYTECODE=1

reader() {
	python3 "$root/contrib/bloomfile.py" "$@"
}

# Writes N lines: keys that were added and keys that were not, empty lines,
# lines with a carriage return, and long lines (up to 3000 bytes, past
# XXH3's 240-byte and 1024-byte thresholds), in a fixed random order.
mixed_lines() {
	python3 - "$1" <<-'EOF'
	import random, sys
	r = random.Random(37)
	for i in range(int(sys.argv[1])):
	    c = r.random()
	    if c < 0.05:
	        print("")
	    elif c < 0.08:
	        print("x" * r.randint(200, 3000) + str(i))
	    elif c < 0.10:
	        print("k%d\r" % r.randint(0, 600))
	    else:
	        print("k%d" % r.randint(0, 1200))
	EOF
}

# same FILTER INPUT: bloom check and the reader give the same standard
# output and exit status with no option, -c, -v, -c -v and -q.
same() {
	local opts want got

	for opts in "" "-c" "-v" "-c -v" "-q"; do
		# shellcheck disable=SC2086
		run --separate-stderr -- bloom check $opts "$1" <"$2"
		want="$status:$output"
		# shellcheck disable=SC2086
		run --separate-stderr -- reader check $opts "$1" <"$2"
		got="$status:$output"
		echo "check $opts $1: bloom ${want:0:60} reader ${got:0:60}"
		[ "$got" = "$want" ]
	done
}

# backdate FILTER MINUTES: rewrites the creation time of a v2 FILTER to
# MINUTES ago, and its header checksum, as if it had been made then.
backdate() {
	python3 - "$root/contrib" "$@" <<-'EOF'
	import sys, time
	sys.path.insert(0, sys.argv[1])
	from bloomfile import xxh3_64
	path, minutes = sys.argv[2], int(sys.argv[3])
	with open(path, "r+b") as f:
	    head = bytearray(f.read(128))
	    created = time.time_ns() // 1000000 - minutes * 60000
	    head[80:88] = created.to_bytes(8, "little")
	    f.seek(0)
	    f.write(head + xxh3_64(bytes(head)).to_bytes(8, "little"))
	EOF
}

@test "bloomfile.py: XXH3-64 gives every known answer of tests/data" {
	run -0 python3 - "$root/contrib" "$root/tests/data/xxh3-vectors.txt" <<-'EOF'
	import sys
	sys.path.insert(0, sys.argv[1])
	from bloomfile import xxh3_64
	gen, buf = 0x9E3779B1, bytearray()
	for _ in range(2400):
	    buf.append(gen >> 56)
	    gen = gen * 0x9E3779B185EBCA8D % 2**64
	n = 0
	for line in open(sys.argv[2]):
	    if line.startswith("#") or not line.strip():
	        continue
	    seed, length, want = line.split()
	    got = xxh3_64(bytes(buf[:int(length)]), int(seed, 0))
	    assert got == int(want, 16), line
	    n += 1
	print(n)
	EOF
	[ "$output" = 327 ]
}

@test "bloomfile.py: the blocked test vectors of doc/FORMAT.md, and bloom sets those bits" {
	run -0 reader hash -s 42 -b 1024 "" a hello
	[ "${lines[0]:0:51}" = "b029411ff43d84d2 block 704 bits 202 262 353 249 508" ]
	[ "${lines[1]:0:51}" = "4c437dd47f0716f4 block 305 bits 286 478 126 28 154 " ]
	[ "${lines[2]:0:51}" = "bafa072f07db7937 block 747 bits 470 86 395 287 277 " ]
	for row in "|b029411ff43d84d2|704|202 262 353 249 508 4 130 399 155 344" \
	    "a|4c437dd47f0716f4|305|286 478 126 28 154 418 58 219 104 59" \
	    "hello|bafa072f07db7937|747|470 86 395 287 277 141 8 233 429 297"; do
		IFS='|' read -r key hash block bits <<<"$row"
		grep -qF "| \`$hash\` | $block | $bits |" "$root/doc/FORMAT.md"
		rm -f v.bf
		bloom create --seed 42 -k 10 -s 64K v.bf
		printf '%s\n' "$key" | bloom add v.bf
		run -0 python3 -c '
import sys
a = open("v.bf", "rb").read()[4096:]
print(" ".join(str(i // 512) + ":" + str(i % 512) for i in range(len(a) * 8)
               if a[i // 8] >> (i % 8) & 1))'
		want=$(for b in $bits; do echo "$b"; done | sort -n |
			sed "s/^/$block:/" | paste -sd ' ')
		echo "$key: bloom set $output, want $want"
		[ "$output" = "$want" ]
	done
}

@test "bloomfile.py check answers as bloom check: fixed, v1 and growable filters" {
	mixed_lines 1200 >in
	head -600 in >added
	bloom create -n 2000 -p 0.05 fixed.bf
	bloom add fixed.bf <added
	make_v1 v1.bf 1000 0.05 42 10240 5
	bloom add v1.bf <added
	bloom create --grow -n 100 -p 0.05 grow.bf
	bloom add grow.bf <added 2>/dev/null
	[ "$(stats_field segments grow.bf)" -ge 3 ]
	for f in fixed.bf v1.bf grow.bf; do
		same "$f" in
	done
	# Nothing was added: every line is certainly not in it.
	bloom create -n 100 empty.bf
	same empty.bf in
}

@test "bloomfile.py check answers as bloom check: windows of both layouts, rotated by hand and by the clock" {
	mixed_lines 1200 >in
	for layout in blocked apbf; do
		bloom create --generations 4 --layout $layout -n 1000 -p 0.05 \
			$layout.bf
		for i in 1 2 3 4 5 6; do
			sed -n "$((i * 100 - 99)),$((i * 100))p" in |
				bloom add $layout.bf
			bloom rotate $layout.bf
			same $layout.bf in
		done
		# A window of 1 hour in 4 generations (20 minutes each), made
		# 70 minutes ago: the clock says generation 3, the file 0.
		bloom create --generations 4 --window 1h --layout $layout \
			-n 1000 -p 0.05 $layout-time.bf
		head -300 in | bloom add $layout-time.bf
		backdate $layout-time.bf 30
		sed -n 301,500p in | bloom add $layout-time.bf
		[ "$(stats_field generation $layout-time.bf)" -eq 1 ]
		same $layout-time.bf in
		backdate $layout-time.bf 70
		[ "$(stats_field generation $layout-time.bf)" -eq 3 ]
		same $layout-time.bf in
		# A rotation by hand starts a generation now: header word 152.
		bloom rotate $layout-time.bf
		[ "$(stats_field generation $layout-time.bf)" -eq 4 ]
		same $layout-time.bf in
		# A window that does not renew: its adds differ, not its test.
		bloom create --generations 4 --no-renew --layout $layout \
			-n 1000 -p 0.05 $layout-norenew.bf
		for i in 1 2 3 4 5; do
			sed -n "$((i * 100 - 99)),$((i * 150))p" in |
				bloom add $layout-norenew.bf
			bloom rotate $layout-norenew.bf
		done
		same $layout-norenew.bf in
		# Generations that fill before their time take segments of
		# their own, blocked ones, until they expire.
		bloom create --generations 3 --layout $layout -n 300 -p 0.05 \
			$layout-grown.bf
		head -500 in | bloom add $layout-grown.bf 2>/dev/null
		bloom rotate $layout-grown.bf
		sed -n 501,900p in | bloom add $layout-grown.bf 2>/dev/null
		[ "$(stats_field segments $layout-grown.bf)" -gt 3 ]
		for i in 1 2 3; do
			same $layout-grown.bf in
			bloom rotate $layout-grown.bf
		done
	done
}

@test "bloomfile.py check answers as bloom check: a slice, -z, several files" {
	mixed_lines 800 >in
	head -400 in >added
	bloom create -n 2000 --seed 5 --slices 2 --slice 1/2 slice.bf
	bloom add --pass-over slice.bf <added 2>/dev/null
	same slice.bf in
	run -0 --separate-stderr reader check -c slice.bf <in
	[[ $stderr == *"lines belong to other slices of the filter and were passed over" ]]
	bloom create -n 2000 f.bf
	tr '\n' '\0' <added | bloom add -z f.bf
	tr '\n' '\0' <in >in0
	run -0 bloom check -z f.bf <in0
	want=$output
	run -0 reader check -z f.bf <in0
	[ "$output" = "$want" ]
	run -0 bloom check -c f.bf - in added <in0
	want=$output
	run -0 reader check -c f.bf - in added <in0
	[ "$output" = "$want" ]
	[ "${lines[1]}" = "in:$(bloom check -c f.bf <in)" ]
}

@test "bloomfile.py refuses what bloom refuses, exit 2" {
	bloom create -n 1000 f.bf
	for damage in "128 ff" "124 01" "120 01" "8 03" "20 02" "32 07" "296 00"; do
		cp f.bf bad.bf
		put bad.bf $damage
		run -2 bloom check bad.bf </dev/null
		run -2 --separate-stderr reader check bad.bf </dev/null
		echo "damage $damage: $stderr"
		[ -z "$output" ] && [[ $stderr == "bloomfile.py: bad.bf: "* ]]
	done
	head -c 4000 f.bf >short.bf
	run -2 bloom check short.bf </dev/null
	run -2 --separate-stderr reader check short.bf </dev/null
	[ "$stderr" = "bloomfile.py: short.bf: size mismatch" ]
}
