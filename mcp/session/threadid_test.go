package session

import (
	"regexp"
	"strings"
	"testing"
)

func TestNormalizeThreadID(t *testing.T) {
	long := strings.Repeat("a", MaxThreadIDLen+10)
	tests := []struct {
		name string
		in   string
		want string // "" with wantRE means: check the pattern only
		re   string
	}{
		{name: "empty", in: "", want: ""},
		{name: "kept", in: "user_1", want: "user_1"},
		{name: "kept digits", in: "user1", want: "user1"},
		{name: "dash rewritten", in: "user-1", re: `^user1_[0-9a-f]{8}$`},
		{name: "unicode rewritten", in: "thréad", re: `^thrad_[0-9a-f]{8}$`},
		{name: "nothing kept", in: "---", re: `^_[0-9a-f]{8}$`},
		{name: "exactly max", in: strings.Repeat("b", MaxThreadIDLen), want: strings.Repeat("b", MaxThreadIDLen)},
		{name: "too long", in: long, re: `^a{87}_[0-9a-f]{8}$`},
		{name: "spaces and slashes", in: "a b/c", re: `^abc_[0-9a-f]{8}$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NormalizeThreadID(tc.in)
			if tc.re != "" {
				if !regexp.MustCompile(tc.re).MatchString(got) {
					t.Errorf("NormalizeThreadID(%q) = %q, want match of %s", tc.in, got, tc.re)
				}
			} else if got != tc.want {
				t.Errorf("NormalizeThreadID(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > MaxThreadIDLen {
				t.Errorf("NormalizeThreadID(%q) has %d bytes, over %d", tc.in, len(got), MaxThreadIDLen)
			}
			if again := NormalizeThreadID(got); again != got {
				t.Errorf("NormalizeThreadID(%q) = %q, not idempotent on %q", got, again, got)
			}
		})
	}
}

func TestNormalizeThreadIDKeepsLookalikesApart(t *testing.T) {
	seen := map[string]string{}
	for _, in := range []string{"user-1", "user1", "user_1", "user.1", "user 1", "USER1"} {
		got := NormalizeThreadID(in)
		if prev, dup := seen[got]; dup {
			t.Errorf("NormalizeThreadID(%q) = NormalizeThreadID(%q) = %q", in, prev, got)
		}
		seen[got] = in
	}
}

func FuzzNormalizeThreadID(f *testing.F) {
	for _, s := range []string{"", "user-1", "user_1", strings.Repeat("x-", 80), "\x00\xff"} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_]*$`)
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeThreadID(s)
		if len(got) > MaxThreadIDLen || !valid.MatchString(got) {
			t.Fatalf("NormalizeThreadID(%q) = %q: not a valid thread id", s, got)
		}
		if (got == "") != (s == "") {
			t.Fatalf("NormalizeThreadID(%q) = %q: emptiness changed", s, got)
		}
		if NormalizeThreadID(got) != got {
			t.Fatalf("NormalizeThreadID not idempotent on %q", got)
		}
	})
}
