package evidence

import (
	"errors"
	"strings"
	"testing"
)

func TestRevisionOf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Revision
	}{
		{"empty", "", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "abc", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RevisionOf([]byte(tt.in)); got != tt.want {
				t.Errorf("RevisionOf(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got, err := ParseRevision(string(tt.want)); err != nil || got != tt.want {
				t.Errorf("ParseRevision(%q) = %q, %v, want itself", tt.want, got, err)
			}
		})
	}
}

func TestParseRevisionRejects(t *testing.T) {
	good := string(RevisionOf([]byte("x")))
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no prefix", good[len("sha256:"):]},
		{"uppercase hex", "sha256:" + strings.ToUpper(good[len("sha256:"):])},
		{"uppercase prefix", "SHA256:" + good[len("sha256:"):]},
		{"other algorithm", "sha512:" + good[len("sha256:"):]},
		{"short", good[:len(good)-1]},
		{"long", good + "0"},
		{"space", " " + good[1:]},
		{"trailing newline", good[:len(good)-1] + "\n"},
		{"non hex", good[:len(good)-1] + "g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRevision(tt.in)
			if !errors.Is(err, ErrBadRevision) || got != "" {
				t.Errorf("ParseRevision(%q) = %q, %v, want ErrBadRevision", tt.in, got, err)
			}
		})
	}
}

// TestShortRevision: the short form is a prefix the model can pass back;
// ParseRevisionRef takes it and the full form, and nothing shorter.
func TestShortRevision(t *testing.T) {
	full := RevisionOf([]byte("package main\n"))
	short := full.Short()
	if len(short) != len("sha256:")+ShortRevisionHex || !strings.HasPrefix(string(full), short) {
		t.Fatalf("Short() = %q, want the first %d hex digits of %q", short, ShortRevisionHex, full)
	}
	tests := []struct {
		in   string
		ok   bool
		full bool
	}{
		{short, true, false},
		{string(full), true, true},
		{string(full)[:len(short)-1], false, false},
		{strings.ToUpper(short), false, false},
		{"md5:" + short[7:], false, false},
	}
	for _, tt := range tests {
		r, err := ParseRevisionRef(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseRevisionRef(%q) error = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if err == nil && (r.IsFull() != tt.full || !r.Matches(full)) {
			t.Errorf("ParseRevisionRef(%q) = %q: IsFull %v, Matches(full) %v, want %v, true", tt.in, r, r.IsFull(), r.Matches(full), tt.full)
		}
	}
	if Revision(short).Matches(RevisionOf([]byte("other"))) {
		t.Errorf("%q matches another file's revision", short)
	}
}
