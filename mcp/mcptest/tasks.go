package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"winx/jsonrpc"
	"winx/mcp"
)

// The tasks extension (SEP-2663) fixtures. Whether a call may become a task
// is package mcp's decision (the tool's TaskSupport and the request's
// declared extension); a handler that wants to run long calls Promote, and
// carries on as a plain call when Promote reports false.

// failDelay is how long failing_job and protocol_error_job run as tasks
// before they settle.
const failDelay = 200 * time.Millisecond

// addTaskTools registers the tasks-* tools.
func addTaskTools(reg *mcp.Registry) {
	optional := &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}
	required := &mcp.ToolExecution{TaskSupport: mcp.TaskRequired}

	reg.AddTool(mcp.Tool{
		Name:        "greet",
		Description: "Greets by name; always synchronous, never a task",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Who to greet"}},"required":["name"]}`),
	}, func(_ context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "slow_compute",
		Description: "Sleeps for the given seconds, then answers; runs as a task when the client allows",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"seconds":{"type":"number","description":"How long to compute"},` +
			`"label":{"type":"string","description":"Echoed in the result"}},"required":["seconds"]}`),
		Execution: optional,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Seconds float64 `json:"seconds"`
			Label   string  `json:"label"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		if args.Seconds > 0 {
			req.Promote()
		}
		if err := sleep(ctx, time.Duration(args.Seconds*float64(time.Second))); err != nil {
			return nil, err
		}
		return mcp.TextResult(fmt.Sprintf("Computed %q in %gs", args.Label, args.Seconds)), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "failing_job",
		Description: "Always a task; completes with a tool error (isError) shortly after starting",
		InputSchema: emptySchema,
		Execution:   required,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		req.Promote()
		if err := sleep(ctx, failDelay); err != nil {
			return nil, err
		}
		return mcp.ErrorResult("failing_job failed on purpose"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "protocol_error_job",
		Description: "Runs as a task that fails with a protocol error rather than a tool result",
		InputSchema: emptySchema,
		Execution:   optional,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		req.Promote()
		if err := sleep(ctx, failDelay); err != nil {
			return nil, err
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "protocol_error_job failed on purpose")
	})
	reg.AddTool(mcp.Tool{
		Name:        "confirm_delete",
		Description: "Runs as a task that asks for confirmation before pretending to delete a file",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"filename":{"type":"string","description":"File to delete"}},"required":["filename"]}`),
		Execution:   optional,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Filename string `json:"filename"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		req.Promote()
		answers, err := req.Input(ctx, map[string]mcp.InputRequest{
			"confirm_delete": elicitation("Delete "+args.Filename+"?",
				`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Confirm the deletion"}},"required":["confirm"]}`),
		})
		if err != nil {
			return nil, err
		}
		var e elicitResult
		if err := decodeAnswer(answers, "confirm_delete", &e); err != nil {
			return mcp.ErrorResult(err.Error()), nil
		}
		if e.Action != "accept" || e.field("confirm") != "true" {
			return mcp.TextResult("Kept " + args.Filename), nil
		}
		return mcp.TextResult("Deleted " + args.Filename), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "multi_input",
		Description: "Runs as a task that asks two questions at once",
		InputSchema: emptySchema,
		Execution:   optional,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		req.Promote()
		answers, err := req.Input(ctx, map[string]mcp.InputRequest{
			"first":  elicitation("First question: what is your name?", nameSchema),
			"second": elicitation("Second question: please confirm", `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
		})
		if err != nil {
			return nil, err
		}
		var first, second elicitResult
		if err := decodeAnswer(answers, "first", &first); err != nil {
			return mcp.ErrorResult(err.Error()), nil
		}
		if err := decodeAnswer(answers, "second", &second); err != nil {
			return mcp.ErrorResult(err.Error()), nil
		}
		return mcp.TextResult(fmt.Sprintf("Received %s and %s", first.Action, second.Action)), nil
	})
	// test_tool_with_task composes MRTR with tasks: the input is gathered
	// synchronously first, and only then does the call become a task.
	reg.AddTool(mcp.Tool{
		Name:        "test_tool_with_task",
		Description: "Asks the user's name by MRTR, then greets as a task",
		InputSchema: emptySchema,
		Execution:   required,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		answers, err := req.Input(ctx, map[string]mcp.InputRequest{
			"user_name": elicitation("What is your name?", nameSchema),
		})
		if err != nil {
			return nil, err
		}
		var e elicitResult
		if err := decodeAnswer(answers, "user_name", &e); err != nil {
			return mcp.ErrorResult(err.Error()), nil
		}
		req.Promote()
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
		return mcp.TextResult("Hello, " + e.field("name") + "!"), nil
	})
}
