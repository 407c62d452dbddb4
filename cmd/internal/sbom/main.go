// Command sbom writes the SPDX 2.3 JSON software bill of materials of a
// release: the binaries given as arguments, the Go toolchain that built
// them and every module they link, read from the build information the go
// command stamps into each binary (what `go version -m` prints). It owns
// that translation only; ./build.sh dist decides what is released.
//
// The output depends on its inputs alone: the creation time is given
// (-created, the commit time), the namespace is derived from the binaries'
// digests, and every list is sorted, so two runs over the same binaries
// write the same bytes.
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

// errUsage is a rejected command line, explained on stderr.
var errUsage = errors.New("usage: sbom -name NAME -created UNIX_SECONDS [-o FILE] BINARY...")

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "document name, e.g. winx-<rev>-linux-amd64")
	created := fs.Int64("created", -1, "creation time in Unix seconds (the commit time, for reproducible output)")
	out := fs.String("o", "", "output file (default stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *created < 0 || fs.NArg() == 0 {
		return errUsage
	}
	doc, err := build(*name, time.Unix(*created, 0).UTC(), fs.Args())
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// The SPDX 2.3 JSON structure, as far as this document uses it
// (https://spdx.github.io/spdx-spec/v2.3/).
type document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      creationInfo   `json:"creationInfo"`
	Packages          []pkg          `json:"packages"`
	Relationships     []relationship `json:"relationships"`
}

type creationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type pkg struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo,omitempty"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []checksum    `json:"checksums,omitempty"`
	PrimaryPurpose   string        `json:"primaryPackagePurpose,omitempty"`
	ExternalRefs     []externalRef `json:"externalRefs,omitempty"`
	Comment          string        `json:"comment,omitempty"`
}

type checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type externalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// spdxID makes an SPDX identifier (letters, digits, '.' and '-') of s.
func spdxID(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range s {
		if r < 0x80 && (r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func build(name string, created time.Time, binaries []string) (*document, error) {
	doc := &document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: name,
		CreationInfo: creationInfo{Created: created.Format(time.RFC3339), Creators: []string{"Tool: winx-sbom"}},
	}
	ns := sha256.New()
	deps := map[string]pkg{}
	toolchains := map[string]bool{}
	var bins []pkg
	for _, path := range binaries {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(ns, "%x %s\n", sum, filepath.Base(path))
		info, err := buildinfo.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		toolchains[info.GoVersion] = true
		base := filepath.Base(path)
		bins = append(bins, pkg{
			Name: base, SPDXID: spdxID("SPDXRef-Binary-", base), VersionInfo: info.Main.Version,
			DownloadLocation: "NOASSERTION", PrimaryPurpose: "APPLICATION",
			Checksums: []checksum{{Algorithm: "SHA256", Value: hex.EncodeToString(sum[:])}},
			Comment:   "main module " + info.Main.Path + ", built by " + info.GoVersion,
		})
		for _, d := range info.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			key := m.Path + "@" + m.Version
			deps[key] = pkg{
				Name: m.Path, SPDXID: spdxID("SPDXRef-Module-", key), VersionInfo: m.Version,
				DownloadLocation: "https://proxy.golang.org/" + m.Path + "/@v/" + m.Version + ".zip",
				PrimaryPurpose:   "LIBRARY",
				ExternalRefs:     []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + m.Path + "@" + m.Version}},
			}
			if m.Sum != "" {
				deps[key] = withComment(deps[key], "go.sum "+m.Sum)
			}
		}
	}
	doc.DocumentNamespace = fmt.Sprintf("https://spdx.invalid/winx/%s-%x", name, ns.Sum(nil)[:16])
	slices.SortFunc(bins, func(a, b pkg) int { return strings.Compare(a.Name, b.Name) })
	for _, b := range bins {
		doc.Packages = append(doc.Packages, b)
		doc.Relationships = append(doc.Relationships, relationship{"SPDXRef-DOCUMENT", "DESCRIBES", b.SPDXID})
	}
	for _, v := range slices.Sorted(maps.Keys(toolchains)) {
		id := spdxID("SPDXRef-Toolchain-", v)
		doc.Packages = append(doc.Packages, pkg{
			Name: "go", SPDXID: id, VersionInfo: strings.TrimPrefix(v, "go"), DownloadLocation: "https://go.dev/dl/",
			PrimaryPurpose: "OTHER", ExternalRefs: []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/stdlib@" + v}},
		})
		for _, b := range bins {
			doc.Relationships = append(doc.Relationships, relationship{id, "BUILD_TOOL_OF", b.SPDXID})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(deps)) {
		d := deps[k]
		doc.Packages = append(doc.Packages, d)
		for _, b := range bins {
			doc.Relationships = append(doc.Relationships, relationship{b.SPDXID, "CONTAINS", d.SPDXID})
		}
	}
	return doc, nil
}

func withComment(p pkg, c string) pkg {
	p.Comment = c
	return p
}
