package httpserve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"winx/auth"
	"winx/mcp"
)

// BadAuthDelay slows every failed authentication, so guessing tokens over
// the network is slow even below the rate limit.
const BadAuthDelay = 100 * time.Millisecond

// ErrCredentialSources is returned by NewAuthenticator when Credentials name
// no credential source or more than one.
var ErrCredentialSources = errors.New("httpserve: exactly one credential source is needed")

// FileFlagError is a file named by a command-line flag (--token-file) that
// cannot be used: a configuration error. It reads `<flag> <path>: <why>`,
// naming the path once, as the command line spelled it.
type FileFlagError struct {
	Flag string // "--token-file"
	Path string
	Err  error // an *auth.TokenFileError
}

func (e *FileFlagError) Error() string {
	// The path is said here: take the cause without the path that an
	// *auth.TokenFileError and an *fs.PathError would each add again.
	why := e.Err
	var tfe *auth.TokenFileError
	if errors.As(why, &tfe) {
		why = tfe.Err
	}
	var pe *fs.PathError
	if errors.As(why, &pe) {
		why = pe.Err
	}
	return e.Flag + " " + e.Path + ": " + why.Error()
}

func (e *FileFlagError) Unwrap() error { return e.Err }

// Credentials are the caller credentials of an HTTP server: exactly one of
// TokenFile, Token, EnvToken (WINX_HTTP_TOKEN) or PrincipalConfig.
type Credentials struct {
	TokenFile       string // --token-file
	Token           string // --token
	EnvToken        string // WINX_HTTP_TOKEN
	PrincipalConfig string // --principal-config
	AllowWeakToken  bool   // accept tokens shorter than auth.MinTokenBytes
	AllowQueryToken bool   // also accept ?token= (or its alias ?access_token=)
	// Getenv reads the principals' token_env variables: the environment
	// the configuration was read from, which need not be the process's
	// own (winx serve hands the values to itself in memory). Nil means
	// os.Getenv.
	Getenv func(string) string
}

// Sources is how many credential sources c names.
func (c Credentials) Sources() int {
	n := 0
	for _, set := range []bool{c.TokenFile != "", c.Token != "", c.EnvToken != "", c.PrincipalConfig != ""} {
		if set {
			n++
		}
	}
	return n
}

// AuthOptions are what the authenticator needs from the tool catalog, which
// this package does not import.
type AuthOptions struct {
	// KnownTools are the tool names a principal's allowed_tools may list.
	KnownTools []string
	// Profiles maps tool_profile names to their tools.
	Profiles map[string][]string
	// ProfileFor is the profile of a principal: the named profile, or the
	// exact tools when name is "".
	ProfileFor func(name string, exact []string) mcp.Profile
	// SingleProfile is the profile of the single-token caller; it is asked
	// only after the token was loaded.
	SingleProfile func() (mcp.Profile, error)
}

// Authenticator admits requests carrying a known bearer token: the single
// token of --token-file / --token / WINX_HTTP_TOKEN, or one principal's token
// from --principal-config. It is immutable and safe for concurrent use.
type Authenticator struct {
	single        *auth.Bearer
	singleProfile mcp.Profile
	principals    *auth.PrincipalSet
	profileFor    func(name string, exact []string) mcp.Profile
	allowQuery    bool // also accept ?token= or ?access_token= (--allow-query-token)
}

var _ mcp.Authenticator = (*Authenticator)(nil)

// NewAuthenticator builds the authenticator from exactly one credential
// source.
func NewAuthenticator(c Credentials, o AuthOptions) (*Authenticator, error) {
	if c.Sources() != 1 {
		return nil, ErrCredentialSources
	}
	a := &Authenticator{allowQuery: c.AllowQueryToken, profileFor: o.ProfileFor}
	if c.PrincipalConfig != "" {
		set, err := auth.LoadPrincipals(c.PrincipalConfig, auth.PrincipalOptions{
			AllowWeakToken: c.AllowWeakToken, KnownTools: o.KnownTools, Profiles: o.Profiles, Getenv: c.Getenv,
		})
		if err != nil {
			return nil, err
		}
		a.principals = set
		return a, nil
	}
	var token []byte
	var err error
	switch {
	case c.TokenFile != "" && c.AllowWeakToken:
		token, err = auth.LoadWeakTokenFile(c.TokenFile)
	case c.TokenFile != "":
		token, err = auth.LoadTokenFile(c.TokenFile)
	case c.Token != "":
		token = []byte(c.Token)
	default:
		token = []byte(c.EnvToken)
	}
	if err != nil {
		return nil, &FileFlagError{Flag: "--token-file", Path: c.TokenFile, Err: err}
	}
	newBearer := auth.NewBearer
	if c.AllowWeakToken {
		newBearer = auth.NewWeakBearer
	}
	if a.single, err = newBearer(token); err != nil {
		return nil, fmt.Errorf("winx: bearer token: %w", err)
	}
	if a.singleProfile, err = o.SingleProfile(); err != nil {
		return nil, err
	}
	return a, nil
}

// Principals is how many principals a caller can authenticate as: the
// principal config's count, or 1 for the single token.
func (a *Authenticator) Principals() int {
	if a.principals != nil {
		return len(a.principals.Names())
	}
	return 1
}

// Authenticate implements mcp.Authenticator.
func (a *Authenticator) Authenticate(r *http.Request) (mcp.Caller, error) {
	header := r.Header.Get("Authorization")
	if header == "" && a.allowQuery {
		if tok := queryToken(r); tok != "" {
			header = "Bearer " + tok
		}
	}
	if a.principals != nil {
		if p, ok := a.principals.Authenticate(header); ok {
			var exact []string
			if p.Profile == "" {
				exact = p.AllowedTools
			}
			return mcp.Caller{Principal: p.Name, Profile: a.profileFor(p.Profile, exact), Roots: p.AllowedRoots}, nil
		}
	} else if a.single.VerifyHeader(header) {
		return mcp.Caller{Profile: a.singleProfile}, nil
	}
	t := time.NewTimer(BadAuthDelay)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	return mcp.Caller{}, mcp.ErrUnauthorized
}

// QueryTokenParams are the query parameters --allow-query-token accepts,
// in order: "token" is the name the Streamable HTTP guide documents,
// "access_token" the RFC 6750 spelling kept as an alias. The logs record
// the URL path only, so neither reaches a log.
var QueryTokenParams = []string{"token", "access_token"}

// queryToken returns the first non-empty query token of r.
func queryToken(r *http.Request) string {
	q := r.URL.Query()
	for _, name := range QueryTokenParams {
		if tok := q.Get(name); tok != "" {
			return tok
		}
	}
	return ""
}
