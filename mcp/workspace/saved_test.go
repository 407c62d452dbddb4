package workspace

import (
	"bytes"
	"testing"
	"time"
)

func TestResumeHeaderRoundTrip(t *testing.T) {
	for _, root := range []string{"/srv/proj", "/tmp/a b/\"quoted\"", "/tmp/line\nbreak", "/tmp/ü/\x01"} {
		cs := &Saver{Build: "v1 (abc)", Now: func() time.Time { return time.Unix(0, 0) }}
		var doc bytes.Buffer
		cs.writeHeader(&doc, "t", root)
		doc.WriteString("\n## Task description\nproject_root: \"/elsewhere\"\n")
		got, err := savedRoot(doc.String())
		if err != nil || got != root {
			t.Errorf("savedRoot(header of %q) = %q, %v", root, got, err)
		}
	}
	for _, text := range []string{"", "# Winx saved contexts\nproject_root: \"/x\"\n", SavedContextMagic + "\nid: x\n\nproject_root: \"/x\"\n",
		SavedContextMagic + "\nproject_root: /x\n", SavedContextMagic + "\nproject_root: \"\"\n"} {
		if got, err := savedRoot(text); err == nil {
			t.Errorf("savedRoot(%q) = %q, want an error", text, got)
		}
	}
}
