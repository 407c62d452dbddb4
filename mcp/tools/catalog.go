// Package tools is the model-facing catalog of Winx: the tools, prompts and
// resources a client discovers, one file per tool (schema, decoding, the
// call into a domain package, the envelope) and call.go for what every call
// shares. Sessions, workspaces, policy and shells live below it, in
// mcp/session, mcp/workspace, auth/policy and guardian. It holds only
// entries that really work; nothing is listed to fill the catalog.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"winx/auth"
	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// AboutURI is the resource describing the running server.
const AboutURI = "winx://server/about"

// GuidePrompt is the prompt that explains how to work with Winx.
const GuidePrompt = "winx_guide"

// Options describe the server the catalog is built for.
type Options struct {
	// Build is the exact build identity (module version and VCS revision).
	Build string
	// Transport is "stdio" or "http".
	Transport string
	// Sessions is the session registry of Initialize and the session-bound
	// tools; nil registers none of them, so the catalog lists only tools
	// that work.
	Sessions *session.Sessions
	// ScratchRoot is where Initialize creates scratch playgrounds; ""
	// means DefaultScratchRoot.
	ScratchRoot string
	// Overview bounds the workspace context Initialize shows; zero fields
	// mean the defaults.
	Overview wspace.Limits
	// AllowPaths are extra roots file tools may use besides the workspace
	// (WINX_ALLOW_PATHS, parsed once at start with auth.ParseAllowPaths).
	AllowPaths []string
	// Protected is the server's deny list (its token files, principal
	// config and state directory): every file tool refuses those paths to
	// every principal, whatever AllowPaths says. Nil protects nothing.
	Protected *auth.Protected
	// Affinity is the session affinity mode: AffinityWorkspace (default,
	// also ""), AffinityConversation or AffinityThread.
	Affinity string
	// StateDir holds edit receipts and undo records (0700 directories,
	// 0600 files); "" disables both.
	StateDir string
	// Read tunes ReadFiles.
	Read ReadOptions
	// Redactor redacts file contents leaving the process; nil redacts with
	// the default rules.
	Redactor *redact.Redactor
	// KeepTailPipe keeps a trailing "| tail" in commands
	// (WINX_KEEP_TAIL_PIPE=1); by default it is dropped because output is
	// already bounded.
	KeepTailPipe bool
	// TurnRecognizer is WINX_TURN_RECOGNIZER_CONFIG, parsed and checked
	// at start; nil when unset (recognizer "configurable" is then refused).
	TurnRecognizer *guardian.TurnRecognizer
	// OpenContext opens each file ContextSave writes with the desktop's
	// default application, when there is one (WINX_OPEN_CONTEXT=1).
	OpenContext bool
	// ServerInstructions are the operator's instructions
	// (WINX_SERVER_INSTRUCTIONS); Initialize repeats them when a session
	// starts. The handshake gets them through Instructions.
	ServerInstructions string
	// Warnings are start-up facts the model must know, such as a shell
	// replaced by bash (WINX_SHELL=zsh without zsh); every Initialize
	// answer carries them.
	Warnings []string
}

func (o Options) redactor() *redact.Redactor {
	if o.Redactor != nil {
		return o.Redactor
	}
	return redact.New(false)
}

// about is the body of the about resource.
type about struct {
	Server            string   `json:"server"`
	Build             string   `json:"build"`
	Transport         string   `json:"transport"`
	ProtocolVersions  []string `json:"protocolVersions"`
	Tools             []string `json:"tools"`
	ConfinementPolicy string   `json:"confinementPolicy"`
}

// NewRegistry returns the Winx catalog.
func NewRegistry(opts Options) *mcp.Registry {
	reg := mcp.NewRegistry()
	if opts.Sessions != nil {
		addInitialize(reg, opts)
		addBashCommand(reg, opts)
		eds := newEditors(opts)
		addReadFiles(reg, opts, eds)
		addEditAliases(reg, addEditFiles(reg, opts, eds))
		addContextSave(reg, opts)
		addReadImage(reg, opts)
		addCodeMap(reg, opts)
		addHandoverPrompt(reg)
	}
	// After the last tool: every answer leaves through one redaction step.
	reg.WrapTools(redactingHandler(opts.redactor()))
	reg.AddResource(mcp.Resource{
		URI:         AboutURI,
		Name:        "about",
		Title:       "About this Winx server",
		Description: "Build identity, transport and protocol versions of the running Winx server.",
		MIMEType:    "application/json",
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		body := about{
			Server:            "winx",
			Build:             opts.Build,
			Transport:         opts.Transport,
			ProtocolVersions:  mcp.SupportedVersions(),
			Tools:             reg.ToolNames(),
			ConfinementPolicy: "file tools are confined to the workspace plus WINX_ALLOW_PATHS; commands run as the OS user that started winx; HTTP requires a bearer token",
		}
		b, err := json.MarshalIndent(body, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("tools: marshal about: %w", err)
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
			mcp.TextResource(AboutURI, "application/json", string(b)),
		}}, nil
	})
	reg.AddPrompt(mcp.Prompt{
		Name:        GuidePrompt,
		Title:       "Work with Winx",
		Description: "How to start a Winx session for a workspace and use its tools safely.",
		Arguments: []mcp.PromptArgument{{
			Name:        "workspace",
			Description: "Absolute path of the project to work on.",
			Required:    false,
		}},
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "Working with Winx",
			Messages: []mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: guideText(req.Arguments["workspace"], reg.ToolNames())},
			}},
		}, nil
	}, nil)
	return reg
}

func guideText(workspace string, tools []string) string {
	var b strings.Builder
	b.WriteString("You are connected to Winx, which gives you a durable shell and guarded file access on the user's machine.\n")
	if workspace != "" {
		fmt.Fprintf(&b, "Work in the workspace %s.\n", workspace)
	}
	if len(tools) == 0 {
		b.WriteString("This server currently offers no tools; read the about resource (" + AboutURI + ") for its build and capabilities.\n")
		return b.String()
	}
	b.WriteString("Available tools: " + strings.Join(tools, ", ") + ".\n")
	b.WriteString("Call Initialize first and pass the returned thread_id to every later call. Read a file before you edit it.\n")
	return b.String()
}
