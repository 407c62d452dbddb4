package main

// The replay rows measure the client's floor: a server that does no work
// and answers a tool call with the exact bytes a real server answered. The
// Go SDK client's time to read and decode an answer grows with its size,
// so a read's p50 is this floor plus the server's own share; the replay
// row of each server says how much of its row is the client's.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// maxAnswer bounds one recorded or replayed line.
const maxAnswer = 16 << 20

// replayFiles are the answers a replay directory holds: the handshake's and
// one tool call's, named by the tool ("call-<name>.json").
const (
	replayInitialize = "initialize.json"
	replayToolsList  = "tools-list.json"
)

func replayCall(tool string) string { return "call-" + tool + ".json" }

// stdioPeer is a recording client: one server process, one JSON line out,
// the answer with the same id back.
type stdioPeer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startPeer(command string) (*stdioPeer, error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &stdioPeer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}, nil
}

// call sends one request and returns its answer's raw line.
func (p *stdioPeer) call(method string, params any) ([]byte, error) {
	p.next++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.next, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	want := []byte(fmt.Sprint(p.next))
	// A server that does not answer within a minute is killed, which ends
	// the read below.
	timer := time.AfterFunc(time.Minute, func() { p.cmd.Process.Kill() })
	defer timer.Stop()
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: no answer: %w", method, err)
		}
		if len(line) > maxAnswer {
			return nil, fmt.Errorf("%s: answer of %d bytes", method, len(line))
		}
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &head) == nil && bytes.Equal(head.ID, want) {
			return bytes.TrimRight(line, "\n"), nil
		}
		// A notification or a server request: not the answer.
	}
}

func (p *stdioPeer) notify(method string) error {
	_, err := fmt.Fprintf(p.in, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
	return err
}

func (p *stdioPeer) close() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// recordAnswers runs server, does the handshake, runs the setup calls (a
// winx Initialize whose thread id and root the call needs, or none), then
// one call of tool with args, and keeps every answer in dir for a replay.
// args may name "${tid}" and "${root}", filled from Initialize's data.
func recordAnswers(dir, server string, setup map[string]any, tool, args string) error {
	p, err := startPeer(server)
	if err != nil {
		return err
	}
	defer p.close()
	answers := map[string][]byte{}
	answers[replayInitialize], err = p.call("initialize", map[string]any{
		"protocolVersion": protocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2ebench-recorder", "version": "1"}})
	if err != nil {
		return err
	}
	if err := p.notify("notifications/initialized"); err != nil {
		return err
	}
	if answers[replayToolsList], err = p.call("tools/list", map[string]any{}); err != nil {
		return err
	}
	if setup != nil {
		line, err := p.call("tools/call", map[string]any{"name": "Initialize", "arguments": setup})
		if err != nil {
			return err
		}
		tid, root, err := sessionOf(line)
		if err != nil {
			return err
		}
		args = strings.NewReplacer("${tid}", tid, "${root}", root).Replace(args)
	}
	answers[replayCall(tool)], err = p.call("tools/call", map[string]any{"name": tool, "arguments": json.RawMessage(args)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, line := range answers {
		if err := os.WriteFile(filepath.Join(dir, name), line, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// dropOutput writes to dst the answers of src with the tool call's
// structuredContent.output removed: the answer without its text's second
// copy, which the envelope contract (docs/tools.md) requires.
func dropOutput(src, dst, tool string) error {
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return err
	}
	path := filepath.Join(dst, replayCall(tool))
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var answer struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Result  map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		return err
	}
	var structured map[string]json.RawMessage
	if err := json.Unmarshal(answer.Result["structuredContent"], &structured); err != nil {
		return err
	}
	if _, ok := structured["output"]; !ok {
		return errors.New("the answer has no structuredContent.output")
	}
	delete(structured, "output")
	if answer.Result["structuredContent"], err = marshalExact(structured); err != nil {
		return err
	}
	if b, err = marshalExact(answer); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// marshalExact encodes v without escaping <, > and &, so the recorded
// text keeps its bytes.
func marshalExact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// replayAnswer is a recorded answer without its id: rest is the object's
// members after the id, so an answer is `{"id":<id>,` + rest.
type replayAnswer struct{ rest []byte }

func loadAnswer(path string) (replayAnswer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return replayAnswer{}, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return replayAnswer{}, fmt.Errorf("%s: %w", path, err)
	}
	delete(members, "id")
	rest, err := marshalExact(members) // once, here, not per answer
	if err != nil {
		return replayAnswer{}, err
	}
	return replayAnswer{rest: rest[1:]}, nil
}

// replay serves stdio from the answers in dir until its input ends: each
// request gets the recorded answer of its method (tools/call: of its tool)
// with its own id; ping gets an empty result; notifications get nothing.
func replay(dir string, in io.Reader, out io.Writer) error {
	answers := map[string]replayAnswer{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		a, err := loadAnswer(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		answers[e.Name()] = a
	}
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriterSize(out, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue
		}
		var rest []byte
		switch req.Method {
		case "initialize":
			rest = answers[replayInitialize].rest
		case "tools/list":
			rest = answers[replayToolsList].rest
		case "tools/call":
			rest = answers[replayCall(req.Params.Name)].rest
		case "ping":
			rest = []byte(`"jsonrpc":"2.0","result":{}}`)
		}
		if rest == nil {
			rest = []byte(`"jsonrpc":"2.0","error":{"code":-32601,"message":"not recorded"}}`)
		}
		w.WriteString(`{"id":`)
		w.Write(req.ID)
		w.WriteByte(',')
		w.Write(rest)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
