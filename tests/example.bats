#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# make example (issue 38): a first run that explains itself.  add --new
# writes fewer lines than sort -u finds; the run says that the difference
# is false positives, with the number the filter's math expects.

bats_require_minimum_version 1.5.0
load helpers

@test "make example says the lines add --new did not write are false positives, and how many to expect" {
	run -0 make -s -C "$root" EXAMPLE="$BATS_TEST_TMPDIR/ex" example
	local counts explained written lost expected sd want

	counts=$(grep '^lines in: ' <<<"$output")
	[[ "$counts" =~ ^"lines in: 1000000, new lines out of bloom add --new: "([0-9]+)", distinct (sort -u): 500336"$ ]]
	written=${BASH_REMATCH[1]}
	lost=$((500336 - written))
	explained=$(grep '^the ' <<<"$output")
	echo "$explained"
	[[ "$explained" =~ ^"the $lost distinct lines not written are false positives: lines the filter took for ones already added, "([0-9.]+)" expected (standard deviation "([0-9.]+)") for 500336 lines in its bits with 9 hashes"$ ]]
	expected=${BASH_REMATCH[1]} sd=${BASH_REMATCH[2]}
	# The filter's rate summed over the distinct lines, more finely than
	# the Makefile does: the same to 0.2.
	bloom create -n 600000 -p 0.001 f.bf
	want=$(for i in $(seq 1 100); do
		bloom create --dry-run -n $((500336 * i / 100)) \
		    -s $(($(stats_field bits f.bf) / 8)) \
		    -k "$(stats_field hashes f.bf)" g.bf |
		    sed -n 's/^target_fpr: //p'
	done | awk '{ s += (NR == 100 ? 0.5 : 1) * $1 } END { print s * 500336 / 100 }')
	echo "expected $expected, summed $want, lost $lost, sd $sd"
	awk -v a="$expected" -v b="$want" 'BEGIN { exit !(a - b < 0.2 && b - a < 0.2) }'
	awk -v e="$expected" -v s="$sd" 'BEGIN { exit !(e > 5 && s * s > e - 1 && s * s < e + 1) }'
	# What was lost is what the rate explains (5 standard deviations).
	awk -v l="$lost" -v e="$expected" -v s="$sd" 'BEGIN { exit !(l - e < 5 * s && e - l < 5 * s) }'
	# It cleans up after itself.
	[ -z "$(ls -A "$BATS_TEST_TMPDIR" | grep '^ex\.')" ]
}
