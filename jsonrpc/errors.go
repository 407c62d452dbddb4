package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a wire error object. It is also a Go error, so handlers can return
// one and have it reach the peer unchanged.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc: code %d: %s", e.Code, e.Message) }

// NewError returns a wire error without data.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// NewErrorWithData returns a wire error whose data is v marshalled to JSON.
func NewErrorWithData(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// AsWireError converts any handler error into the object sent to the peer:
// a *Error anywhere in the chain is kept, everything else becomes an internal
// error whose text does not leak the Go error (it may hold paths or secrets).
func AsWireError(err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return NewError(CodeInternalError, "internal error")
}

// Sentinel errors of the transport layer.
var (
	// ErrClosed is returned by operations on a closed connection.
	ErrClosed = errors.New("jsonrpc: connection closed")
	// ErrFrameTooLarge reports a frame over the framer's limit. The framer
	// has skipped it and can keep reading.
	ErrFrameTooLarge = errors.New("jsonrpc: frame too large")
	// ErrStopped is the cause of a running call's context when its
	// connection ended under it (Run's context ended or its input did, and
	// the grace ran out), as opposed to the peer cancelling the call.
	ErrStopped = errors.New("jsonrpc: connection stopped")

	// ErrNoResponse, returned by a Handler, suppresses the response to a call
	// (MCP: a cancelled request is not answered).
	ErrNoResponse = errors.New("jsonrpc: no response")
)
