# bash completion for bloom(1): commands, options, and filter files.
# Installed as $(PREFIX)/share/bash-completion/completions/bloom.

_bloom()
{
	local cur prev cmd opts argopts word i n=0

	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W 'create add check stats rotate help
		    --help --version' -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	case $cmd in
	create)
		opts='-f -k -n -p -s --grow --growth --generations --window
		    --seed --dry-run --help'
		argopts='-k -n -p -s --growth --generations --window --seed' ;;
	add)
		opts='-D --dups -N --new -z -f -d --no-create --progress --sync
		    --help'
		argopts='-f -d' ;;
	check)
		opts='-c -q -v -z -f -d --progress --help'
		argopts='-f -d' ;;
	stats)
		opts='--json --help'
		argopts='' ;;
	rotate)
		opts='--help'
		argopts='' ;;
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W 'create add
		    check stats rotate help' -- "$cur"))
		return 0 ;;
	*)
		return 0 ;;
	esac
	# The value of an option: nothing to offer.
	for word in $argopts; do
		[ "$prev" = "$word" ] && return 0
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return 0
	fi
	# Count the operands before this word: the first is the filter.
	for ((i = 2; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		case " $argopts " in
		*" $word "*) ((i++)); continue ;;
		esac
		[[ $word == -* ]] || ((n++))
	done
	if [ "$n" -eq 0 ]; then
		# The filter: files ending in .bf, and directories.
		COMPREPLY=($(compgen -f -X '!*.bf' -- "$cur") \
		    $(compgen -d -- "$cur"))
	elif [ "$cmd" = add ] || [ "$cmd" = check ]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
	return 0
}

complete -F _bloom bloom
