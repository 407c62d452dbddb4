package mcptest_test

// TestConformance runs the official MCP conformance suite (npm
// @modelcontextprotocol/conformance, pinned below) against NewFixtureServer
// behind mcp.NewHTTPHandler on a real 127.0.0.1 listener, once per
// requirement set. The suite needs Node.js 22 or newer: WINX_NODE22_BIN names
// a directory holding it, else the node on PATH is used if new enough. Without
// one the test skips, except under CI=true, where it fails.
//
// Verdicts come from the suite's own report: the SUMMARY section of its
// output says which scenarios passed, the "Not scored" section which of them
// do not count, and the checks.json files it writes with -o give the failed
// checks' messages. testdata/conformance-expected-failures.txt lists the
// scored scenarios allowed to fail and the not-scored ones that must keep
// passing; the test holds the run to exactly that.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"winx/mcp"
	"winx/mcp/mcptest"
)

const (
	// conformancePackage is the suite, pinned.
	conformancePackage = "@modelcontextprotocol/conformance@0.2.0-alpha.11"
	// expectationsFile lists expected failures and known-passing extras.
	expectationsFile = "testdata/conformance-expected-failures.txt"
	// suiteTimeout bounds one run of the suite; a run takes seconds, but npx
	// may have to download the suite first.
	suiteTimeout = 5 * time.Minute
	// minNodeMajor is the oldest Node.js the suite runs on (fs.globSync).
	minNodeMajor = 22
	// envNode22Bin names a directory holding a Node.js 22 binary.
	envNode22Bin = "WINX_NODE22_BIN"
)

// requirementSets are the revisions whose required scenarios are run.
var requirementSets = []string{mcp.Version20260728, mcp.Version20251125}

func TestConformance(t *testing.T) {
	exp, err := readExpectations(expectationsFile)
	if err != nil {
		t.Fatal(err)
	}
	npx, env := suiteCommand(t)
	for _, rev := range requirementSets {
		t.Run(rev, func(t *testing.T) {
			url := serveFixture(t)
			start := time.Now()
			run := runSuite(t, npx, env, url, rev)
			t.Logf("conformance --requirements %s: %d scenarios in %v", rev, len(run.scenarios), time.Since(start).Round(time.Millisecond))
			judge(t, rev, run, exp)
		})
	}
}

// serveFixture serves a fresh fixture on 127.0.0.1 and returns its /mcp URL.
func serveFixture(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHTTPHandler(mcptest.NewFixtureServer(nil), nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	// Close, not Shutdown: listen streams and parked calls never go idle.
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// suiteCommand finds Node.js >= 22 and npx, and returns npx's path and the
// environment that makes the suite's "#!/usr/bin/env node" find that Node.
func suiteCommand(t *testing.T) (npx string, env []string) {
	t.Helper()
	path := os.Getenv("PATH")
	var node string
	if dir := os.Getenv(envNode22Bin); dir != "" {
		node = lookPathIn("node", dir)
		if node == "" {
			unavailable(t, "%s=%s holds no node executable", envNode22Bin, dir)
		}
		path = dir + string(os.PathListSeparator) + path
	} else if node = lookPathIn("node", path); node == "" {
		unavailable(t, "no node on PATH and %s is not set", envNode22Bin)
	}
	major, err := nodeMajor(t.Context(), node)
	if err != nil {
		unavailable(t, "%s --version: %v", node, err)
	}
	if major < minNodeMajor {
		unavailable(t, "%s is Node.js %d; the suite needs %d or newer (set %s to a directory holding one)",
			node, major, minNodeMajor, envNode22Bin)
	}
	if npx = lookPathIn("npx", path); npx == "" {
		unavailable(t, "no npx on PATH")
	}
	env = append(os.Environ(), "PATH="+path, "NO_COLOR=1",
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	return npx, env
}

// unavailable skips the test, or fails it under CI=true, where the suite
// must run.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := "MCP conformance suite unavailable: " + fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true requires it)")
	}
	t.Skip(msg)
}

// lookPathIn is exec.LookPath over an explicit PATH list.
func lookPathIn(file, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

var nodeVersion = regexp.MustCompile(`^v(\d+)\.`)

func nodeMajor(ctx context.Context, node string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return 0, err
	}
	m := nodeVersion.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return 0, fmt.Errorf("unexpected version %q", out)
	}
	return strconv.Atoi(m[1])
}

// suiteRun is what one run of the suite reported.
type suiteRun struct {
	scenarios []scenarioResult // in the order the suite ran them
	exitCode  int
	output    []byte
}

// scenarioResult is one scenario's verdict.
type scenarioResult struct {
	name           string
	passed         bool   // no FAILURE check
	summary        string // "N passed, M failed"
	notScored      string // the suite's reason, "" when scored
	failedChecks   []suiteCheck
	haveCheckFiles bool
}

// suiteCheck is one entry of a scenario's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO or SKIPPED
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// runSuite runs the scenarios that rev requires and parses the report.
func runSuite(t *testing.T, npx string, env []string, url, rev string) *suiteRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), suiteTimeout)
	defer cancel()
	outDir := t.TempDir()
	cmd := exec.CommandContext(ctx, npx, "-y", conformancePackage, "server",
		"--url", url, "--requirements", rev, "-o", outDir)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second // npx's child may outlive a killed npx
	out, err := cmd.CombinedOutput()
	run := &suiteRun{output: out}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		run.exitCode = exitErr.ExitCode()
	default:
		t.Fatalf("conformance --requirements %s: %v\n%s", rev, err, tail(out))
	}
	if err := parseReport(run, rev); err != nil {
		if os.Getenv("CI") != "true" && bytes.Contains(out, []byte("npm error")) {
			t.Skipf("npx could not run %s (offline?): %v\n%s", conformancePackage, err, tail(out))
		}
		t.Fatalf("conformance --requirements %s (exit %d): %v\n%s", rev, run.exitCode, err, tail(out))
	}
	if err := readCheckFiles(run, outDir); err != nil {
		t.Fatal(err)
	}
	return run
}

var (
	summaryLine   = regexp.MustCompile(`^([✓✗]) (\S+): (\d+ passed, \d+ failed)$`)
	notScoredHead = regexp.MustCompile(`^Not scored for (\S+): `)
	notScoredLine = regexp.MustCompile(`^\s+([✓✗]) (\S+) \((.+)\)$`)
	checkDir      = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)
)

// parseReport reads the SUMMARY and "Not scored" sections of the suite's
// output and checks them against its exit code: 1 exactly when a scored
// scenario failed.
func parseReport(run *suiteRun, rev string) error {
	index := map[string]int{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(run.output))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "=== SUMMARY ===":
			section = "summary"
			continue
		case notScoredHead.MatchString(line):
			if m := notScoredHead.FindStringSubmatch(line); m[1] != rev {
				return fmt.Errorf("report is for %s, want %s", m[1], rev)
			}
			section = "not-scored"
			continue
		}
		switch section {
		case "summary":
			if m := summaryLine.FindStringSubmatch(line); m != nil {
				if _, dup := index[m[2]]; dup {
					return fmt.Errorf("scenario %s reported twice", m[2])
				}
				index[m[2]] = len(run.scenarios)
				run.scenarios = append(run.scenarios, scenarioResult{name: m[2], passed: m[1] == "✓", summary: m[3]})
			}
		case "not-scored":
			if m := notScoredLine.FindStringSubmatch(line); m != nil {
				i, ok := index[m[2]]
				if !ok {
					return fmt.Errorf("not-scored scenario %s is missing from the summary", m[2])
				}
				if run.scenarios[i].passed != (m[1] == "✓") {
					return fmt.Errorf("scenario %s: summary and not-scored sections disagree", m[2])
				}
				run.scenarios[i].notScored = m[3]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(run.scenarios) == 0 {
		return errors.New("no SUMMARY section in the suite's output")
	}
	scoredFailure := false
	for _, s := range run.scenarios {
		scoredFailure = scoredFailure || (s.notScored == "" && !s.passed)
	}
	want := 0
	if scoredFailure {
		want = 1
	}
	if run.exitCode != want {
		return fmt.Errorf("exit code %d, want %d for a report with scored failures=%v", run.exitCode, want, scoredFailure)
	}
	return nil
}

// readCheckFiles attaches the failed checks from the suite's checks.json
// files, one per scenario directory.
func readCheckFiles(run *suiteRun, outDir string) error {
	files, err := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	if err != nil {
		return err
	}
	byName := map[string]*scenarioResult{}
	for i := range run.scenarios {
		byName[run.scenarios[i].name] = &run.scenarios[i]
	}
	for _, f := range files {
		m := checkDir.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			return fmt.Errorf("unexpected result directory %s", filepath.Dir(f))
		}
		s, ok := byName[m[1]]
		if !ok {
			return fmt.Errorf("%s: scenario %s is not in the summary", f, m[1])
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var checks []suiteCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		s.haveCheckFiles = true
		for _, c := range checks {
			if c.Status == "FAILURE" {
				s.failedChecks = append(s.failedChecks, c)
			}
		}
		if s.passed != (len(s.failedChecks) == 0) {
			return fmt.Errorf("%s: scenario %s passed=%v in the summary but has %d failed checks", f, s.name, s.passed, len(s.failedChecks))
		}
	}
	return nil
}

// judge holds a run to the expectations for rev and logs every verdict.
func judge(t *testing.T, rev string, run *suiteRun, exp *expectations) {
	seen := map[string]bool{}
	for _, s := range run.scenarios {
		seen[s.name] = true
		verdict, kind := "PASS", "scored"
		if !s.passed {
			verdict = "FAIL"
		}
		if s.notScored != "" {
			kind = "not scored: " + s.notScored
		}
		t.Logf("%s %-50s %-22s (%s)", verdict, s.name, s.summary, kind)
		reason, expectedFail := exp.failures[rev][s.name]
		knownPass := exp.passes[rev][s.name]
		switch {
		case s.notScored == "" && knownPass:
			t.Errorf("%s: extension-pass %s %s names a scored scenario", expectationsFile, rev, s.name)
		case s.notScored != "" && expectedFail:
			t.Errorf("%s: %s %s is not scored; record it with extension-pass or not at all", expectationsFile, rev, s.name)
		case s.notScored == "" && !s.passed && expectedFail:
			t.Logf("    expected failure: %s", reason)
		case s.notScored == "" && !s.passed:
			t.Errorf("scored scenario %s failed:%s", s.name, describeFailures(s))
		case s.notScored == "" && expectedFail:
			t.Errorf("%s lists %s %s as failing (%s), but it passes: delete the line", expectationsFile, rev, s.name, reason)
		case !s.passed && knownPass:
			t.Errorf("not-scored scenario %s no longer passes (recorded as extension-pass):%s", s.name, describeFailures(s))
		case s.notScored == "":
			// A scored pass, as it should be.
		case !s.passed:
			t.Logf("    not scored, failing:%s", describeFailures(s))
		case !knownPass:
			t.Logf("    passes now: add \"extension-pass %s %s\" to %s", rev, s.name, expectationsFile)
		}
	}
	for name := range exp.failures[rev] {
		if !seen[name] {
			t.Errorf("%s lists %s %s, which the suite did not run", expectationsFile, rev, name)
		}
	}
	for name := range exp.passes[rev] {
		if !seen[name] {
			t.Errorf("%s records extension-pass %s %s, which the suite did not run", expectationsFile, rev, name)
		}
	}
}

func describeFailures(s scenarioResult) string {
	if !s.haveCheckFiles {
		return " (no checks.json; the scenario did not run to the end)"
	}
	var b strings.Builder
	for _, c := range s.failedChecks {
		fmt.Fprintf(&b, "\n    - %s: %s", c.ID, c.ErrorMessage)
	}
	return b.String()
}

// tail returns the end of the suite's output, enough to see why it stopped.
func tail(out []byte) []byte {
	const max = 8 << 10
	if len(out) > max {
		return out[len(out)-max:]
	}
	return out
}

// expectations is the parsed expectations file, keyed by revision then
// scenario.
type expectations struct {
	failures map[string]map[string]string // scored scenarios allowed to fail, with reasons
	passes   map[string]map[string]bool   // not-scored scenarios that must pass
}

// readExpectations parses lines "REVISION SCENARIO # reason" (a scored
// scenario expected to fail) and "extension-pass REVISION SCENARIO" (a
// not-scored scenario that must keep passing). '#' lines are comments.
func readExpectations(path string) (*expectations, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	exp := &expectations{failures: map[string]map[string]string{}, passes: map[string]map[string]bool{}}
	known := map[string]bool{}
	for _, rev := range requirementSets {
		known[rev] = true
		exp.failures[rev] = map[string]string{}
		exp.passes[rev] = map[string]bool{}
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n+1)
		body, reason, _ := strings.Cut(line, "#")
		fields := strings.Fields(body)
		switch {
		case len(fields) == 3 && fields[0] == "extension-pass":
			rev, name := fields[1], fields[2]
			if !known[rev] {
				return nil, fmt.Errorf("%s: unknown requirement set %q", where, rev)
			}
			if exp.passes[rev][name] {
				return nil, fmt.Errorf("%s: %s %s recorded twice", where, rev, name)
			}
			exp.passes[rev][name] = true
		case len(fields) == 2:
			rev, name := fields[0], fields[1]
			reason = strings.TrimSpace(reason)
			if !known[rev] {
				return nil, fmt.Errorf("%s: unknown requirement set %q", where, rev)
			}
			if reason == "" {
				return nil, fmt.Errorf("%s: an expected failure needs a reason after '#'", where)
			}
			if _, dup := exp.failures[rev][name]; dup {
				return nil, fmt.Errorf("%s: %s %s listed twice", where, rev, name)
			}
			exp.failures[rev][name] = reason
		default:
			return nil, fmt.Errorf("%s: want \"REVISION SCENARIO # reason\" or \"extension-pass REVISION SCENARIO\", got %q", where, line)
		}
	}
	return exp, nil
}
