package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"winx/auth/admission"
	"winx/mcp"
)

// A tool that waits (on a shell, say) gives its principal's CPU slot back
// while it waits: the same principal's next call, to a tool that computes,
// is answered meanwhile instead of queueing behind the wait. Both ways a
// call runs: plainly, and as a call that may become a task (BashCommand's).
func TestWaitingToolHoldsNoCPUSlot(t *testing.T) {
	for _, exec := range []*mcp.ToolExecution{nil, {TaskSupport: mcp.TaskOptional}} {
		name := "plain"
		if exec != nil {
			name = "task-capable"
		}
		t.Run(name, func(t *testing.T) { testWaitingToolHoldsNoCPUSlot(t, exec) })
	}
}

func testWaitingToolHoldsNoCPUSlot(t *testing.T, exec *mcp.ToolExecution) {
	entered := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	reg := mcp.NewRegistry()
	schema := json.RawMessage(`{"type":"object"}`)
	reg.AddTool(mcp.Tool{Name: "wait", InputSchema: schema, Waits: true, Execution: exec},
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			close(entered)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{}, nil
		})
	reg.AddTool(mcp.Tool{Name: "compute", InputSchema: schema},
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	// Two slots and two principals: alice may compute one request at once.
	base := startServerWith(t, &Options{Admission: admission.Options{MaxConcurrency: 8, CPUSlots: 2}}, reg)
	// A client that declared the tasks extension, so that a task-capable
	// tool runs the way it does for such clients.
	call := func(tool string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.TasksExtension + `":{}}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"cpu-test","version":"1"}},` +
			`"name":"` + tool + `","arguments":{}}}`
		req := mcpRequest(t, base, aliceToken, strings.NewReader(body))
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		return status(t, http.DefaultClient, req)
	}
	waited := make(chan int, 1)
	go func() { waited <- call("wait") }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting tool never ran")
	}
	answered := make(chan int, 1)
	go func() { answered <- call("compute") }()
	select {
	case code := <-answered:
		if code != http.StatusOK {
			t.Fatalf("compute = %d, want 200", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("alice's compute call queued behind her waiting tool: the wait held her CPU slot")
	}
	release <- struct{}{}
	if code := <-waited; code != http.StatusOK {
		t.Errorf("wait = %d, want 200", code)
	}
}
