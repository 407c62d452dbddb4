package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEDeliberateDifferences: the README says which seed features are
// different on purpose, and why.
func TestREADMEDeliberateDifferences(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Deliberate differences from Winx\n")
	if !ok {
		t.Fatal(`README has no "Deliberate differences from Winx" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, want := range []string{"WebP", "image_needs_conversion", "standard library", "`winx update`",
		"./build.sh install", "`winx`, not `winx-code-agent`", "Native Windows is not supported", "WSL 2"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the section does not mention %q", want)
		}
	}
}
