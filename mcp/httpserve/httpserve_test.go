package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/auth"
	"winx/mcp"
)

const testToken = "0123456789abcdef0123456789abcdef-test"

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.8.9.1": true, "::1": true, "[::1]": true,
		"": false, "0.0.0.0": false, "::": false, "192.0.2.1": false, "example.com": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func fullProfile() (mcp.Profile, error) { return mcp.FullProfile(), nil }

func TestNewAuthenticatorSources(t *testing.T) {
	for _, c := range []Credentials{{}, {Token: testToken, EnvToken: testToken}, {TokenFile: "f", PrincipalConfig: "p"}} {
		if _, err := NewAuthenticator(c, AuthOptions{SingleProfile: fullProfile}); !errors.Is(err, ErrCredentialSources) {
			t.Errorf("NewAuthenticator(%d sources) = %v, want ErrCredentialSources", c.Sources(), err)
		}
	}
	if _, err := NewAuthenticator(Credentials{Token: "short"}, AuthOptions{SingleProfile: fullProfile}); !errors.Is(err, auth.ErrTokenTooShort) {
		t.Errorf("short token = %v, want auth.ErrTokenTooShort", err)
	}
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(testToken), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewAuthenticator(Credentials{TokenFile: path}, AuthOptions{SingleProfile: fullProfile}); !errors.Is(err, auth.ErrTokenFileMode) {
		t.Errorf("token file 0644 = %v, want auth.ErrTokenFileMode", err)
	}
}

func TestAuthenticate(t *testing.T) {
	for _, allowQuery := range []bool{false, true} {
		a, err := NewAuthenticator(Credentials{EnvToken: testToken, AllowQueryToken: allowQuery}, AuthOptions{SingleProfile: fullProfile})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+testToken)
		if _, err := a.Authenticate(r); err != nil {
			t.Errorf("right token: %v", err)
		}
		r = httptest.NewRequest(http.MethodPost, "/mcp?access_token="+testToken, nil)
		_, err = a.Authenticate(r)
		if allowQuery != (err == nil) {
			t.Errorf("query token with allow=%v: %v", allowQuery, err)
		}
	}
	a, err := NewAuthenticator(Credentials{Token: testToken}, AuthOptions{SingleProfile: fullProfile})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer wrong-"+testToken)
	start := time.Now()
	if _, err := a.Authenticate(r); !errors.Is(err, mcp.ErrUnauthorized) {
		t.Errorf("wrong token = %v, want mcp.ErrUnauthorized", err)
	}
	if d := time.Since(start); d < BadAuthDelay {
		t.Errorf("refusal after %v, want at least %v", d, BadAuthDelay)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	for _, bind := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		ln, err := Listen(bind, false)
		if err == nil || !strings.Contains(err.Error(), "--allow-non-loopback") {
			t.Errorf("Listen(%s) = %v, want a refusal naming --allow-non-loopback", bind, err)
		}
		if ln != nil {
			ln.Close()
		}
	}
	if _, err := Listen("127.0.0.1", false); err == nil || !strings.Contains(err.Error(), "--bind") {
		t.Errorf("Listen(no port) = %v, want an error naming --bind", err)
	}
	// A listener handed to Serve is held to the same rule, and closed.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), ln, nil, nil, &Options{}); err == nil || !strings.Contains(err.Error(), "--allow-non-loopback") {
		t.Errorf("Serve(listener on %s) = %v, want a refusal naming --allow-non-loopback", ln.Addr(), err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Errorf("Serve left the refused listener on %s open", ln.Addr())
	}
}
