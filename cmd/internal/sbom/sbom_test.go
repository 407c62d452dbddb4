package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"
	"time"
)

// twoBinaries are two binaries of one release that link different modules,
// as winx (tree-sitter) and winxd (none of it) do.
func twoBinaries() []binary {
	pty := module{Path: "github.com/creack/pty", Version: "v1.1.24", Sum: "h1:a="}
	sys := module{Path: "golang.org/x/sys", Version: "v0.50.0", Sum: "h1:b="}
	ts := module{Path: "github.com/smacker/go-tree-sitter", Version: "v0.0.0-1", Sum: "h1:c="}
	return []binary{
		{name: "winx", sha256: "aa", main: "winx", version: "v1", goVersion: "go1.26.8", modules: []module{pty, ts, sys}},
		{name: "winxd", sha256: "bb", main: "winx", version: "v1", goVersion: "go1.26.8", modules: []module{pty, sys}},
	}
}

// TestSBOMPerBinary: each binary of each document lists exactly its own
// modules, never those of another binary of the release.
func TestSBOMPerBinary(t *testing.T) {
	bins := twoBinaries()
	want := map[string][]string{
		"winx":  {"github.com/creack/pty@v1.1.24", "github.com/smacker/go-tree-sitter@v0.0.0-1", "golang.org/x/sys@v0.50.0"},
		"winxd": {"github.com/creack/pty@v1.1.24", "golang.org/x/sys@v0.50.0"},
	}

	doc := spdxDocument("r", time.Unix(0, 0), bins)
	names := map[string]string{}
	for _, p := range doc.Packages {
		names[p.SPDXID] = p.Name + "@" + p.VersionInfo
	}
	got := map[string][]string{}
	for _, r := range doc.Relationships {
		if r.Type == "CONTAINS" {
			bin := names[r.Element]
			got[bin] = append(got[bin], names[r.Related])
		}
	}
	for name, mods := range want {
		g := got[name+"@v1"]
		slices.Sort(g)
		if !slices.Equal(g, mods) {
			t.Errorf("SPDX: %s CONTAINS %q, want %q", name, g, mods)
		}
	}

	cdx := cycloneDXDocument("r", time.Unix(0, 0), bins)
	for _, d := range cdx.Dependencies {
		name, ok := map[string]string{"binary:winx": "winx", "binary:winxd": "winxd"}[d.Ref]
		if !ok {
			continue
		}
		wantRefs := []string{"pkg:golang/stdlib@go1.26.8"}
		for _, m := range want[name] {
			wantRefs = append(wantRefs, "pkg:golang/"+m)
		}
		g := slices.Clone(d.DependsOn)
		slices.Sort(g)
		slices.Sort(wantRefs)
		if !slices.Equal(g, wantRefs) {
			t.Errorf("CycloneDX: %s dependsOn %q, want %q", name, g, wantRefs)
		}
	}
}

// TestSBOMReproducible: the same binaries give the same bytes, and the
// serial number is an RFC 4122 version 5 UUID URN that changes with them.
func TestSBOMReproducible(t *testing.T) {
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	created := time.Unix(1700000000, 0).UTC()
	for _, gen := range []func([]binary) any{
		func(b []binary) any { return spdxDocument("r", created, b) },
		func(b []binary) any { return cycloneDXDocument("r", created, b) },
	} {
		if a, b := marshal(gen(twoBinaries())), marshal(gen(twoBinaries())); a != b {
			t.Errorf("two documents of the same binaries differ:\n%s\n%s", a, b)
		}
	}
	sn := serialNumber("r", twoBinaries())
	if !regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(sn) {
		t.Errorf("serialNumber = %q, want a version 5 UUID URN", sn)
	}
	other := twoBinaries()
	other[0].sha256 = "cc"
	if serialNumber("r", other) == sn {
		t.Errorf("serialNumber did not change with a binary's digest")
	}
}
