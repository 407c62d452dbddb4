package main

import (
	_ "embed"
	"encoding/base64"

	"winx/mcp"
)

// iconSVG is the server's icon (a terminal prompt), embedded so the
// handshake names no URL a client would have to fetch.
//
//go:embed icon.svg
var iconSVG []byte

// serverIcons are serverInfo.icons of the handshake, as the Rust Winx
// advertises them: one SVG as a data: URI (MCP 2025-11-25, Icon).
func serverIcons() []mcp.Icon {
	return []mcp.Icon{{
		Src:      "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(iconSVG),
		MIMEType: "image/svg+xml",
		Sizes:    []string{"any"},
	}}
}
