// Command sbom writes the software bills of materials of a release, in
// SPDX 2.3 JSON and in CycloneDX 1.5 JSON: the binaries given as arguments,
// the Go toolchain that built them and, for each binary, exactly the
// modules linked into it, read from the build information the go command
// stamps into each binary (what `go version -m` prints). It owns that
// translation only; ./build.sh dist decides what is released.
//
// The output depends on its inputs alone: the creation time is given
// (-created, the commit time), the SPDX namespace and the CycloneDX serial
// number are derived from the binaries' digests, and every list is sorted,
// so two runs over the same binaries write the same bytes.
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

// errUsage is a rejected command line, explained on stderr.
var errUsage = errors.New("usage: sbom -name NAME -created UNIX_SECONDS [-spdx FILE] [-cyclonedx FILE] BINARY...")

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "document name, e.g. winx-<rev>-linux-amd64")
	created := fs.Int64("created", -1, "creation time in Unix seconds (the commit time, for reproducible output)")
	spdxOut := fs.String("spdx", "", "write the SPDX 2.3 JSON document to FILE")
	cdxOut := fs.String("cyclonedx", "", "write the CycloneDX 1.5 JSON document to FILE")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *created < 0 || fs.NArg() == 0 || *spdxOut == "" && *cdxOut == "" {
		return errUsage
	}
	bins, err := readBinaries(fs.Args())
	if err != nil {
		return err
	}
	when := time.Unix(*created, 0).UTC()
	if *spdxOut != "" {
		if err := writeJSON(*spdxOut, spdxDocument(*name, when, bins)); err != nil {
			return err
		}
	}
	if *cdxOut != "" {
		if err := writeJSON(*cdxOut, cycloneDXDocument(*name, when, bins)); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// binary is one released executable as its build information describes it.
type binary struct {
	name      string   // base name: winx, winxd, winx-guardian
	sha256    string   // hex digest of the file
	main      string   // main module path
	version   string   // main module version ("(devel)" without VCS stamps)
	goVersion string   // toolchain, e.g. go1.26.8
	modules   []module // exactly the modules linked in, sorted by path
}

// module is one linked module version, after any replace directive (the
// code that was compiled is the replacement's).
type module struct {
	Path, Version, Sum string
}

// key identifies a module version across binaries.
func (m module) key() string { return m.Path + "@" + m.Version }

// purl is the module's package URL (https://github.com/package-url/purl-spec,
// type golang).
func (m module) purl() string { return "pkg:golang/" + m.Path + "@" + m.Version }

// stdlibPURL is the package URL of the standard library of a toolchain.
func stdlibPURL(goVersion string) string { return "pkg:golang/stdlib@" + goVersion }

func readBinaries(paths []string) ([]binary, error) {
	var bins []binary
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		info, err := buildinfo.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b := binary{
			name: filepath.Base(path), sha256: fmt.Sprintf("%x", sha256.Sum256(data)),
			main: info.Main.Path, version: info.Main.Version, goVersion: info.GoVersion,
		}
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			b.modules = append(b.modules, module{Path: d.Path, Version: d.Version, Sum: d.Sum})
		}
		slices.SortFunc(b.modules, func(x, y module) int { return strings.Compare(x.key(), y.key()) })
		bins = append(bins, b)
	}
	slices.SortFunc(bins, func(x, y binary) int { return strings.Compare(x.name, y.name) })
	return bins, nil
}

// allModules is every module of bins once, sorted.
func allModules(bins []binary) []module {
	seen := map[string]bool{}
	var all []module
	for _, b := range bins {
		for _, m := range b.modules {
			if !seen[m.key()] {
				seen[m.key()] = true
				all = append(all, m)
			}
		}
	}
	slices.SortFunc(all, func(x, y module) int { return strings.Compare(x.key(), y.key()) })
	return all
}

// toolchains is every toolchain of bins once, sorted.
func toolchains(bins []binary) []string {
	var v []string
	for _, b := range bins {
		if !slices.Contains(v, b.goVersion) {
			v = append(v, b.goVersion)
		}
	}
	slices.Sort(v)
	return v
}

// digest names the set of binaries: the SPDX namespace and the CycloneDX
// serial number derive from it, so the same binaries give the same
// identifiers and different ones never share them.
func digest(name string, bins []binary) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", name)
	for _, b := range bins {
		fmt.Fprintf(h, "%s %s\n", b.sha256, b.name)
	}
	return h.Sum(nil)
}
