#!/usr/bin/env bats
# Shell completion: the bash one is sourced and asked; the zsh and fish
# ones are checked by their shells.

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

@test "bash: commands" {
	[ "$(complete_bash bloom c)" = "$(printf 'check\ncreate')" ]
	[ "$(complete_bash bloom '')" = "$(printf '%s\n' --help --version add check create help rotate stats | sort)" ]
	[ "$(complete_bash bloom help s)" = "stats" ]
}

@test "bash: the options of each command" {
	[ "$(complete_bash bloom add --n)" = "$(printf -- '--new\n--no-create')" ]
	[ "$(complete_bash bloom check --p)" = "--progress" ]
	[ "$(complete_bash bloom create --d)" = "--dry-run" ]
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

@test "zsh and fish: the completions parse, and fish offers commands and options" {
	if ! command -v zsh >/dev/null || ! command -v fish >/dev/null; then
		skip "zsh and fish not installed (.ci/run installs them)"
	fi
	zsh -n "$root/completion/_bloom"
	fish -n "$root/completion/bloom.fish"
	run fish -c "source $root/completion/bloom.fish; complete -C 'bloom ch'"
	[ "$status" -eq 0 ]
	[[ "$output" == check* ]]
	run fish -c "source $root/completion/bloom.fish; complete -C 'bloom add --d'"
	[[ "$output" == --dups* ]]
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
