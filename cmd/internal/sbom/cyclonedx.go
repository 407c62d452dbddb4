package main

import (
	"crypto/sha1"
	"fmt"
	"time"
)

// The CycloneDX 1.5 JSON structure, as far as this document uses it
// (https://cyclonedx.org/docs/1.5/json/).
type bom struct {
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	SerialNumber string          `json:"serialNumber"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Timestamp string       `json:"timestamp"`
	Tools     cdxTools     `json:"tools"`
	Component cdxComponent `json:"component"`
}

type cdxTools struct {
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type        string        `json:"type"`
	BOMRef      string        `json:"bom-ref,omitempty"`
	Name        string        `json:"name"`
	Version     string        `json:"version,omitempty"`
	Description string        `json:"description,omitempty"`
	Hashes      []cdxHash     `json:"hashes,omitempty"`
	PURL        string        `json:"purl,omitempty"`
	Properties  []cdxProperty `json:"properties,omitempty"`
}

type cdxHash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

// binaryRef is a binary's bom-ref; modules and the standard library use
// their package URLs, which are unique.
func binaryRef(b binary) string { return "binary:" + b.name }

// serialNumber is an RFC 4122 version 5 (name-based, SHA-1) UUID URN in
// the URL namespace, named by the SPDX namespace URI: the same binaries
// give the same serial number (CycloneDX asks for a UUID URN, and its
// schema admits versions 1 to 5 only).
func serialNumber(name string, bins []binary) string {
	urlNamespace := [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.New()
	h.Write(urlNamespace[:])
	h.Write([]byte(spdxNamespace(name, bins)))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// cycloneDXDocument describes bins: the release (metadata.component)
// depends on each binary, and each binary depends on exactly the modules
// its own build information lists and on the standard library of its
// toolchain, which is linked into every Go binary.
func cycloneDXDocument(name string, created time.Time, bins []binary) *bom {
	release := cdxComponent{Type: "application", BOMRef: "release:" + name, Name: name}
	b := &bom{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", SerialNumber: serialNumber(name, bins), Version: 1,
		Metadata: cdxMetadata{
			Timestamp: created.Format(time.RFC3339),
			Tools:     cdxTools{Components: []cdxComponent{{Type: "application", Name: "winx-sbom"}}},
			Component: release,
		},
	}
	top := cdxDependency{Ref: release.BOMRef, DependsOn: []string{}}
	for _, bin := range bins {
		b.Components = append(b.Components, cdxComponent{
			Type: "application", BOMRef: binaryRef(bin), Name: bin.name, Version: bin.version,
			Description: "main module " + bin.main + ", built by " + bin.goVersion,
			Hashes:      []cdxHash{{Alg: "SHA-256", Content: bin.sha256}},
			Properties:  []cdxProperty{{Name: "go:toolchain", Value: bin.goVersion}, {Name: "go:main-module", Value: bin.main}},
		})
		top.DependsOn = append(top.DependsOn, binaryRef(bin))
	}
	for _, v := range toolchains(bins) {
		b.Components = append(b.Components, cdxComponent{Type: "library", BOMRef: stdlibPURL(v), Name: "stdlib", Version: v, PURL: stdlibPURL(v)})
	}
	for _, m := range allModules(bins) {
		c := cdxComponent{Type: "library", BOMRef: m.purl(), Name: m.Path, Version: m.Version, PURL: m.purl()}
		if m.Sum != "" {
			c.Properties = []cdxProperty{{Name: "go:sum", Value: m.Sum}}
		}
		b.Components = append(b.Components, c)
	}
	b.Dependencies = append(b.Dependencies, top)
	for _, bin := range bins {
		d := cdxDependency{Ref: binaryRef(bin), DependsOn: []string{stdlibPURL(bin.goVersion)}}
		for _, m := range bin.modules {
			d.DependsOn = append(d.DependsOn, m.purl())
		}
		b.Dependencies = append(b.Dependencies, d)
	}
	// Every component is a node of the graph, leaves included.
	for _, v := range toolchains(bins) {
		b.Dependencies = append(b.Dependencies, cdxDependency{Ref: stdlibPURL(v), DependsOn: []string{}})
	}
	for _, m := range allModules(bins) {
		b.Dependencies = append(b.Dependencies, cdxDependency{Ref: m.purl(), DependsOn: []string{}})
	}
	return b
}
