#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Tests of hash64() through tests/hashsum: the known answers of
# tests/data/xxh3-vectors.txt, a live comparison with the reference xxhsum,
# and the exit status of the helper itself.

root="$BATS_TEST_DIRNAME/.."
hashsum="$root/tests/hashsum"
vectors="$root/tests/data/xxh3-vectors.txt"

# Writes the inputs of the first two tests once, to $BATS_FILE_TMPDIR/in.LEN
# for every length 0 to 300 and every length in the vectors file: the first
# LEN bytes of xxHash's sanity buffer.
setup_file() {
	local len

	if [ ! -x "$hashsum" ]; then
		echo "tests/hashsum is not built: run make tests/hashsum" >&2
		return 1
	fi
	for len in $(seq 0 300) $(awk '!/^#/ && NF { print $2 }' "$vectors"); do
		[ -e "$BATS_FILE_TMPDIR/in.$len" ] ||
			"$hashsum" --pattern "$len" >"$BATS_FILE_TMPDIR/in.$len"
	done
}

@test "hashsum matches every known answer in xxh3-vectors.txt" {
	local seed len want name hash count=0
	declare -A got

	cd "$BATS_FILE_TMPDIR"
	# One run of hashsum per seed rather than one per vector keeps this fast.
	for seed in $(awk '!/^#/ && NF { print $1 }' "$vectors" | sort -u); do
		while read -r hash name; do
			got["$seed ${name#in.}"]=$hash
		done < <("$hashsum" -s "$seed" in.*)
	done
	while read -r seed len want; do
		case $seed in '#'* | '') continue ;; esac
		if [ "${got["$seed $len"]}" != "$want" ]; then
			echo "seed $seed, length $len: got ${got["$seed $len"]}, want $want"
			return 1
		fi
		count=$((count + 1))
	done <"$vectors"
	# Guard against a file that no longer parses and so tests nothing.
	[ "$count" -ge 327 ]
}

@test "hashsum agrees with xxhsum -H3 for lengths 0 to 300" {
	local len files=()

	if ! command -v xxhsum >/dev/null; then
		echo "xxhsum not found: install xxHash 0.8 or later (Debian: xxhash)"
		return 1
	fi
	for len in $(seq 0 300); do
		files+=("in.$len")
	done
	cd "$BATS_FILE_TMPDIR"
	# xxhsum prints "XXH3 (name) = hash"; bring it to the form of hashsum.
	xxhsum -H3 "${files[@]}" 2>/dev/null |
		sed -E 's/^XXH3 \((.*)\) = ([0-9a-f]{16})$/\2  \1/' \
		>"$BATS_TEST_TMPDIR/want"
	"$hashsum" "${files[@]}" >"$BATS_TEST_TMPDIR/got"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -eq 301 ]
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "hashsum reads stdin when given no file or -" {
	run "$hashsum" </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = "2d06800538d394c2  -" ]
	run "$hashsum" -s 0x9e3779b185ebca8d - </dev/null
	[ "$status" -eq 0 ]
	[ "$output" = "a8a6b918b2f0364a  -" ]
}

@test "hashsum takes the seed in decimal or hex" {
	run "$hashsum" -s 11400714785074694797 "$BATS_FILE_TMPDIR/in.6"
	[ "$status" -eq 0 ]
	[ "$output" = "84589c116ab59ab9  $BATS_FILE_TMPDIR/in.6" ]
}

@test "hashsum exits 2 on a missing file but hashes the others" {
	local missing="$BATS_TEST_TMPDIR/missing"

	run "$hashsum" "$missing" "$BATS_FILE_TMPDIR/in.0"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "hashsum: $missing: No such file or directory" ]
	[ "${lines[1]}" = "2d06800538d394c2  $BATS_FILE_TMPDIR/in.0" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "hashsum exits 2 on a file it cannot read" {
	run "$hashsum" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 2 ]
	[ "$output" = "hashsum: $BATS_TEST_TMPDIR: Is a directory" ]
}

@test "hashsum exits 2 on a bad seed" {
	local seed

	for seed in '' junk 12x 0x -1 +1 18446744073709551616; do
		run "$hashsum" -s "$seed" /dev/null
		[ "$status" -eq 2 ]
		[ "$output" = "hashsum: bad seed: $seed" ]
	done
}

@test "hashsum exits 2 on a bad option or pattern length" {
	run "$hashsum" -x /dev/null
	[ "$status" -eq 2 ]
	run "$hashsum" --pattern
	[ "$status" -eq 2 ]
	run "$hashsum" --pattern ten
	[ "$status" -eq 2 ]
	[ "$output" = "hashsum: bad length: ten" ]
}

@test "the streaming form agrees with xxhsum -H3 across every boundary, in any pieces" {
	local len chunk files=()

	cd "$BATS_FILE_TMPDIR"
	for len in 1023 1024 1025 1087 1088 1089 2047 2048 2049 3000 65536 100003; do
		[ -e "in.$len" ] || "$hashsum" --pattern "$len" >"in.$len"
	done
	for len in $(seq 0 300) 1023 1024 1025 1087 1088 1089 2047 2048 2049 3000 65536 100003; do
		files+=("in.$len")
	done
	xxhsum -H3 "${files[@]}" 2>/dev/null |
		sed -E 's/^XXH3 \((.*)\) = ([0-9a-f]{16})$/\2  \1/' \
		>"$BATS_TEST_TMPDIR/want"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -eq "${#files[@]}" ]
	for chunk in 1 3 63 64 65 240 241 255 256 257 1000 1024 4096; do
		"$hashsum" -c "$chunk" "${files[@]}" >"$BATS_TEST_TMPDIR/got"
		echo "pieces of $chunk bytes"
		diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	done
	# With a seed, against the one-shot form the vectors check.
	for chunk in 1 64 257 4096; do
		"$hashsum" -s 0x9e3779b185ebca8d "${files[@]}" >"$BATS_TEST_TMPDIR/want"
		"$hashsum" -s 0x9e3779b185ebca8d -c "$chunk" "${files[@]}" \
		    >"$BATS_TEST_TMPDIR/got"
		diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	done
}
