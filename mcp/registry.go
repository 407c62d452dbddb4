package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// ToolAnnotations are behaviour hints shown to clients.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Bool returns a pointer for the optional hint fields.
func Bool(b bool) *bool { return &b }

// ToolExecution declares task support (2025-11-25 execution.taskSupport).
type ToolExecution struct {
	// TaskSupport is "forbidden" (default), "optional" or "required".
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Tool describes a callable tool.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`

	// Hidden tools are callable by name but never listed (legacy aliases).
	Hidden bool `json:"-"`
	// Waits marks a tool whose handler mostly waits (on a shell, a process
	// it starts) rather than computes: it runs with the caller's CPU share
	// paused (see CPUShare), so that its wait never holds a run slot. The
	// others compute under the share.
	Waits bool `json:"-"`
}

// ToolHandler runs a tool. A *jsonrpc.Error return reaches the client as a
// protocol error; any other error is a server fault. Recoverable failures are
// results with IsError set, never Go errors.
type ToolHandler func(ctx context.Context, req *ToolRequest) (*CallToolResult, error)

// PromptArgument describes one prompt argument.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt describes a prompt template.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
}

// PromptHandler renders a prompt from its arguments.
type PromptHandler func(ctx context.Context, req *PromptRequest) (*GetPromptResult, error)

// Resource describes a concrete resource.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
}

// ResourceTemplate describes a family of resources by RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
}

// ResourceHandler reads a resource. Returning ErrResourceNotFound gives the
// era's not-found error.
type ResourceHandler func(ctx context.Context, req *ResourceRequest) (*ReadResourceResult, error)

// Completer answers completion/complete for a prompt argument or template
// variable; it returns candidate values.
type Completer func(ctx context.Context, argument, value string) []string

// Registry holds what the server offers. It is filled before serving starts
// and read-only afterwards, so it needs no lock.
// Invariant: names (and URIs) are unique; tools keep registration order.
type Registry struct {
	tools     []*registeredTool
	toolIndex map[string]*registeredTool

	prompts     []*registeredPrompt
	promptIndex map[string]*registeredPrompt

	resources     []*registeredResource
	resourceIndex map[string]*registeredResource

	templates []*registeredTemplate

	// extensions are the server extensions the tools implement, advertised
	// in 2026-07-28 capabilities.extensions.
	extensions []string

	// toolsJSON caches the encoded tools/list catalog per set of tools.
	toolsJSON toolsCache
}

// AddExtension advertises a server extension (for example a result
// format a client may opt into).
func (r *Registry) AddExtension(name string) {
	if !slices.Contains(r.extensions, name) {
		r.extensions = append(r.extensions, name)
	}
}

type registeredTool struct {
	tool    Tool
	handler ToolHandler
	headers []headerParam // x-mcp-header annotations of tool.InputSchema
}

type registeredPrompt struct {
	prompt    Prompt
	handler   PromptHandler
	completer Completer
}

type registeredResource struct {
	resource Resource
	handler  ResourceHandler
}

type registeredTemplate struct {
	template  ResourceTemplate
	match     func(uri string) bool
	handler   ResourceHandler
	completer Completer
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		toolIndex:     make(map[string]*registeredTool),
		promptIndex:   make(map[string]*registeredPrompt),
		resourceIndex: make(map[string]*registeredResource),
	}
}

// AddTool registers a tool. It panics on a duplicate name, a tool without
// an input schema, or an invalid x-mcp-header annotation: all programming
// errors caught at start-up.
func (r *Registry) AddTool(t Tool, h ToolHandler) {
	if t.Name == "" || h == nil {
		panic("mcp: tool needs a name and a handler")
	}
	if _, dup := r.toolIndex[t.Name]; dup {
		panic(fmt.Sprintf("mcp: duplicate tool %q", t.Name))
	}
	if len(t.InputSchema) == 0 || !json.Valid(t.InputSchema) {
		panic(fmt.Sprintf("mcp: tool %q needs a valid input schema", t.Name))
	}
	headers, err := headerParams(t.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %q: %v", t.Name, err))
	}
	rt := &registeredTool{tool: t, handler: h, headers: headers}
	r.tools = append(r.tools, rt)
	r.toolsJSON.reset()
	r.toolIndex[t.Name] = rt
}

// WrapTools replaces the handler of every tool registered so far with
// wrap(name, handler). A catalog calls it once, after its last AddTool, to
// put one step (the redaction of everything a tool answers) between every
// handler and the wire, the task path included.
func (r *Registry) WrapTools(wrap func(name string, h ToolHandler) ToolHandler) {
	for _, rt := range r.tools {
		rt.handler = wrap(rt.tool.Name, rt.handler)
	}
}

// AddPrompt registers a prompt; completer may be nil.
func (r *Registry) AddPrompt(p Prompt, h PromptHandler, completer Completer) {
	if p.Name == "" || h == nil {
		panic("mcp: prompt needs a name and a handler")
	}
	if _, dup := r.promptIndex[p.Name]; dup {
		panic(fmt.Sprintf("mcp: duplicate prompt %q", p.Name))
	}
	rp := &registeredPrompt{prompt: p, handler: h, completer: completer}
	r.prompts = append(r.prompts, rp)
	r.promptIndex[p.Name] = rp
}

// AddResource registers a concrete resource.
func (r *Registry) AddResource(res Resource, h ResourceHandler) {
	if res.URI == "" || h == nil {
		panic("mcp: resource needs a uri and a handler")
	}
	if _, dup := r.resourceIndex[res.URI]; dup {
		panic(fmt.Sprintf("mcp: duplicate resource %q", res.URI))
	}
	rr := &registeredResource{resource: res, handler: h}
	r.resources = append(r.resources, rr)
	r.resourceIndex[res.URI] = rr
}

// AddResourceTemplate registers a template; match decides whether a URI
// belongs to it, completer (optional) completes its variables.
func (r *Registry) AddResourceTemplate(t ResourceTemplate, match func(uri string) bool, h ResourceHandler, completer Completer) {
	if t.URITemplate == "" || match == nil || h == nil {
		panic("mcp: resource template needs a template, a matcher and a handler")
	}
	r.templates = append(r.templates, &registeredTemplate{template: t, match: match, handler: h, completer: completer})
}

func (r *Registry) hasTools() bool     { return len(r.tools) > 0 }
func (r *Registry) hasPrompts() bool   { return len(r.prompts) > 0 }
func (r *Registry) hasResources() bool { return len(r.resources) > 0 || len(r.templates) > 0 }

func (r *Registry) hasCompletions() bool {
	for _, p := range r.prompts {
		if p.completer != nil {
			return true
		}
	}
	for _, t := range r.templates {
		if t.completer != nil {
			return true
		}
	}
	return false
}

func (r *Registry) findResource(uri string) (ResourceHandler, bool) {
	if rr, ok := r.resourceIndex[uri]; ok {
		return rr.handler, true
	}
	for _, t := range r.templates {
		if t.match(uri) {
			return t.handler, true
		}
	}
	return nil, false
}

// ToolNames returns the registered tool names, listed ones first in
// registration order; used to validate allowlists at start-up.
func (r *Registry) ToolNames() []string {
	names := make([]string, 0, len(r.tools))
	for _, t := range r.tools {
		names = append(names, t.tool.Name)
	}
	return names
}

// Profile decides which tools a caller may discover and call. The zero value
// allows every tool.
type Profile struct {
	// Name is shown in logs ("full", "coding", a principal's allowlist...).
	Name string
	// allowed is nil for "every tool".
	allowed map[string]bool
}

// FullProfile allows every registered tool.
func FullProfile() Profile { return Profile{Name: "full"} }

// NewProfile allows exactly the named tools.
func NewProfile(name string, tools []string) Profile {
	allowed := make(map[string]bool, len(tools))
	for _, t := range tools {
		allowed[t] = true
	}
	return Profile{Name: name, allowed: allowed}
}

// Allows reports whether the profile lets a caller see and call tool.
func (p Profile) Allows(tool string) bool { return p.allowed == nil || p.allowed[tool] }

// Restricted reports whether the profile shapes the catalog, which makes
// list results private to the caller for caching.
func (p Profile) Restricted() bool { return p.allowed != nil }

// Tools returns the allowed tool names in sorted order (nil for all).
func (p Profile) Tools() []string {
	if p.allowed == nil {
		return nil
	}
	names := make([]string, 0, len(p.allowed))
	for n := range p.allowed {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate reports the profile's names that the registry does not know.
func (p Profile) Validate(r *Registry) error {
	var unknown []string
	for _, n := range p.Tools() {
		if _, ok := r.toolIndex[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("mcp: profile %q names unknown tools %v (known: %v)", p.Name, unknown, r.ToolNames())
	}
	return nil
}

func (r *Registry) listTools(p Profile) []Tool {
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		if !t.tool.Hidden && p.Allows(t.tool.Name) {
			out = append(out, t.tool)
		}
	}
	return out
}

func (r *Registry) lookupTool(p Profile, name string) (*registeredTool, bool) {
	t, ok := r.toolIndex[name]
	if !ok || !p.Allows(name) {
		return nil, false
	}
	return t, true
}

// sortedKeys is a small helper for deterministic iteration in tests and errors.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
