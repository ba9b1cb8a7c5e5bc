package extension

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalogue is the extension's tools/list as the build wrote it (dist/catalogue.json), so the
// daemon can list every tool before a browser connects. A binary built without the extension
// has none (nil, nil).
func Catalogue() ([]*mcp.Tool, error) {
	b, err := fs.ReadFile(Dist, "dist/catalogue.json")
	if err != nil {
		return nil, nil
	}
	var c struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("extension: embedded catalogue: %w", err)
	}
	return c.Tools, nil
}
