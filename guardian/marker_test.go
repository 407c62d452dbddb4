package guardian

import (
	"strings"
	"testing"
)

func TestMarkerScanner(t *testing.T) {
	const nonce = "n0nce"
	real := "\x1b]6973;W;" + nonce + ";3;/tmp/a;b\a"
	forged := "\x1b]6973;W;other;0;/\a"
	tests := []struct {
		name    string
		chunks  []string
		wantOut string
		want    []marker
	}{
		{"plain", []string{"hello\n"}, "hello\n", nil},
		{"marker", []string{"out" + real + "after"}, "outafter", []marker{{false, 3, "/tmp/a;b"}}},
		{"split everywhere", strings.Split("x"+real+"y", ""), "xy", []marker{{false, 3, "/tmp/a;b"}}},
		{"forged is output", []string{"a" + forged + "b"}, "a" + forged + "b", nil},
		{"bad code is output", []string{"\x1b]6973;W;" + nonce + ";x;/\a"}, "\x1b]6973;W;" + nonce + ";x;/\a", nil},
		{"two markers", []string{real + real}, "", []marker{{false, 3, "/tmp/a;b"}, {false, 3, "/tmp/a;b"}}},
		{"start marker", []string{"ps1\x1b]6973;S;" + nonce + "\aout"}, "ps1out", []marker{{start: true}}},
		{"forged start", []string{"\x1b]6973;S;zzz\a"}, "\x1b]6973;S;zzz\a", nil},
		{"prefix-like tail released", []string{"abc\x1b]69", "Z"}, "abc\x1b]69Z", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &markerScanner{nonce: nonce}
			var out strings.Builder
			var got []marker
			for _, c := range tc.chunks {
				s.scan([]byte(c), func(p []byte) { out.Write(p) }, func(m marker) { got = append(got, m) })
			}
			if out.String() != tc.wantOut {
				t.Errorf("output = %q, want %q", out.String(), tc.wantOut)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("markers = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("marker[%d] = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestMarkerScannerRunaway(t *testing.T) {
	s := &markerScanner{nonce: "n"}
	var out strings.Builder
	in := "\x1b]6973;W;" + strings.Repeat("x", maxMarkerLen+10)
	s.scan([]byte(in), func(p []byte) { out.Write(p) }, func(marker) { t.Error("unexpected marker") })
	if len(s.pending) >= maxMarkerLen {
		t.Errorf("pending holds %d bytes, want fewer than %d", len(s.pending), maxMarkerLen)
	}
}

func FuzzMarkerScanner(f *testing.F) {
	f.Add([]byte("out\x1b]6973;W;n;0;/tmp\aafter"), 3)
	f.Add([]byte("\x1b]6973;W;"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		s := &markerScanner{nonce: "n"}
		total := 0
		for i := 0; i < len(in); i += chunk {
			end := min(i+chunk, len(in))
			s.scan(in[i:end], func(p []byte) { total += len(p) }, func(marker) {})
		}
		if total+len(s.pending) > len(in) {
			t.Fatalf("emitted %d + pending %d bytes from %d", total, len(s.pending), len(in))
		}
		if len(s.pending) > maxMarkerLen {
			t.Fatalf("pending %d bytes", len(s.pending))
		}
	})
}
