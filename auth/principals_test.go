package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tokens used below; each is at least MinTokenBytes of visible ASCII, and
// errors and String() are checked never to contain one.
const (
	tokenAlice = "alice-TOKEN-0123456789abcdefghijklmnop"
	tokenBob   = "bob-TOKEN-0123456789abcdefghijklmnopqr"
	tokenEnv   = "env-TOKEN-0123456789abcdefghijklmnopqr"
	tokenShort = "short-TOKEN"
)

var allTokens = []string{tokenAlice, tokenBob, tokenEnv, tokenShort}

var testKnownTools = []string{"Initialize", "BashCommand", "ReadFiles", "EditFiles", "ContextSave", "ReadImage", "CodeMap"}

var testProfiles = map[string][]string{
	"full":      testKnownTools,
	"coding":    {"Initialize", "BashCommand", "ReadFiles", "EditFiles", "CodeMap"},
	"read-only": {"Initialize", "ReadFiles", "ReadImage", "CodeMap"},
	"terminal":  {"Initialize", "BashCommand"},
}

func testOptions(env map[string]string) PrincipalOptions {
	return PrincipalOptions{
		KnownTools: testKnownTools,
		Profiles:   testProfiles,
		Getenv:     func(k string) string { return env[k] },
	}
}

// fixture is a directory with token files alice (0600), bob (0600),
// short (0600), open (0644, holding tokenBob) and link (a symlink to
// alice).
type fixture struct{ dir string }

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	writeTokenFile(t, dir, "alice", []byte(tokenAlice+"\n"), 0o600)
	writeTokenFile(t, dir, "bob", []byte(tokenBob), 0o600)
	writeTokenFile(t, dir, "short", []byte(tokenShort), 0o600)
	writeTokenFile(t, dir, "open", []byte(tokenBob), 0o644)
	if err := os.Symlink(filepath.Join(dir, "alice"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return fixture{dir: dir}
}

// config writes a principal file with mode 0600; "$DIR" in text becomes
// the fixture directory.
func (f fixture) config(t *testing.T, text string) string {
	t.Helper()
	return writeTokenFile(t, f.dir, "principals.toml", []byte(strings.ReplaceAll(text, "$DIR", f.dir)), 0o600)
}

// checkNoTokens fails if s holds any test token.
func checkNoTokens(t *testing.T, what, s string) {
	t.Helper()
	for _, tok := range allTokens {
		if strings.Contains(s, tok) {
			t.Errorf("%s %q contains a token", what, s)
		}
	}
}

const twoPrincipals = `# two callers
[[principals]]
name = "alice"
token_file = "$DIR/alice"
tool_profile = "coding"

[[principals]]
name = "bob_2"
token_file = "bob"   # relative to the config file
allowed_tools = ["Initialize", "BashCommand"]

[[principals]]
name = "env-user"
token_env = "WINX_ENV_TOKEN"
`

func TestLoadPrincipals(t *testing.T) {
	f := newFixture(t)
	path := f.config(t, twoPrincipals)
	set, err := LoadPrincipals(path, testOptions(map[string]string{"WINX_ENV_TOKEN": tokenEnv}))
	if err != nil {
		t.Fatalf("LoadPrincipals: %v", err)
	}
	if got, want := set.Names(), []string{"alice", "bob_2", "env-user"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}

	tests := []struct {
		name    string
		header  string
		want    string // principal name, "" for none
		profile string
		tools   []string
	}{
		{"alice", "Bearer " + tokenAlice, "alice", "coding", testProfiles["coding"]},
		{"bob", "Bearer " + tokenBob, "bob_2", "", []string{"Initialize", "BashCommand"}},
		{"env default profile", "Bearer " + tokenEnv, "env-user", "full", testKnownTools},
		{"scheme case and spaces", "  bearer   " + tokenAlice + " ", "alice", "coding", testProfiles["coding"]},
		{"wrong token", "Bearer " + strings.Repeat("x", len(tokenAlice)), "", "", nil},
		{"token prefix", "Bearer " + tokenAlice[:len(tokenAlice)-1], "", "", nil},
		{"token plus byte", "Bearer " + tokenAlice + "x", "", "", nil},
		{"basic scheme", "Basic " + tokenAlice, "", "", nil},
		{"no scheme", tokenAlice, "", "", nil},
		{"empty", "", "", "", nil},
		{"bearer only", "Bearer", "", "", nil},
		{"bearer empty", "Bearer ", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := set.Authenticate(tt.header)
			if tt.want == "" {
				if ok || p != nil {
					t.Fatalf("Authenticate(%q) = %v, %v; want no principal", tt.header, p, ok)
				}
				return
			}
			if !ok || p == nil {
				t.Fatalf("Authenticate(%q) = %v, %v; want %q", tt.header, p, ok, tt.want)
			}
			if p.Name != tt.want || p.Profile != tt.profile || !slices.Equal(p.AllowedTools, tt.tools) {
				t.Errorf("Authenticate(%q) = %#v, want %q profile %q tools %q", tt.header, p, tt.want, tt.profile, tt.tools)
			}
			for _, s := range []string{p.String(), fmt.Sprint(p), fmt.Sprintf("%v %+v %#v %s", *p, *p, *p, p)} {
				checkNoTokens(t, "formatted principal", s)
			}
			js, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			checkNoTokens(t, "JSON principal", string(js))
		})
	}

	t.Run("result is a copy", func(t *testing.T) {
		p, _ := set.Authenticate("Bearer " + tokenAlice)
		p.AllowedTools[0] = "Mutated"
		p.Token[0] = '!'
		q, ok := set.Authenticate("Bearer " + tokenAlice)
		if !ok || q.AllowedTools[0] != "Initialize" {
			t.Errorf("Authenticate after mutating a result = %v, %v", q, ok)
		}
		names := set.Names()
		names[0] = "x"
		if set.Names()[0] != "alice" {
			t.Errorf("Names() shares its slice")
		}
	})
}

func TestPrincipalString(t *testing.T) {
	p := Principal{Name: "alice", Token: []byte(tokenAlice), Profile: "terminal", AllowedTools: []string{"Initialize", "BashCommand"}}
	if got, want := p.String(), `principal "alice" profile "terminal" tools [Initialize BashCommand]`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	checkNoTokens(t, "GoString", p.GoString())
	checkNoTokens(t, "%+v", fmt.Sprintf("%+v", p))
	checkNoTokens(t, "%#v", fmt.Sprintf("%#v", &p))
}

func TestLoadPrincipalsWeakToken(t *testing.T) {
	f := newFixture(t)
	for _, src := range []string{`token_file = "$DIR/short"`, `token_env = "SHORT"`} {
		path := f.config(t, "[[principals]]\nname = \"a\"\n"+src+"\n")
		env := map[string]string{"SHORT": tokenShort}
		_, err := LoadPrincipals(path, testOptions(env))
		if !errors.Is(err, ErrTokenTooShort) {
			t.Errorf("%s: LoadPrincipals = %v, want ErrTokenTooShort", src, err)
		}
		opts := testOptions(env)
		opts.AllowWeakToken = true
		set, err := LoadPrincipals(path, opts)
		if err != nil {
			t.Fatalf("%s with AllowWeakToken: %v", src, err)
		}
		if p, ok := set.Authenticate("Bearer " + tokenShort); !ok || p.Name != "a" {
			t.Errorf("%s: Authenticate(short token) = %v, %v", src, p, ok)
		}
	}
	// Weak still means at least one byte of visible ASCII.
	opts := testOptions(map[string]string{"BAD": "has space"})
	opts.AllowWeakToken = true
	path := f.config(t, "[[principals]]\nname = \"a\"\ntoken_env = \"BAD\"\n")
	if _, err := LoadPrincipals(path, opts); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("weak token with a space: LoadPrincipals = %v, want ErrTokenInvalid", err)
	}
	empty := writeTokenFile(t, f.dir, "empty", []byte("\n"), 0o600)
	path = f.config(t, "[[principals]]\nname = \"a\"\ntoken_file = \""+empty+"\"\n")
	if _, err := LoadPrincipals(path, opts); !errors.Is(err, ErrTokenEmpty) {
		t.Errorf("weak empty token file: LoadPrincipals = %v, want ErrTokenEmpty", err)
	}
}

func TestLoadPrincipalsErrors(t *testing.T) {
	const alice = "[[principals]]\nname = \"alice\"\ntoken_file = \"$DIR/alice\"\n"
	env := map[string]string{"TOK": tokenEnv, "EMPTY": "", "SHORT": tokenShort, "DUP": tokenAlice}
	tests := []struct {
		name      string
		text      string
		line, col int    // position in the error, 0 for none
		who       string // principal named in the error
		want      error  // sentinel, or nil for a *TOMLError
		msg       string // substring of the message
	}{
		{"malformed toml", alice + "tool_profile = coding\n", 4, 16, "", nil, "strings must be quoted"},
		{"key outside table", "name = \"x\"\n" + alice, 1, 1, "", nil, "outside any [[table]]"},
		{"duplicate key", alice + "name = \"b\"\n", 4, 1, "", nil, "duplicate key"},
		{"no principals", "# nothing\n", 0, 0, "", ErrNoPrincipals, "defines no"},
		{"other table", alice + "[[admins]]\n", 4, 1, "", ErrUnknownTable, "[[admins]]"},
		{"unknown key", alice + "role = \"admin\"\n", 4, 1, "alice", ErrUnknownKey, `unknown key "role"`},
		{"token key is unknown", alice + "token = \"" + tokenBob + "\"\n", 4, 1, "alice", ErrUnknownKey, `"token"`},
		{"name not a string", "[[principals]]\nname = 7\n", 2, 1, "", ErrValueType, "name must be a string, not an integer"},
		{"tools not an array", alice + "allowed_tools = \"Initialize\"\n", 4, 1, "alice", ErrValueType, "allowed_tools must be an array of strings"},
		{"missing name", "[[principals]]\ntoken_env = \"TOK\"\n", 1, 1, "", ErrPrincipalName, "name is missing"},
		{"empty name", "[[principals]]\nname = \"\"\n", 2, 1, "", ErrPrincipalName, "ASCII letters"},
		{"bad name", "[[principals]]\nname = \"al ice\"\n", 2, 1, "", ErrPrincipalName, "ASCII letters"},
		{"unicode name", "[[principals]]\nname = \"alicé\"\n", 2, 1, "", ErrPrincipalName, "ASCII letters"},
		{"long name", "[[principals]]\nname = \"" + strings.Repeat("a", MaxPrincipalNameBytes+1) + "\"\n", 2, 1, "", ErrPrincipalName, "1 to 64"},
		{"duplicate name", alice + "[[principals]]\nname = \"alice\"\ntoken_env = \"TOK\"\n", 4, 1, "alice", ErrDuplicateName, "duplicate principal name"},
		{"duplicate token", alice + "[[principals]]\nname = \"bob\"\ntoken_env = \"DUP\"\n", 4, 1, "bob", ErrDuplicateToken, `same as principal "alice"`},
		{"duplicate token file", alice + "[[principals]]\nname = \"bob\"\ntoken_file = \"alice\"\n", 4, 1, "bob", ErrDuplicateToken, "share a token"},
		{"both token sources", "[[principals]]\nname = \"a\"\ntoken_file = \"$DIR/alice\"\ntoken_env = \"TOK\"\n", 4, 1, "a", ErrTokenSource, "both are set"},
		{"neither token source", "[[principals]]\nname = \"a\"\n", 1, 1, "a", ErrTokenSource, "neither is set"},
		{"empty token_file", "[[principals]]\nname = \"a\"\ntoken_file = \"\"\n", 3, 1, "a", ErrTokenSource, "token_file is empty"},
		{"empty token_env", "[[principals]]\nname = \"a\"\ntoken_env = ''\n", 3, 1, "a", ErrTokenSource, "token_env is empty"},
		{"missing env", "[[principals]]\nname = \"a\"\ntoken_env = \"NOPE\"\n", 3, 1, "a", ErrTokenEnvUnset, `"NOPE"`},
		{"empty env", "[[principals]]\nname = \"a\"\ntoken_env = \"EMPTY\"\n", 3, 1, "a", ErrTokenEnvUnset, `"EMPTY"`},
		{"short env token", "[[principals]]\nname = \"a\"\ntoken_env = \"SHORT\"\n", 3, 1, "a", ErrTokenTooShort, "shorter than 32"},
		{"short token file", "[[principals]]\nname = \"a\"\ntoken_file = \"short\"\n", 3, 1, "a", ErrTokenTooShort, "shorter than 32"},
		{"token file 0644", "[[principals]]\nname = \"a\"\ntoken_file = \"open\"\n", 3, 1, "a", ErrTokenFileMode, "chmod 600"},
		{"symlinked token file", "[[principals]]\nname = \"a\"\ntoken_file = \"$DIR/link\"\n", 3, 1, "a", ErrTokenFileKind, "not a symlink"},
		{"missing token file", "[[principals]]\nname = \"a\"\ntoken_file = \"nope\"\n", 3, 1, "a", os.ErrNotExist, "nope"},
		{"token file is a dir", "[[principals]]\nname = \"a\"\ntoken_file = \".\"\n", 3, 1, "a", ErrTokenFileKind, "regular file"},
		{"profile and tools", alice + "tool_profile = \"coding\"\nallowed_tools = [\"Initialize\"]\n", 5, 1, "alice", ErrToolSelection, "not both"},
		{"unknown profile", alice + "tool_profile = \"admin\"\n", 4, 1, "alice", ErrUnknownProfile, `"admin"`},
		{"empty tools", alice + "allowed_tools = []\n", 4, 1, "alice", ErrEmptyAllowedTools, "empty"},
		{"unknown tool", alice + "allowed_tools = [\"Initialize\", \"Shell\"]\n", 4, 1, "alice", ErrUnknownTool, `"Shell"`},
		{"tool case matters", alice + "allowed_tools = [\"bashcommand\"]\n", 4, 1, "alice", ErrUnknownTool, `"bashcommand"`},
		{"duplicate tool", alice + "allowed_tools = [\"Initialize\", \"Initialize\"]\n", 4, 1, "alice", ErrDuplicateTool, "twice"},
		{"second principal bad", alice + "\n[[principals]]\nname = \"bob\"\ntoken_env = \"TOK\"\nallowed_tools = [\"Nope\"]\n", 8, 1, "bob", ErrUnknownTool, `"Nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			path := f.config(t, tt.text)
			set, err := LoadPrincipals(path, testOptions(env))
			var pe *PrincipalError
			if !errors.As(err, &pe) {
				t.Fatalf("LoadPrincipals = %v, %v; want a *PrincipalError", set, err)
			}
			if set != nil {
				t.Errorf("LoadPrincipals returned a set with an error")
			}
			if pe.Path != path || pe.Line != tt.line || pe.Col != tt.col || pe.Name != tt.who {
				t.Errorf("error at %s:%d:%d principal %q, want %s:%d:%d principal %q (%v)", pe.Path, pe.Line, pe.Col, pe.Name, path, tt.line, tt.col, tt.who, err)
			}
			if tt.want == nil {
				var te *TOMLError
				if !errors.As(err, &te) {
					t.Errorf("error %v is not a *TOMLError", err)
				}
			} else if !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q does not contain %q", msg, tt.msg)
			}
			pos := path
			if tt.line > 0 {
				pos = fmt.Sprintf("%s:%d:%d: ", path, tt.line, tt.col)
			}
			if !strings.HasPrefix(msg, "auth: principal config "+pos) {
				t.Errorf("error %q does not start with the position %q", msg, pos)
			}
			if tt.who != "" && !strings.Contains(msg, fmt.Sprintf("principal %q", tt.who)) {
				t.Errorf("error %q does not name principal %q", msg, tt.who)
			}
			checkNoTokens(t, "error", msg)
		})
	}
}

func TestLoadPrincipalsConfigFile(t *testing.T) {
	const text = "[[principals]]\nname = \"a\"\ntoken_env = \"TOK\"\n"
	opts := testOptions(map[string]string{"TOK": tokenEnv})
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  error
	}{
		{"mode 0644", func(t *testing.T, dir string) string {
			return writeTokenFile(t, dir, "p.toml", []byte(text), 0o644)
		}, ErrConfigFileMode},
		{"mode 0640", func(t *testing.T, dir string) string {
			return writeTokenFile(t, dir, "p.toml", []byte(text), 0o640)
		}, ErrConfigFileMode},
		{"symlink", func(t *testing.T, dir string) string {
			real := writeTokenFile(t, dir, "real.toml", []byte(text), 0o600)
			link := filepath.Join(dir, "p.toml")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, ErrConfigFileKind},
		{"directory", func(t *testing.T, dir string) string { return dir }, ErrConfigFileKind},
		{"missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope.toml") }, os.ErrNotExist},
		{"too large", func(t *testing.T, dir string) string {
			return writeTokenFile(t, dir, "p.toml", []byte(text+strings.Repeat("#\n", MaxTOMLBytes/2)), 0o600)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t, t.TempDir())
			set, err := LoadPrincipals(path, opts)
			if err == nil {
				t.Fatalf("LoadPrincipals = %v, nil; want an error", set)
			}
			if tt.want == nil {
				var te *TOMLError
				if !errors.As(err, &te) || !strings.Contains(err.Error(), "larger than 1 MiB") {
					t.Errorf("LoadPrincipals = %v, want a too-large *TOMLError", err)
				}
			} else if !errors.Is(err, tt.want) {
				t.Errorf("LoadPrincipals = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
		})
	}
	t.Run("mode 0400 is fine", func(t *testing.T) {
		path := writeTokenFile(t, t.TempDir(), "p.toml", []byte(text), 0o400)
		if _, err := LoadPrincipals(path, opts); err != nil {
			t.Errorf("LoadPrincipals(0400) = %v", err)
		}
	})
}

// TestLoadPrincipalsNoProfiles checks that missing options fail closed.
func TestLoadPrincipalsNoProfiles(t *testing.T) {
	f := newFixture(t)
	path := f.config(t, "[[principals]]\nname = \"a\"\ntoken_file = \"alice\"\n")
	if _, err := LoadPrincipals(path, PrincipalOptions{}); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("LoadPrincipals(no profiles) = %v, want ErrUnknownProfile", err)
	}
	path = f.config(t, "[[principals]]\nname = \"a\"\ntoken_file = \"alice\"\nallowed_tools = [\"Initialize\"]\n")
	if _, err := LoadPrincipals(path, PrincipalOptions{}); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("LoadPrincipals(no known tools) = %v, want ErrUnknownTool", err)
	}
}

// TestLoadPrincipalsGetenvDefault checks that a nil Getenv reads the
// process environment.
func TestLoadPrincipalsGetenvDefault(t *testing.T) {
	t.Setenv("WINX_TEST_PRINCIPAL_TOKEN", tokenEnv)
	f := newFixture(t)
	path := f.config(t, "[[principals]]\nname = \"a\"\ntoken_env = \"WINX_TEST_PRINCIPAL_TOKEN\"\n")
	set, err := LoadPrincipals(path, PrincipalOptions{Profiles: testProfiles})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Authenticate("Bearer " + tokenEnv); !ok {
		t.Errorf("Authenticate(env token) failed")
	}
}
