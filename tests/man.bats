#!/usr/bin/env bats
# The manual: it lints clean, its SYNOPSIS is the usage message word for
# word, it describes every option, and make install puts it in place.

load helpers

# Prints the section named $1 of the rendered manual, headings excluded.
man_section() {
	mandoc -Tascii "$root/man/bloom.1" | col -bx |
		awk -v want="$1" '/^[A-Z]/ { on = $0 == want; next } on'
}

# Reads synopsis lines and prints one line per command, whitespace
# collapsed: a line that starts with "bloom" starts a command, any other
# line continues the one before.
one_line_per_command() {
	awk '
		{ sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); gsub(/[ \t]+/, " ") }
		$0 == "" { next }
		$1 == "bloom" { if (line != "") print line; line = $0; next }
		{ line = line " " $0 }
		END { if (line != "") print line }'
}

# Prints the usage message of bloom run without arguments, minus the
# complaint before it and the leading "usage:".
usage_text() {
	bloom 2>&1 | sed -n '/^usage:/,$p' | sed 's/^usage://'
}

@test "man: mandoc -Tlint -Wwarning finds nothing" {
	run mandoc -Tlint -Wwarning "$root/man/bloom.1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "man: bloom without arguments fails with the usage message" {
	run bloom
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "bloom: no command given" ]
	[ "${lines[1]#usage: }" != "${lines[1]}" ]
}

@test "man: SYNOPSIS has the words of the usage message, line for line" {
	want=$(usage_text | one_line_per_command)
	got=$(man_section SYNOPSIS | one_line_per_command)
	[ "$(printf '%s\n' "$want" | wc -l)" -eq 6 ]
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") >&2
		return 1
	fi
}

@test "man: DESCRIPTION has an entry for every option of the usage" {
	desc=$(man_section DESCRIPTION)
	[ -n "$desc" ]
	# Each -abc in the usage is the options -a, -b and -c; --word is one.
	opts=$(usage_text | grep -oE -- '(^|[[ ])--?[[:alnum:]-]+' |
		sed 's/^[[ ]//' |
		awk '/^--/ { print; next }
		    { for (i = 2; i <= length($0); i++)
			    print "-" substr($0, i, 1) }' | sort -u)
	[ "$(printf '%s\n' "$opts" | wc -l)" -ge 14 ]
	missing=""
	# An entry is a line that starts with the option, or with "-N, ".
	for opt in $(printf '%s\n' $opts --new -N -z --sync -c -q -v --json \
	    -f -k -n -p -s --seed --version | sort -u); do
		printf '%s\n' "$desc" |
			grep -qE -- "^[[:space:]]*(-[[:alnum:]], )?$opt([[:space:],]|\$)" ||
			missing="$missing $opt"
	done
	# --help is not in the usage, but the manual must say it exists.
	printf '%s\n' "$desc" | grep -qE -- '(^|[^-[:alnum:]])--help([^-[:alnum:]]|$)' ||
		missing="$missing --help"
	if [ -n "$missing" ]; then
		echo "not in DESCRIPTION:$missing" >&2
		return 1
	fi
}

@test "man: DIAGNOSTICS has every message of bloom_strerror" {
	diag=$(man_section DIAGNOSTICS | tr -s ' \t\n' '   ')
	msgs=$(sed -n '/^bloom_strerror(/,/^}/p' "$root/bloom.c" |
		grep -o 'return "[^"]*"' | sed 's/^return "//; s/"$//' |
		grep -vx -e success -e 'unknown error')
	[ "$(printf '%s\n' "$msgs" | wc -l)" -ge 15 ]
	missing=""
	while IFS= read -r msg; do
		case $diag in
		*"bloom: filter: $msg"*) ;;
		*) missing="$missing '$msg'" ;;
		esac
	done <<EOF
$msgs
EOF
	if [ -n "$missing" ]; then
		echo "not in DIAGNOSTICS:$missing" >&2
		return 1
	fi
}

@test "man: make install puts bloom and bloom.1 under DESTDIR" {
	run make -C "$root" install DESTDIR="$BATS_TEST_TMPDIR/d" PREFIX=/usr
	[ "$status" -eq 0 ]
	[ -x "$BATS_TEST_TMPDIR/d/usr/bin/bloom" ]
	[ -f "$BATS_TEST_TMPDIR/d/usr/share/man/man1/bloom.1" ]
	cmp "$root/man/bloom.1" "$BATS_TEST_TMPDIR/d/usr/share/man/man1/bloom.1"
}
