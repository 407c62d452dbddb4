package auth

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/pty/testenv"
)

// goodToken is 40 bytes of visible ASCII, comfortably above MinTokenBytes.
const goodToken = "s3cr3t-T0ken-abcdefghijklmnopqrstuvwxyz1"

// writeTokenFile writes data to name in dir and sets perm exactly (the umask
// would otherwise decide).
func writeTokenFile(t *testing.T, dir, name string, data []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadTokenFileGood(t *testing.T) {
	long := strings.Repeat("a", MaxTokenFileBytes)
	tests := []struct {
		name string
		data string
		want string
	}{
		{"no trailing newline", goodToken, goodToken},
		{"trailing newline", goodToken + "\n", goodToken},
		{"trailing CRLF", goodToken + "\r\n", goodToken},
		{"exactly MinTokenBytes", strings.Repeat("x", MinTokenBytes), strings.Repeat("x", MinTokenBytes)},
		{"exactly MaxTokenFileBytes", long, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTokenFile(t, t.TempDir(), "token", []byte(tt.data), 0o600)
			got, err := LoadTokenFile(path)
			if err != nil {
				t.Fatalf("LoadTokenFile(%q) error = %v, want nil", tt.data, err)
			}
			if string(got) != tt.want {
				t.Errorf("LoadTokenFile(%q) = %q, want %q", tt.data, got, tt.want)
			}
		})
	}
}

func TestLoadTokenFileOwnerOnlyModes(t *testing.T) {
	// Owner bits are the owner's business; only group/other bits are refused.
	for _, perm := range []os.FileMode{0o400, 0o600, 0o700} {
		path := writeTokenFile(t, t.TempDir(), "token", []byte(goodToken), perm)
		if _, err := LoadTokenFile(path); err != nil {
			t.Errorf("LoadTokenFile(mode %#o) = %v, want nil", perm, err)
		}
	}
}

func TestLoadTokenFileRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to load
		want  error
	}{
		{
			name: "mode 0644",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken), 0o644)
			},
			want: ErrTokenFileMode,
		},
		{
			name: "mode 0640",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken), 0o640)
			},
			want: ErrTokenFileMode,
		},
		{
			name: "mode 0604",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken), 0o604)
			},
			want: ErrTokenFileMode,
		},
		{
			name: "mode 0620 group write",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken), 0o620)
			},
			want: ErrTokenFileMode,
		},
		{
			name: "symlink to a good file",
			setup: func(t *testing.T, dir string) string {
				target := writeTokenFile(t, dir, "real", []byte(goodToken), 0o600)
				link := filepath.Join(dir, "link")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return link
			},
			want: ErrTokenFileKind,
		},
		{
			name: "directory",
			setup: func(t *testing.T, dir string) string {
				d := filepath.Join(dir, "tokendir")
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
				return d
			},
			want: ErrTokenFileKind,
		},
		{
			name: "fifo",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "fifo")
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					testenv.Missing(t, "mkfifo: %v", err)
				}
				return p
			},
			want: ErrTokenFileKind,
		},
		{
			name: "token one byte short",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken[:MinTokenBytes-1]+"\n"), 0o600)
			},
			want: ErrTokenTooShort,
		},
		{
			name: "empty file",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", nil, 0o600)
			},
			want: ErrTokenTooShort,
		},
		{
			name: "space inside",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken[:20]+" "+goodToken[20:]), 0o600)
			},
			want: ErrTokenInvalid,
		},
		{
			name: "tab inside",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken[:20]+"\t"+goodToken[20:]), 0o600)
			},
			want: ErrTokenInvalid,
		},
		{
			name: "two trailing newlines",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken+"\n\n"), 0o600)
			},
			want: ErrTokenInvalid,
		},
		{
			name: "non-ASCII byte",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(goodToken+"é"), 0o600)
			},
			want: ErrTokenInvalid,
		},
		{
			name: "one byte over MaxTokenFileBytes",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(strings.Repeat("a", MaxTokenFileBytes+1)), 0o600)
			},
			want: ErrTokenFileTooLong,
		},
		{
			name: "MaxTokenFileBytes token plus newline",
			setup: func(t *testing.T, dir string) string {
				return writeTokenFile(t, dir, "token", []byte(strings.Repeat("a", MaxTokenFileBytes)+"\n"), 0o600)
			},
			want: ErrTokenFileTooLong,
		},
		{
			name: "missing file",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(dir, "absent")
			},
			want: fs.ErrNotExist,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t, t.TempDir())
			// A FIFO without a writer would block a plain open forever; the
			// loader must not, so run it with a watchdog.
			type outcome struct {
				token []byte
				err   error
			}
			done := make(chan outcome, 1)
			go func() {
				tok, err := LoadTokenFile(path)
				done <- outcome{tok, err}
			}()
			var got outcome
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("LoadTokenFile(%q) still blocked after 10s", path)
			}
			if !errors.Is(got.err, tt.want) {
				t.Fatalf("LoadTokenFile(%q) error = %v, want %v", path, got.err, tt.want)
			}
			if got.token != nil {
				t.Errorf("LoadTokenFile(%q) token = %q, want nil", path, got.token)
			}
			var tfe *TokenFileError
			if !errors.As(got.err, &tfe) {
				t.Errorf("LoadTokenFile(%q) error = %T, want *TokenFileError", path, got.err)
			} else if tfe.Path != path {
				t.Errorf("LoadTokenFile(%q) TokenFileError.Path = %q, want %q", path, tfe.Path, path)
			}
			// The token's bytes (or any long piece of them) never reach
			// the error text.
			msg := got.err.Error()
			for _, piece := range []string{goodToken[:12], goodToken[20:32], goodToken[28:]} {
				if strings.Contains(msg, piece) {
					t.Errorf("LoadTokenFile(%q) error %q contains token bytes %q", path, msg, piece)
				}
			}
		})
	}
}

func TestCheckToken(t *testing.T) {
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"good", goodToken, nil},
		{"all printable punctuation", strings.Repeat("!~", MinTokenBytes/2), nil},
		{"short", "abc", ErrTokenTooShort},
		{"empty", "", ErrTokenTooShort},
		{"NUL", goodToken + "\x00", ErrTokenInvalid},
		{"DEL", goodToken + "\x7f", ErrTokenInvalid},
		{"newline inside", goodToken[:10] + "\n" + goodToken[10:], ErrTokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckToken([]byte(tt.token)); !errors.Is(got, tt.want) {
				t.Errorf("CheckToken(%q) = %v, want %v", tt.token, got, tt.want)
			}
		})
	}
}

func TestNewBearerRefusesBadToken(t *testing.T) {
	tests := []struct {
		token string
		want  error
	}{
		{"short", ErrTokenTooShort},
		{goodToken + " x", ErrTokenInvalid},
	}
	for _, tt := range tests {
		b, err := NewBearer([]byte(tt.token))
		if !errors.Is(err, tt.want) || b != nil {
			t.Errorf("NewBearer(%q) = %v, %v, want nil, %v", tt.token, b, err, tt.want)
		}
	}
}

func TestBearerVerifyHeader(t *testing.T) {
	b, err := NewBearer([]byte(goodToken))
	if err != nil {
		t.Fatalf("NewBearer(%q) error = %v", goodToken, err)
	}
	tests := []struct {
		name   string
		header string
		want   bool
	}{
		{"right token", "Bearer " + goodToken, true},
		{"lowercase scheme", "bearer " + goodToken, true},
		{"uppercase scheme", "BEARER " + goodToken, true},
		// RFC 6750: credentials = "Bearer" 1*SP b64token.
		{"two spaces after scheme", "Bearer  " + goodToken, true},
		{"surrounding spaces", "  Bearer " + goodToken + "  ", true},
		{"wrong token", "Bearer " + strings.Repeat("z", len(goodToken)), false},
		{"wrong scheme", "Basic " + goodToken, false},
		{"token as scheme", goodToken, false},
		{"missing header", "", false},
		{"scheme only", "Bearer", false},
		{"scheme and space only", "Bearer ", false},
		{"no space after scheme", "Bearer" + goodToken, false},
		{"tab after scheme", "Bearer\t" + goodToken, false},
		{"prefix of token", "Bearer " + goodToken[:len(goodToken)-1], false},
		{"token plus suffix", "Bearer " + goodToken + "x", false},
		{"token with leading byte", "Bearer x" + goodToken, false},
		{"token then another word", "Bearer " + goodToken + " extra", false},
		{"token twice", "Bearer " + goodToken + goodToken, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.VerifyHeader(tt.header); got != tt.want {
				t.Errorf("VerifyHeader(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestBearerVerify(t *testing.T) {
	b, err := NewBearer([]byte(goodToken))
	if err != nil {
		t.Fatalf("NewBearer(%q) error = %v", goodToken, err)
	}
	tests := []struct {
		presented string
		want      bool
	}{
		{goodToken, true},
		{"", false},
		{goodToken[1:], false},
		{goodToken + "\n", false},
	}
	for _, tt := range tests {
		if got := b.Verify([]byte(tt.presented)); got != tt.want {
			t.Errorf("Verify(%q) = %v, want %v", tt.presented, got, tt.want)
		}
	}
}
