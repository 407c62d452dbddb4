package buildid

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want Identity
		str  string
	}{
		{
			name: "vcs clean",
			info: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "winx", Version: "(devel)"},
				Settings: []debug.BuildSetting{
					{Key: "-trimpath", Value: "true"},
					{Key: "vcs", Value: "git"},
					{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"},
					{Key: "vcs.modified", Value: "false"},
				},
			},
			ok: true,
			want: Identity{
				Module:    "winx",
				Version:   "(devel)",
				Revision:  "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d",
				GoVersion: "go1.26.8",
			},
			str: "winx (devel) rev 1a2b3c4d5e6f go1.26.8",
		},
		{
			name: "vcs dirty",
			info: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "winx", Version: "v0.0.0-20261130024000-1a2b3c4d5e6f+dirty"},
				Settings: []debug.BuildSetting{
					{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"},
					{Key: "vcs.modified", Value: "true"},
				},
			},
			ok: true,
			want: Identity{
				Module:    "winx",
				Version:   "v0.0.0-20261130024000-1a2b3c4d5e6f+dirty",
				Revision:  "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d",
				Modified:  true,
				GoVersion: "go1.26.8",
			},
			str: "winx v0.0.0-20261130024000-1a2b3c4d5e6f+dirty rev 1a2b3c4d5e6f+dirty go1.26.8",
		},
		{
			name: "no vcs",
			info: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "winx", Version: "(devel)"},
			},
			ok:   true,
			want: Identity{Module: "winx", Version: "(devel)", GoVersion: "go1.26.8"},
			str:  "winx (devel) rev unknown go1.26.8",
		},
		{
			name: "short revision kept whole",
			info: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "winx", Version: "(devel)"},
				Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}},
			},
			ok:   true,
			want: Identity{Module: "winx", Version: "(devel)", Revision: "abc123", GoVersion: "go1.26.8"},
			str:  "winx (devel) rev abc123 go1.26.8",
		},
		{
			name: "no build info",
			ok:   false,
			want: Identity{},
			str:  "unknown unknown rev unknown unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.info, tt.ok)
			if got != tt.want {
				t.Errorf("fromBuildInfo() = %+v, want %+v", got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
		})
	}
}

func TestReadGoVersion(t *testing.T) {
	// A test binary carries build information too; its toolchain is ours.
	if got, want := Read().GoVersion, runtime.Version(); got != want {
		t.Errorf("Read().GoVersion = %q, want %q", got, want)
	}
}

// TestStampReplacesVersion: a version stamped at link time is the version
// the identity reports, so two builds a packager stamped differently differ.
func TestStampReplacesVersion(t *testing.T) {
	defer func(s string) { stamp = s }(stamp)
	stamp = ""
	plain := Read()
	stamp = "v9.9.9-test"
	got := Read()
	if got.Version != "v9.9.9-test" {
		t.Errorf("stamped Version = %q, want v9.9.9-test", got.Version)
	}
	got.Version = plain.Version
	if got != plain {
		t.Errorf("the stamp changed more than the version: %+v vs %+v", got, plain)
	}
}
