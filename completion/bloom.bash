# SPDX-License-Identifier: ISC
# bash completion for bloom(1): commands, options, and filter files.
# Installed as $(PREFIX)/share/bash-completion/completions/bloom.
# The commands and options are those `bloom help` lists; tests/completion.bats
# checks that they stay so.

_bloom()
{
	local cur prev cmd opts argopts fileopts word i n=0 filters=1
	local cmds='create add check stats rotate merge fold route help'

	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# --option=value: bash splits it at the "=".
	if [ "$cur" = = ]; then
		cur=
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -ge 3 ]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	# opts: every option; argopts: those that take a value; fileopts:
	# those whose value is a file.
	fileopts=''
	case $cmd in
	create)
		opts='-f -k -n -p -s --grow --growth --generations --window
		    --max-size --layout --no-renew --slices --seed --like --slice --dry-run
		    --help'
		argopts='-k -n -p -s --growth --generations --window --max-size
		    --layout --slices --seed --like --slice'
		fileopts='--like' ;;
	add)
		opts='-D --dups -N --new -z -f -d -s --only-delimited -n -p
		    --memory --no-create --pass-over --progress --sync --help'
		argopts='-f -d -n -p --memory' ;;
	check)
		opts='-c -H -h -q -v -z -f -d -s --only-delimited -F --which
		    --memory --progress --help'
		argopts='-f -d -F --memory'
		fileopts='-F' ;;
	stats)
		opts='--json --help'
		argopts='' ;;
	rotate|merge)
		opts='--help'
		argopts='' ;;
	fold)
		opts='-f --by --help'
		argopts='--by' ;;
	route)
		opts='-o -z -f -d -s --only-delimited --slices --help'
		argopts='-o -f -d --slices'
		fileopts='-o' ;;
	help)
		[ "$COMP_CWORD" -eq 2 ] &&
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return 0 ;;
	*)
		return 0 ;;
	esac
	# The value of an option: one of a fixed set, as the manual lists
	# them; a file for some; nothing to offer for the others.
	case $cmd:$prev in
	create:--layout)
		COMPREPLY=($(compgen -W 'blocked apbf' -- "$cur"))
		return 0 ;;
	create:--slice)
		COMPREPLY=($(compgen -W 'auto' -- "$cur"))
		return 0 ;;
	esac
	case " $fileopts " in
	*" $prev "*)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	esac
	for word in $argopts; do
		[ "$prev" = "$word" ] && return 0
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return 0
	fi
	# Count the operands before this word: the first is the filter, but
	# for check -F, whose operands are all input files.
	for ((i = 2; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		[ "$cmd" = check ] && [ "$word" = -F ] && filters=0
		case " $argopts " in
		*" $word "*) ((i++)); continue ;;
		esac
		[[ $word == -* ]] || ((n++))
	done
	if { [ "$n" -eq 0 ] && [ "$filters" -eq 1 ]; } || [ "$cmd" = merge ] ||
	    [ "$cmd" = fold ]; then
		# A filter: files ending in .bf, and directories.
		COMPREPLY=($(compgen -f -X '!*.bf' -- "$cur") \
		    $(compgen -d -- "$cur"))
	elif [ "$cmd" = add ] || [ "$cmd" = check ] || [ "$cmd" = route ]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
	return 0
}

complete -F _bloom bloom
