package tools

import (
	"slices"

	"winx/mcp"
)

// Tool profiles (docs/tools.md, "Catalog and profiles"). A profile names tools;
// tools this build does not have yet are simply absent from its catalog.
var profiles = map[string][]string{
	"full":      {InitializeTool, BashCommandTool, ReadFilesTool, EditFilesTool, ContextSaveTool, ReadImageTool, CodeMapTool},
	"coding":    {InitializeTool, BashCommandTool, ReadFilesTool, EditFilesTool, CodeMapTool},
	"read-only": {InitializeTool, ReadFilesTool, ReadImageTool, CodeMapTool},
	"terminal":  {InitializeTool, BashCommandTool},
}

// editAliases lower into EditFiles: a caller may use them exactly when it
// may use EditFiles.
var editAliases = []string{FileWriteOrEditTool, MultiFileEditTool, ApplyPatchTool, UndoEditTool}

// Profiles returns the profile names and their tools, for validating
// configuration.
func Profiles() map[string][]string {
	out := make(map[string][]string, len(profiles))
	for k, v := range profiles {
		out[k] = slices.Clone(v)
	}
	return out
}

// ProfileFor builds the mcp.Profile of a caller: an exact allowlist when
// allowed is non-empty, else the named profile ("" means full). The hidden
// EditFiles aliases follow EditFiles.
func ProfileFor(name string, allowed []string) mcp.Profile {
	tools := allowed
	label := "allowlist"
	if len(tools) == 0 {
		if name == "" {
			name = "full"
		}
		if name == "full" {
			return mcp.FullProfile()
		}
		tools, label = profiles[name], name
	}
	tools = slices.Clone(tools)
	if slices.Contains(tools, EditFilesTool) {
		tools = append(tools, editAliases...)
	}
	return mcp.NewProfile(label, tools)
}
