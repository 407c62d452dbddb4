# bash completion for winx (Winx for Go). ./build.sh install puts it in
# PREFIX/share/bash-completion/completions/winx, where bash-completion loads
# it on demand; or source it from ~/.bashrc. A test checks that it names
# every command `winx help` lists.

_winx() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands='serve report list jobs attach kill prune restart-daemon doctor worktrees help version'
	local serve_flags='--http --bind --token-file --token --principal-config --allow-weak-token
		--allow-query-token --allow-non-loopback --allowed-host --rest --max-concurrency
		--requests-per-minute --max-body-bytes --body-bytes-per-second --body-burst-bytes
		--request-timeout --session-affinity --tool-profile --allow-tool --version'
	# Flags of serve that take a value in the next word.
	local serve_valued=' --bind --token-file --token --principal-config --allowed-host --max-concurrency --requests-per-minute --max-body-bytes --body-bytes-per-second --body-burst-bytes --request-timeout --session-affinity --tool-profile --allow-tool '

	# The command is the first word that is neither a flag nor a flag's value;
	# without one, winx serves (and takes serve's flags).
	local cmd='' i w f
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -* ]]; then
			# -flag and --flag are the same flag; --flag=value holds its value.
			f=${w#-}
			f=${f#-}
			[[ $w != *=* && $serve_valued == *" --$f "* ]] && ((i++))
			continue
		fi
		cmd=$w
		break
	done

	case $prev in
	--token-file | -token-file | --principal-config | -principal-config | --log | -log)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--workspace | -workspace)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--tool-profile | -tool-profile)
		COMPREPLY=($(compgen -W 'full coding read-only terminal' -- "$cur"))
		return
		;;
	--session-affinity | -session-affinity)
		COMPREPLY=($(compgen -W 'workspace conversation thread' -- "$cur"))
		return
		;;
	--bind | -bind | --token | -token | --allowed-host | -allowed-host | --allow-tool | -allow-tool | \
		--max-concurrency | -max-concurrency | --requests-per-minute | -requests-per-minute | \
		--max-body-bytes | -max-body-bytes | --body-bytes-per-second | -body-bytes-per-second | \
		--body-burst-bytes | -body-burst-bytes | --request-timeout | -request-timeout | \
		--last | -last | --since-minutes | -since-minutes | --idle-seconds | -idle-seconds)
		# A value of the user's own: nothing to offer.
		return
		;;
	esac

	case $cmd in
	'')
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$serve_flags" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		;;
	serve) COMPREPLY=($(compgen -W "$serve_flags" -- "$cur")) ;;
	report) COMPREPLY=($(compgen -W '--log --last --since-minutes' -- "$cur")) ;;
	attach) [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--follow' -- "$cur")) ;;
	kill) [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--all' -- "$cur")) ;;
	prune) COMPREPLY=($(compgen -W '--idle-seconds' -- "$cur")) ;;
	worktrees)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--workspace --force' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'list changes remove' -- "$cur"))
		fi
		;;
	esac
}

complete -F _winx winx
