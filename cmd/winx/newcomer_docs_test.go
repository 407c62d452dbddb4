package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNewcomerDocsAgree: the texts a newcomer follows agree with each other
// and with build.sh: one token path (in a directory the recipe creates),
// one fuzz time, every build.sh command in its help, a supported-versions
// statement, and the exit-status rule the binary follows.
func TestNewcomerDocsAgree(t *testing.T) {
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, deploy, security := read("../../README.md"), read("../../docs/deployment.md"), read("../../SECURITY.md")
	build := read("../../build.sh")
	for name, text := range map[string]string{"README.md": readme, "docs/deployment.md": deploy} {
		if strings.Contains(text, "winx-token") {
			t.Errorf("%s uses ~/.config/winx-token; the guide and the unit use ~/.config/winx/token", name)
		}
		if strings.Contains(text, "> ~/.config/winx/token") && !strings.Contains(text, "mkdir -p ~/.config/winx") {
			t.Errorf("%s writes ~/.config/winx/token without creating its directory", name)
		}
	}
	if !strings.Contains(build, "WINX_FUZZTIME:-20s") || !strings.Contains(readme, "fuzz\ntarget for 20 s") {
		t.Errorf("README.md and build.sh disagree on the fuzz time")
	}
	if !strings.Contains(security, "## Supported versions") {
		t.Errorf("SECURITY.md has no supported-versions statement")
	}
	if !strings.Contains(readme, "`winx: <what>: <why>`") || !strings.Contains(readme, "2 for a usage or configuration") {
		t.Errorf("README.md does not document the error rule and exit statuses")
	}
	out, err := exec.Command("../../build.sh", "--help").Output()
	if err != nil {
		t.Fatalf("build.sh --help: %v", err)
	}
	for _, cmd := range []string{"./build.sh test", "./build.sh repro", "./build.sh bench", "./build.sh install PREFIX", "$DESTDIR", "./build.sh dist OUT", "SHA256SUMS", ".sha256", "CycloneDX", "completions", "share/man/man1"} {
		if !strings.Contains(string(out), cmd) {
			t.Errorf("build.sh --help leaves out %s:\n%s", cmd, out)
		}
	}
}
