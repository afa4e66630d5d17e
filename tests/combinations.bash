# SPDX-License-Identifier: ISC
#
# The combination matrix of tests/combinations.bats: every kind of filter
# through every path, each cell checked against a small reference model of
# what the promises mean.  Load after helpers.
#
# A kind is a set of functions named for it:
#	make_KIND NAME		creates filter NAME, empty (its files are
#				members NAME, below)
#	members_KIND NAME	prints the files of filter NAME, one a line
#	holds_KIND NAME FILE	prints the lines of FILE that NAME answers
#				for: a slice, only those of its own slice
#	generations_KIND	prints G for a window, else nothing
#	renews_KIND		true if a line seen again is added again to
#				the current generation (optional: true)
# A path is a function path_PATH KIND run in a directory of its own; it
# asserts with `want` and `fail`, which end the cell, and a cell that
# the documented rule refuses asserts the refusal's message and status.
#
# The model: NAME.held (sorted) is every line of a live generation that
# NAME answers for (all lines added, for a kind without generations): a
# line is new if it is not held; NAME.gen holds the lines added in the
# current generation, new or not (a line seen again is added again), and
# NAME.gen.E those of generation E.  The promises:
#	- no false negative: check -v of the held lines selects none, and a
#	  union (check -F) selects every line any of its filters holds;
#	- no line marked seen unwritten: add --new writes every line that
#	  was new (first occurrence, in input order), even across a kill -9
#	  and a rerun;
#	- the same lines as line by line: sorted batches, --sync and
#	  --memory write the same output and leave the same filter;
#	- a union reports a line certainly absent only if no filter may
#	  hold it: never a line a slice passes over.

# shellcheck disable=SC2034 # used by combinations.bats
KINDS="fixed grow window apbf window_once apbf_once slice union"
PATHS="line sorted sync memory union fold merge rotate kill"

# The rate every kind is made for: few enough false positives that the
# outputs below are exact at a few thousand lines.
RATE=1e-6

fail() {
	echo "FAIL: $*"
	exit 1
}

# want DESCRIPTION TEST...: runs TEST, failing the cell with DESCRIPTION.
want() {
	local what=$1

	shift
	"$@" || fail "$what"
}

# same_file A B DESCRIPTION: A and B have the same bytes.
same_file() {
	cmp -s "$1" "$2" || {
		echo "--- $1"; head -n 20 "$1"; echo "--- $2"; head -n 20 "$2"
		fail "$3"
	}
}

# ==== The kinds ====

make_fixed() { bloom create --seed 11 -s 512K -p $RATE "$1.bf"; }
members_fixed() { echo "$1.bf"; }
holds_fixed() { cat "$2"; }
generations_fixed() { :; }

# Grows twice within the few thousand lines added.
make_grow() { bloom create --seed 11 --grow -n 1000 -p $RATE "$1.bf"; }
members_grow() { echo "$1.bf"; }
holds_grow() { cat "$2"; }
generations_grow() { :; }

make_window() {
	bloom create --seed 11 --generations 3 --layout blocked -n 60000 -p $RATE "$1.bf"
}
members_window() { echo "$1.bf"; }
holds_window() { cat "$2"; }
generations_window() { echo 3; }

make_apbf() {
	bloom create --seed 11 --generations 3 -n 60000 -p $RATE \
		--layout apbf "$1.bf"
}
members_apbf() { echo "$1.bf"; }
holds_apbf() { cat "$2"; }
generations_apbf() { echo 3; }

# Windows that remember a line from its first add (create --no-renew): a
# line seen again is not added again.
make_window_once() {
	bloom create --seed 11 --generations 3 --layout blocked -n 60000 -p $RATE --no-renew "$1.bf"
}
members_window_once() { echo "$1.bf"; }
holds_window_once() { cat "$2"; }
generations_window_once() { echo 3; }
renews_window_once() { false; }

make_apbf_once() {
	bloom create --seed 11 --generations 3 -n 60000 -p $RATE \
		--layout apbf --no-renew "$1.bf"
}
members_apbf_once() { echo "$1.bf"; }
holds_apbf_once() { cat "$2"; }
generations_apbf_once() { echo 3; }
renews_apbf_once() { false; }

# Slice 1 of 2 of a whole filter: the lines of slice 0 are passed over.
make_slice() { bloom create --seed 11 -s 512K -p $RATE --slice 1/2 "$1.bf"; }
members_slice() { echo "$1.bf"; }
holds_slice() {
	bloom route --slices 2 "$1.bf" "$2" | awk -F '\t' '$1 == 1 { print $2 }'
}
generations_slice() { :; }

# A union of filters: both slices of one whole filter, which take the
# lines added, and a fixed filter of another seed that holds x- lines.
make_union() {
	bloom create --seed 11 -s 512K -p $RATE --slice 0/2 "$1.0.bf" &&
	bloom create --seed 11 -s 512K -p $RATE --slice 1/2 "$1.1.bf" &&
	bloom create --seed 12 -s 64K -p $RATE "$1.x.bf" &&
	keys 100 x- | bloom add "$1.x.bf"
}
members_union() { printf '%s\n' "$1.0.bf" "$1.1.bf" "$1.x.bf"; }
holds_union() { cat "$2"; }
generations_union() { :; }

# ==== The model ====

# model_add KIND NAME FILE: prints the lines of FILE that add --new must
# write, first occurrences in input order of those not held, and adds the
# lines to the model.
model_add() {
	local kind=$1 name=$2 file=$3

	"holds_$kind" "$name" "$file" >.held_in
	awk 'FILENAME == ARGV[1] { seen[$0] = 1; next } !seen[$0]++' "$name.held" .held_in >.new_in
	cat .new_in
	# A window that does not renew adds only the new lines.
	if declare -F "renews_$kind" >/dev/null && ! "renews_$kind"; then
		cp .new_in .held_in
	fi
	sort -u "$name.gen" .held_in >.gen && mv .gen "$name.gen"
	sort -u "$name.held" .held_in >.held && mv .held "$name.held"
	rm -f .held_in .new_in
}

# model_rotate KIND NAME: a new generation; the held lines are those of
# the G newest.
model_rotate() {
	local name=$2 g n

	g=$("generations_$1")
	n=$(cat "$name.epoch")
	cp "$name.gen" "$name.gen.$n"
	n=$((n + 1))
	echo "$n" >"$name.epoch"
	: >"$name.gen"
	{
		for ((e = n - g + 1; e < n; e++)); do
			[ "$e" -ge 0 ] && cat "$name.gen.$e"
		done
		:
	} | sort -u >"$name.held"
}

# fresh KIND NAME: makes filter NAME of KIND and its empty model.
fresh() {
	"make_$1" "$2" >/dev/null || fail "create $1 $2"
	: >"$2.gen"
	: >"$2.held"
	echo 0 >"$2.epoch"
}

# ==== Operations on a kind's filter ====

# Every add is given whole streams: a slice passes over the lines of its
# other slices, as the model says, which add does only when told
# (tests/slices.bats shows the error without it).  Harmless elsewhere.
PASS=--pass-over

# add KIND NAME [OPTION...] FILE: add to every member that takes adds,
# stdout to add.out (sorted for a union, whose members each write
# theirs), stderr to add.err; returns the first status that is not 0.
add() {
	local kind=$1 name=$2 rc=0 st m
	local -a opts=("${@:3}")

	if [ "$kind" != union ]; then
		bloom add $PASS "${opts[@]:0:${#opts[@]}-1}" "$name.bf" \
			"${opts[-1]}" >add.out 2>add.err
		return
	fi
	: >add.out
	: >add.err
	for m in "$name.0.bf" "$name.1.bf"; do
		bloom add $PASS "${opts[@]:0:${#opts[@]}-1}" "$m" "${opts[-1]}" \
			>>add.out 2>>add.err || { st=$?; [ $rc -ne 0 ] || rc=$st; }
	done
	sort -o add.out add.out
	return $rc
}

# check KIND NAME [OPTION...] FILE: check -F with every member, to
# check.out and check.err.
check() {
	local kind=$1 name=$2 m
	local -a fs=()

	while read -r m; do
		fs+=(-F "$m")
	done < <("members_$kind" "$name")
	bloom check "${fs[@]}" "${@:3}" >check.out 2>check.err
}

# expect_new KIND NAME [OPTION...] FILE: add --new writes exactly the
# model's new lines (as a set for a union), and exits 0.
expect_new() {
	local kind=$1 name=$2 file=${!#}

	model_add "$kind" "$name" "$file" >want.new
	[ "$kind" != union ] || sort -o want.new want.new
	add "$kind" "$name" --new "${@:3}" || fail "add --new ${*:3}: status $? ($(cat add.err))"
	same_file add.out want.new "add --new ${*:3}: not the lines that were new"
}

# no_false_negative KIND NAME [OPTION...]: check -v of the held lines
# selects none (exit 1), and check selects them all.
no_false_negative() {
	local kind=$1 name=$2 rc=0

	[ -s "$name.held" ] || fail "model of $name holds nothing: nothing tested"
	check "$kind" "$name" -v "${@:3}" "$name.held" || rc=$?
	[ "$rc" -eq 1 ] && [ ! -s check.out ] ||
		fail "check -v ${*:3}: status $rc, lines added are certainly absent: $(head -n 3 check.out | tr '\n' ' ')"
	check "$kind" "$name" -c "${@:3}" "$name.held" ||
		fail "check -c ${*:3}: status $?"
	[ "$(cat check.out)" = "$(wc -l <"$name.held")" ] ||
		fail "check -c ${*:3}: $(cat check.out) of $(wc -l <"$name.held") lines added found"
}

# ==== Inputs ====

# The lines of the cells: repeats near and far apart, then an overlap.
inputs() {
	awk 'BEGIN { for (i = 1; i <= 3000; i++) print "u" (i * i) % 1900 }' >in1
	awk 'BEGIN { for (i = 1; i <= 3000; i++) print "u" (1000 + i * 7) % 3800 }' >in2
}

# ==== The paths ====

# Line by line: the reference the others are held to.
path_line() {
	inputs
	fresh "$1" f
	expect_new "$1" f in1
	no_false_negative "$1" f
	expect_new "$1" f in2
	no_false_negative "$1" f
}

# bits_of FILE: the bit arrays of FILE, from its first segment on: not
# the stamps and counters of its table, which differ from run to run.
bits_of() {
	tail -c +$(($(json "$1" '4096 if d["mode"] != "grow" else 8192') + 1)) "$1"
}

# same_as_line KIND OPTION...: add --new in1 then in2 with OPTION... writes
# what line by line writes and leaves the same bits, and check with them
# answers the same.
same_as_line() {
	local kind=$1 m
	local -a opts=("${@:2}")

	inputs
	fresh "$kind" f
	while read -r m; do
		cp "$m" "l${m#f}"
	done < <("members_$kind" f)
	for in in in1 in2; do
		add "$kind" l --new "$in" || fail "line by line: status $?"
		mv add.out line.out
		expect_new "$kind" f "${opts[@]}" "$in"
		same_file add.out line.out "${opts[*]}: not what line by line writes"
	done
	while read -r m; do
		bits_of "$m" >bits.f
		bits_of "l${m#f}" >bits.l
		cmp -s bits.f bits.l || fail "${opts[*]}: the bits of $m differ from line by line's"
	done < <("members_$kind" f)
	# check takes --memory, not --sync.
	[ "${opts[0]}" != --sync ] || opts=()
	no_false_negative "$kind" f "${opts[@]}"
	check "$kind" l -v in1 in2 || true
	mv check.out line.out
	check "$kind" f -v "${opts[@]}" in1 in2 || true
	same_file check.out line.out "check -v ${opts[*]}: not what line by line selects"
}

# Sorted batches, forced by a --memory far below the filter.
path_sorted() {
	same_as_line "$1" --memory 4K
}

path_sync() { same_as_line "$1" --sync; }

# --memory with room for the whole filter: in core, as line by line.
path_memory() { same_as_line "$1" --memory 64M; }

# A union with another filter (other seed and geometry) that holds o-
# lines: selected, every line either holds; certainly absent (-v), only
# lines neither may hold: not a line a slice passes over to its other
# slices, which the whole filter may hold.
path_union() {
	local kind=$1 rc m
	local -a fs=()

	inputs
	fresh "$kind" f
	model_add "$kind" f in1 >/dev/null
	add "$kind" f in1 || fail "add: status $?"
	bloom create --seed 99 -n 1000 -p $RATE other.bf >/dev/null
	keys 100 o- >o
	bloom add other.bf o
	keys 1000 z- >z
	cat in1 o z >probe
	while read -r m; do
		fs+=(-F "$m")
	done < <("members_$kind" f)
	# What the kind answers for: held lines, and lines it cannot answer
	# for (another slice's), which it may hold.
	"holds_$kind" f probe | sort -u >answered
	sort -u probe >all
	{ cat f.held o; [ "$kind" != union ] || keys 100 x-; } | sort -u >may
	comm -23 all answered >unknown
	# Selected: what some filter holds, in input order.
	awk 'FILENAME == ARGV[1] { may[$0] = 1; next } ($0 in may)' may probe >want.sel
	rc=0
	bloom check "${fs[@]}" -F other.bf probe >got.sel 2>err.sel || rc=$?
	[ $rc -eq 0 ] || fail "check -F ... -F other.bf: status $rc"
	same_file got.sel want.sel "check -F ... -F other.bf: not the lines either filter holds"
	# Certainly absent: neither holds it, and no slice passed it over.
	sort -u may unknown >not_absent
	awk 'FILENAME == ARGV[1] { no[$0] = 1; next } !($0 in no)' not_absent probe >want.abs
	rc=0
	bloom check -v "${fs[@]}" -F other.bf probe >got.abs 2>err.abs || rc=$?
	[ $rc -eq 0 ] || fail "check -v -F ... -F other.bf: status $rc"
	if ! cmp -s got.abs want.abs; then
		echo "lines of other slices said certainly absent: $(comm -12 <(sort got.abs) unknown | wc -l)"
		same_file got.abs want.abs "check -v -F ... -F other.bf: a line some filter may hold is said certainly absent"
	fi
	# A line passed over is told of, as a slice alone tells.
	if [ -s unknown ]; then
		grep -q "lines belong to other slices of the filter and were passed over" err.abs ||
			fail "check -v -F: lines passed over untold: $(cat err.abs)"
	else
		[ ! -s err.abs ] || fail "check -v -F: stderr: $(cat err.abs)"
	fi
}

# Fold: every member folded (a slice by 2, as its whole filter would be;
# the others as far as their rate allows) answers for every line held.
path_fold() {
	local kind=$1 m
	local -a by

	inputs
	fresh "$kind" f
	model_add "$kind" f in1 >/dev/null
	add "$kind" f in1 || fail "add: status $?"
	while read -r m; do
		by=()
		[ "$(json "$m" 'd.get("slices", 0)')" = 0 ] || by=(--by 2)
		bloom fold "${by[@]}" "$m" "folded.$m" 2>fold.err ||
			fail "fold ${by[*]} $m: status $? ($(cat fold.err))"
		[ ! -s fold.err ] || fail "fold $m: $(cat fold.err)"
	done < <("members_$kind" f)
	while read -r m; do
		mv "folded.$m" "$m"
	done < <("members_$kind" f)
	no_false_negative "$kind" f
	# The folded filter goes on taking lines (past what it was folded
	# for: its rate may pass its target, so add --new is not exact).
	model_add "$kind" f in2 >/dev/null
	add "$kind" f in2 || fail "add to the folded filter: status $? ($(cat add.err))"
	no_false_negative "$kind" f
}

# Merge: lines added to a twin (create --like) merged into the filter.
path_merge() {
	local kind=$1 m

	inputs
	fresh "$kind" f
	model_add "$kind" f in1 >/dev/null
	add "$kind" f in1 || fail "add: status $?"
	while read -r m; do
		bloom create --like "$m" "twin.$m" || fail "create --like $m"
	done < <("members_$kind" f)
	# The twin's lines, in the model of f: merged, f holds them too.
	model_add "$kind" f in2 >/dev/null
	while read -r m; do
		case $m in
		*.x.bf) continue ;;
		esac
		bloom add $PASS "twin.$m" in2 >/dev/null 2>&1
		bloom merge "$m" "twin.$m" 2>merge.err ||
			fail "merge $m twin.$m: status $? ($(cat merge.err))"
	done < <("members_$kind" f)
	no_false_negative "$kind" f
	# Nothing added since is new: the merged lines are seen.
	expect_new "$kind" f in1
	expect_new "$kind" f in2
}

# Rotate: a window forgets the generations past G and keeps the G newest;
# a filter without generations refuses, by the documented rule.
path_rotate() {
	local kind=$1 m g e what

	g=$("generations_$kind")
	inputs
	fresh "$kind" f
	expect_new "$kind" f in1
	if [ -z "$g" ]; then
		m=$("members_$kind" f | head -n 1)
		bloom rotate "$m" 2>rotate.err && fail "rotate $m: exit 0"
		[ $? -eq 2 ] || fail "rotate $m: status not 2"
		case $kind in
		grow) what="a growable filter" ;;
		*) what="a fixed filter" ;;
		esac
		[ "$(cat rotate.err)" = "bloom: $m: cannot rotate: $what has no generations (make one with create --generations)" ] ||
			fail "rotate $m: message: $(cat rotate.err)"
		no_false_negative "$kind" f
		echo "refused as documented"
		return 0
	fi
	for ((e = 1; e < g; e++)); do
		bloom rotate f.bf || fail "rotate: status $?"
		model_rotate "$kind" f
		no_false_negative "$kind" f
		expect_new "$kind" f in2
		no_false_negative "$kind" f
	done
	# in1's generation expires: its lines are new again.  The
	# age-partitioned layout forgets gradually (a line one generation
	# past is still found some 40 % of the time, as documented): what
	# it writes are new lines, in order, but not every one.
	bloom rotate f.bf || fail "rotate: status $?"
	model_rotate "$kind" f
	if [ "${kind%_once}" = apbf ]; then
		model_add "$kind" f in1 >want.new
		add "$kind" f --new in1 || fail "add --new in1: status $?"
		[ -s add.out ] || fail "add --new in1: nothing new after expiry"
		awk 'FILENAME == ARGV[1] { w[$0] = NR; next }
		    !($0 in w) || w[$0] <= last { bad = 1 } { last = w[$0] }
		    END { exit bad }' want.new add.out ||
			fail "add --new in1 after expiry: a line not new, or out of order"
	else
		expect_new "$kind" f in1
	fi
	no_false_negative "$kind" f
}

# kill -9 in the middle of add --new (line by line, then in sorted
# batches where the kind has them), then a rerun: every new line is
# written by one of them, none marked seen unwritten.
path_kill() {
	local kind=$1 opt m pid

	keys 50000 k- >big
	for opt in "" "--memory 16K"; do
		[ -z "$opt" ] || [ "${kind%_once}" != apbf ] || continue
		rm -f ./*.bf pipe
		fresh "$kind" f
		m=$("members_$kind" f | tail -n 1)
		[ "$kind" != union ] || m=f.1.bf
		"holds_$kind" f big >held_big
		[ "$kind" != union ] ||
			bloom route --slices 2 f.1.bf big | awk -F '\t' '$1 == 1 { print $2 }' >held_big
		mkfifo pipe
		# shellcheck disable=SC2086
		bloom add $PASS --new $opt "$m" big >pipe 2>/dev/null &
		pid=$!
		{ head -c 100000; kill -9 "$pid"; cat; } <pipe >out
		wait "$pid" && fail "add --new $opt: finished before the kill: give it more lines"
		# shellcheck disable=SC2086
		bloom add $PASS --new $opt "$m" big >again 2>/dev/null ||
			fail "rerun of add --new $opt: status $?"
		[ "$(wc -l <out)" -gt 1000 ] || fail "the kill came too soon"
		# The last line of out may have been cut short by the kill.
		sort -u out again | comm -23 <(sort -u held_big) - >lost
		[ ! -s lost ] || fail "kill -9 $opt: $(wc -l <lost) new lines marked seen and never written"
		sort -u held_big >"f.held"
		# shellcheck disable=SC2086
		no_false_negative "$kind" f $opt
	done
}

# ==== The matrix ====

# matrix KIND: runs every path for KIND, each in a directory of its own,
# and fails naming the paths whose promise broke, with their logs.
matrix() {
	local kind=$1 path failed=""

	# COMBINATIONS_PATHS runs some paths only, while working on them.
	for path in ${COMBINATIONS_PATHS:-$PATHS}; do
		mkdir "$path"
		if (cd "$path" && "path_$path" "$kind") >"$path.log" 2>&1; then
			echo "$kind × $path: ok $(tail -n 1 "$path.log" | grep -o 'refused as documented')"
		else
			echo "$kind × $path: FAILED"
			sed 's/^/    /' "$path.log" | tail -n 30
			failed="$failed $path"
		fi
	done
	[ -z "$failed" ] || { echo "$kind: failed:$failed"; return 1; }
}

# ==== Out of core on a failing disk ====

# The kinds made larger than the --memory of out_of_core, each about
# 64 MiB: on the small disk below, their write-back fails.
big_fixed() { bloom create --seed 3 -s 64M "$1"; }
big_grow() { bloom create --seed 3 --grow -n 30000000 -p 0.01 "$1"; }
big_window() { bloom create --seed 3 --generations 2 --layout blocked -n 30000000 -p 0.01 "$1"; }
big_apbf() {
	bloom create --seed 3 --generations 2 -n 30000000 -p 0.01 \
		--layout apbf "$1"
}
big_slice() { bloom create --seed 3 -s 128M --slice 1/2 "$1"; }

# failing_disk DIR: mounts at DIR/mnt an ext4 file system of 256 MiB on a
# loop device whose backing file lies on a tmpfs of 24 MiB: a write-back
# past 24 MiB fails (ENOSPC, or EIO), as tests/faults.bats does.
# Undone by undo_disks.
failing_disk() {
	local dev

	mkdir -p "$1/back" "$1/mnt"
	mount -t tmpfs -o size=24M none "$1/back"
	echo "$PWD/$1/back" >>"$BATS_TEST_TMPDIR/.mounts"
	truncate -s 256M "$1/back/disk.img"
	mkfs.ext4 -q -F -O ^has_journal -E lazy_itable_init=1,nodiscard \
		"$1/back/disk.img"
	dev=$(losetup -f --show "$1/back/disk.img")
	echo "$dev" >>"$BATS_TEST_TMPDIR/.loops"
	mount -o errors=continue "$dev" "$1/mnt"
	echo "$PWD/$1/mnt" >>"$BATS_TEST_TMPDIR/.mounts"
}

# Unmounts what failing_disk mounted, newest first, and frees the loop
# devices, however the test ended.
undo_disks() {
	local m dev

	cd "$BATS_TEST_TMPDIR" || return 0
	if [ -f .mounts ]; then
		tac .mounts | while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
			if [ -f .loops ]; then
				while read -r dev; do
					losetup -d "$dev" 2>/dev/null || true
				done <.loops
			fi
		done
	fi
	if [ -f .loops ]; then
		while read -r dev; do
			losetup -d "$dev" 2>/dev/null || true
		done <.loops
	fi
	rm -f .mounts .loops
}

# out_of_core KIND OPTION...: add OPTION... --memory 8M of 300000 lines to
# a filter of KIND on a failing disk exits 2 with the file system's error,
# whatever the path (plain, --new, --sync, both), the age-partitioned
# window's as every other kind's.
out_of_core() {
	local kind=$1 dir rc
	local -a opts=("${@:2}")

	dir=$kind$(printf %s "${opts[@]}")
	failing_disk "$dir"
	"big_$kind" "$dir/mnt/f.bf" >/dev/null || fail "create $kind"
	keys 300000 >"$dir/in"
	rc=0
	bloom add $PASS "${opts[@]}" --memory 8M "$dir/mnt/f.bf" "$dir/in" \
		>"$dir/out" 2>"$dir/err" || rc=$?
	[ $rc -eq 2 ] ||
		fail "$kind, add ${opts[*]} out of core, write-back failed: status $rc, not 2 ($(wc -l <"$dir/out") lines written, stderr: $(cat "$dir/err"))"
	case $(head -n 1 "$dir/err") in
	"bloom: $dir/mnt/f.bf: No space left on device" | \
	"bloom: $dir/mnt/f.bf: Input/output error") ;;
	*) fail "$kind, add ${opts[*]}: message: $(cat "$dir/err")" ;;
	esac
}
