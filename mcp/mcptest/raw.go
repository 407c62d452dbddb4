package mcptest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// RawRequest sends one plain HTTP request to url, as curl would (see
// NewRawRequest). It returns the response and its whole body; a transport
// error fails t.
func RawRequest(t testing.TB, c *http.Client, method, url, token, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := NewRawRequest(t, method, url, token, body, hdr)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// NewRawRequest builds the request RawRequest sends: a bearer token when
// token is set, a JSON content type when body is set, and the headers of
// hdr ("Host" sets the request's Host).
func NewRawRequest(t testing.TB, method, url, token, body string, hdr map[string]string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}
