# fish completion for winx (Winx for Go). ./build.sh install puts it in
# PREFIX/share/fish/vendor_completions.d/winx.fish. A test checks that it
# names every command `winx help` lists.

set -l commands serve report list jobs attach kill prune restart-daemon doctor worktrees help version
complete -c winx -f

complete -c winx -n "not __fish_seen_subcommand_from $commands" -a serve -d 'serve MCP over stdio (the default) or Streamable HTTP'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a report -d 'summarize the usage log'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a list -d 'JSON of the live sessions'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a jobs -d 'background jobs of every session, or of one'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a attach -d "print a session's screen"
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a kill -d 'end a session or --all'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a prune -d 'end idle sessions'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a restart-daemon -d 'stop winxd and start a new one'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a doctor -d 'check the runtime'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a worktrees -d 'the managed git worktrees of a repository'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a help -d 'print every command and flag'
complete -c winx -n "not __fish_seen_subcommand_from $commands" -a version -d 'print the build identity'

# The flags of serve, which is also what winx runs without a command.
set -l serving "not __fish_seen_subcommand_from report list jobs attach kill prune restart-daemon doctor worktrees help version"
complete -c winx -n $serving -l http -d 'serve Streamable HTTP instead of stdio'
complete -c winx -n $serving -l bind -x -d 'HTTP listen address'
complete -c winx -n $serving -l token-file -r -F -d 'file holding the bearer token'
complete -c winx -n $serving -l token -x -d 'the bearer token itself'
complete -c winx -n $serving -l principal-config -r -F -d 'TOML file of principals'
complete -c winx -n $serving -l allow-weak-token -d 'accept tokens shorter than 32 bytes'
complete -c winx -n $serving -l allow-query-token -d 'also accept the token as ?token='
complete -c winx -n $serving -l allow-non-loopback -d 'allow binding an address that is not loopback'
complete -c winx -n $serving -l allowed-host -x -d 'extra host name accepted in Host and Origin headers'
complete -c winx -n $serving -l rest -d 'with --http, also serve the REST tool API'
complete -c winx -n $serving -l max-concurrency -x -d 'HTTP requests served at once'
complete -c winx -n $serving -l requests-per-minute -x -d 'HTTP requests per minute per source IP'
complete -c winx -n $serving -l max-body-bytes -x -d 'largest HTTP request body'
complete -c winx -n $serving -l body-bytes-per-second -x -d 'request body bytes per second per principal'
complete -c winx -n $serving -l body-burst-bytes -x -d 'burst of --body-bytes-per-second'
complete -c winx -n $serving -l request-timeout -x -d 'time for an HTTP request to start its answer'
complete -c winx -n $serving -l session-affinity -x -a 'workspace conversation thread' -d 'which calls share a shell'
complete -c winx -n $serving -l tool-profile -x -a 'full coding read-only terminal' -d 'tools offered'
complete -c winx -n $serving -l allow-tool -x -d 'offer exactly these tools'
complete -c winx -n $serving -l version -d 'print the build identity and exit'

complete -c winx -n '__fish_seen_subcommand_from report' -l log -r -F -d 'usage log'
complete -c winx -n '__fish_seen_subcommand_from report' -l last -x -d 'only the newest N calls'
complete -c winx -n '__fish_seen_subcommand_from report' -l since-minutes -x -d 'only calls from the last M minutes'
complete -c winx -n '__fish_seen_subcommand_from attach' -l follow -d 'keep printing new output'
complete -c winx -n '__fish_seen_subcommand_from kill' -l all -d 'kill every session'
complete -c winx -n '__fish_seen_subcommand_from prune' -l idle-seconds -x -d 'prune guardians idle at least this long'
complete -c winx -n '__fish_seen_subcommand_from worktrees' -l workspace -x -a '(__fish_complete_directories)' -d 'the repository'
complete -c winx -n '__fish_seen_subcommand_from worktrees' -l force -d 'remove even with changes'
complete -c winx -n '__fish_seen_subcommand_from worktrees; and not __fish_seen_subcommand_from list changes remove' -a 'list changes remove'
