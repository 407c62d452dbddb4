package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"winx/cmd/internal/config"
	"winx/cmd/internal/oplog"
	"winx/guardian/wire"
	"winx/mcp"
	"winx/mcp/usage"
)

// openUsageLog opens WINX_USAGE_LOG with the rotation and retention the
// configuration read.
func openUsageLog(c *config.Serve, build string) (*usage.Log, error) {
	opts := c.Usage
	opts.Build = build
	l, err := usage.Open(c.UsageLog, opts)
	if err != nil {
		return nil, fmt.Errorf("winx: usage log: %w", err)
	}
	return l, nil
}

// usageArgsKey is the installation's key of the usage log's arguments
// digests (usage.ArgsKeyFileName in the state directory), made on first use.
// The file is the wire secret's kind and passes its checks: a file that is
// a symbolic link, not regular, not this user's or readable by others is
// refused, and so is the usage log, rather than writing digests anyone could
// confirm.
func usageArgsKey(stateDir string) ([]byte, error) {
	if stateDir == "" {
		return nil, errors.New("winx: usage log: no state directory for the arguments digest key (set XDG_STATE_HOME or HOME)")
	}
	s, err := wire.EnsureSecret(filepath.Join(stateDir, usage.ArgsKeyFileName))
	if err != nil {
		return nil, fmt.Errorf("winx: usage log: arguments digest key: %w", err)
	}
	return hex.DecodeString(s) // EnsureSecret checked it is hex
}

// usageObserver records finished tool calls; a failing write is logged and
// never fails the call.
func usageObserver(l *usage.Log, logger *slog.Logger) func(mcp.ToolCallRecord) {
	return func(r mcp.ToolCallRecord) {
		outcome := usage.OutcomeOK
		switch {
		case r.ProtocolError:
			outcome = usage.OutcomeProtocolError
		case r.IsError:
			outcome = usage.OutcomeToolError
		}
		err := l.Record(usage.Entry{
			Time: time.Now(), Tool: r.Tool, Outcome: outcome, Status: r.Status, ErrorCode: r.ErrorCode,
			DurationMs: float64(r.Duration.Microseconds()) / 1000, ResponseBytes: r.ResponseBytes,
			Principal: r.Principal, Correlation: r.Correlation, ArgsDigest: r.ArgsDigest,
			Type: usage.EventToolCall, RequestID: r.RequestID,
			Action: r.Facts.Action, Category: r.Facts.Category, Session: r.Facts.Session, Batch: r.Facts.Batch,
			WorkerLimit: r.Facts.WorkerLimit, ContextBytes: r.Facts.ContextBytes, GuidelinesBytes: r.Facts.GuidelinesBytes,
			InitialFiles: r.Facts.InitialFiles, ClientName: r.ClientName, ClientVersion: r.ClientVersion, Protocol: r.Protocol,
		})
		if err != nil {
			logger.Warn("usage log write failed", "err", err)
		}
	}
}

// usageHTTPObserver records finished HTTP requests as http_request events
// carrying the request id their tool calls carry.
func usageHTTPObserver(l *usage.Log, logger *slog.Logger) func(oplog.HTTPRequest) {
	return func(r oplog.HTTPRequest) {
		err := l.Record(usage.Entry{
			Time: time.Now(), Type: usage.EventHTTPRequest, RequestID: r.RequestID,
			Method: r.Method, Path: r.Path, HTTPStatus: r.Status,
			DurationMs: float64(r.Duration.Microseconds()) / 1000, ResponseBytes: int(r.Bytes),
		})
		if err != nil {
			logger.Warn("usage log write failed", "err", err)
		}
	}
}

// runReport is `winx report`: a summary of the usage log.
func runReport(r config.Report, stdout io.Writer) error {
	var since time.Time
	if r.SinceMinutes > 0 {
		since = time.Now().Add(-time.Duration(r.SinceMinutes) * time.Minute)
	}
	entries, err := usage.ReadEntries(r.Log, since, r.Last)
	if err != nil {
		return fmt.Errorf("winx report: %w", err)
	}
	_, err = io.WriteString(stdout, usage.Summarize(entries).Text())
	return err
}
