package main

import (
	"fmt"
	"strings"
	"time"
)

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

func binaryID(b binary) string      { return spdxID("SPDXRef-Binary-", b.name) }
func moduleID(m module) string      { return spdxID("SPDXRef-Module-", m.key()) }
func toolchainID(goV string) string { return spdxID("SPDXRef-Toolchain-", goV) }

// spdxNamespace is the document's unique URI, derived from the binaries.
func spdxNamespace(name string, bins []binary) string {
	return fmt.Sprintf("https://spdx.invalid/winx/%s-%x", name, digest(name, bins)[:16])
}

// spdxDocument describes bins: the document DESCRIBES each binary, the
// toolchain is BUILD_TOOL_OF each binary built by it, and each binary
// CONTAINS exactly the modules its own build information lists.
func spdxDocument(name string, created time.Time, bins []binary) *document {
	doc := &document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: name,
		DocumentNamespace: spdxNamespace(name, bins),
		CreationInfo:      creationInfo{Created: created.Format(time.RFC3339), Creators: []string{"Tool: winx-sbom"}},
	}
	for _, b := range bins {
		doc.Packages = append(doc.Packages, pkg{
			Name: b.name, SPDXID: binaryID(b), VersionInfo: b.version,
			DownloadLocation: "NOASSERTION", PrimaryPurpose: "APPLICATION",
			Checksums: []checksum{{Algorithm: "SHA256", Value: b.sha256}},
			Comment:   "main module " + b.main + ", built by " + b.goVersion,
		})
		doc.Relationships = append(doc.Relationships, relationship{"SPDXRef-DOCUMENT", "DESCRIBES", binaryID(b)})
	}
	for _, v := range toolchains(bins) {
		doc.Packages = append(doc.Packages, pkg{
			Name: "go", SPDXID: toolchainID(v), VersionInfo: strings.TrimPrefix(v, "go"), DownloadLocation: "https://go.dev/dl/",
			PrimaryPurpose: "OTHER", ExternalRefs: []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: stdlibPURL(v)}},
		})
		for _, b := range bins {
			if b.goVersion == v {
				doc.Relationships = append(doc.Relationships, relationship{toolchainID(v), "BUILD_TOOL_OF", binaryID(b)})
			}
		}
	}
	for _, m := range allModules(bins) {
		p := pkg{
			Name: m.Path, SPDXID: moduleID(m), VersionInfo: m.Version,
			DownloadLocation: "https://proxy.golang.org/" + m.Path + "/@v/" + m.Version + ".zip",
			PrimaryPurpose:   "LIBRARY",
			ExternalRefs:     []externalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: m.purl()}},
		}
		if m.Sum != "" {
			p.Comment = "go.sum " + m.Sum
		}
		doc.Packages = append(doc.Packages, p)
	}
	for _, b := range bins {
		for _, m := range b.modules {
			doc.Relationships = append(doc.Relationships, relationship{binaryID(b), "CONTAINS", moduleID(m)})
		}
	}
	return doc
}
