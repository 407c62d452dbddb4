package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The parser layer of the modes against commands that made a read-only or
// a restricted session run something: abbreviated long options, optional
// and attached option values, prompt variables assigned through parameter
// expansion, go and git options that build, run or enter another
// repository. Every row runs through BashCommand on a real bash; each must
// be refused with the typed mode denial and must never create the marker.

// attackRow is one command line and the mode it is tried in.
type attackRow struct {
	mode string // "architect", "cw" (code_writer: ls) or "cwb" (code_writer: ls and builtins that assign or run code)
	line string // "{M}" is the marker's absolute path
}

var attackRows = []attackRow{
	// The reproductions of the review.
	{"architect", `echo x | sed --line-length 1 '1e touch {M}'`},
	{"architect", `echo x | xargs --process-slot cat sh -c 'touch {M}'`},
	{"architect", `echo '-c "touch {M}"' | xargs --max-lines sh`},
	{"architect", `: "${PS1:=\$(touch {M})}"`},
	{"architect", `: "${PS0=\$(touch {M})}"`},
	{"architect", `go list -export -gcflags=-cpuprofile={M} ./...`},
	{"architect", `go doc -http fmt`},
	{"architect", `git -C evil status`},
	{"architect", `hostname -bF {M}.name`},
	{"cw", `: "${PS1:=\$(touch {M})}"`},
	// Variants in the same classes.
	{"architect", `echo x | sed --li 1 '1e touch {M}'`},
	{"architect", `echo x | sed --line-len=1 -n --expr '1e touch {M}'`},
	{"architect", `echo x | sed -nl 1 '1e touch {M}'`},
	{"architect", `echo x | sed -s --in-pl=.bak 1p {M}.in`},
	{"architect", `echo x | xargs --process-slot-v cat sh -c 'touch {M}'`},
	{"architect", `echo '-c "touch {M}"' | xargs --max-lin sh`},
	{"architect", `echo '-c "touch {M}"' | xargs -rl sh`},
	{"architect", `echo x | xargs --arg /dev/null --null sh -c 'touch {M}'`},
	{"architect", `true "${PS1:=\$(touch {M})}"`},
	{"architect", `echo "${PS0=\$(touch {M})}"`},
	{"architect", `[[ -n "${PS1:=\$(touch {M})}" ]]`},
	{"architect", `ls "${PS1:-x}" "${PS0:=\$(touch {M})}"`},
	{"architect", `hostname -vbF {M}.name`},
	{"architect", `hostname --boot --fil {M}.name`},
	{"architect", `go list --export --gcflags=-cpuprofile={M} ./...`},
	{"architect", `go list -e -json -export -gcflags -cpuprofile={M} ./...`},
	{"architect", `go doc --http=127.0.0.1:0 fmt`},
	{"architect", `git --no-pager -C evil status`},
	{"architect", `git --git-dir=evil --work-tree=. status`},
	{"architect", `git log -p --ext-diff -1`},
	{"architect", `git log -p --ext -1`},
	{"cw", `true "${PS0=\$(touch {M})}"`},
	{"cw", `ls "${PS1:=\$(touch {M})}"`},
	{"cw", `: ${PS1:=\$\(touch\ {M}\)}`},
	{"cwb", `read -r PS1 <<< '$(touch {M})'`},
	{"cwb", `read PS0 <<< '$(touch {M})'`},
	{"cwb", `printf -v PS1 %s '$(touch {M})'`},
	{"cwb", `printf -vPS0 %s '$(touch {M})'`},
	{"cwb", `mapfile -t PS0 <<< '$(touch {M})'`},
	{"cwb", `readarray PS0 <<< '$(touch {M})'`},
	{"cwb", `declare -g PS0='$(touch {M})'`},
	{"cwb", `export -- PS1='$(touch {M})'`},
	{"cwb", `trap 'touch {M}' DEBUG`},
	{"cwb", `mapfile -C 'touch {M};:' -c 1 lines <<< x`},
	{"cwb", `source /dev/stdin <<< 'PS1=\$\(touch\ {M}\)'`},
	{"cw", `for PS1 in '$(touch {M})'; do ls; done`},
	{"architect", `echo x | env --split='touch {M}'`},
}

// attackEnv starts a session for one row: a Go module and a git repository
// whose external diff writes the marker, a bare repository "evil" whose
// fsmonitor writes it, and a hostname stand-in that writes it when asked
// to set the name (the real one would change this machine's).
func attackEnv(t *testing.T, mode string) (e *bashEnv, marker string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not installed")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	fake := t.TempDir()
	gopath := t.TempDir()
	e = newBashEnvWith(t, "",
		"PATH="+fake+":"+filepath.Dir(goBin)+":"+os.Getenv("PATH"),
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOENV=off", "GOFLAGS=", "GOPATH="+gopath, "GOCACHE="+filepath.Join(gopath, "cache"),
		"GIT_CONFIG_NOSYSTEM=1")
	marker = filepath.Join(e.root, "MARK")
	script := filepath.Join(fake, "mark.sh")
	write := func(path, text string, perm os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), perm); err != nil {
			t.Fatal(err)
		}
	}
	write(script, "#!/bin/sh\ntouch '"+marker+"'\n", 0o700)
	write(filepath.Join(fake, "hostname"), "#!/bin/sh\ncase \"$*\" in *F*|*b*|*fil*|*boo*) touch '"+marker+"';; esac\necho fakehost\n", 0o700)
	write(filepath.Join(e.root, "go.mod"), "module m\n\ngo 1.21\n", 0o600)
	write(filepath.Join(e.root, "main.go"), "package main\n\nfunc main() {}\n", 0o600)
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		c.Dir = e.root
		c.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", ".")
	git("add", "go.mod", "main.go")
	git("commit", "-q", "-m", "one")
	write(filepath.Join(e.root, "main.go"), "package main\n\nfunc main() { println() }\n", 0o600)
	git("commit", "-q", "-am", "two")
	git("config", "diff.external", script)
	git("init", "-q", "--bare", "evil")
	git("--git-dir=evil", "config", "core.fsmonitor", script)
	git("--git-dir=evil", "config", "core.bare", "false")
	git("--git-dir=evil", "config", "core.worktree", e.root)

	switch mode {
	case "architect":
		e.setMode(t, ModeArchitect, nil)
	case "cw":
		e.setMode(t, ModeCodeWriter, map[string]any{"allowed_globs": []string{"src/**"}, "allowed_commands": []string{"ls"}})
	case "cwb":
		e.setMode(t, ModeCodeWriter, map[string]any{"allowed_globs": []string{"src/**"},
			"allowed_commands": []string{"ls", "read", "printf", "mapfile", "readarray", "declare", "export", "trap", "source"}})
	default:
		t.Fatalf("unknown row mode %q", mode)
	}
	return e, marker
}

func TestModeAttacksRefused(t *testing.T) {
	for i, row := range attackRows {
		// Plain subtest names: the temporary paths carry them, and the
		// marker's path must not hold shell syntax.
		t.Run(fmt.Sprintf("%s%02d", row.mode, i), func(t *testing.T) {
			e, marker := attackEnv(t, row.mode)
			line := strings.ReplaceAll(row.line, "{M}", marker)
			r, _ := e.bash(cmd(line), 20)
			t.Logf("%s: %s", line, r.Structured.Message)
			wantDenied(t, r, line, "")
			// Prompt variables act at the next command and prompt.
			e.bash(cmd("ls"), 10)
			e.bash(cmd("ls"), 10)
			for _, p := range []string{marker, marker + ".name"} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: %s exists (%v): the line ran", row.mode, filepath.Base(p), err)
				}
			}
		})
	}
}
