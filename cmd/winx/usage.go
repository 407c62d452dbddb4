package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"winx/mcp"
	"winx/mcp/usage"
)

// openUsageLog opens WINX_USAGE_LOG with WINX_USAGE_ROTATION
// (daily|hourly|never) and WINX_USAGE_RETENTION_DAYS (0 keeps forever).
func openUsageLog(path, build string) (*usage.Log, error) {
	opts := usage.Options{Rotation: os.Getenv("WINX_USAGE_ROTATION"), Build: build}
	if v := os.Getenv("WINX_USAGE_RETENTION_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("winx: WINX_USAGE_RETENTION_DAYS must be a number of days, not %q", v)
		}
		opts.RetentionDays = n
		if n == 0 {
			opts.RetentionDays = usage.KeepForever
		}
	}
	l, err := usage.Open(path, opts)
	if err != nil {
		return nil, fmt.Errorf("winx: usage log: %w", err)
	}
	return l, nil
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
		})
		if err != nil {
			logger.Warn("usage log write failed", "err", err)
		}
	}
}

// runReport is `winx report`: a summary of the usage log.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("winx report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("log", os.Getenv("WINX_USAGE_LOG"), "usage log (default $WINX_USAGE_LOG)")
	last := fs.Int("last", 0, "only the newest N calls (0 = all)")
	sinceMinutes := fs.Int("since-minutes", 0, "only calls from the last M minutes (0 = all)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if *path == "" || fs.NArg() > 0 || *last < 0 || *sinceMinutes < 0 {
		fmt.Fprintln(stderr, "usage: winx report [--log FILE] [--last N] [--since-minutes M]")
		return errUsage
	}
	var since time.Time
	if *sinceMinutes > 0 {
		since = time.Now().Add(-time.Duration(*sinceMinutes) * time.Minute)
	}
	entries, err := usage.ReadEntries(*path, since, *last)
	if err != nil {
		return fmt.Errorf("winx report: %w", err)
	}
	_, err = io.WriteString(stdout, usage.Summarize(entries).Text())
	return err
}
