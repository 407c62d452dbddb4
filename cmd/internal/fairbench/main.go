// Command fairbench measures what one principal's load does to the others'
// latency on a real `winx serve --http` with four principals: p1..p3 each
// run in their own OS process and make n calls (ReadFiles of a 4 KB file and
// BashCommand `echo hi`, alternately), first with the server idle, then
// during each of p0's loads (-phases), p0 in its own process too: large
// valid bodies (tools/call with junk arguments) from many workers; real
// work (ReadFiles of a 1 MB file from many workers; `sleep 2` in as many
// sessions as it is granted, up to 8); requests without a valid token. It
// prints each phase's p50 and p99 of p1..p3, their ratio to idle, and what
// p0 got done.
//
// It measures only: it never fails on time.
//
//	go run ./cmd/internal/fairbench -winx bin/winx [-n 200] [-workers 64] [-phases body,work,sleep,flood] [-rest 0s] [-- serve flags...]
//
// The server runs with a throwaway HOME, XDG directories and WINX_SOCKET,
// so the user's state and daemon are never touched.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"winx/cmd/internal/benchenv"
)

const protocol = "2026-07-28"

func main() {
	role := flag.String("role", "", "internal: run as a client process (light, body, work)")
	base := flag.String("base", "", "internal: the server's URL")
	token := flag.String("token", "", "internal: the client's bearer token (or FAIRBENCH_TOKEN)")
	ws := flag.String("ws", "", "internal: the workspace directory")
	winx := flag.String("winx", "bin/winx", "winx binary (winxd and winx-guardian beside it)")
	n := flag.Int("n", 200, "timed calls of each of p1..p3 per phase")
	workers := flag.Int("workers", 64, "p0's concurrent workers")
	bodyMiB := flag.Int("body-mib", 8, "size of p0's bodies in MiB")
	settle := flag.Duration("settle", 2*time.Second, "how long p0's load runs before p1..p3 start")
	rest := flag.Duration("rest", 0, "pause before each phase (with the default rate limit, long enough for p1..p3's request allowance to refill)")
	phases := flag.String("phases", "body,work,sleep,flood", "p0's loads, in order: body (large bodies), work (1 MB reads), sleep (`sleep 2` commands), flood (requests without a valid token)")
	flag.Parse()
	if *token == "" {
		*token = os.Getenv("FAIRBENCH_TOKEN")
	}
	var err error
	switch *role {
	case "":
		err = run(*winx, *n, *workers, *bodyMiB<<20, *settle, *rest, strings.Split(*phases, ","), flag.Args())
	case "light":
		err = light(*base, *token, *ws, *n)
	case "body", "work", "sleep", "flood":
		err = heavy(*role, *base, *token, *ws, *workers, *bodyMiB<<20)
	default:
		err = fmt.Errorf("unknown -role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fairbench:", err)
		os.Exit(1)
	}
}

// client is one principal's connection to the server.
type client struct {
	base, token string
	http        *http.Client
	tid, root   string
}

func newClient(base, token string, conns int) *client {
	return &client{base: base, token: token, http: &http.Client{
		Timeout:   5 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns},
	}}
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fairbench","version":"0"}}`

// call makes one tools/call with the arguments' JSON text and returns the
// HTTP status and the answer.
func (c *client) call(tool string, args []byte) (int, []byte, error) {
	return c.send(tool, callBody(tool, args))
}

// callBody is the JSON-RPC body of a tools/call; p0 builds its large ones
// once, so that its own process copies no 8 MiB per attempt.
func callBody(tool string, args []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(args) + 512)
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"` + tool + `","arguments":`)
	b.Write(args)
	b.WriteString(`}}`)
	return b.Bytes()
}

// send posts a tools/call body and returns the HTTP status and the answer.
func (c *client) send(tool string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, c.base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", protocol)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, out, err
}

// initialize opens the principal's session in ws and keeps its thread id.
func (c *client) initialize(ws string) error {
	args, _ := json.Marshal(map[string]any{"type": "first_call", "any_workspace_path": ws})
	code, out, err := c.call("Initialize", args)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("Initialize: %d %v: %.300s", code, err, out)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return err
	}
	c.tid, _ = find(v, "thread_id").(string)
	c.root, _ = find(v, "workspace_root").(string)
	if c.tid == "" {
		return fmt.Errorf("Initialize: no thread_id in %.300s", out)
	}
	return nil
}

// find returns the first value of key anywhere in v, looking into JSON
// text held in strings too.
func find(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		if x, ok := v[key]; ok {
			return x
		}
		for _, x := range v {
			if r := find(x, key); r != nil {
				return r
			}
		}
	case []any:
		for _, x := range v {
			if r := find(x, key); r != nil {
				return r
			}
		}
	case string:
		if strings.Contains(v, `"`+key+`"`) {
			var inner any
			if json.Unmarshal([]byte(v), &inner) == nil {
				return find(inner, key)
			}
		}
	}
	return nil
}

func (c *client) bound(extra string) []byte {
	return []byte(fmt.Sprintf(`{"thread_id":%q,"workspace_root":%q,%s}`, c.tid, c.root, extra))
}

// light makes n calls and prints each one's latency in microseconds, one
// per line, then "errors N".
func light(base, token, ws string, n int) error {
	c := newClient(base, token, 1)
	// Under load the original server refused even Initialize; the session
	// is retried (untimed) so that the timed calls can be measured at all.
	deadline := time.Now().Add(2 * time.Minute)
	for err := c.initialize(ws); err != nil; err = c.initialize(ws) {
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	read := c.bound(fmt.Sprintf(`"file_paths":[%q]`, filepath.Join(ws, "small.txt")))
	echo := c.bound(`"action_json":{"type":"command","command":"echo hi"}`)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	errs := 0
	for i := range n {
		tool, args := "ReadFiles", read
		if i%2 == 1 {
			tool, args = "BashCommand", echo
		}
		start := time.Now()
		code, _, err := c.call(tool, args)
		d := time.Since(start)
		if err != nil || code != http.StatusOK {
			errs++
			continue
		}
		fmt.Fprintln(w, d.Microseconds())
	}
	fmt.Fprintln(w, "errors", errs)
	return nil
}

// heavy runs p0's load until SIGTERM, then prints its counts: answers by
// status, and the useful work the server did for it (bodies answered 200,
// reads of the 1 MB file answered and their bytes, commands that ran to completion).
func heavy(role, base, token, ws string, workers, size int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	c := newClient(base, token, workers)
	if role == "flood" {
		// Without a valid token: the server must refuse before reading.
		c.token = "not-a-token-" + strings.Repeat("x", 40)
	} else {
		// After an earlier phase p0 may still owe answer bytes: its
		// session is retried (untimed) as the light clients' are.
		deadline := time.Now().Add(time.Minute)
		for err := c.initialize(ws); err != nil; err = c.initialize(ws) {
			if time.Now().After(deadline) {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	tool := "ReadFiles"
	var args []byte
	switch role {
	case "body":
		args = []byte(`{"junk":"` + strings.Repeat("x", size-300) + `"}`)
	case "work":
		args = c.bound(fmt.Sprintf(`"file_paths":[%q]`, filepath.Join(ws, "big.txt")))
	case "sleep":
		tool = "BashCommand"
	case "flood":
		args = []byte(`{"junk":"` + strings.Repeat("x", 64<<10) + `"}`)
	}
	// `sleep 2` is real work only in a session of its own (a second
	// command in a busy session is refused at once): p0 opens as many
	// sessions as the server grants it, up to 8, one worker each.
	var sessions []*client
	if role == "sleep" {
		sessions = append(sessions, c)
		for len(sessions) < min(workers, 8) {
			own := newClient(base, token, 1)
			own.http = c.http
			// A workspace of its own: Initialize reuses a principal's
			// session in the same workspace.
			dir := filepath.Join(ws, fmt.Sprintf("p0-session-%d", len(sessions)))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			if err := own.initialize(dir); err != nil {
				fmt.Fprintf(os.Stderr, "fairbench: p0 has %d sessions: %v\n", len(sessions), err)
				break
			}
			sessions = append(sessions, own)
		}
		workers = len(sessions)
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var useful, units atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	shared := callBody(tool, args) // one copy for all workers
	fmt.Println("ready")
	for w := range workers {
		wg.Go(func() {
			body := shared
			if role == "sleep" {
				body = callBody(tool, sessions[w].bound(`"action_json":{"type":"command","command":"sleep 2"},"wait_for_seconds":5`))
			}
			for ctx.Err() == nil {
				code, out, err := c.send(tool, body)
				if err != nil {
					code = -1
				}
				switch {
				case code != http.StatusOK:
					if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
						time.Sleep(50 * time.Millisecond) // a client that honours refusals a little
					}
				case role == "body":
					useful.Add(int64(len(args)))
					units.Add(1)
				case role == "work" && !bytes.Contains(out, []byte(`"isError":true`)):
					useful.Add(int64(len(out)))
					units.Add(1)
				case role == "sleep" && bytes.Contains(out, []byte(`exit`)) && !bytes.Contains(out, []byte(`"isError":true`)):
					units.Add(1)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		})
	}
	<-ctx.Done()
	elapsed := time.Since(start)
	// The workers' calls in flight are not waited for: the counts are
	// those finished by now.
	mu.Lock()
	defer mu.Unlock()
	rate := float64(useful.Load()) / elapsed.Seconds() / (1 << 20)
	switch role {
	case "body":
		fmt.Printf("p0 body: %.1f s, answers %v, %d bodies (%.1f MiB/s) answered 200\n", elapsed.Seconds(), codes, units.Load(), rate)
	case "work":
		fmt.Printf("p0 work: %.1f s, answers %v, %d reads of the 1 MB file answered (%.1f MiB/s of answers)\n", elapsed.Seconds(), codes, units.Load(), rate)
	case "sleep":
		fmt.Printf("p0 sleep: %.1f s, answers %v, %d commands ran to their end\n", elapsed.Seconds(), codes, units.Load())
	case "flood":
		fmt.Printf("p0 flood: %.1f s, answers %v\n", elapsed.Seconds(), codes)
	}
	return nil
}

type stats struct{ p50, p99 time.Duration }

func percentiles(us []int) stats {
	slices.Sort(us)
	if len(us) == 0 {
		return stats{}
	}
	at := func(q float64) time.Duration {
		return time.Duration(us[min(len(us)-1, int(q*float64(len(us))))]) * time.Microsecond
	}
	return stats{at(0.50), at(0.99)}
}

func run(winx string, n, workers, size int, settle, rest time.Duration, phases, serveArgs []string) error {
	winx, err := filepath.Abs(winx)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "winx-fairbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := benchenv.Isolate(tmp); err != nil {
		return err
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), fileOf(4<<10), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), fileOf(1<<20), 0o600); err != nil {
		return err
	}
	// Four principals, each with a token in the environment.
	var cfg strings.Builder
	tokens := make([]string, 4)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("fairbench-p%d-%032x", i, time.Now().UnixNano()+int64(i))
		os.Setenv(fmt.Sprintf("FAIRBENCH_P%d_TOKEN", i), tokens[i])
		fmt.Fprintf(&cfg, "[[principals]]\nname = \"p%d\"\ntoken_env = \"FAIRBENCH_P%d_TOKEN\"\ntool_profile = \"full\"\n\n", i, i)
	}
	cfgPath := filepath.Join(tmp, "principals.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		return err
	}
	// Port 0: the kernel picks a free port and the server's first log
	// line names it, so no other process can take it in between.
	args := append([]string{"serve", "--http", "--bind", "127.0.0.1:0", "--principal-config", cfgPath}, serveArgs...)
	srv := exec.Command(winx, args...)
	stderr, err := srv.StderrPipe()
	if err != nil {
		return err
	}
	srv.Env = append(os.Environ(), "WINX_RUNTIME=daemon", "WINX_LOG=info", "WINX_LOG_FORMAT=json")
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
		benchenv.StopServers(tmp)
	}()
	addr, err := servingAddr(stderr)
	if err != nil {
		return err
	}
	base := "http://" + addr
	if err := waitHealthy(base); err != nil {
		return err
	}
	fmt.Printf("winx serve --http %s; 4 principals; p1..p3: %d calls each (ReadFiles 4 KB / BashCommand echo hi); p0: %d workers\n",
		strings.Join(serveArgs, " "), n, workers)
	lightPhase := func() ([]stats, int, error) {
		var wg sync.WaitGroup
		outs := make([][]byte, 3)
		errs := make([]error, 3)
		for i := range 3 {
			wg.Go(func() {
				cmd := exec.Command(self, "-role", "light", "-base", base, "-ws", ws, "-n", strconv.Itoa(n))
				cmd.Env = append(os.Environ(), "FAIRBENCH_TOKEN="+tokens[i+1])
				cmd.Stderr = os.Stderr
				outs[i], errs[i] = cmd.Output()
			})
		}
		wg.Wait()
		var st []stats
		failed := 0
		for i := range 3 {
			if errs[i] != nil {
				return nil, 0, fmt.Errorf("p%d: %w", i+1, errs[i])
			}
			var us []int
			for line := range strings.Lines(string(outs[i])) {
				line = strings.TrimSpace(line)
				if rest, ok := strings.CutPrefix(line, "errors "); ok {
					e, _ := strconv.Atoi(rest)
					failed += e
					continue
				}
				v, _ := strconv.Atoi(line)
				us = append(us, v)
			}
			st = append(st, percentiles(us))
		}
		return st, failed, nil
	}
	idle, idleErrs, err := lightPhase()
	if err != nil {
		return err
	}
	report := func(name string, st []stats, failed int, p0 string) {
		fmt.Printf("%-34s", name)
		for i, s := range st {
			fmt.Printf("  p%d p50 %6.1f ms p99 %7.1f ms", i+1, ms(s.p50), ms(s.p99))
			if name != "idle" {
				fmt.Printf(" (%.1fx / %.1fx)", ms(s.p50)/ms(idle[i].p50), ms(s.p99)/ms(idle[i].p99))
			}
		}
		fmt.Printf("  errors %d\n", failed)
		if p0 != "" {
			fmt.Printf("    %s", p0)
		}
	}
	report("idle", idle, idleErrs, "")
	names := map[string]string{
		"body":  fmt.Sprintf("p0 sends %d MiB bodies", size>>20),
		"work":  "p0 reads 1 MB files",
		"sleep": "p0 runs `sleep 2`",
		"flood": "p0 floods without a token",
	}
	for _, role := range phases {
		name, ok := names[role]
		if !ok {
			return fmt.Errorf("unknown phase %q", role)
		}
		time.Sleep(rest)
		p0 := exec.Command(self, "-role", role, "-base", base, "-ws", ws, "-workers", strconv.Itoa(workers), "-body-mib", strconv.Itoa(size>>20))
		p0.Env = append(os.Environ(), "FAIRBENCH_TOKEN="+tokens[0])
		p0.Stderr = os.Stderr
		stdout, err := p0.StdoutPipe()
		if err != nil {
			return err
		}
		if err := p0.Start(); err != nil {
			return err
		}
		// p0 says "ready" once its sessions are open and its load runs.
		lines := bufio.NewReader(stdout)
		if line, err := lines.ReadString('\n'); line != "ready\n" {
			p0.Process.Kill()
			p0.Wait()
			return fmt.Errorf("p0 %s did not start its load: %q %v", role, line, err)
		}
		time.Sleep(settle)
		st, failed, err := lightPhase()
		p0.Process.Signal(syscall.SIGTERM)
		out, _ := io.ReadAll(lines)
		p0.Wait()
		if err != nil {
			return err
		}
		report(name, st, failed, string(out))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fileOf(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %d of the benchmark file, some text to read\n", i)
	}
	return b.Bytes()[:size]
}

// servingAddr reads the server's JSON log from r until the line that says
// where it listens and returns that address; the rest of the log is
// discarded in the background.
func servingAddr(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving Streamable HTTP" && rec.Addr != "" {
			go io.Copy(io.Discard, r)
			return rec.Addr, nil
		}
	}
	return "", fmt.Errorf("winx serve --http ended before listening: %v", sc.Err())
}

func waitHealthy(base string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("server not healthy within 20 s")
}
