#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The manual: it lints clean and renders without warnings in 80 columns,
# its SYNOPSIS is the usage message word for word, it describes every
# command, option and message, and make install puts it in place.

bats_require_minimum_version 1.5.0
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

# Prints the lines of standard input longer than 80 characters, counting a
# UTF-8 character as one: its continuation bytes are not counted.
wider_than_80() {
	LC_ALL=C awk '{ s = $0; gsub(/[\200-\277]/, "", s) }
		length(s) > 80'
}

@test "man: mandoc -Tlint -Wwarning finds nothing" {
	run mandoc -Tlint -Wwarning "$root/man/bloom.1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "man: groff -mdoc -ww renders it without a warning" {
	command -v groff >/dev/null ||
		skip "groff is not installed (apt-get install groff; CI installs it)"
	run groff -mdoc -Tutf8 -ww -z "$root/man/bloom.1"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# Renders the manual for a UTF-8 terminal with renderer $1 (mandoc or
# groff), as plain characters, under the locale setting $2 (LANG=C.UTF-8)
# or none.  col(1) runs in a UTF-8 locale whatever the caller's: in the C
# locale it writes each byte of a UTF-8 quote as a four-character escape.
render() (
	unset LANG LC_ALL LC_CTYPE
	[ $# -lt 2 ] || export "$2"
	case $1 in
	mandoc)
		mandoc -Tutf8 "$root/man/bloom.1" | LC_ALL=C.UTF-8 col -bx ;;
	groff)
		# -P-cbou: plain characters, no escape sequences or overstriking.
		groff -mdoc -Tutf8 -P-cbou "$root/man/bloom.1" ;;
	esac
)

@test "man: no line is wider than 80 columns, under groff or mandoc, with or without a locale" {
	# mandoc's and groff's default widths, 78, are what man(1) uses on a
	# terminal of 80 columns or more (MANWIDTH=80 man ./man/bloom.1).
	renderers=mandoc
	command -v groff >/dev/null && renderers="mandoc groff"
	for renderer in $renderers; do
		for locale in "" LANG=C.UTF-8; do
			wide=$(render $renderer $locale | wider_than_80)
			if [ -n "$wide" ]; then
				printf '%s, %s, over 80 columns:\n%s\n' "$renderer" \
					"${locale:-no locale}" "$wide" >&2
				return 1
			fi
		done
	done
	[ "$renderers" = "mandoc groff" ] ||
		skip "groff is not installed (apt-get install groff; CI installs it)"
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
	# create, add, check, stats, rotate, help, --version at least.
	[ "$(printf '%s\n' "$want" | wc -l)" -ge 7 ]
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
	[ "$(printf '%s\n' "$opts" | wc -l)" -ge 18 ]
	missing=""
	# An entry is a line that starts with the option, or with "-N, ".
	for opt in $(printf '%s\n' $opts --new -N -z --sync -c -q -v --json \
	    -f -k -n -p -s --grow --growth --generations --window --seed \
	    --version | sort -u); do
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

@test "man: DESCRIPTION has an entry for every command of the usage" {
	desc=$(man_section DESCRIPTION)
	# The first two words of each command's synopsis: "create [-f]".
	heads=$(usage_text | one_line_per_command |
		awk '$2 !~ /^-/ { print $2 " " $3 }')
	[ "$(printf '%s\n' "$heads" | wc -l)" -ge 6 ]
	missing=""
	# An entry is a line that starts with them.
	while IFS= read -r head; do
		printf '%s\n' "$desc" | awk -v head="$head" '
			{ sub(/^[ \t]+/, "") }
			index($0, head) == 1 { found = 1 }
			END { exit !found }' ||
			missing="$missing '$head'"
	done <<EOF
$heads
EOF
	if [ -n "$missing" ]; then
		echo "no entry in DESCRIPTION:$missing" >&2
		return 1
	fi
}

@test "man: DIAGNOSTICS has every message of bloom_strerror" {
	diag=$(man_section DIAGNOSTICS | tr -s ' \t\n' '   ')
	# The messages, with string literals continued on the next line
	# joined: return "a " "b"; is "a b".
	msgs=$(sed -n '/^bloom_strerror(/,/^}/p' "$root/store/format.c" |
		tr '\n' ' ' | grep -o 'return "[^;]*;' |
		sed 's/"[[:space:]]*"//g; s/^return "//; s/";$//' |
		grep -vx -e success -e 'unknown error')
	[ "$(printf '%s\n' "$msgs" | wc -l)" -ge 30 ]
	missing=""
	while IFS= read -r msg; do
		case $diag in
		*"bloom: filter: $msg"*) ;;
		# Some come after what was being done: "cannot ...: msg".
		*"bloom: "*": $msg"*) ;;
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

@test "man, --help and README: --dups writes each repeat but not the first, as awk 'seen[\$0]++' does" {
	[[ "$(bloom add --help)" == *"every repeat,"*"not the first occurrence (as awk 'seen[\$0]++')"* ]]
	entry=$(man_section DESCRIPTION | awk '/^ *-D, --dups/ { on = 1 } on && /^ *$/ { exit } on' |
		tr -s ' \n' '  ')
	[[ "$entry" == *"every repeat of a line, but not its first occurrence, as \`awk 'seen[\$0]++'' does (\`uniq -D' would write the first occurrence too)"* ]]
	readme=$(tr -s ' \n' '  ' <"$root/README.md")
	[[ "$readme" == *"with \`--dups\` the lines that were (every repeat but not the first occurrence, as \`awk 'seen[\$0]++'\`; \`uniq -D\` would also write the first)"* ]]
	# And it does: a b a c a b gives a a b; uniq -D on it sorted gives
	# a a a b b.
	printf 'a\nb\na\nc\na\nb\n' >in
	bloom create -n 100 -p 1e-6 f.bf
	[ "$(bloom add --dups f.bf in | tr '\n' ' ')" = "a a b " ]
	[ "$(sort in | uniq -D | tr '\n' ' ')" = "a a a b b " ]
}

@test "man: --slice's blocks are i × B/n up to (i + 1) × B/n" {
	entry=$(man_section DESCRIPTION | tr -s ' \n' '  ')
	[[ "$entry" == *"the blocks from i x B/n up to (i + 1) x B/n of its B blocks."* ]]
}

@test "README: the synopsis of the commands is bloom --help's" {
	# The usage block, less help and --version, against the indented
	# block under "## Commands".
	bloom --help | sed -n '1,/^$/p' | sed 's/^usage: //; s/^       //' |
	    grep -v '^bloom help\|^bloom --version\|^$' >want
	sed -n '/^## Commands$/,/^- /p' "$root/README.md" | sed -n 's/^    //p' >got
	diff want got
}
