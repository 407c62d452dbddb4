package mcptest

import (
	"context"

	"winx/mcp"
)

// addPrompts registers the prompts-* fixtures and the MRTR prompt.
func addPrompts(reg *mcp.Registry) {
	reg.AddPrompt(mcp.Prompt{
		Name: "test_simple_prompt", Title: "Simple Test Prompt",
		Description: "A simple prompt without arguments",
	}, func(context.Context, *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return userText("This is a simple prompt for testing."), nil
	}, nil)
	reg.AddPrompt(mcp.Prompt{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments",
		Description: "A prompt with required arguments",
		Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, func(_ context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return userText("Prompt with arguments: arg1='" + req.Arguments["arg1"] + "', arg2='" + req.Arguments["arg2"] + "'"), nil
	}, func(_ context.Context, argument, value string) []string {
		switch argument {
		case "arg1":
			return withPrefix([]string{"test", "testValue1", "example"}, value)
		case "arg2":
			return withPrefix([]string{"test", "testValue2", "sample"}, value)
		}
		return nil
	})
	reg.AddPrompt(mcp.Prompt{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments: []mcp.PromptArgument{
			{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
		},
	}, func(_ context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: mcp.TextResource(
				req.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing.")}},
			{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
		}}, nil
	}, nil)
	reg.AddPrompt(mcp.Prompt{
		Name: "test_prompt_with_image", Title: "Prompt With Image",
		Description: "A prompt that includes image content",
	}, func(context.Context, *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: "user", Content: &mcp.ImageContent{Data: TestImageBase64, MIMEType: "image/png"}},
			{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
		}}, nil
	}, nil)
	reg.AddPrompt(mcp.Prompt{
		Name:        "test_input_required_result_prompt",
		Description: "MRTR: prompt that requires elicitation input",
	}, mrtrPrompt, nil)
}

// userText is a one-message prompt in the user's voice.
func userText(text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: text}},
	}}
}
