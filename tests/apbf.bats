#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The age-partitioned window layout (create --layout apbf): every
# generation's bits for a key in one group of two blocks (store/apbf.c,
# store/ages.c).  What it promises is what a window of the blocked layout
# promises: a line is found for G - 1 rotations after its last add, a
# burst widens the generation without forgetting, and the file is
# validated as hostile.  What it forgets differs: a line G rotations old
# still has k - 1 of its k slots, and is found again if the one slot
# before them has its bit by chance (its fill: up to some 40 % at full
# load); k - 1 rotations later it has none, and only the designed rate
# finds it.

load helpers
bats_require_minimum_version 1.5.0

# Byte offset of table entry I.
entry() {
	echo $((256 + 64 * $1))
}

# fix_entry FILE I: rewrites the checksum of table entry I of FILE.
fix_entry() {
	put "$1" $(($(entry "$2") + 40)) "$(xxh3_at "$1" "$(entry "$2")" 40 "$2")"
}

# set_entry FILE I OFFSET HEX: changes bytes of table entry I from OFFSET
# in it, checksum mended.
set_entry() {
	put "$1" $(($(entry "$2") + $3)) "$4"
	fix_entry "$1" "$2"
}

# found FILTER LINES: how many of the lines check finds.
found() {
	bloom check -c "$1" "$2"
}

@test "create --layout apbf: stats says the layout, the slots and the size" {
	bloom create --seed 42 --generations 8 -n 100000 -p 0.01 \
		--layout apbf w.bf
	[ "$(stats_field layout w.bf)" = \
		"apbf (age-partitioned: 14 slots of 73 bits in 1024-bit groups)" ]
	[ "$(stats_field hashes w.bf)" = 7 ]
	# 2399 groups of 1024 bits for 100000 / 7 lines a generation at
	# 1 %: 24.56 bits per line of the window.
	[ "$(stats_field bits w.bf)" = $((2399 * 1024)) ]
	[ "$(json w.bf 'd["layout"]')" = apbf ]
	bloom create --seed 42 --generations 31 -n 100000 -p 0.01 \
		--layout apbf w31.bf
	[ "$(stats_field layout w31.bf)" = \
		"apbf (age-partitioned: 39 slots of 26 bits in 1024-bit groups)" ]
	[ "$(stats_field hashes w31.bf)" = 9 ]
	bloom create --seed 42 --generations 8 -n 100000 --layout blocked b.bf
	[ "$(stats_field layout b.bf)" = "blocked512 (512-bit blocks)" ]
}

# bits_per_line G P: the bits per line of the window (-n 1000000) that
# create --dry-run --layout apbf takes for G generations at rate P, to
# one decimal.
bits_per_line() {
	bloom create --dry-run --seed 42 --generations "$1" -n 1000000 \
		-p "$2" --layout apbf x.bf |
		awk '/^bytes:/ { printf "%.1f\n", $2 * 8 / 1000000 }'
}

@test "apbf: the bits per line the manual gives; refused near 64 generations" {
	# 22 to 25 at 1 % from 7 to 56 generations.
	[ "$(bits_per_line 7 0.01)" = 25.1 ]
	[ "$(bits_per_line 31 0.01)" = 22.6 ]
	[ "$(bits_per_line 56 0.01)" = 24.5 ]
	[ "$(bits_per_line 2 0.01)" = 43.8 ]
	# Near 64, k <= 65 - G: more, up to three times the blocked layout.
	[ "$(bits_per_line 58 0.01)" = 27.2 ]
	[ "$(bits_per_line 61 0.01)" = 50.3 ]
	# Past that, refused, by a dry run too: 95.5 bits at 62, 6470 at 64.
	for g in 62 63 64; do
		run --separate-stderr bloom create --generations $g \
			-n 1000000 -p 0.01 --layout apbf x.bf
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ $stderr == "bloom: x.bf: an age-partitioned window of $g generations at fpr 0.01 would take "*" times the room of the blocked layout ("*" bytes against "*"): few hashes fit in its groups; use --layout blocked, or fewer generations" ]]
		[ ! -e x.bf ]
	done
	run --separate-stderr bloom create --dry-run --generations 62 \
		-n 1000000 -p 0.001 --layout apbf x.bf
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ $stderr == *" would take 14.1 times the room of the blocked layout ("* ]]
	run --separate-stderr bloom create --dry-run --generations 62 \
		-n 1000000 -p 0.01 --layout apbf x.bf
	[ "$status" -eq 2 ]
	[[ $stderr == *" would take 4.3 times the room of the blocked layout (11941376 bytes against 2798848)"* ]]
	[ ! -e x.bf ]
}

@test "create --layout: needs --generations, takes blocked or apbf" {
	run --separate-stderr bloom create --layout apbf -n 1000 x.bf
	[ "$status" -eq 2 ]
	[ "${stderr%%$'\n'*}" = "bloom: create: --layout apbf needs --generations" ]
	run --separate-stderr bloom create --generations 4 --layout aged x.bf
	[ "$status" -eq 2 ]
	[ "${stderr%%$'\n'*}" = "bloom: create: --layout takes blocked or apbf, not 'aged'" ]
	[ ! -e x.bf ]
}

@test "apbf: add, check and add --new round trip" {
	bloom create --seed 42 --generations 8 -n 100000 -p 1e-6 \
		--layout apbf w.bf
	keys 5000 >a
	keys 5000 other- >b
	bloom add w.bf a
	[ "$(found w.bf a)" = 5000 ]
	[ "$(found w.bf b)" = 0 ]
	[ "$(bloom add --new w.bf b | wc -l)" = 5000 ]
	[ "$(bloom add --new w.bf b | wc -l)" = 0 ]
	[ "$(bloom add --new w.bf a | wc -l)" = 0 ]
	[ "$(found w.bf b)" = 5000 ]
	[ "$(stats_field inserted w.bf)" = 10000 ]
	# check without -c answers line by line.
	run bloom check w.bf <<<"key-7"
	[ "$status" -eq 0 ]
	[ "$output" = "key-7" ]
	run bloom check w.bf <<<"nope"
	[ "$status" -eq 1 ]
}

@test "apbf: a line is found for G - 1 rotations after its last add, fading after G" {
	bloom create --seed 42 --generations 4 -n 30000 -p 1e-6 \
		--layout apbf w.bf
	keys 2000 a- >a
	keys 2000 b- >b
	bloom add w.bf a		# generation 0
	bloom rotate w.bf
	bloom add w.bf b		# generation 1
	for r in 2 3; do
		bloom rotate w.bf
		[ "$(found w.bf a)" = 2000 ]
		[ "$(found w.bf b)" = 2000 ]
	done
	bloom rotate w.bf		# generation 4: a is 4 old
	[ "$(stats_field generation w.bf)" = 4 ]
	# a keeps 12 of its 13 slots; the 13th is b's generation's, in
	# which 2000 lines of 3765 groups set a bit of 64: 0.8 %.
	n=$(found w.bf a || true)
	echo "a found at 4: $n"
	[ "$n" -lt 40 ]
	[ "$(found w.bf b)" = 2000 ]
	bloom add w.bf b		# b again, at 4: remembered from now
	for r in 5 6 7; do
		bloom rotate w.bf
		[ "$(found w.bf b)" = 2000 ]
	done
	bloom rotate w.bf
	[ "$(found w.bf a)" = 0 ]
	n=$(found w.bf b || true)
	echo "b found at 8: $n"
	[ "$n" -lt 40 ]
	# 13 + 3 - 1 generations on, none of b's slots is left.
	for r in $(seq 12); do
		bloom rotate w.bf
	done
	[ "$(found w.bf b)" = 0 ]
}

@test "apbf: a rotation by time that skips generations empties their slots" {
	bloom create --seed 42 --generations 4 --window 3s -n 30000 -p 1e-6 \
		--layout apbf w.bf
	keys 2000 a- >a
	keys 2000 b- >b
	bloom add w.bf a
	[ "$(found w.bf a)" = 2000 ]
	sleep 5		# generation 5 by the clock: nobody has rotated
	[ "$(stats_field generation w.bf)" -ge 5 ]
	[ "$(found w.bf a)" = 0 ]
	bloom add w.bf b	# rotates, over 4 generations or more at once
	[ "$(found w.bf b)" = 2000 ]
	[ "$(found w.bf a)" = 0 ]
	[ "$(stats_field inserted w.bf)" = 2000 ]
}

@test "apbf: a rotation published but not finished is mended by the next add" {
	bloom create --seed 42 --generations 4 -n 30000 -p 1e-6 \
		--layout apbf w.bf
	keys 2000 a- >a
	keys 2000 b- >b
	bloom add w.bf a
	# The newest generation, 1, written as a rotation's first step does,
	# and nothing more: entry 1 still says it holds no generation.
	put w.bf 144 "$(le 8 1)"
	[ "$(stats_field generation w.bf)" = 1 ]
	[ "$(found w.bf a)" = 2000 ]
	bloom add w.bf b
	[ "$(json w.bf 'd["segments"][1]["generation"]')" = 1 ]
	[ "$(found w.bf a)" = 2000 ]
	[ "$(found w.bf b)" = 2000 ]
	for r in 2 3 4; do
		bloom rotate w.bf
	done
	[ "$(found w.bf b)" = 2000 ]
	[ "$(found w.bf a)" -lt 40 ]
	for r in $(seq 12); do
		bloom rotate w.bf
	done
	[ "$(found w.bf a)" = 0 ]
}

@test "apbf: a burst past -n widens its generation, forgets nothing, and gives the room back" {
	bloom create --seed 42 --generations 4 -n 3000 -p 1e-6 \
		--layout apbf w.bf
	size=$(stat -c %s w.bf)
	keys 8000 >burst
	run --separate-stderr bloom add --new w.bf burst
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 8000 ]
	[ "$stderr" = "bloom: w.bf: warning: a generation filled before its time and took more room: the window has grown past its sizing, and its false-positive rate may pass its target until that generation expires" ]
	[ "$(stats_field generation w.bf)" = 0 ]
	[ "$(stats_field segments w.bf)" -gt 4 ]
	[ "$(found w.bf burst)" = 8000 ]
	for r in 1 2 3; do
		bloom rotate w.bf
		[ "$(found w.bf burst)" = 8000 ]
	done
	bloom rotate w.bf
	[ "$(found w.bf burst)" -lt 400 ]
	bloom rotate w.bf
	[ "$(stats_field segments w.bf)" = 4 ]
	[ "$(stat -c %s w.bf)" = "$size" ]
}

@test "apbf: the measured false-positive rate is within bounds of the target" {
	# All 14 slots loaded: 14 generations of 100000 / 7 lines each, then
	# 200000 lines never added.  At the target 1 %, the count of a
	# binomial(200000, 0.01) is 2000 +- 44.
	bloom create --seed 42 --generations 8 -n 100000 -p 0.01 \
		--layout apbf w.bf
	for g in $(seq 0 13); do
		keys 14286 "g$g-" | bloom add w.bf
		[ "$g" = 13 ] || bloom rotate w.bf
	done
	keys 200000 absent- >absent
	n=$(found w.bf absent || true)
	echo "false positives: $n of 200000"
	[ "$n" -gt 1000 ] && [ "$n" -lt 2300 ]
	# The newest 7 generations are all still found.
	for g in $(seq 7 13); do
		[ "$(keys 14286 "g$g-" | bloom check -c w.bf)" = 14286 ]
	done
}

@test "apbf: merge, fold and sorted batches take it (merge.bats, fold.bats, batch.bats)" {
	bloom create --seed 42 --generations 4 -n 1000000 --layout apbf w.bf
	bloom create --like w.bf v.bf
	[ "$(stats_field layout v.bf)" = "$(stats_field layout w.bf)" ]
	row 0 "" "" merge w.bf v.bf
	bloom create --seed 42 --generations 4 --layout blocked -n 1000 b.bf
	row 2 "" "bloom: b.bf: layout differs from w.bf's (blocked here, apbf there)" \
		merge w.bf b.bf
	row 0 "" "" fold w.bf out.bf
	[ "$(stats_field layout out.bf)" = "$(stats_field layout w.bf)" ]
	keys 100 >k
	row 0 "" "" add --memory 1M w.bf k
	row 0 "100" "" check -c --memory 1M w.bf k
	[ "$(found w.bf k)" = 100 ]
}

@test "apbf: a file whose generations differ, or whose hash count makes no layout, is refused at open" {
	need_hashsum
	bloom create --seed 42 --generations 4 -n 1000 -p 0.01 \
		--layout apbf w.bf
	keys 10 | bloom add w.bf
	msg="corrupt segment table (age-partitioned generations differ)"
	# Entry 2 one page further: no longer the array of entry 0.
	cp w.bf f.bf
	off=$(od -An --endian=little -tu8 -j "$(entry 2)" -N 8 f.bf | tr -d ' ')
	set_entry f.bf 2 0 "$(le 8 $((off + 4096)))"
	rejected f.bf "$msg"
	# Entry 3 with another hash count.
	cp w.bf f.bf
	set_entry f.bf 3 16 "$(le 4 7)"
	rejected f.bf "$msg"
	# Every entry with 20 hashes, more than the layout's 16.
	cp w.bf f.bf
	for i in 0 1 2 3; do
		set_entry f.bf "$i" 16 "$(le 4 20)"
	done
	rejected f.bf "$msg"
	# Entry 1 with an odd block count: not whole groups.
	cp w.bf f.bf
	nb=$(od -An --endian=little -tu8 -j "$(($(entry 0) + 8))" -N 8 f.bf | tr -d ' ')
	for i in 0 1 2 3; do
		set_entry f.bf "$i" 8 "$(le 8 $((nb - 1)))"
	done
	rejected f.bf "$msg"
}

@test "apbf: the layout id is refused on a fixed filter, and an unknown one anywhere" {
	need_xxhsum
	bloom create --seed 42 -n 1000 f.bf
	put f.bf 16 "$(le 4 2)"
	put f.bf 128 "$(xxh3_at f.bf 0 128 0)"
	rejected f.bf "corrupt header (unknown layout)"
	bloom create --seed 42 --generations 4 -n 1000 --layout apbf w.bf
	put w.bf 16 "$(le 4 3)"
	put w.bf 128 "$(xxh3_at w.bf 0 128 0)"
	rejected w.bf "corrupt header (unknown layout)"
	# An age-partitioned window whose mode says growable: the layout is
	# what is wrong, not its growth factor.
	bloom create -f --seed 42 --generations 4 -n 1000 --layout apbf w.bf
	put w.bf 32 "$(le 4 1)"
	put w.bf 128 "$(xxh3_at w.bf 0 128 0)"
	rejected w.bf "corrupt header (unknown layout)"
}

@test "apbf: stats counts the array once and shows each generation's slot" {
	bloom create --seed 42 --generations 4 -n 30000 -p 0.001 \
		--layout apbf w.bf
	keys 4000 >a
	bloom add w.bf a
	bloom rotate w.bf
	keys 2000 b- | bloom add w.bf
	# 11 slots of 93 bits in each of 1395 groups.
	[ "$(stats_field layout w.bf)" = \
		"apbf (age-partitioned: 11 slots of 93 bits in 1024-bit groups)" ]
	[ "$(stats_field bits w.bf)" = $((1395 * 1024)) ]
	[ "$(stats_field inserted w.bf)" = 6000 ]
	[ "$(stats_field estimated_items w.bf)" = 6000 ]
	[ "$(json w.bf 'd["segments"][0]["bits"]')" = $((1395 * 93)) ]
	[ "$(json w.bf 'd["segments"][0]["inserted"]')" = 4000 ]
	[ "$(json w.bf 'd["segments"][1]["inserted"]')" = 2000 ]
	# Generation 0's slot holds a bit of each line of generation 0 and
	# of the k - 1 after it: 6000 lines, as its fill says to within 3 %.
	est=$(json w.bf 'round(d["segments"][0]["estimated_items"])')
	echo "estimated $est"
	[ "$est" -gt 5820 ] && [ "$est" -lt 6180 ]
	# The sums count the array's bits set once.
	[ "$(json w.bf 'd["bits_set"] <= d["bits"]')" = True ]
	rate=$(json w.bf 'd["estimated_fpr"]')
	echo "rate $rate"
	[ "$(json w.bf '0 <= d["estimated_fpr"] < 0.001')" = True ]
}

@test "apbf: a rotation killed in a jump of G or more is mended by emptying every slot" {
	bloom create --seed 42 --generations 4 -n 30000 -p 1e-6 \
		--layout apbf w.bf
	keys 2000 a- >a
	keys 500 c- >c
	bloom add w.bf a
	bloom rotate w.bf
	bloom add w.bf a
	# Generation 10 published, as a jump's first step, and nothing
	# emptied or stamped: no generation of the window is whole.
	put w.bf 144 "$(le 8 10)"
	[ "$(found w.bf a)" = 0 ]
	bloom add w.bf c
	[ "$(stats_field generation w.bf)" = 10 ]
	[ "$(found w.bf c)" = 500 ]
	[ "$(found w.bf a)" = 0 ]
	# Only c's bits are left: 13 slots each, at most.
	[ "$(stats_field hashes w.bf)" = 13 ]
	set=$(stats_field bits_set w.bf)
	echo "bits set: $set"
	[ "$set" -gt 0 ] && [ "$set" -le $((500 * 13)) ]
}

@test "apbf: adding lines the generation holds dirties no page of the file" {
	[[ $(uname -m) == x86_64 ]] || skip "cachestat(2) is called by its x86-64 number"
	bloom create --seed 42 --generations 8 -n 1000000 --layout apbf w.bf
	seq 1 10000 | bloom add w.bf
	synced_clean w.bf
	# Stores of bits already set would dirty the pages they touch.  (The
	# array has 750 pages: from as many lines on, an add makes them all
	# writable, and dirty, at once.)
	before=$(mtime w.bf)
	seq 1 500 | bloom add w.bf
	[ "$(dirty w.bf)" -eq 0 ]
	run -0 --separate-stderr bloom add --new w.bf < <(seq 1 500)
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ "$(dirty w.bf)" -eq 0 ]
	[ "$(mtime w.bf)" = "$before" ]
	# A line new to the generation does dirty its page: the count sees
	# stores.  A busy machine may write the page back before the count
	# is taken (the CI's writeback did once), so the count takes pages
	# under writeback too, a few new lines are tried, and the mtime, which
	# no writeback resets, must move.
	sleep 0.05
	seen=0
	for i in 1 2 3 4 5; do
		echo "new-line-$i" | bloom add w.bf
		if [ "$(dirty w.bf all)" -gt 0 ]; then
			seen=1
			break
		fi
	done
	[ "$seen" = 1 ]
	[ "$(mtime w.bf)" != "$before" ]
}

@test "apbf: more lines the generation holds than the array has pages dirty no page either" {
	[[ $(uname -m) == x86_64 ]] || skip "cachestat(2) is called by its x86-64 number"
	bloom create --seed 42 --generations 8 -n 1000000 --layout apbf w.bf
	seq 1 10000 | bloom add w.bf
	synced_clean w.bf
	# 10000 lines, 13 times the array's 750 pages, all held: the array
	# is made writable at once only after stores, not lookups, as many
	# as an eighth of its pages.
	before=$(mtime w.bf)
	seq 1 10000 | bloom add w.bf
	[ "$(dirty w.bf)" -eq 0 ]
	run -0 --separate-stderr bloom add --new w.bf < <(seq 1 10000)
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ "$(dirty w.bf)" -eq 0 ]
	[ "$(mtime w.bf)" = "$before" ]
}

@test "apbf: a generation that fills before its time takes room without writing back the bits set" {
	[[ $(uname -m) == x86_64 ]] || skip "cachestat(2) is called by its x86-64 number"
	[ "$(stat -f -c %T .)" != tmpfs ] ||
		skip "the test directory is on tmpfs, whose pages are never written back"
	# 10000 lines a generation; the array is 54 pages.
	bloom create --seed 42 --generations 8 -n 70000 --layout apbf w.bf
	seq 1 9990 | bloom add w.bf
	run dirty w.bf all
	[ "$status" -ne 3 ] || skip "the kernel has no cachestat(2) (Linux 6.5 on)"
	[ "$status" -eq 0 ]
	[ "$output" -ge 50 ]
	# The burst writes the new segment's entry and room to disk before
	# the count (msync of the table: the file's size and allocation with
	# it), not the whole file, which fdatasync did: 6 pages left dirty,
	# and each a write fault again at its next store.
	run -0 --separate-stderr bloom add w.bf < <(seq 10001 10100)
	[ "$stderr" = "bloom: w.bf: warning: a generation filled before its time and took more room: the window has grown past its sizing, and its false-positive rate may pass its target until that generation expires" ]
	[ "$(stats_field segments w.bf)" = 9 ]
	[ "$(dirty w.bf all)" -ge 50 ]
	# Every line is found, those of the new segment too.
	row 0 190 '' check -c w.bf <(seq 9901 9990; seq 10001 10100)
}

# A generation of the window before the one now whose entry is not stamped
# (a hand edit, or a rotation cut short): readers count none of its bits,
# so an add mends it before it adds, or the lines it adds are not found.
@test "an earlier generation unstamped: add mends it, and what it adds is found" {
	bloom create --generations 4 --layout apbf -n 10000 -p 0.001 w.bf
	keys 500 a >a
	bloom add w.bf a
	bloom rotate w.bf
	bloom rotate w.bf
	# Generation 1's entry, 1 of 4: its stamp (1 + 1) at 256 + 64 + 56.
	[ "$(hex_at w.bf 376 8)" = "$(le 8 2)" ]
	put w.bf 376 "$(le 8 0)"
	keys 1000 b >b
	run -0 bloom add --new w.bf b
	[ "${#lines[@]}" -eq 1000 ]
	row 0 1000 '' check -c w.bf b
	[ "$(hex_at w.bf 376 8)" = "$(le 8 2)" ]
	# What generation 0 held is still found.
	row 0 500 '' check -c w.bf a
}
