package auth

// Principals: the named callers of the HTTP endpoint, each with its own
// bearer token and tool set, read from a TOML file (see toml.go for the
// subset) of [[principals]] tables:
//
//	[[principals]]
//	name = "ci"                 # ASCII letters, digits, _ and -; unique
//	token_file = "/etc/winx/ci" # or token_env = "WINX_CI_TOKEN", not both
//	tool_profile = "coding"     # default "full"; or allowed_tools, not both
//
//	[[principals]]
//	name = "ops"
//	token_env = "WINX_OPS_TOKEN"
//	allowed_tools = ["Initialize", "BashCommand"]
//	allowed_roots = ["/srv/ops"] # only these directories (see roots.go)
//
// Loading fails closed: any doubt about the file, a token or a tool name is
// an error that names the principal and the line, and no principal is
// returned.

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultToolProfile is the profile of a principal that names neither
// tool_profile nor allowed_tools.
const DefaultToolProfile = "full"

// MaxPrincipalNameBytes bounds a principal's name.
const MaxPrincipalNameBytes = 64

// principalTable is the only table name the principal file may use.
const principalTable = "principals"

// Keys of a [[principals]] table.
const (
	keyName         = "name"
	keyTokenFile    = "token_file"
	keyTokenEnv     = "token_env"
	keyToolProfile  = "tool_profile"
	keyAllowedTools = "allowed_tools"
	keyAllowedRoots = "allowed_roots"
)

// Sentinel errors for the principal file, always carried inside a
// *PrincipalError. Token problems use the token sentinels (ErrTokenTooShort,
// ErrTokenInvalid, ErrTokenEmpty, ErrTokenFileKind, ErrTokenFileMode, ...).
var (
	ErrConfigFileKind    = errors.New("auth: principal config must be a regular file, not a symlink")
	ErrConfigFileMode    = errors.New("auth: principal config must not be readable or writable by group or others (chmod 600)")
	ErrNoPrincipals      = errors.New("auth: principal config defines no [[principals]]")
	ErrUnknownTable      = errors.New("auth: only [[principals]] tables are allowed")
	ErrUnknownKey        = errors.New("auth: unknown key")
	ErrValueType         = errors.New("auth: wrong value type")
	ErrPrincipalName     = errors.New("auth: principal name must be 1 to 64 ASCII letters, digits, _ or -")
	ErrDuplicateName     = errors.New("auth: duplicate principal name")
	ErrTokenSource       = errors.New("auth: principal needs exactly one of token_file and token_env")
	ErrTokenEnvUnset     = errors.New("auth: token_env names an unset or empty variable")
	ErrDuplicateToken    = errors.New("auth: principals share a token")
	ErrToolSelection     = errors.New("auth: principal may set tool_profile or allowed_tools, not both")
	ErrUnknownProfile    = errors.New("auth: unknown tool profile")
	ErrEmptyAllowedTools = errors.New("auth: allowed_tools is empty")
	ErrUnknownTool       = errors.New("auth: unknown tool")
	ErrDuplicateTool     = errors.New("auth: tool listed twice")
)

// PrincipalError reports a principal file that LoadPrincipals refused.
// Err is a *TOMLError, a *TokenFileError or wraps one of the sentinels
// above; its message never holds token bytes.
type PrincipalError struct {
	Path      string // the principal config file
	Line, Col int    // 1-based position in it; 0 when the file as a whole is at fault
	Name      string // the principal's name, "" when not (yet) known
	Err       error
}

func (e *PrincipalError) Error() string {
	var b strings.Builder
	b.WriteString("auth: principal config ")
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	if e.Name != "" {
		b.WriteString(": principal " + strconv.Quote(e.Name))
	}
	b.WriteString(": ")
	if te, ok := e.Err.(*TOMLError); ok {
		// The position is already in front.
		b.WriteString("invalid TOML: " + te.Msg)
	} else {
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "auth: "))
	}
	return b.String()
}

func (e *PrincipalError) Unwrap() error { return e.Err }

// Principal is one authenticated caller.
type Principal struct {
	Name string
	// Token is the bearer token. It is never printed: String and GoString
	// leave it out, and it is skipped by encoding/json.
	Token []byte `json:"-"`
	// Profile is the tool_profile name, "" when allowed_tools gave an
	// exact list.
	Profile string
	// AllowedTools is the effective tool list: the profile's tools or the
	// exact allowed_tools list.
	AllowedTools []string
	// AllowedRoots are the canonical directories the principal may
	// Initialize or reach with file tools; nil means unrestricted.
	AllowedRoots []string
}

// String describes the principal without its token.
func (p Principal) String() string {
	s := "principal " + strconv.Quote(p.Name)
	if p.Profile != "" {
		s += " profile " + strconv.Quote(p.Profile)
	}
	return s + " tools [" + strings.Join(p.AllowedTools, " ") + "]"
}

// GoString keeps %#v from printing the token.
func (p Principal) GoString() string {
	return fmt.Sprintf("auth.Principal{Name:%q, Profile:%q, AllowedTools:%#v}", p.Name, p.Profile, p.AllowedTools)
}

func (p Principal) clone() Principal {
	p.Token = slices.Clone(p.Token)
	p.AllowedTools = slices.Clone(p.AllowedTools)
	p.AllowedRoots = slices.Clone(p.AllowedRoots)
	return p
}

// PrincipalOptions configures LoadPrincipals.
type PrincipalOptions struct {
	// AllowWeakToken accepts tokens shorter than MinTokenBytes (still at
	// least one byte of visible ASCII).
	AllowWeakToken bool
	// KnownTools are the tool names allowed_tools may list (exact,
	// case-sensitive). Nil means none: every allowed_tools entry is refused.
	KnownTools []string
	// Profiles maps tool_profile names to their tools. A principal's
	// profile, including DefaultToolProfile, must be a key.
	Profiles map[string][]string
	// Getenv reads token_env variables; nil means os.Getenv.
	Getenv func(string) string
}

// PrincipalSet is the loaded principal file. It is immutable and safe for
// concurrent use.
type PrincipalSet struct {
	// Invariant: non-empty; digests[i] is the SHA-256 of principals[i].Token;
	// names and digests are unique.
	principals []Principal
	digests    [][sha256.Size]byte
}

// LoadPrincipals reads the principal file at path. The file must be a
// regular file (a symlink is refused, not followed) without group or other
// permission bits, at most MaxTOMLBytes long. A relative token_file is taken
// relative to the config file's directory. Errors are *PrincipalError.
func LoadPrincipals(path string, opts PrincipalOptions) (*PrincipalSet, error) {
	data, err := readPrivateFile(path, MaxTOMLBytes, ErrConfigFileKind, ErrConfigFileMode)
	if err != nil {
		return nil, &PrincipalError{Path: path, Err: err}
	}
	doc, err := parseTOML(data)
	if err != nil {
		te := err.(*TOMLError)
		return nil, &PrincipalError{Path: path, Line: te.Line, Col: te.Col, Err: te}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	l := principalLoader{path: path, dir: filepath.Dir(path), opts: opts}
	set := &PrincipalSet{}
	names := make(map[string]bool)
	owners := make(map[[sha256.Size]byte]string)
	for _, t := range doc.tables {
		if t.name != principalTable {
			return nil, l.errAt(t.line, t.col, "", fmt.Errorf("%w (got [[%s]])", ErrUnknownTable, t.name))
		}
		p, err := l.principal(t)
		if err != nil {
			return nil, err
		}
		if names[p.Name] {
			return nil, l.errAt(t.line, t.col, p.Name, ErrDuplicateName)
		}
		names[p.Name] = true
		digest := sha256.Sum256(p.Token)
		if other, dup := owners[digest]; dup {
			return nil, l.errAt(t.line, t.col, p.Name, fmt.Errorf("%w (same as principal %q)", ErrDuplicateToken, other))
		}
		owners[digest] = p.Name
		set.principals = append(set.principals, p)
		set.digests = append(set.digests, digest)
	}
	if len(set.principals) == 0 {
		return nil, &PrincipalError{Path: path, Err: ErrNoPrincipals}
	}
	return set, nil
}

// principalLoader turns [[principals]] tables into Principals.
type principalLoader struct {
	path string // the config file, for errors
	dir  string // its directory, for relative token files
	opts PrincipalOptions
}

func (l *principalLoader) errAt(line, col int, name string, err error) *PrincipalError {
	return &PrincipalError{Path: l.path, Line: line, Col: col, Name: name, Err: err}
}

func (l *principalLoader) principal(t *tomlTable) (Principal, error) {
	// Types and unknown keys first, in file order, so the first problem
	// in the file is the one reported.
	for _, key := range t.keys {
		v := t.vals[key]
		want := tomlString
		switch key {
		case keyName, keyTokenFile, keyTokenEnv, keyToolProfile:
		case keyAllowedTools, keyAllowedRoots:
			want = tomlArray
		default:
			return Principal{}, l.errAt(v.line, v.col, stringValue(t, keyName), fmt.Errorf("%w %s", ErrUnknownKey, shownKey(key)))
		}
		if v.kind != want {
			return Principal{}, l.errAt(v.line, v.col, stringValue(t, keyName), fmt.Errorf("%w: %s must be %s, not %s", ErrValueType, key, want, v.kind))
		}
	}

	name, ok := t.vals[keyName]
	if !ok {
		return Principal{}, l.errAt(t.line, t.col, "", fmt.Errorf("%w (name is missing)", ErrPrincipalName))
	}
	if !validPrincipalName(name.str) {
		return Principal{}, l.errAt(name.line, name.col, "", ErrPrincipalName)
	}
	p := Principal{Name: name.str}

	token, err := l.token(t, p.Name)
	if err != nil {
		return Principal{}, err
	}
	p.Token = token

	profile, hasProfile := t.vals[keyToolProfile]
	tools, hasTools := t.vals[keyAllowedTools]
	switch {
	case hasProfile && hasTools:
		return Principal{}, l.errAt(tools.line, tools.col, p.Name, ErrToolSelection)
	case hasTools:
		if err := l.checkTools(tools.arr); err != nil {
			return Principal{}, l.errAt(tools.line, tools.col, p.Name, err)
		}
		p.AllowedTools = slices.Clone(tools.arr)
	default:
		p.Profile = DefaultToolProfile
		line, col := t.line, t.col
		if hasProfile {
			p.Profile, line, col = profile.str, profile.line, profile.col
		}
		list, ok := l.opts.Profiles[p.Profile]
		if !ok {
			return Principal{}, l.errAt(line, col, p.Name, fmt.Errorf("%w %s", ErrUnknownProfile, shownKey(p.Profile)))
		}
		p.AllowedTools = slices.Clone(list)
	}
	if roots, ok := t.vals[keyAllowedRoots]; ok {
		if p.AllowedRoots, err = canonicalAllowedRoots(roots.arr); err != nil {
			return Principal{}, l.errAt(roots.line, roots.col, p.Name, err)
		}
	}
	return p, nil
}

// token loads the principal's token from its one source.
func (l *principalLoader) token(t *tomlTable, name string) ([]byte, error) {
	file, hasFile := t.vals[keyTokenFile]
	env, hasEnv := t.vals[keyTokenEnv]
	switch {
	case hasFile && hasEnv:
		return nil, l.errAt(env.line, env.col, name, fmt.Errorf("%w (both are set)", ErrTokenSource))
	case hasFile:
		if file.str == "" {
			return nil, l.errAt(file.line, file.col, name, fmt.Errorf("%w (token_file is empty)", ErrTokenSource))
		}
		path := file.str
		if !filepath.IsAbs(path) {
			path = filepath.Join(l.dir, path)
		}
		token, err := loadTokenFile(path, l.opts.AllowWeakToken)
		if err != nil {
			return nil, l.errAt(file.line, file.col, name, err)
		}
		return token, nil
	case hasEnv:
		if env.str == "" {
			return nil, l.errAt(env.line, env.col, name, fmt.Errorf("%w (token_env is empty)", ErrTokenSource))
		}
		value := l.opts.Getenv(env.str)
		if value == "" {
			return nil, l.errAt(env.line, env.col, name, fmt.Errorf("%w: %s", ErrTokenEnvUnset, shownKey(env.str)))
		}
		token := []byte(value)
		if err := checkTokenRules(token, l.opts.AllowWeakToken); err != nil {
			return nil, l.errAt(env.line, env.col, name, fmt.Errorf("%w (token_env %s)", err, shownKey(env.str)))
		}
		return token, nil
	}
	return nil, l.errAt(t.line, t.col, name, fmt.Errorf("%w (neither is set)", ErrTokenSource))
}

// checkTools validates an allowed_tools list against opts.KnownTools.
func (l *principalLoader) checkTools(tools []string) error {
	if len(tools) == 0 {
		return ErrEmptyAllowedTools
	}
	seen := make(map[string]bool, len(tools))
	for _, tool := range tools {
		if !slices.Contains(l.opts.KnownTools, tool) {
			return fmt.Errorf("%w %s in allowed_tools", ErrUnknownTool, shownKey(tool))
		}
		if seen[tool] {
			return fmt.Errorf("%w: %s", ErrDuplicateTool, shownKey(tool))
		}
		seen[tool] = true
	}
	return nil
}

// stringValue returns t's string value for key, or "" (used to name a
// principal in errors found before its name is checked).
func stringValue(t *tomlTable, key string) string {
	if v, ok := t.vals[key]; ok && v.kind == tomlString && validPrincipalName(v.str) {
		return v.str
	}
	return ""
}

func validPrincipalName(name string) bool {
	if name == "" || len(name) > MaxPrincipalNameBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isBareKeyByte(name[i]) {
			return false
		}
	}
	return true
}

// Authenticate finds the principal whose token an Authorization header
// value ("Bearer <token>", scheme case-insensitive) carries. It compares the
// SHA-256 of the presented token with every principal's digest, without an
// early exit, so the time taken does not depend on which principal (if any)
// matched or on the presented token's length. The result is a copy.
func (s *PrincipalSet) Authenticate(authorizationHeader string) (*Principal, bool) {
	scheme, presented, ok := strings.Cut(strings.TrimSpace(authorizationHeader), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	// Hash even when the scheme is wrong, so a malformed header is not faster.
	sum := sha256.Sum256([]byte(strings.TrimSpace(presented)))
	match := -1
	for i := range s.digests {
		eq := subtle.ConstantTimeCompare(sum[:], s.digests[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if !ok || match < 0 {
		return nil, false
	}
	p := s.principals[match].clone()
	return &p, true
}

// Names returns the principals' names in file order.
func (s *PrincipalSet) Names() []string {
	names := make([]string, len(s.principals))
	for i, p := range s.principals {
		names[i] = p.Name
	}
	return names
}
