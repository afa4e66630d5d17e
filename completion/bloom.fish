# SPDX-License-Identifier: ISC
# fish completion for bloom(1): commands, options, and filter files.
# Installed as $(PREFIX)/share/fish/vendor_completions.d/bloom.fish; see
# the README for a prefix whose share/fish fish does not read.
# The commands and options are those `bloom help` lists; tests/completion.bats
# checks that they stay so.

set -l cmds create add check stats rotate merge fold route help
complete -c bloom -f
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a create -d 'Create an empty filter file'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a add -d 'Add lines to a filter'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a check -d 'Write the lines that may be in a filter'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a stats -d 'Describe a filter'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a rotate -d 'Start a new generation'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a merge -d 'OR source filters into a filter'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a fold -d 'Write a smaller filter holding the same lines'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a route -d 'Split lines by slice'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -a help -d 'Describe a command'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -l help -d 'Describe every command'
complete -c bloom -n "not __fish_seen_subcommand_from $cmds" -l version -d 'Print the version'
complete -c bloom -n "__fish_seen_subcommand_from help" -a "$cmds"

# Filters and input files.
complete -c bloom -n "__fish_seen_subcommand_from create add check stats rotate merge fold route" -F
complete -c bloom -n "__fish_seen_subcommand_from fold" -s f -d 'Replace an existing output file'
complete -c bloom -n "__fish_seen_subcommand_from fold" -l by -x -d 'Fold by n'

complete -c bloom -n "__fish_seen_subcommand_from create" -s f -d 'Replace an existing file'
complete -c bloom -n "__fish_seen_subcommand_from create" -s k -x -d 'Bits per item'
complete -c bloom -n "__fish_seen_subcommand_from create" -s n -x -d 'Items the filter is sized for (K, M, G)'
complete -c bloom -n "__fish_seen_subcommand_from create" -s p -x -d 'False-positive rate at capacity'
complete -c bloom -n "__fish_seen_subcommand_from create" -s s -x -d 'Bytes of bit array (K, M, G, T)'
complete -c bloom -n "__fish_seen_subcommand_from create" -l grow -d 'Grow past capacity'
complete -c bloom -n "__fish_seen_subcommand_from create" -l growth -x -d 'Capacity factor of each new segment'
complete -c bloom -n "__fish_seen_subcommand_from create" -l generations -x -d 'Generations to keep'
complete -c bloom -n "__fish_seen_subcommand_from create" -l window -x -d 'Rotate by time (90s, 30m, 12h, 7d)'
complete -c bloom -n "__fish_seen_subcommand_from create" -l max-size -x -d 'Bytes a window may grow to (K, M, G, T)'
complete -c bloom -n "__fish_seen_subcommand_from create" -l layout -x -a 'blocked apbf' -d 'Layout of the generations'
complete -c bloom -n "__fish_seen_subcommand_from create" -l no-renew -d 'Remember a line from its first add, not its last sighting'
complete -c bloom -n "__fish_seen_subcommand_from create" -l slices -x -d 'Round the blocks up to a multiple of n'
complete -c bloom -n "__fish_seen_subcommand_from create" -l seed -x -d 'Hash seed'
complete -c bloom -n "__fish_seen_subcommand_from create" -l like -r -d 'An empty filter like the template'
complete -c bloom -n "__fish_seen_subcommand_from create" -l slice -x -a auto -d 'Only slice i/n, or auto from the task index'
complete -c bloom -n "__fish_seen_subcommand_from create" -l dry-run -d 'Print what would be made'

complete -c bloom -n "__fish_seen_subcommand_from add" -s N -l new -d 'Write the lines not yet in the filter'
complete -c bloom -n "__fish_seen_subcommand_from add" -s D -l dups -d 'Write the lines already in the filter'
complete -c bloom -n "__fish_seen_subcommand_from add" -s n -x -d "Capacity of a missing filter's first segment (K, M, G)"
complete -c bloom -n "__fish_seen_subcommand_from add" -s p -x -d 'False-positive rate of a missing filter'
complete -c bloom -n "__fish_seen_subcommand_from add" -l no-create -d 'Fail if the filter does not exist'
complete -c bloom -n "__fish_seen_subcommand_from add" -l pass-over -d 'A slice passes over the lines of other slices, not an error'
complete -c bloom -n "__fish_seen_subcommand_from add" -l sync -d 'Sync the filter before exiting; with -N or -D the output before adding its lines'
complete -c bloom -n "__fish_seen_subcommand_from check" -s c -d 'Write the number of selected lines'
complete -c bloom -n "__fish_seen_subcommand_from check" -s H -d 'Name the file before each count or line'
complete -c bloom -n "__fish_seen_subcommand_from check" -s h -d 'Never name the file'
complete -c bloom -n "__fish_seen_subcommand_from check" -s F -r -d 'Check against this filter (repeatable: their union)'
complete -c bloom -n "__fish_seen_subcommand_from check" -l which -d 'Write the name of the filter that holds each line'
complete -c bloom -n "__fish_seen_subcommand_from check" -s q -d 'Write nothing; the exit status tells'
complete -c bloom -n "__fish_seen_subcommand_from check" -s v -d 'Select the lines certainly not in the filter'
complete -c bloom -n "__fish_seen_subcommand_from add check route" -s z -d 'Lines end with NUL'
complete -c bloom -n "__fish_seen_subcommand_from add check route" -s f -x -d 'Key fields (2, 1,3, 2-)'
complete -c bloom -n "__fish_seen_subcommand_from add check route" -s d -x -d 'Field separator (one byte)'
complete -c bloom -n "__fish_seen_subcommand_from add check route" -s s -l only-delimited -d 'Skip a line without the separator, as cut -s'
complete -c bloom -n "__fish_seen_subcommand_from add check" -l memory -x -d 'Bytes bloom may use (K, M, G, T)'
complete -c bloom -n "__fish_seen_subcommand_from add check" -l progress -d 'A status line on standard error'
complete -c bloom -n "__fish_seen_subcommand_from stats" -l json -d 'One JSON object'
complete -c bloom -n "__fish_seen_subcommand_from route" -s o -r -d 'Write slice i to the file prefix<i>'
complete -c bloom -n "__fish_seen_subcommand_from route" -l slices -x -d 'The number of slices'
complete -c bloom -n "__fish_seen_subcommand_from create add check stats rotate merge fold route" -l help -d 'Describe the command'
