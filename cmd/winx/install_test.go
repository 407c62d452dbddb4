package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestInstallDestdir stages an install the way a packager does,
// `DESTDIR=D ./build.sh install PREFIX`, and checks what a user of the
// package gets: the binaries, the docs, the man page and the bash, zsh and
// fish completions under D/PREFIX where each tool looks for them; the
// systemd unit's Documentation= names only files the install put there;
// `bash -n` (and `zsh -n`) accept the completions, which name every command
// and every flag of serve that `winx help` lists, and the bash one offers
// every command; the man page names them all too.
func TestInstallDestdir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs the binaries")
	}
	destdir := t.TempDir()
	// The unit expects the binaries in ~/.local: install there, for a
	// user whose home is this.
	const home = "/home/winx-user"
	prefix := home + "/.local"
	cmd := exec.Command("../../build.sh", "install", prefix)
	cmd.Env = append(os.Environ(), "DESTDIR="+destdir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("DESTDIR=%s ./build.sh install %s: %v\n%s", destdir, prefix, err, out)
	}
	root := filepath.Join(destdir, prefix)
	files := map[string]string{
		"man page":        "share/man/man1/winx.1",
		"bash completion": "share/bash-completion/completions/winx",
		"zsh completion":  "share/zsh/site-functions/_winx",
		"fish completion": "share/fish/vendor_completions.d/winx.fish",
		"systemd unit":    "share/doc/winx/winx.service",
	}
	for _, p := range append(slices.Sorted(maps.Values(files)), "bin/winx", "bin/winxd", "bin/winx-guardian", "share/doc/winx/README.md", "share/doc/winx/deployment.md") {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("the install has no %s: %v", p, err)
		}
	}

	// Every Documentation= of the unit is a file the install wrote.
	unit, err := os.ReadFile(filepath.Join(root, files["systemd unit"]))
	if err != nil {
		t.Fatal(err)
	}
	docs := 0
	manPage := regexp.MustCompile(`^man:([a-z0-9.-]+)\(([1-9])\)$`)
	for _, line := range strings.Split(string(unit), "\n") {
		value, ok := strings.CutPrefix(line, "Documentation=")
		if !ok {
			continue
		}
		for _, uri := range strings.Fields(value) {
			docs++
			var path string
			if m := manPage.FindStringSubmatch(uri); m != nil {
				path = filepath.Join(root, "share/man/man"+m[2], m[1]+"."+m[2])
			} else if p, ok := strings.CutPrefix(uri, "file://"); ok {
				path = filepath.Join(destdir, strings.ReplaceAll(p, "%h", home))
			} else {
				t.Errorf("Documentation=%s: neither man: nor file://, so this test cannot check it", uri)
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("Documentation=%s points at a file the install did not write: %v", uri, err)
			}
		}
	}
	if docs == 0 {
		t.Errorf("the unit has no Documentation=:\n%s", unit)
	}

	// What `winx help` lists, asked of the installed binary.
	help, err := exec.Command(filepath.Join(root, "bin/winx"), "help").Output()
	if err != nil {
		t.Fatalf("winx help: %v", err)
	}
	commands, flags := helpCommands(string(help))
	if len(commands) < 10 || len(flags) < 10 {
		t.Fatalf("winx help lists commands %q and serve flags %q; the parse found too few:\n%s", commands, flags, help)
	}

	// Syntax: bash -n, and zsh -n and fish -n where those shells exist
	// (CI installs zsh, not fish).
	shells := []struct{ shell, file string }{{"bash", files["bash completion"]}, {"zsh", files["zsh completion"]}, {"fish", files["fish completion"]}}
	for _, s := range shells {
		if _, err := exec.LookPath(s.shell); err != nil {
			if s.shell == "bash" || s.shell == "zsh" && os.Getenv("CI") == "true" {
				t.Errorf("%s is not installed: its completion cannot be checked", s.shell)
			}
			continue
		}
		if out, err := exec.Command(s.shell, "-n", filepath.Join(root, s.file)).CombinedOutput(); err != nil {
			t.Errorf("%s -n %s: %v\n%s", s.shell, s.file, err, out)
		}
	}

	// Every command and every flag of serve, in each completion and in
	// the man page (roff writes a dash as \-).
	for _, what := range []string{"bash completion", "zsh completion", "fish completion", "man page"} {
		b, err := os.ReadFile(filepath.Join(root, files[what]))
		if err != nil {
			continue // reported above
		}
		text := string(b)
		if what == "man page" {
			text = strings.ReplaceAll(text, `\-`, "-")
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(^|[^a-z-])` + regexp.QuoteMeta(c) + `($|[^a-z-])`).MatchString(text) {
				t.Errorf("the %s does not name the command %q", what, c)
			}
		}
		for _, f := range flags {
			name := strings.TrimPrefix(f, "--")
			if what == "fish completion" {
				if !strings.Contains(text, "-l "+name+" ") {
					t.Errorf("the fish completion does not name the flag %s", f)
				}
				continue
			}
			if !regexp.MustCompile(regexp.QuoteMeta(f) + `($|[^a-z-])`).MatchString(text) {
				t.Errorf("the %s does not name the flag %s", what, f)
			}
		}
	}

	// The bash completion at work: "winx <TAB>" offers every command, and
	// "winx serve --<TAB>" every flag of serve.
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"winx", ""}, commands},
		{[]string{"winx", "serve", "--"}, flags},
	} {
		script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _winx; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command("bash", append([]string{"-c", script, "bash", filepath.Join(root, files["bash completion"])}, tc.words...)...).Output()
		if err != nil {
			t.Errorf("bash completion of %q: %v", tc.words, err)
			continue
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("bash completion of %q offers %q, not %q", tc.words, got, w)
			}
		}
	}
}

// helpCommands reads `winx help`: the commands of its "commands:" section
// and of a usage line made only of commands ("winx help | version"), and
// the flags of its "flags of serve:" section, as --name.
func helpCommands(help string) (commands, flags []string) {
	onlyCommands := regexp.MustCompile(`^\s*(?:usage:\s+)?winx ([a-z-]+(?: \| [a-z-]+)*)$`)
	entry := regexp.MustCompile(`^  ([a-z][a-z-]*)(?:\s|$)`)
	flag := regexp.MustCompile(`^  -{1,2}([a-z][a-z-]*)(?:\s|$)`)
	section := ""
	for _, line := range strings.Split(help, "\n") {
		switch {
		case line == "commands:":
			section = "commands"
			continue
		case strings.HasPrefix(line, "flags of serve"):
			section = "flags"
			continue
		}
		if m := onlyCommands.FindStringSubmatch(line); section == "" && m != nil {
			commands = append(commands, strings.Split(m[1], " | ")...)
		}
		if m := entry.FindStringSubmatch(line); section == "commands" && m != nil {
			commands = append(commands, m[1])
		}
		if m := flag.FindStringSubmatch(line); section == "flags" && m != nil {
			flags = append(flags, "--"+m[1])
		}
	}
	slices.Sort(commands)
	return slices.Compact(commands), flags
}
