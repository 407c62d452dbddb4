package entry

import (
	"os"
	"path/filepath"
	"testing"

	"winx/cmd/internal/buildid"
	"winx/guardian/wire"
)

func TestSiblingBinary(t *testing.T) {
	if got := SiblingBinary("/opt/winxd", "winxd"); got != "/opt/winxd" {
		t.Errorf("override: got %q", got)
	}
	// Nothing of that name sits next to the test binary: the bare name is
	// left for a PATH lookup.
	if got := SiblingBinary("", "winx-no-such-binary"); got != "winx-no-such-binary" {
		t.Errorf("absent sibling: got %q", got)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SiblingBinary("", filepath.Base(exe)), filepath.Join(filepath.Dir(exe), filepath.Base(exe)); got != want {
		t.Errorf("present sibling: got %q, want %q", got, want)
	}
}

func TestWireBuild(t *testing.T) {
	id := buildid.Identity{Module: "winx", Version: "v1.2.3", Revision: "abc", Modified: true, GoVersion: "go1.26.0"}
	want := wire.Build{Module: "winx", Version: "v1.2.3", Revision: "abc", Modified: true, GoVersion: "go1.26.0"}
	if got := WireBuild(id); got != want {
		t.Errorf("WireBuild = %+v, want %+v", got, want)
	}
}
