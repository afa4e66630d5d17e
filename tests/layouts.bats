#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The layout a window gets without --layout (issue 36): the
# age-partitioned one (apbf) wherever it takes at most 1.75 times the
# blocked layout's room, the blocked one elsewhere (store/plan.c,
# plan_window_layout); create --dry-run says which and why.  The layout is
# stored in each file, so a window made with the old default (blocked)
# keeps working as it did.

load helpers
bats_require_minimum_version 1.5.0

@test "a window without --layout: apbf where it takes at most 1.75 times blocked's room, else blocked" {
	# G, rate, the layout the rule gives, and apbf's room over blocked's
	# for -n 100000 (from create --dry-run of both), on both sides of the
	# bound: small G and low rates cost apbf more hashes a slot, near 64
	# generations few hashes fit in its groups.
	while read -r g p want; do
		bloom create --seed 3 -n 100000 -p "$p" --generations "$g" d.bf
		bloom create --seed 3 -n 100000 -p "$p" --generations "$g" \
			--layout "$want" l.bf
		echo "G=$g p=$p: $(stats_field layout d.bf)"
		same_filter d.bf l.bf
		rm d.bf l.bf
	done <<-'EOF'
	2 0.01 blocked
	3 0.01 apbf
	8 0.01 apbf
	31 0.01 apbf
	61 0.01 apbf
	62 0.01 blocked
	64 0.01 blocked
	4 0.001 blocked
	5 0.001 apbf
	8 0.001 apbf
	31 0.001 apbf
	5 0.0001 blocked
	6 0.0001 apbf
	8 0.0001 apbf
	57 0.0001 blocked
	64 0.0001 blocked
	EOF
}

@test "create --dry-run of a window says which layout and why" {
	run -0 --separate-stderr bloom create --dry-run --generations 8 -n 1000000 w.bf
	[ "$stderr" = "" ]
	[ "${lines[1]}" = "mode: window" ]
	[ "${lines[2]}" = "layout: apbf (age-partitioned: 14 slots of 73 bits in 1024-bit groups; the generations share one array)" ]
	[ "${lines[3]}" = "layout_reason: the default for 8 generations at fpr 0.01: apbf takes 24.6 bits a line, 1.42 times blocked's 17.3 (at most 1.75), and tests every generation of a line in one read" ]
	# The lines after it are those of any window.
	[ "${lines[4]}" = "bytes: 3074048 (2.9 MiB)" ]
	[ "${lines[9]}" = "generations: 8" ]
	[ "${lines[10]}" = "renew: yes" ]
	[ "${lines[11]}" = "segments: 8" ]
	[ "${#lines[@]}" -eq 20 ]
	run -0 bloom create --dry-run --generations 2 -n 1000000 w.bf
	[ "${lines[2]}" = "layout: blocked512 (512-bit blocks)" ]
	[ "${lines[3]}" = "layout_reason: the default for 2 generations at fpr 0.01: blocked takes 23.1 bits a line; apbf would take 43.8, 1.90 times as many (more than 1.75)" ]
	run -0 bloom create --dry-run --generations 31 -p 0.1% -n 1000000 w.bf
	[ "${lines[3]}" = "layout_reason: the default for 31 generations at fpr 0.001: apbf takes 34.1 bits a line, 1.24 times blocked's 27.4 (at most 1.75), and tests every generation of a line in one read" ]
	# Where apbf would pass a file's largest size, the window is blocked,
	# not refused.
	run -0 bloom create --dry-run --generations 64 -n 380G w.bf
	[ "${lines[2]}" = "layout: blocked512 (512-bit blocks)" ]
	[ "${lines[3]}" = "layout_reason: the default for 64 generations at fpr 0.01: blocked takes 21.0 bits a line; apbf cannot be made for it (more than 128 TiB)" ]
	# A layout named is a layout given.
	run -0 bloom create --dry-run --generations 8 --layout blocked -n 1000000 w.bf
	[ "${lines[2]}" = "layout: blocked512 (512-bit blocks)" ]
	[ "${lines[3]}" = "layout_reason: --layout blocked" ]
	run -0 bloom create --dry-run --generations 2 --layout apbf -n 1000000 w.bf
	[ "${lines[2]}" = "layout: apbf (age-partitioned: 5 slots of 204 bits in 1024-bit groups; the generations share one array)" ]
	[ "${lines[3]}" = "layout_reason: --layout apbf" ]
	# Fixed and growable filters have no layout to choose.
	run -0 bloom create --dry-run -n 1000 f.bf
	[[ $output != *layout* ]]
	run -0 bloom create --dry-run --grow -n 1000 f.bf
	[[ $output != *layout* ]]
	[ ! -e w.bf ] && [ ! -e f.bf ]
}

@test "--layout apbf is still refused past 3 times blocked's room, where the default takes blocked" {
	run -0 bloom create --generations 64 -n 1000 w.bf
	[ "$(stats_field layout w.bf)" = "blocked512 (512-bit blocks)" ]
	run -2 --separate-stderr bloom create -f --generations 64 --layout apbf -n 1000 w.bf
	[[ $stderr == "bloom: w.bf: an age-partitioned window of 64 generations at fpr 0.01 would take "*" times the room of the blocked layout"* ]]
}

# The window of tests/data/window-old-default.bf, made by bloom before the
# default changed (main at 2a7cb2c) with
#	bloom create --generations 4 -n 1000 -p 0.01 --seed 11 w.bf
#	seq 1 300 | sed 's/^/k/' | bloom add w.bf; bloom rotate w.bf
#	seq 301 500 | sed 's/^/k/' | bloom add w.bf
# in the blocked layout, the default then; old.bf is a copy, new.bf the
# same made now with --layout blocked.
old_and_new() {
	cp "$root/tests/data/window-old-default.bf" old.bf
	bloom create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 11 new.bf
	keys 300 k | bloom add new.bf
	bloom rotate new.bf
	awk 'BEGIN { for (i = 301; i <= 500; i++) print "k" i }' | bloom add new.bf
}

@test "a window made with the old default opens, adds and rotates as it did" {
	old_and_new
	[ "$(stats_field layout old.bf)" = "blocked512 (512-bit blocks)" ]
	same_filter old.bf new.bf
	[ "$(bloom stats old.bf | sed 1d)" = "$(bloom stats new.bf | sed 1d)" ]
	# The same answers, the same lines new, the same bits after each step,
	# across rotations that forget the first generation: each step 100 new
	# lines and 100 seen in the last one, which a renewing window keeps.
	keys 500 k >in
	for step in 1 2 3 4; do
		[ "$(bloom check -c old.bf in)" = "$(bloom check -c new.bf in)" ]
		{ keys 100 "s$step-"; awk 'BEGIN { for (i = 401; i <= 500; i++) print "k" i }'; } |
			shuf --random-source=in >stream
		bloom add --new old.bf stream >old.out
		bloom add --new new.bf stream >new.out
		cmp old.out new.out
		# A new line is left out only when a false positive.
		[ "$(grep -c "^s$step-" old.out)" -ge 95 ]
		[ "$(grep -c '^k' old.out || true)" -eq 0 ]
		bloom rotate old.bf
		bloom rotate new.bf
		same_filter old.bf new.bf
	done
	# Forgotten: the first 300 (but what the rate finds); renewed: the
	# last 100.
	[ "$(bloom check -c old.bf <(keys 300 k))" -lt 30 ]
	[ "$(bloom check -c old.bf <(awk 'BEGIN { for (i = 401; i <= 500; i++) print "k" i }'))" -eq 100 ]
	[ "$(stats_field layout old.bf)" = "blocked512 (512-bit blocks)" ]
}

@test "create without --layout leaves a window of the old default as it is, as a daily job reruns it" {
	cp "$root/tests/data/window-old-default.bf" old.bf
	cp old.bf kept.bf
	# The options it was made with, which now plan apbf: still the window
	# asked for, so create leaves it and exits 0.
	[ "$(bloom create --dry-run --generations 4 -n 1000 -p 0.01 --seed 11 x.bf | sed -n 's/^layout: //p')" = "apbf (age-partitioned: 8 slots of 128 bits in 1024-bit groups; the generations share one array)" ]
	run -0 --separate-stderr bloom create --generations 4 -n 1000 -p 0.01 --seed 11 old.bf
	[ "$stderr" = "" ]
	cmp old.bf kept.bf
	# A layout named is a layout asked for.
	run -2 --separate-stderr bloom create --generations 4 --layout apbf -n 1000 -p 0.01 --seed 11 old.bf
	[ "$stderr" = "bloom: old.bf: exists and differs: --layout blocked, not apbf (use -f to replace it, losing its lines)" ]
	run -0 bloom create --generations 4 --layout blocked -n 1000 -p 0.01 --seed 11 old.bf
	cmp old.bf kept.bf
	# Whatever else differs still does.
	run -2 --separate-stderr bloom create --generations 4 -n 2000 -p 0.01 --seed 11 old.bf
	[ "$stderr" = "bloom: old.bf: exists and differs: -n 1000, not 2000 (use -f to replace it, losing its lines)" ]
	cmp old.bf kept.bf
}

@test "create --like a window of the old default makes a blocked window it merges with" {
	cp "$root/tests/data/window-old-default.bf" old.bf
	bloom create --like old.bf like.bf
	[ "$(stats_field layout like.bf)" = "blocked512 (512-bit blocks)" ]
	[ "$(stats_field generations like.bf)" = 4 ]
	# At its generation: the two merge, as windows made alike do.
	run -0 bloom merge like.bf old.bf
	[ "$(bloom check -c like.bf <(awk 'BEGIN { for (i = 1; i <= 500; i++) print "k" i }'))" -eq 500 ]
}
