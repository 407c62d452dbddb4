package main

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"winx/auth"
	"winx/mcp"
	"winx/mcp/tools"
)

// badAuthDelay slows every failed authentication, so guessing tokens over
// the network is slow even below the rate limit.
const badAuthDelay = 100 * time.Millisecond

// httpAuth admits requests carrying a known bearer token: the single token
// of --token-file / --token / WINX_HTTP_TOKEN, or one principal's token from
// --principal-config.
type httpAuth struct {
	single        *auth.Bearer
	singleProfile mcp.Profile
	principals    *auth.PrincipalSet
	allowQuery    bool // also accept ?access_token= (--allow-query-token)
}

var _ mcp.Authenticator = (*httpAuth)(nil)

// newHTTPAuth builds the authenticator from exactly one credential source.
func newHTTPAuth(reg *mcp.Registry, opts *serveOptions, envToken string, stderr io.Writer) (*httpAuth, error) {
	sources := 0
	for _, set := range []bool{opts.tokenFile != "", opts.token != "", envToken != "", opts.principalConfig != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		fmt.Fprintln(stderr, "winx: --http needs exactly one of --token-file, --token, WINX_HTTP_TOKEN or --principal-config")
		return nil, errUsage
	}
	a := &httpAuth{allowQuery: opts.allowQueryToken}
	if opts.principalConfig != "" {
		if len(opts.allowTools) > 0 {
			fmt.Fprintln(stderr, "winx: --allow-tool does not combine with --principal-config; give each principal allowed_tools")
			return nil, errUsage
		}
		set, err := auth.LoadPrincipals(opts.principalConfig, auth.PrincipalOptions{
			AllowWeakToken: opts.allowWeakToken, KnownTools: reg.ToolNames(), Profiles: tools.Profiles(),
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
	case opts.tokenFile != "" && opts.allowWeakToken:
		token, err = auth.LoadWeakTokenFile(opts.tokenFile)
	case opts.tokenFile != "":
		token, err = auth.LoadTokenFile(opts.tokenFile)
	case opts.token != "":
		token = []byte(opts.token)
	default:
		token = []byte(envToken)
	}
	if err != nil {
		return nil, err
	}
	newBearer := auth.NewBearer
	if opts.allowWeakToken {
		newBearer = auth.NewWeakBearer
	}
	if a.single, err = newBearer(token); err != nil {
		return nil, fmt.Errorf("winx: bearer token: %w", err)
	}
	if a.singleProfile, err = callerProfile(reg, opts); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *httpAuth) Authenticate(r *http.Request) (mcp.Caller, error) {
	header := r.Header.Get("Authorization")
	if header == "" && a.allowQuery {
		if tok := r.URL.Query().Get("access_token"); tok != "" {
			header = "Bearer " + tok
		}
	}
	if a.principals != nil {
		if p, ok := a.principals.Authenticate(header); ok {
			var exact []string
			if p.Profile == "" {
				exact = p.AllowedTools
			}
			return mcp.Caller{Principal: p.Name, Profile: tools.ProfileFor(p.Profile, exact)}, nil
		}
	} else if a.single.VerifyHeader(header) {
		return mcp.Caller{Profile: a.singleProfile}, nil
	}
	t := time.NewTimer(badAuthDelay)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	return mcp.Caller{}, mcp.ErrUnauthorized
}
