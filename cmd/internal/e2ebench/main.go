// Command e2ebench is the end-to-end benchmark: it drives winx and
// peer MCP servers over stdio through one independent client (mcpprobe, on
// the official Go SDK) in one run and prints each measure's p50 and its
// ratio to each peer: the Go SDK reference server, the official filesystem
// server and DesktopCommander, and for session start the whole client
// process (spawn, Initialize, exit) beside one that only lists tools. The
// replay rows (replay.go) replay the exact answers winx and the filesystem
// server gave, so each read row shows how much of it is the client's own
// reading and decoding.
//
// It measures only: it never fails on time. `./build.sh bench` builds the
// client and installs the peers, then runs it:
//
//	e2ebench -winx bin/winx -probe OUT/mcpprobe -testserver OUT/testserver -peers PEERS [-n 200]
//
// and ends with the answer-size rows (answerbytes.go); -answers prints only
// those, with no client or peer needed:
//
//	e2ebench -winx bin/winx -answers
//
// Every winx it starts runs with a throwaway HOME, XDG directories and
// WINX_SOCKET, so the user's state, rc file and daemon are never touched.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"winx/cmd/internal/benchenv"
)

// protocol is the version every measure asks for: the peers speak it, and
// it makes the Go SDK client send tools/list instead of answering from its
// cache.
const protocol = "2025-11-25"

type config struct {
	winx, probe, testserver, peers string
	n, warmup, runs                int
	// answersOnly prints only the answer-size rows (answerbytes.go),
	// which need no client but this program.
	answersOnly bool
}

// measure is one row of the table.
type measure struct {
	name string
	// server is the stdio command line (run by mcpprobe through sh -c).
	server string
	tool   string
	args   string
	setup  []map[string]any // script steps run before the timed calls
	// peers name the rows this row is compared with.
	peers []string
	// calls, when set, caps the timed calls (and warm-up) of a slow peer.
	calls int
	// process: each sample is a whole mcpprobe process (spawn, handshake,
	// one call or list, exit), timed from outside; runs samples.
	process bool
}

func main() {
	var c config
	flag.StringVar(&c.winx, "winx", "bin/winx", "winx binary (winxd and winx-guardian beside it)")
	flag.StringVar(&c.probe, "probe", "", "mcpprobe binary (../shared/mcpclients/setup.sh)")
	flag.StringVar(&c.testserver, "testserver", "", "Go SDK reference server binary (optional)")
	flag.StringVar(&c.peers, "peers", "", "directory the peers were installed into (../shared/peers/setup.sh; optional)")
	flag.IntVar(&c.n, "n", 200, "timed calls per measure")
	flag.IntVar(&c.warmup, "warmup", 20, "untimed calls before each measure")
	flag.IntVar(&c.runs, "runs", 15, "timed client processes per session-start measure")
	flag.BoolVar(&c.answersOnly, "answers", false, "print only the bytes the model receives per call of a small task (no -probe needed)")
	replayDir := flag.String("replay", "", "serve stdio from the answers recorded in this directory (used by the replay rows)")
	flag.Parse()
	if *replayDir != "" {
		if err := replay(*replayDir, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "e2ebench -replay:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if c.probe == "" && !c.answersOnly {
		return errors.New("-probe is required")
	}
	winx, err := filepath.Abs(c.winx)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "winx-e2ebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// winxd and the guardians outlive their adapters by design; the ones
	// this run started (their sockets are under tmp) end with it.
	defer benchenv.StopServers(tmp)
	if err := benchenv.Isolate(tmp); err != nil {
		return err
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	big := filepath.Join(ws, "big.txt")
	if err := os.WriteFile(big, fileOf(400, 24<<10), 0o600); err != nil {
		return err
	}

	// Every winx measure starts from an Initialize whose thread id and
	// workspace root the timed calls name.
	initStep := []map[string]any{{
		"tool": "Initialize",
		"args": map[string]any{"type": "first_call", "any_workspace_path": ws},
		"save": map[string]string{"tid": "data.thread_id", "root": "data.workspace_root"},
	}}
	bound := func(extra string) string {
		return `{"thread_id":"${tid}","workspace_root":"${root}",` + extra + `}`
	}
	daemon := "WINX_RUNTIME=daemon exec " + shellQuote(winx)
	embedded := "WINX_RUNTIME=embedded exec " + shellQuote(winx)
	echo := bound(`"action_json":{"type":"command","command":"echo hi"}`)
	var fsServer, dcServer string
	if c.peers != "" {
		fsServer = "exec node " + shellQuote(filepath.Join(c.peers, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")) + " " + shellQuote(ws)
		dcServer = "exec node " + shellQuote(filepath.Join(c.peers, "node_modules/@wonderwhy-er/desktop-commander/dist/index.js"))
	}
	// The answer-size rows: the filesystem server is started on their own
	// workspace.
	var fsAnswers string
	if c.peers != "" {
		fsAnswers = "exec node " + shellQuote(filepath.Join(c.peers, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")) + " ${ws}"
	}
	if c.answersOnly {
		return printAnswers(tmp, daemon, fsAnswers, dcServer)
	}
	// DesktopCommander answers in seconds (it waits on the process it
	// started, and on its own bookkeeping): a few calls show its p50.
	const dcCalls = 5
	var ms []measure
	ms = append(ms, measure{name: "BashCommand echo hi (embedded)", server: embedded, tool: "BashCommand", args: echo, setup: initStep})
	echoPeers := []string{"BashCommand echo hi (embedded)"}
	if dcServer != "" {
		ms = append(ms, measure{name: "DesktopCommander start_process echo", server: dcServer, tool: "start_process", args: `{"command":"echo hi","timeout_ms":5000}`, calls: dcCalls})
		echoPeers = append(echoPeers, "DesktopCommander start_process echo")
	}
	ms = append(ms, measure{name: "BashCommand echo hi (daemon)", server: daemon, tool: "BashCommand", args: echo, setup: initStep, peers: echoPeers})
	// The same command in a confined session (WINX_SANDBOX=1: Landlock,
	// seccomp, no capabilities): confinement is set up when the shell
	// starts and should cost nothing per command. The sandbox wants the
	// state directory (the wire secret) and the sockets inside the hidden
	// home directory, so this installation has its own.
	confinedHome := filepath.Join(tmp, "home")
	confined := "WINX_RUNTIME=daemon WINX_SANDBOX=1" +
		" XDG_STATE_HOME=" + shellQuote(filepath.Join(confinedHome, ".local", "state")) +
		" XDG_RUNTIME_DIR=" + shellQuote(filepath.Join(confinedHome, "run")) +
		" WINX_SOCKET=" + shellQuote(filepath.Join(confinedHome, "run", "winxd.sock")) +
		" exec " + shellQuote(winx)
	if err := os.MkdirAll(filepath.Join(confinedHome, "run"), 0o700); err != nil {
		return err
	}
	ms = append(ms, measure{name: "BashCommand echo hi (daemon, sandboxed)", server: confined, tool: "BashCommand", args: echo, setup: initStep,
		peers: []string{"BashCommand echo hi (daemon)"}})
	var readPeers []string
	if fsServer != "" {
		ms = append(ms,
			measure{name: "filesystem read_text_file 24 KB", server: fsServer, tool: "read_text_file", args: fmt.Sprintf(`{"path":%q}`, big)},
			measure{name: "DesktopCommander read_file 24 KB", server: dcServer, tool: "read_file", args: fmt.Sprintf(`{"path":%q,"length":1000}`, big), calls: dcCalls})
		readPeers = []string{"filesystem read_text_file 24 KB", "DesktopCommander read_file 24 KB"}
	}
	readBig := bound(fmt.Sprintf(`"file_paths":[%q]`, big))
	ms = append(ms,
		measure{name: "ReadFiles 400 lines 24 KB", server: daemon, tool: "ReadFiles", args: readBig, setup: initStep, peers: readPeers},
		measure{name: "ReadFiles 20 lines", server: daemon, tool: "ReadFiles", args: bound(fmt.Sprintf(`"file_paths":[%q]`, big+":1-20")), setup: initStep},
	)
	// The client's floor for the same answers: a server that replays the
	// bytes winx (and the filesystem server) answered, doing no work.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	winxReplay := filepath.Join(tmp, "replay-winx")
	if err := recordAnswers(winxReplay, daemon, initStep[0]["args"].(map[string]any), "ReadFiles", readBig); err != nil {
		return fmt.Errorf("recording winx's ReadFiles answer: %w", err)
	}
	winxOnce := filepath.Join(tmp, "replay-winx-once")
	if err := dropOutput(winxReplay, winxOnce, "ReadFiles"); err != nil {
		return fmt.Errorf("winx's ReadFiles answer: %w", err)
	}
	ms = append(ms,
		measure{name: "replay of winx's ReadFiles answer", server: "exec " + shellQuote(self) + " -replay " + shellQuote(winxReplay),
			tool: "ReadFiles", args: "{}", peers: []string{"ReadFiles 400 lines 24 KB", "filesystem read_text_file 24 KB"}},
		// What the contract's second copy of the text costs the client.
		measure{name: "the same without output (text once)", server: "exec " + shellQuote(self) + " -replay " + shellQuote(winxOnce),
			tool: "ReadFiles", args: "{}", peers: []string{"replay of winx's ReadFiles answer", "filesystem read_text_file 24 KB"}})
	if fsServer != "" {
		fsReplay := filepath.Join(tmp, "replay-fs")
		if err := recordAnswers(fsReplay, fsServer, nil, "read_text_file", fmt.Sprintf(`{"path":%q}`, big)); err != nil {
			return fmt.Errorf("recording the filesystem server's answer: %w", err)
		}
		ms = append(ms, measure{name: "replay of filesystem's answer", server: "exec " + shellQuote(self) + " -replay " + shellQuote(fsReplay),
			tool: "read_text_file", args: "{}", peers: []string{"filesystem read_text_file 24 KB"}})
	}
	var listPeers []string
	if c.testserver != "" {
		ts, err := filepath.Abs(c.testserver)
		if err != nil {
			return err
		}
		ms = append(ms, measure{name: "Go SDK reference tools/list", server: "exec " + shellQuote(ts) + " --stdio", tool: "tools/list"})
		listPeers = []string{"Go SDK reference tools/list"}
	}
	ms = append(ms,
		measure{name: "tools/list", server: daemon, tool: "tools/list", peers: listPeers},
		measure{name: "ping", server: daemon, tool: "ping"},
		// Session start, whole client process included: a process that
		// only lists tools, an Initialize of a new workspace each time
		// (a new guardian and shell), and one that reattaches.
		measure{name: "client process listing tools", server: daemon, tool: "tools/list", process: true},
		measure{name: "Initialize new workspace (process)", server: daemon, tool: "Initialize", args: "new", process: true,
			peers: []string{"client process listing tools"}},
		measure{name: "Initialize reattach (process)", server: daemon, tool: "Initialize", args: fmt.Sprintf(`{"type":"first_call","any_workspace_path":%q}`, ws), process: true,
			peers: []string{"client process listing tools"}},
	)

	p50 := map[string]time.Duration{}
	fmt.Printf("e2ebench: p50 of %d calls each (warmup %d; DesktopCommander %d), %d client processes per session-start row, protocol %s, load average %s\n",
		c.n, c.warmup, dcCalls, c.runs, protocol, loadavg())
	fmt.Printf("%-36s %10s  %s\n", "measure", "p50", "ratio to peer")
	for _, m := range ms {
		bench := bench
		if m.process {
			bench = benchProcess
		}
		d, err := bench(c, tmp, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		p50[m.name] = d
		var ratios []string
		for _, peer := range m.peers {
			if pd, ok := p50[peer]; ok && pd > 0 {
				ratios = append(ratios, fmt.Sprintf("%.2fx %s", float64(d)/float64(pd), peer))
			}
		}
		fmt.Printf("%-36s %8.3fms  %s\n", m.name, float64(d.Microseconds())/1000, strings.Join(ratios, "; "))
	}
	return printAnswers(tmp, daemon, fsAnswers, dcServer)
}

// bench runs one measure in its own mcpprobe process and returns its p50.
func bench(c config, tmp string, m measure) (time.Duration, error) {
	n, warmup := c.n, c.warmup
	if m.calls > 0 {
		n, warmup = min(n, m.calls), min(warmup, 1)
	}
	args := []string{"bench", "--stdio", m.server, "--protocol", protocol, "--tool", m.tool,
		"-n", strconv.Itoa(n), "-c", "1", "--warmup", strconv.Itoa(warmup)}
	if m.args != "" {
		args = append(args, "--args", m.args)
	}
	if len(m.setup) > 0 {
		b, err := json.Marshal(m.setup)
		if err != nil {
			return 0, err
		}
		f := filepath.Join(tmp, "setup.json")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			return 0, err
		}
		args = append(args, "--setup", f)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(c.probe, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("mcpprobe: %w: %s%s", err, out.String(), errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "latency_us ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "p50="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, err
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("no p50 in mcpprobe output: %s", out.String())
}

// benchProcess times c.runs whole client processes of m (mcpprobe list, or
// one call) and returns their p50. An Initialize whose args are "new"
// names a new workspace each time, so each starts a new session.
func benchProcess(c config, tmp string, m measure) (time.Duration, error) {
	var samples []time.Duration
	for i := range c.runs + 1 {
		args := []string{"list", "--stdio", m.server, "--protocol", protocol}
		if m.tool != "tools/list" {
			callArgs := m.args
			if callArgs == "new" {
				dir := filepath.Join(tmp, "new", strconv.Itoa(i))
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return 0, err
				}
				callArgs = fmt.Sprintf(`{"type":"first_call","any_workspace_path":%q}`, dir)
			}
			args = []string{"call", "--stdio", m.server, "--protocol", protocol, "--tool", m.tool, "--args", callArgs}
		}
		start := time.Now()
		out, err := exec.Command(c.probe, args...).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("mcpprobe: %w: %s", err, out)
		}
		if i > 0 { // the first run warms winxd and the caches
			samples = append(samples, time.Since(start))
		}
	}
	slices.Sort(samples)
	return samples[len(samples)/2], nil
}

// fileOf returns lines lines of text totalling about size bytes.
func fileOf(lines, size int) []byte {
	var b bytes.Buffer
	per := size/lines - 1
	for i := range lines {
		s := fmt.Sprintf("line %d: ", i+1)
		for len(s) < per {
			s += "lorem ipsum "
		}
		b.WriteString(s[:per])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
