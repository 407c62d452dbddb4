package mcptest

import (
	"context"
	"fmt"
	"strings"

	"winx/mcp"
)

const (
	templatePrefix = "test://template/"
	templateSuffix = "/data"
)

// addResources registers the static resources, in the order the suite
// expects (caching reads the first listed one), and the one template.
func addResources(reg *mcp.Registry) {
	static := func(r mcp.Resource, contents mcp.ResourceContents) {
		reg.AddResource(r, func(context.Context, *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{contents}}, nil
		})
	}
	static(mcp.Resource{
		URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MIMEType: "text/plain",
	}, mcp.TextResource("test://static-text", "text/plain", "This is the content of the static text resource."))
	static(mcp.Resource{
		URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (image) for testing", MIMEType: "image/png",
	}, mcp.BlobResource("test://static-binary", "image/png", TestImageBase64))
	static(mcp.Resource{
		URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource clients may subscribe to", MIMEType: "text/plain",
	}, mcp.TextResource("test://watched-resource", "text/plain", "Watched resource content"))

	reg.AddResourceTemplate(mcp.ResourceTemplate{
		URITemplate: templatePrefix + "{id}" + templateSuffix, Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MIMEType: "application/json",
	}, func(uri string) bool {
		_, ok := templateID(uri)
		return ok
	}, func(_ context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		id, ok := templateID(req.URI)
		if !ok {
			return nil, mcp.ErrResourceNotFound
		}
		text := fmt.Sprintf(`{"id":%s,"templateTest":true,"data":%s}`, mustJSON(id), mustJSON("Data for ID: "+id))
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
			mcp.TextResource(req.URI, "application/json", text),
		}}, nil
	}, func(_ context.Context, argument, value string) []string {
		if argument != "id" {
			return nil
		}
		return withPrefix([]string{"123", "456", "789"}, value)
	})
}

// templateID extracts {id} from test://template/{id}/data; the id is one
// non-empty path segment.
func templateID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, templatePrefix)
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, templateSuffix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

// withPrefix keeps the candidates that start with prefix; never nil, so a
// completion answer always carries a values array.
func withPrefix(candidates []string, prefix string) []string {
	out := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}
