package operator

import (
	"bytes"
	"testing"
)

// TestDetachScanner: Ctrl-] then d detaches, Ctrl-] twice sends one Ctrl-],
// and Ctrl-] before any other key sends both; the sequence may be split
// over two reads of the terminal.
func TestDetachScanner(t *testing.T) {
	tests := []struct {
		name   string
		reads  []string
		send   string
		detach bool
	}{
		{"plain keys", []string{"ls\r"}, "ls\r", false},
		{"detach", []string{"ab\x1dd"}, "ab", true},
		{"detach split", []string{"ab\x1d", "d"}, "ab", true},
		{"capital D", []string{"\x1dD"}, "", true},
		{"doubled escape", []string{"\x1d\x1dx"}, "\x1dx", false},
		{"escape then other", []string{"\x1dq"}, "\x1dq", false},
		{"keys after detach dropped", []string{"\x1ddrm\r"}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d detachScanner
			var sent []byte
			detach := false
			for _, r := range tc.reads {
				s, det := d.feed([]byte(r))
				sent = append(sent, s...)
				if det {
					detach = true
					break
				}
			}
			if !bytes.Equal(sent, []byte(tc.send)) || detach != tc.detach {
				t.Errorf("feed(%q) = %q, %v; want %q, %v", tc.reads, sent, detach, tc.send, tc.detach)
			}
		})
	}
}
