package mcp

import "encoding/json"

// ResultHeader carries the fields every 2026-07-28 result has. Legacy answers
// leave it empty, and omitempty keeps it off their wire.
type ResultHeader struct {
	ResultType string         `json:"resultType,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

func (h *ResultHeader) header() *ResultHeader { return h }

// CacheHint carries the caching fields of cacheable 2026-07-28 results.
type CacheHint struct {
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

func (c *CacheHint) cacheHint() *CacheHint { return c }

// result is implemented by every typed result the server sends.
type result interface {
	header() *ResultHeader
}

type cacheable interface {
	cacheHint() *CacheHint
}

// EmptyResult answers requests with nothing to say (ping, setLevel...).
type EmptyResult struct {
	ResultHeader
}

// InitializeResult answers a legacy initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

func (*InitializeResult) header() *ResultHeader { return &ResultHeader{} }

// DiscoverResult answers server/discover.
type DiscoverResult struct {
	ResultHeader
	CacheHint
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
}

// ServerCapabilities is what the server offers.
type ServerCapabilities struct {
	Experimental map[string]any             `json:"experimental,omitempty"`
	Logging      *struct{}                  `json:"logging,omitempty"`
	Completions  *struct{}                  `json:"completions,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability says whether list-changed notifications are sent.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged"`
}

// ResourcesCapability describes resource support.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

// ListToolsResult answers tools/list.
type ListToolsResult struct {
	ResultHeader
	CacheHint
	Tools []Tool `json:"tools"`
}

// ListPromptsResult answers prompts/list.
type ListPromptsResult struct {
	ResultHeader
	CacheHint
	Prompts []Prompt `json:"prompts"`
}

// ListResourcesResult answers resources/list.
type ListResourcesResult struct {
	ResultHeader
	CacheHint
	Resources []Resource `json:"resources"`
}

// ListResourceTemplatesResult answers resources/templates/list.
type ListResourceTemplatesResult struct {
	ResultHeader
	CacheHint
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
}

// CompleteResult answers completion/complete.
type CompleteResult struct {
	ResultHeader
	Completion Completion `json:"completion"`
}

// Completion is the list of candidate values.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore"`
}

// InputRequiredResult asks a 2026-07-28 client to retry with input.
type InputRequiredResult struct {
	ResultHeader
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
}

// InputRequest is a server-to-client request carried inside a result
// (2026-07-28) or sent on the wire (legacy eras). It always carries params:
// strict clients decode the params of every request they receive, and an
// absent member fails them before they read the method (roots/list).
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// MarshalJSON writes params as {} when the request has none.
func (r InputRequest) MarshalJSON() ([]byte, error) {
	type fields InputRequest
	return json.Marshal(fields{Method: r.Method, Params: r.params()})
}

// params is r.Params, or an empty object when the request has none.
func (r InputRequest) params() any {
	if r.Params == nil {
		return map[string]any{}
	}
	if raw, ok := r.Params.(json.RawMessage); ok && (len(raw) == 0 || string(raw) == "null") {
		return map[string]any{}
	}
	return r.Params
}

// The wire results embed their header through the typed results below.
type callToolWire struct {
	ResultHeader
	*CallToolResult
}

type getPromptWire struct {
	ResultHeader
	*GetPromptResult
}

type readResourceWire struct {
	ResultHeader
	CacheHint
	*ReadResourceResult
}
