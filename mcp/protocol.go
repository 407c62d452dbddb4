// Package mcp implements the Model Context Protocol server side for both eras
// on one endpoint: the stateless 2026-07-28 revision (per-request _meta,
// server/discover, resultType, the Tasks extension, subscriptions/listen) and
// the initialize-based revisions 2025-11-25, 2025-06-18, 2025-03-26 and
// 2024-11-05. It owns the registry of tools, prompts and resources, profiles
// that filter discovery and dispatch, the Winx result envelope, and the stdio
// and Streamable HTTP transports. It does not own authentication policy (the
// HTTP handler asks an Authenticator) nor any tool's domain logic.
//
// Spec: modelcontextprotocol.io/specification/2026-07-28 and /2025-11-25.
// Deliberate deviations:
//   - A modern request on a legacy stdio process is served statelessly, as the
//     dual-era rules allow; a legacy request without initialize on stdio is
//     served at 2025-03-26 rather than refused, for old clients that skip it.
//   - Pagination is never needed for our catalog sizes; list results carry no
//     nextCursor and any cursor is refused as invalid params.
package mcp

import "encoding/json"

// Protocol revisions.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"

	// LatestVersion is the newest revision served.
	LatestVersion = Version20260728
	// LatestLegacyVersion is what initialize answers for an unknown request.
	LatestLegacyVersion = Version20251125
	// DefaultHTTPLegacyVersion is assumed when a legacy HTTP request has no
	// MCP-Protocol-Version header (Streamable HTTP, 2025-06-18 onwards).
	DefaultHTTPLegacyVersion = Version20250326
)

// ModernVersions are the stateless revisions, newest first.
var modernVersions = []string{Version20260728}

// legacyVersions are the initialize-based revisions, newest first.
var legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// SupportedVersions lists every revision served, newest first.
func SupportedVersions() []string {
	return append(append([]string{}, modernVersions...), legacyVersions...)
}

func isModernVersion(v string) bool { return contains(modernVersions, v) }
func isLegacyVersion(v string) bool { return contains(legacyVersions, v) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// Reserved _meta keys of the 2026-07-28 revision.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
)

// MCP-specific error codes.
const (
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
	// CodeResourceNotFound is what 2026-07-28 uses for an unknown resource.
	CodeResourceNotFound = -32602
	// CodeLegacyResourceNotFound is the older, server-defined code.
	CodeLegacyResourceNotFound = -32002
)

// Result types.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	ResultTask          = "task"
)

// Cache scopes for cacheable results.
const (
	CacheScopePublic  = "public"
	CacheScopePrivate = "private"
)

// Implementation names a client or server.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is an image a client may show beside a tool, prompt or resource.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ClientCapabilities is kept as raw JSON objects per key: the server only
// asks whether a capability is present, and must not lose what it does not
// understand.
type ClientCapabilities map[string]json.RawMessage

// Has reports whether the client declared capability name (for example
// "sampling", "elicitation" or "roots").
func (c ClientCapabilities) Has(name string) bool {
	raw, ok := c[name]
	return ok && string(raw) != "null"
}

// HasExtension reports whether capabilities.extensions names ext.
func (c ClientCapabilities) HasExtension(ext string) bool {
	raw, ok := c["extensions"]
	if !ok {
		return false
	}
	var exts map[string]json.RawMessage
	if json.Unmarshal(raw, &exts) != nil {
		return false
	}
	v, ok := exts[ext]
	return ok && string(v) != "null"
}

// LoggingLevel is a syslog severity name used by notifications/message.
type LoggingLevel string

var loggingLevels = map[LoggingLevel]int{
	"debug": 0, "info": 1, "notice": 2, "warning": 3,
	"error": 4, "critical": 5, "alert": 6, "emergency": 7,
}

func (l LoggingLevel) valid() bool { _, ok := loggingLevels[l]; return ok }

// allows reports whether a message at level msg passes a threshold of l.
func (l LoggingLevel) allows(msg LoggingLevel) bool {
	return l.valid() && loggingLevels[msg] >= loggingLevels[l]
}
