package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema/*.json with the input schemas the code builds now")

// TestSchemaGolden pins the input schemas built from tables (the modes of
// Initialize, the actions of BashCommand) byte for byte: a table row changes
// what the model reads only when the golden changes with it.
func TestSchemaGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema json.RawMessage
	}{
		{InitializeTool, initializeSchema},
		{BashCommandTool, bashSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "schema", tc.name+".json")
			if *updateSchema {
				if err := os.WriteFile(path, tc.schema, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(tc.schema, want) {
				t.Errorf("%s input schema =\n%s\nwant (%s)\n%s", tc.name, tc.schema, path, want)
			}
			if !json.Valid(tc.schema) {
				t.Errorf("%s input schema is not valid JSON", tc.name)
			}
		})
	}
}
