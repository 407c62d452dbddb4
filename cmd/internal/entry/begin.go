package entry

import (
	"fmt"
	"os"

	"winx/pty/sandbox"
)

// Begin is the first step of every main. When launcher is true and the
// process was started as the sandbox launcher of a confined shell (its
// first argument is sandbox.LauncherArg), it confines its own thread and
// becomes the shell: it never returns. Otherwise it makes the process
// undumpable before anything else starts: session shells run as this same
// user and must not read this process's environment or memory (tokens, the
// daemon's state). It exits 1, naming the program, when that fails.
func Begin(program string, launcher bool) {
	if launcher && len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		err := sandbox.RunLauncher(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	if err := Harden(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot make the process undumpable: %v\n", program, err)
		os.Exit(1)
	}
}
