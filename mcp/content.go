package mcp

import "encoding/json"

// Content is one block of a tool result or prompt message. The concrete types
// below marshal with their "type" discriminator, so no caller writes it.
type Content interface {
	contentType() string
}

// Annotations are optional hints on content and resources.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// TextContent is plain text.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// ImageContent is a base64-encoded image.
type ImageContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// AudioContent is base64-encoded audio.
type AudioContent struct {
	Data        string       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// ResourceLink points at a resource without including it.
type ResourceLink struct {
	Resource
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitempty"`
}

func (*TextContent) contentType() string      { return "text" }
func (*ImageContent) contentType() string     { return "image" }
func (*AudioContent) contentType() string     { return "audio" }
func (*ResourceLink) contentType() string     { return "resource_link" }
func (*EmbeddedResource) contentType() string { return "resource" }

// withType marshals v (a pointer to a plain struct) and prepends "type".
func withType(typ string, v any) ([]byte, error) {
	body, err := marshalPlain(v)
	if err != nil {
		return nil, err
	}
	prefix := `{"type":` + string(mustMarshal(typ))
	if string(body) == "{}" {
		return []byte(prefix + "}"), nil
	}
	return append([]byte(prefix+","), body[1:]...), nil
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mcp: value must marshal: " + err.Error())
	}
	return b
}

// The aliases drop the MarshalJSON method so withType does not recurse.
type (
	textContentFields      TextContent
	imageContentFields     ImageContent
	audioContentFields     AudioContent
	resourceLinkFields     ResourceLink
	embeddedResourceFields EmbeddedResource
)

func (c *TextContent) MarshalJSON() ([]byte, error) {
	return withType(c.contentType(), (*textContentFields)(c))
}
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return withType(c.contentType(), (*imageContentFields)(c))
}
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return withType(c.contentType(), (*audioContentFields)(c))
}
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return withType(c.contentType(), (*resourceLinkFields)(c))
}
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	return withType(c.contentType(), (*embeddedResourceFields)(c))
}

// ResourceContents is the text or the base64 blob of one resource.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MIMEType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// TextResource returns text contents for uri.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: &text}
}

// BlobResource returns base64 contents for uri.
func BlobResource(uri, mimeType, base64Data string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: &base64Data}
}

// CallToolResult is a tools/call answer.
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
}

// TextResult is a one-block text result.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{&TextContent{Text: text}}}
}

// ErrorResult is a tool-level failure the model should read and recover from.
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{&TextContent{Text: text}}, IsError: true}
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is a prompts/get answer.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// ReadResourceResult is a resources/read answer.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}
