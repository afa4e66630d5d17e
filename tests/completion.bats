#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Shell completion: the bash one is sourced and asked; the zsh and fish
# ones are checked by their shells.

bats_require_minimum_version 1.5.0
load helpers

# Prints, one a line, what the bash completion offers for the words given
# (the last one being completed).
complete_bash() {
	bash -c '
		source "$1/completion/bloom.bash"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_bloom
		printf "%s\n" "${COMPREPLY[@]}"' bash "$root" "$@" | sort
}

# ---- The one source: what `bloom help` says, which the completions of
# every shell are checked against, so that they cannot drift from it.

# Prints the commands of `bloom help`, one a line.
help_commands() {
	bloom help | sed -n 's/^\(usage:\|      \) bloom \([a-z][a-z]*\).*/\2/p' | uniq
}

# Prints the options of COMMAND that `bloom help COMMAND` lists, one a line,
# each followed by "=" if it takes a value, and --help, sorted.
help_options() {
	{
		bloom help "$1" | awk '
			/^  -/ {
				line = substr($0, 3)
				while (match(line, /^-[-a-zA-Z0-9]+/)) {
					opt = substr(line, 1, RLENGTH)
					line = substr(line, RLENGTH + 1)
					print opt (line ~ /^ [^ ]/ ? "=" : "")
					if (line !~ /^, -/)
						break
					line = substr(line, 3)
				}
			}'
		[ "$1" = help ] || echo --help
	} | LC_ALL=C sort -u
}

@test "bloom help: every command, and the options of each as its lines list them" {
	[ "$(help_commands | tr '\n' ' ')" = "create add check stats rotate merge fold route help " ]
	[ "$(help_options stats | tr '\n' ' ')" = "--help --json " ]
	[ "$(help_options add | tr '\n' ' ')" = "$(printf '%s\n' --dups --help --memory= \
		--new --no-create --only-delimited --pass-over --progress --sync -D -N \
		-d= -f= -n= -p= -s -z | LC_ALL=C sort | tr '\n' ' ')" ]
	help_options create | grep -qx -- --like=
	help_options create | grep -qx -- --generations=
	help_options create | grep -qx -- --dry-run
	[ "$(help_options merge)" = --help ]
	[ "$(help_options help)" = "" ]
}

# Prints, one a line, what the bash completion offers for the words given
# (the last one being completed).
complete_bash() {
	bash -c '
		source "$1/completion/bloom.bash"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_bloom
		printf "%s\n" "${COMPREPLY[@]}"' bash "$root" "$@" | LC_ALL=C sort
}

# Prints, one a line, the options (or, for the command "", the commands
# and options) that zsh's _bloom offers after "bloom COMMAND": the file
# run as zsh runs it, with _arguments and _describe standing in for the
# completion system and printing what they are given.
complete_zsh() {
	zsh -f -c '
		_arguments() {
			local spec
			for spec in "$@"; do
				spec=${spec#\(*\)}
				spec=${spec#\*}
				[[ $spec == -* ]] && print -r -- "${${spec%%\[*}%%[:=+]*}"
			done
		}
		_describe() {
			local name=${@[-1]}
			print -rl -- "${(@)${(@P)name}%%:*}"
		}
		_files() { :; }
		root=$1 cmd=$2
		if [[ -z $cmd ]]; then
			words=(bloom "") CURRENT=2
		else
			words=(bloom "$cmd" -) CURRENT=3
		fi
		source "$root/completion/_bloom"' zsh "$root" "$1" | LC_ALL=C sort -u
}

# Prints, one a line, the words fish offers for the command line given.
# fish runs with a home of its own: a completion a user installed under
# ~/.config/fish would be loaded too.
complete_fish() {
	HOME="$BATS_TEST_TMPDIR" XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/config" \
	    fish -c "source '$root/completion/bloom.fish'; complete -C '$1'" |
		cut -f 1 | LC_ALL=C sort -u
}

# Prints the options of COMMAND as help_options does, without the "=".
option_names() {
	help_options "$1" | sed 's/=$//'
}

@test "bash: the commands and the options of each are those of bloom help" {
	[ "$(complete_bash bloom '')" = "$({ help_commands; echo --help; echo --version; } | LC_ALL=C sort)" ]
	[ "$(complete_bash bloom help '')" = "$(help_commands | LC_ALL=C sort)" ]
	for cmd in $(help_commands); do
		[ "$cmd" != help ] || continue
		got=$(complete_bash bloom "$cmd" -)
		want=$(option_names "$cmd")
		[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
		# The value of an option is not taken for the filter.
		for opt in $(help_options "$cmd" | sed -n 's/=$//p'); do
			got=$(complete_bash bloom "$cmd" "$opt" 'x')
			[ "$got" = "" ] || [ "$opt" = --like ] || [ "$opt" = -F ] ||
				[ "$opt" = -o ] || { echo "$cmd $opt: $got"; return 1; }
		done
	done
}

@test "zsh: the commands and the options of each are those of bloom help" {
	command -v zsh >/dev/null || skip "zsh not installed (.ci/run installs it)"
	zsh -n "$root/completion/_bloom"
	got=$(complete_zsh '' | grep -v '^-')
	[ "$got" = "$(help_commands | LC_ALL=C sort)" ]
	for cmd in $(help_commands); do
		[ "$cmd" != help ] || continue
		got=$(complete_zsh "$cmd")
		want=$(option_names "$cmd")
		[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
	done
}

@test "fish: the commands and the options of each are those of bloom help" {
	command -v fish >/dev/null || skip "fish not installed (.ci/run installs it)"
	fish -n "$root/completion/bloom.fish"
	[ "$(complete_fish 'bloom ')" = "$(help_commands | LC_ALL=C sort)" ]
	[ "$(complete_fish 'bloom -')" = "$(printf '%s\n' --help --version)" ]
	[ "$(complete_fish 'bloom help ')" = "$(help_commands | LC_ALL=C sort)" ]
	for cmd in $(help_commands); do
		[ "$cmd" != help ] || continue
		got=$(complete_fish "bloom $cmd -")
		want=$(option_names "$cmd")
		[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
	done
}

@test "bash: the options of each command, by prefix" {
	[ "$(complete_bash bloom add --n)" = "$(printf -- '--new\n--no-create')" ]
	[ "$(complete_bash bloom check --p)" = "--progress" ]
	[ "$(complete_bash bloom route --o)" = "--only-delimited" ]
	[ "$(complete_bash bloom check --o)" = "--only-delimited" ]
	[ "$(complete_bash bloom create --d)" = "--dry-run" ]
	[ "$(complete_bash bloom create --sl)" = "$(printf -- '--slice\n--slices')" ]
	[ "$(complete_bash bloom stats --)" = "$(printf -- '--help\n--json')" ]
}

@test "bash: the filter is a .bf file or a directory; then any input file" {
	mkdir dir
	touch seen.bf urls.txt
	[ "$(complete_bash bloom check '')" = "$(printf 'dir\nseen.bf')" ]
	[ "$(complete_bash bloom add -f 2 -d , '')" = "$(printf 'dir\nseen.bf')" ]
	[ "$(complete_bash bloom add --new seen.bf u)" = "urls.txt" ]
	# The value of an option is left alone.
	[ "$(complete_bash bloom create -n '')" = "" ]
}

@test "make install puts the completions in place; make uninstall removes them" {
	make -C "$root" -s install DESTDIR="$PWD/d" PREFIX=/usr/local
	[ -x d/usr/local/bin/bloom ]
	cmp "$root/completion/bloom.bash" d/usr/local/share/bash-completion/completions/bloom
	cmp "$root/completion/_bloom" d/usr/local/share/zsh/site-functions/_bloom
	cmp "$root/completion/bloom.fish" d/usr/local/share/fish/vendor_completions.d/bloom.fish
	make -C "$root" -s uninstall DESTDIR="$PWD/d" PREFIX=/usr/local
	[ -z "$(find d -type f)" ]
}

@test "fish finds the installed completion: under its own prefix, or where make install says" {
	command -v fish >/dev/null || skip "fish not installed (.ci/run installs it)"
	# Installed for fish's own prefix, the file is where fish looks first.
	make -C "$root" -s install DESTDIR="$PWD/d" PREFIX=/usr
	[ -f "d$(pkg-config --variable completionsdir fish 2>/dev/null ||
		echo /usr/share/fish/vendor_completions.d)/bloom.fish" ]
	# Another prefix without XDG_DATA_DIRS: fish would not look there, and
	# make install says so, and how to install where it does.
	run -0 env -u XDG_DATA_DIRS make -C "$root" -s install PREFIX="$PWD/p"
	[ "$output" = "note: fish does not read $PWD/p/share/fish/vendor_completions.d here (XDG_DATA_DIRS lacks $PWD/p/share): make install FISHCOMPDIR=/etc/fish/completions puts bloom.fish where it does" ]
	# There, with XDG_DATA_DIRS, fish finds it by itself, and no note.
	XDG_DATA_DIRS="$PWD/p/share:/usr/share" run -0 make -C "$root" -s install PREFIX="$PWD/p"
	[ "$output" = "" ]
	run -0 env XDG_DATA_DIRS="$PWD/p/share:/usr/share" PATH="$PWD/p/bin:$PATH" \
		HOME="$BATS_TEST_TMPDIR" XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/config" \
		fish -c "complete -C 'bloom ro'"
	[ "$(printf '%s\n' "$output" | cut -f 1 | tr '\n' ' ')" = "rotate route " ]
}

# ---- Values (issue 38): every option that takes one of a fixed set of
# values, as the manual lists them (".It Fl \-layout Cm blocked | apbf",
# ".Op Fl \-slice Ar i/n | Cm auto"), has them completed in every shell.

# Prints "option value..." for each option whose values the manual lists
# with Cm, the values sorted.
manual_values() {
	# "Fl \-layout" is --layout: Fl writes the first dash.
	sed -n 's/^\.\(It\|Op\) Fl \\\(-[a-z-]*\) .*Cm \(.*\)$/-\2 \3/p' \
	    "$root/man/bloom.1" | sed 's/\\-/-/g; s/ | / /g' |
	awk '{ for (i = 2; i <= NF; i++) v[$1] = v[$1] " " $i }
	    END { for (o in v) print o v[o] }' |
	while read -r opt values; do
		echo "$opt $(printf '%s\n' $values | LC_ALL=C sort -u | tr '\n' ' ')"
	done | sed 's/ $//' | LC_ALL=C sort
}

# Prints, one a line, the values zsh's _bloom gives for option OPT of
# COMMAND: the "(a b)" action of its spec.
complete_zsh_values() {
	zsh -f -c '
		_arguments() {
			local spec
			for spec in "$@"; do
				spec=${spec#\(*\)}
				spec=${spec#\*}
				[[ ${spec%%\[*} == $opt ]] || continue
				[[ $spec == *:\(*\) ]] || continue
				print -rl -- ${(z)${${spec##*:\(}%\)}}
			done
		}
		_describe() { :; }
		_files() { :; }
		root=$1 opt=$3
		words=(bloom "$2" -) CURRENT=3
		source "$root/completion/_bloom"' zsh "$root" "$1" "$2" | LC_ALL=C sort -u
}

@test "the manual's fixed sets of values: --layout and --slice, both of create" {
	[ "$(manual_values)" = "--layout apbf blocked
--slice auto" ]
	help_options create | grep -qx -- --layout=
	help_options create | grep -qx -- --slice=
}

@test "bash, zsh and fish complete the values of every option that takes a fixed set" {
	local opt values want cmd
	command -v zsh >/dev/null || skip "zsh not installed (.ci/run installs it)"
	command -v fish >/dev/null || skip "fish not installed (.ci/run installs it)"
	[ -n "$(manual_values)" ]
	while read -r opt values; do
		want=$(printf '%s\n' $values)
		for cmd in $(help_commands); do
			help_options "$cmd" | grep -qx -- "$opt=" || continue
			echo "$cmd $opt: want $values"
			[ "$(complete_bash bloom "$cmd" "$opt" '')" = "$want" ]
			[ "$(complete_bash bloom "$cmd" "$opt" = '')" = "$want" ]
			[ "$(complete_bash bloom "$cmd" "$opt" "${values:0:1}")" = "$(grep "^${values:0:1}" <<<"$want")" ]
			[ "$(complete_zsh_values "$cmd" "$opt")" = "$want" ]
			[ "$(complete_fish "bloom $cmd $opt ")" = "$want" ]
		done
	done < <(manual_values)
}

@test "bash: the values of --layout, typed in part or after =" {
	[ "$(complete_bash bloom create --layout '')" = "$(printf 'apbf\nblocked')" ]
	[ "$(complete_bash bloom create --layout b)" = "blocked" ]
	[ "$(complete_bash bloom create --generations 8 --layout = a)" = "apbf" ]
	[ "$(complete_bash bloom create --slice '')" = "auto" ]
	# The filter is still offered after them.
	touch seen.bf
	[ "$(complete_bash bloom create --layout apbf '')" = "seen.bf" ]
}

# ---- zsh needs its completion system, which Debian's zsh does not start:
# the README says what to put in ~/.zshrc, and those lines make a fresh
# zsh find _bloom.

@test "zsh: the README's lines start the completion system, and _bloom is bloom's" {
	command -v zsh >/dev/null || skip "zsh not installed (.ci/run installs it)"
	local zshrc
	zshrc=$(sed -n '/^    # ~\/.zshrc/,/^$/p' "$root/README.md" | sed 's/^    //')
	echo "$zshrc"
	[[ "$zshrc" == *"autoload -Uz compinit"*"compinit"* ]]
	make -C "$root" -s install DESTDIR="$PWD/d" PREFIX=/usr/local
	# A fresh interactive zsh, as Debian's reads /etc/zsh and then
	# ZDOTDIR's files, bloom's completion installed in its fpath.
	mkdir z
	echo "fpath=($PWD/d/usr/local/share/zsh/site-functions \$fpath)" >z/.zshenv
	: >z/.zshrc
	run -0 env ZDOTDIR="$PWD/z" HOME="$PWD" zsh -i -c \
	    'print -r -- "[${_comps[bloom]-none}]"' </dev/null
	[ "$output" = "[none]" ]
	# With the README's lines in ~/.zshrc, _bloom completes bloom.
	printf '%s\n' "$zshrc" >z/.zshrc
	run -0 env ZDOTDIR="$PWD/z" HOME="$PWD" zsh -i -c \
	    'print -r -- "[${_comps[bloom]-none}]"' </dev/null
	[ "$output" = "[_bloom]" ]
}

@test "bash: bash-completion loads the installed completion by itself" {
	[ -f /usr/share/bash-completion/bash_completion ] ||
		skip "bash-completion not installed (tests/need installs it)"
	make -C "$root" -s install DESTDIR="$PWD/d" PREFIX=/usr/local
	# XDG_DATA_DIRS in place of its default, /usr/local/share:/usr/share.
	run -0 env -i HOME="$PWD" PATH="$PWD/d/usr/local/bin:/usr/bin:/bin" \
	    XDG_DATA_DIRS="$PWD/d/usr/local/share:/usr/share" bash -c '
		source /usr/share/bash-completion/bash_completion
		__load_completion bloom || exit 1
		COMP_WORDS=(bloom create --layout "")
		COMP_CWORD=3
		_bloom
		printf "%s\n" "${COMPREPLY[@]}"'
	[ "$output" = "$(printf 'blocked\napbf')" ]
}
