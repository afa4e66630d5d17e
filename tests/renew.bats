#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Windows that do not renew (create --no-renew): a line is remembered for
# its window from its first add, and sightings do not renew it, so add
# --new passes it again once the window has passed.  A window that renews
# (the default) remembers a line from its last sighting.  Both meanings on
# one stream across rotations, in both layouts and both passes.

load helpers
bats_require_minimum_version 1.5.0

G=4

# stream FILE [ADD-OPTIONS...]: 4 G generations of a stream that holds the
# line "a" in every generation and one line of its own; rotates by hand
# after each, and prints the generations (from 0) in which add --new
# passed "a", one line.
stream() {
	local file=$1 gen out seen=""

	shift
	for ((gen = 0; gen < 4 * G; gen++)); do
		out=$(printf 'a\nonly-%d\n' "$gen" | bloom add --new "$@" "$file") ||
			return 1
		# The line of its own is always new.
		[ "$(printf '%s\n' "$out" | grep -c "^only-$gen\$")" -eq 1 ] ||
			return 1
		printf '%s\n' "$out" | grep -qx a && seen+="$gen "
		bloom rotate "$file" || return 1
	done
	echo "$seen"
}

@test "a window that renews passes a line seen every generation once" {
	for layout in blocked apbf; do
		bloom create --seed 7 -n 1000 --generations $G --layout $layout \
			w-$layout.bf
		run -0 stream w-$layout.bf
		echo "$layout: $output"
		[ "$output" = "0 " ]
	done
}

@test "a window that does not renew passes a line again each window" {
	bloom create --seed 7 -n 1000 --generations $G --no-renew w.bf
	run -0 stream w.bf
	# Found for G - 1 rotations after its first add, forgotten at the G-th.
	[ "$output" = "0 4 8 12 " ]
}

@test "an age-partitioned window that does not renew passes a line again each window" {
	bloom create --seed 7 -n 1000 --generations $G --layout apbf \
		--no-renew w.bf
	run -0 stream w.bf
	echo "$output"
	# Remembered for G - 1 rotations at least; forgotten within k - 1 more
	# (apbf.bats): here, with few lines, at the G-th.
	local prev="" gen k
	k=$(stats_field hashes w.bf)
	[ "${output%% *}" = 0 ]
	for gen in $output; do
		if [ -n "$prev" ]; then
			[ $((gen - prev)) -ge $G ]
			[ $((gen - prev)) -le $((G + k - 1)) ]
		fi
		prev=$gen
	done
	[ "$(wc -w <<<"$output")" -ge 3 ]
}

@test "sorted batches give what line by line gives, renewing or not" {
	local r
	for r in "" --no-renew; do
		rm -f a.bf b.bf
		bloom create --seed 7 -n 1000 --generations $G $r a.bf
		bloom create --seed 7 -n 1000 --generations $G $r b.bf
		run -0 stream a.bf
		local line=$output
		run -0 stream b.bf --memory 4K
		echo "${r:-renew}: line by line '$line', sorted '$output'"
		[ "$output" = "$line" ]
	done
}

@test "plain add does not renew a line in a window that does not renew" {
	local r found
	for r in "" --no-renew; do
		rm -f w.bf
		bloom create --seed 7 -n 1000 --generations 3 $r w.bf
		echo a | bloom add w.bf
		bloom rotate w.bf
		echo a | bloom add w.bf
		bloom rotate w.bf
		echo a | bloom add w.bf
		bloom rotate w.bf
		# Three rotations after its first add: forgotten unless renewed.
		found=$(echo a | bloom check -c w.bf || true)
		echo "${r:-renew}: $found"
		if [ -z "$r" ]; then
			[ "$found" = 1 ]
		else
			[ "$found" = 0 ]
		fi
	done
}

@test "stats and the dry run say whether a window renews" {
	bloom create -n 1000 --generations 3 r.bf
	bloom create -n 1000 --generations 3 --no-renew n.bf
	run -0 stats_field renew r.bf
	[ "$output" = yes ]
	run -0 stats_field renew n.bf
	[ "$output" = no ]
	run -0 json r.bf 'd["renew"]'
	[ "$output" = True ]
	run -0 json n.bf 'd["renew"]'
	[ "$output" = False ]
	run -0 bloom create --dry-run -n 1000 --generations 3 --no-renew x.bf
	[[ "$output" == *$'\nrenew: no\n'* ]]
	[ ! -e x.bf ]
	run -0 bloom create --dry-run -n 1000 --generations 3 x.bf
	[[ "$output" == *$'\nrenew: yes\n'* ]]
	# A filter like it is alike in this too.
	bloom create --like n.bf m.bf
	run -0 stats_field renew m.bf
	[ "$output" = no ]
}

@test "--no-renew is for windows" {
	row 2 '' "bloom: create: --no-renew needs --generations
usage: bloom create [-f] [-k hashes] [-n capacity] [-p fpr] [-s size]
                    [--slices n] [--slice i/n | auto] [--seed n]
                    [--grow [--growth factor]]
                    [--generations count [--window duration] [--max-size size]
                     [--layout blocked | apbf] [--no-renew]] [--dry-run] filter
       bloom create --like template [-f] [--slice i/n | auto] [--slices n]
                    filter" create --no-renew f.bf
	[ ! -e f.bf ]
}

@test "the flag is byte 120 of the header, checked like reserved bytes" {
	bloom create -n 1000 --generations 3 --no-renew n.bf
	bloom create -n 1000 --generations 3 r.bf
	bloom create -n 1000 f.bf
	[ "$(hex_at n.bf 120 8)" = 0100000000000000 ]
	[ "$(hex_at r.bf 120 8)" = 0000000000000000 ]
	# A flag this bloom does not know, or a flag on a fixed filter, is
	# refused as an older bloom refuses this one.
	put r.bf 120 02000000
	put r.bf 128 "$(xxh3_at r.bf 0 128 0)"
	run -2 bloom check r.bf </dev/null
	[ "$output" = "bloom: r.bf: corrupt header (reserved bytes not zero)" ]
	put f.bf 120 01000000
	put f.bf 128 "$(xxh3_at f.bf 0 128 0)"
	run -2 bloom check f.bf </dev/null
	[ "$output" = "bloom: f.bf: corrupt header (reserved bytes not zero)" ]
}
