// Package buildid reports the exact build identity of a winx binary: module,
// version, VCS revision and toolchain, as recorded by the go command in the
// binary's build information. It does not stamp anything itself and never
// consults the network or the work tree at run time.
//
// Every process answers a hello with this identity, so a client can tell an
// adapter, a daemon and a guardian built from different commits apart.
package buildid

import (
	"runtime/debug"
	"strings"
)

// stamp, when set at link time, is the version a packager gives the build:
//
//	go build -ldflags "-X winx/cmd/internal/buildid.stamp=v1.4.0-deb1" ./cmd/...
//
// It replaces the module version the go command recorded, which is
// "(devel)" for any build from a work tree, so two builds of one commit that
// a packager tells apart (and every process of the project compares in its
// hellos) are told apart. Unset, the recorded version stands.
var stamp string

// shortRevision is how many hex digits of the revision String prints; the
// full revision stays in Identity.Revision.
const shortRevision = 12

// Identity is what the go command recorded about how a binary was built.
// Fields the build did not record are empty: a binary built with
// -buildvcs=false has no Revision, and one built outside a module has no
// Module.
type Identity struct {
	Module    string // main module path, "winx" for the project's binaries
	Version   string // main module version: "(devel)" or a (pseudo-)version
	Revision  string // full VCS revision (vcs.revision)
	Modified  bool   // the work tree had uncommitted changes (vcs.modified)
	GoVersion string // toolchain that built the binary, e.g. "go1.26.8"
}

// Read returns the identity of the running binary.
func Read() Identity {
	id := fromBuildInfo(debug.ReadBuildInfo())
	if stamp != "" {
		id.Version = stamp
	}
	return id
}

// fromBuildInfo is Read without the process: ok is false when the binary
// carries no build information at all.
func fromBuildInfo(info *debug.BuildInfo, ok bool) Identity {
	if !ok || info == nil {
		return Identity{}
	}
	id := Identity{
		Module:    info.Main.Path,
		Version:   info.Main.Version,
		GoVersion: info.GoVersion,
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			id.Revision = s.Value
		case "vcs.modified":
			id.Modified = s.Value == "true"
		}
	}
	return id
}

// String renders the identity on one line, e.g.
//
//	winx (devel) rev 1a2b3c4d5e6f go1.26.8
//	winx v0.0.0-20261130024000-1a2b3c4d5e6f+dirty rev 1a2b3c4d5e6f+dirty go1.26.8
//
// Missing fields print as "unknown" so the line always has the same shape.
func (id Identity) String() string {
	var b strings.Builder
	b.WriteString(orUnknown(id.Module))
	b.WriteByte(' ')
	b.WriteString(orUnknown(id.Version))
	b.WriteString(" rev ")
	rev := id.Revision
	if len(rev) > shortRevision {
		rev = rev[:shortRevision]
	}
	b.WriteString(orUnknown(rev))
	if id.Modified {
		b.WriteString("+dirty")
	}
	b.WriteByte(' ')
	b.WriteString(orUnknown(id.GoVersion))
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
