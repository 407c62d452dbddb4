package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// releaseBinaries are the executables of every archive.
var releaseBinaries = []string{"winx", "winxd", "winx-guardian"}

// TestDist runs `./build.sh dist` twice into two directories and checks the
// release as a user verifies it: the two runs wrote the same files with the
// same bytes (archives and both SBOMs), `sha256sum -c` accepts the .sha256
// beside every artifact and SHA256SUMS, and for every binary of every
// archive the SPDX and the CycloneDX SBOM list exactly the modules `go
// version -m` reports for that binary, and its toolchain.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release twice")
	}
	for _, tool := range []string{"bash", "git", "tar", "gzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run ./build.sh dist: %v", tool, err)
		}
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	d1, d2 := t.TempDir(), t.TempDir()
	for _, out := range []string{d1, d2} {
		cmd := exec.Command(filepath.Join(root, "build.sh"), "dist", out)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "WINX_DIST_PLATFORMS=linux/amd64 darwin/arm64")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("./build.sh dist %s: %v\n%s", out, err, b)
		}
	}

	// Reproducible: the same names, the same bytes.
	names1, names2 := dirNames(t, d1), dirNames(t, d2)
	if !slices.Equal(names1, names2) {
		t.Fatalf("two dist runs wrote different files:\n%q\n%q", names1, names2)
	}
	for _, n := range names1 {
		if a, b := readFile(t, filepath.Join(d1, n)), readFile(t, filepath.Join(d2, n)); !bytes.Equal(a, b) {
			t.Errorf("%s differs between two dist runs", n)
		}
	}

	// Every artifact has its .sha256, in sha256sum's format, and it and
	// SHA256SUMS verify with sha256sum itself.
	var archives, artifacts []string
	for _, n := range names1 {
		switch {
		case strings.HasSuffix(n, ".tar.gz"):
			archives = append(archives, strings.TrimSuffix(n, ".tar.gz"))
			artifacts = append(artifacts, n)
		case strings.HasSuffix(n, ".spdx.json"), strings.HasSuffix(n, ".cdx.json"):
			artifacts = append(artifacts, n)
		}
	}
	if len(archives) != 2 {
		t.Fatalf("dist wrote archives %q, want linux/amd64 and darwin/arm64", archives)
	}
	for _, base := range archives {
		for _, want := range []string{base + ".spdx.json", base + ".cdx.json"} {
			if !slices.Contains(names1, want) {
				t.Errorf("dist wrote no %s", want)
			}
		}
	}
	var sums strings.Builder
	for _, a := range artifacts {
		line := fmt.Sprintf("%x  %s\n", sha256.Sum256(readFile(t, filepath.Join(d1, a))), a)
		sums.WriteString(line)
		got, err := os.ReadFile(filepath.Join(d1, a+".sha256"))
		if err != nil {
			t.Errorf("%s has no .sha256 beside it: %v", a, err)
			continue
		}
		if string(got) != line {
			t.Errorf("%s.sha256 = %q, want %q", a, got, line)
		}
		if b, err := shaCheck(d1, a+".sha256"); err != nil {
			t.Errorf("sha256sum -c %s.sha256: %v\n%s", a, err, b)
		}
	}
	if b, err := shaCheck(d1, "SHA256SUMS"); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, b)
	}
	// SHA256SUMS: the same lines, one per artifact, in its own order.
	got := strings.SplitAfter(string(readFile(t, filepath.Join(d1, "SHA256SUMS"))), "\n")
	want := strings.SplitAfter(sums.String(), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("SHA256SUMS lines %q, want one per artifact %q", got, want)
	}

	// Each SBOM against go version -m of each binary of its archive.
	for _, base := range archives {
		bins := extractBinaries(t, filepath.Join(d1, base+".tar.gz"), base)
		spdx := readSPDX(t, filepath.Join(d1, base+".spdx.json"))
		// A missing CycloneDX SBOM was reported above; the SPDX one is
		// still checked.
		cdx := map[string]*contents{}
		if slices.Contains(names1, base+".cdx.json") {
			cdx = readCycloneDX(t, filepath.Join(d1, base+".cdx.json"))
		}
		for _, name := range releaseBinaries {
			goVersion, mods := goVersionM(t, bins[name])
			if spdx[name] == nil {
				t.Errorf("%s: the SPDX SBOM does not describe %s", base, name)
				continue
			}
			if got := spdx[name].modules; !slices.Equal(got, mods) {
				t.Errorf("%s: SPDX: %s contains %q, go version -m says %q", base, name, got, mods)
			}
			if got := spdx[name].toolchain; got != strings.TrimPrefix(goVersion, "go") {
				t.Errorf("%s: SPDX: %s built by go %q, go version -m says %q", base, name, got, goVersion)
			}
			if cdx[name] == nil {
				t.Errorf("%s: no CycloneDX component %s", base, name)
				continue
			}
			if got := cdx[name].modules; !slices.Equal(got, mods) {
				t.Errorf("%s: CycloneDX: %s depends on %q, go version -m says %q", base, name, got, mods)
			}
			if got := cdx[name].toolchain; got != goVersion {
				t.Errorf("%s: CycloneDX: %s links stdlib %q, go version -m says %q", base, name, got, goVersion)
			}
		}
	}
}

// shaCheck runs sha256sum -c on a checksum file in dir.
func shaCheck(dir, file string) ([]byte, error) {
	cmd := exec.Command("sha256sum", "--strict", "-c", file)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extractBinaries writes the release binaries of an archive into a
// temporary directory and returns their paths by name.
func extractBinaries(t *testing.T, archive, base string) map[string]string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		name, ok := strings.CutPrefix(h.Name, base+"/")
		if !ok || !slices.Contains(releaseBinaries, name) {
			continue
		}
		p := filepath.Join(dir, name)
		out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		// The archive is this test's own output: the bound is for a
		// runaway build, not an attacker.
		if _, err := io.Copy(out, io.LimitReader(tr, 512<<20)); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	for _, name := range releaseBinaries {
		if paths[name] == "" {
			t.Fatalf("%s has no %s", archive, name)
		}
	}
	return paths
}

// goVersionM runs `go version -m` on a binary: its toolchain and the
// modules linked into it as path@version (a replacement replaces the
// module it follows), sorted.
func goVersionM(t *testing.T, bin string) (string, []string) {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m %s: %v", bin, err)
	}
	lines := strings.Split(string(out), "\n")
	// The first line is "<path>: go1.x.y".
	_, goVersion, _ := strings.Cut(lines[0], ": ")
	var mods []string
	for _, line := range lines[1:] {
		f := strings.Split(strings.TrimSpace(line), "\t")
		switch {
		case len(f) >= 3 && f[0] == "dep":
			mods = append(mods, f[1]+"@"+f[2])
		case len(f) >= 3 && f[0] == "=>" && len(mods) > 0:
			mods[len(mods)-1] = f[1] + "@" + f[2]
		}
	}
	slices.Sort(mods)
	return strings.TrimSpace(goVersion), mods
}

// contents is what an SBOM says of one binary: the modules in it as
// path@version, sorted, and its toolchain.
type contents struct {
	modules   []string
	toolchain string
}

// readSPDX reads an SPDX document: per binary package, the modules it
// CONTAINS and the version of the toolchain that is BUILD_TOOL_OF it.
func readSPDX(t *testing.T, path string) map[string]*contents {
	t.Helper()
	// Decoded as a consumer decodes it, not with this package's types.
	var doc struct {
		Packages []struct {
			Name, SPDXID, VersionInfo string
		}
		Relationships []struct {
			Element string `json:"spdxElementId"`
			Type    string `json:"relationshipType"`
			Related string `json:"relatedSpdxElement"`
		}
	}
	if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	byID := map[string]struct{ Name, SPDXID, VersionInfo string }{}
	for _, p := range doc.Packages {
		byID[p.SPDXID] = p
	}
	got := map[string]*contents{}
	for _, r := range doc.Relationships {
		if r.Type == "DESCRIBES" {
			got[byID[r.Related].Name] = &contents{modules: []string{}}
		}
	}
	for _, r := range doc.Relationships {
		switch r.Type {
		case "CONTAINS":
			m := byID[r.Related]
			c := got[byID[r.Element].Name]
			if c == nil {
				t.Fatalf("%s: %s CONTAINS %s, but the document does not describe it", path, r.Element, r.Related)
			}
			c.modules = append(c.modules, m.Name+"@"+m.VersionInfo)
		case "BUILD_TOOL_OF":
			if c := got[byID[r.Related].Name]; c != nil {
				c.toolchain = byID[r.Element].VersionInfo
			}
		}
	}
	for _, c := range got {
		slices.Sort(c.modules)
	}
	return got
}

// readCycloneDX reads a CycloneDX document: per binary component, the
// modules it depends on and the version of the standard library it links.
func readCycloneDX(t *testing.T, path string) map[string]*contents {
	t.Helper()
	type component struct {
		Type, Name, Version string
		BOMRef              string `json:"bom-ref"`
	}
	var doc struct {
		BOMFormat, SpecVersion, SerialNumber string
		Components                           []component
		Dependencies                         []struct {
			Ref       string
			DependsOn []string
		}
	}
	if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != "1.5" || !strings.HasPrefix(doc.SerialNumber, "urn:uuid:") {
		t.Errorf("%s: bomFormat %q specVersion %q serialNumber %q, want CycloneDX 1.5 with a UUID URN", path, doc.BOMFormat, doc.SpecVersion, doc.SerialNumber)
	}
	byRef := map[string]component{}
	for _, c := range doc.Components {
		byRef[c.BOMRef] = c
	}
	got := map[string]*contents{}
	for _, d := range doc.Dependencies {
		bin, ok := byRef[d.Ref]
		if !ok || bin.Type != "application" {
			continue
		}
		c := &contents{modules: []string{}}
		for _, ref := range d.DependsOn {
			m, ok := byRef[ref]
			switch {
			case !ok:
				t.Errorf("%s: %s depends on %s, which is no component", path, d.Ref, ref)
			case m.Name == "stdlib":
				c.toolchain = m.Version
			default:
				c.modules = append(c.modules, m.Name+"@"+m.Version)
			}
		}
		slices.Sort(c.modules)
		got[bin.Name] = c
	}
	return got
}
