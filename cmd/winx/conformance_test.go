package main

// The official MCP conformance suite (npm @modelcontextprotocol/conformance)
// against the real `winx serve --http`, for the scenarios that need no
// fixture catalog. The suite sends no Authorization header, so a small
// reverse proxy on 127.0.0.1 adds the bearer token; it passes Host and Origin
// through unchanged, so dns-rebinding-protection still tests winx itself.
//
// A scenario passes when the suite reports no FAILURE for it, except for the
// checks listed in testdata/conformance-expected-failures.txt, which must
// fail: a listed check that passes is an error too, so the list stays exact.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// conformancePackage is the suite, pinned.
const conformancePackage = "@modelcontextprotocol/conformance@0.2.0-alpha.11"

// expectedFailuresFile lists the checks known to fail, with reasons.
const expectedFailuresFile = "testdata/conformance-expected-failures.txt"

// scenarioTimeout bounds one run of the suite (npx may download it first).
const scenarioTimeout = 5 * time.Minute

// conformanceScenarios are the scenarios run, per spec version.
var conformanceScenarios = []struct {
	version   string
	scenarios []string
}{
	{"2026-07-28", []string{"server-stateless", "tools-list", "caching", "dns-rebinding-protection"}},
	{"2025-11-25", []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}},
}

// conformanceCheck is one entry of the suite's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// checkKey names one check of one scenario at one spec version.
type checkKey struct{ version, scenario, check string }

func (k checkKey) String() string { return k.version + " " + k.scenario + " " + k.check }

func TestConformance(t *testing.T) {
	expected, err := readExpectedFailures(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	node := nodeFor(t, 22) // the suite uses fs.globSync
	npx, err := exec.LookPath("npx")
	if err != nil {
		skipOrFatal(t, "the conformance suite needs npx: %v", err)
	}
	// The suite's #!/usr/bin/env node must find the Node chosen above.
	env := append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"npm_config_update_notifier=false", "npm_config_fund=false")
	// Fetch the suite once before the parallel runs share npm's cache.
	{
		ctx, cancel := context.WithTimeout(t.Context(), scenarioTimeout)
		cmd := exec.CommandContext(ctx, npx, "-y", conformancePackage, "--version")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			skipOrFatal(t, "npx %s --version: %v\n%s", conformancePackage, err, out)
		}
	}

	bin := buildWinx(t)
	srv := startHTTP(t, bin)
	proxy := tokenProxy(t, srv)

	var (
		mu   sync.Mutex
		seen = map[checkKey]bool{} // expected failures that did fail
	)
	t.Run("scenarios", func(t *testing.T) {
		for _, group := range conformanceScenarios {
			for _, scenario := range group.scenarios {
				t.Run(group.version+"/"+scenario, func(t *testing.T) {
					t.Parallel()
					checks := runConformance(t, npx, env, proxy+"/mcp", group.version, scenario)
					for _, c := range checks {
						key := checkKey{group.version, scenario, c.ID}
						_, isExpected := expected[key]
						switch {
						case c.Status == "FAILURE" && isExpected:
							mu.Lock()
							seen[key] = true
							mu.Unlock()
							t.Logf("expected failure: %s: %s", c.ID, c.ErrorMessage)
						case c.Status == "FAILURE":
							t.Errorf("check %s: FAILURE: %s", c.ID, c.ErrorMessage)
						case c.Status == "WARNING":
							t.Logf("check %s: WARNING: %s", c.ID, c.ErrorMessage)
						}
					}
				})
			}
		}
	})
	for key, reason := range expected {
		if !seen[key] {
			t.Errorf("%s is listed in %s (%s) but did not fail: remove it from the list", key, expectedFailuresFile, reason)
		}
	}
}

// runConformance runs one scenario and returns its checks.
func runConformance(t *testing.T, npx string, env []string, url, version, scenario string) []conformanceCheck {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "-y", conformancePackage, "server",
		"--url", url, "--scenario", scenario, "--spec-version", version, "-o", outDir)
	cmd.Env = env
	out, runErr := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("conformance %s --spec-version %s wrote %d checks.json files, want 1 (exit: %v)\n%s", scenario, version, len(files), runErr, out)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	if len(checks) == 0 {
		t.Fatalf("conformance %s --spec-version %s reported no checks\n%s", scenario, version, out)
	}
	failed := slices.ContainsFunc(checks, func(c conformanceCheck) bool { return c.Status == "FAILURE" })
	if runErr != nil && !failed {
		t.Errorf("conformance %s --spec-version %s: %v with no failed check\n%s", scenario, version, runErr, out)
	}
	return checks
}

// tokenProxy serves a reverse proxy on 127.0.0.1 that adds the server's
// bearer token and forwards everything else, Host and Origin included, as it
// came. It returns the proxy's base URL.
func tokenProxy(t *testing.T, srv *httpServer) string {
	t.Helper()
	target, err := url.Parse(srv.base)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // SetURL replaced it with the target's
			r.Out.Header.Set("Authorization", "Bearer "+srv.token)
		},
		FlushInterval: -1, // SSE answers pass through as they are written
	}
	ps := httptest.NewServer(rp)
	t.Cleanup(ps.Close)
	return ps.URL
}

// readExpectedFailures parses lines "VERSION SCENARIO CHECK-ID REASON..."
// ('#' starts a comment line) into a map from check to reason.
func readExpectedFailures(path string) (map[checkKey]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[checkKey]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 {
			return nil, fmt.Errorf("%s:%d: want VERSION SCENARIO CHECK-ID REASON, got %q", path, n, line)
		}
		key := checkKey{fields[0], fields[1], fields[2]}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, n, key)
		}
		m[key] = strings.Join(fields[3:], " ")
	}
	return m, sc.Err()
}
