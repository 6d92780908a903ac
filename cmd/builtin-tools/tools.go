package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

func cmdTools(args []string, stdout, stderr io.Writer) int {
	var c common
	asJSON := false
	fs := flagSet("tools", "tools [flags]\n\nLists the tools a mode sees, one 'name<TAB>tier' line each.", stderr)
	c.register(fs, "elicit")
	fs.BoolVar(&asJSON, "json", false, "print the tools/list result as JSON")
	r, mode, code := c.openRun(fs, args, nil, nil, stderr)
	if r == nil {
		return code
	}
	defer r.Close()
	ctx := context.Background()
	cl, err := r.Client(ctx, mode)
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools tools: %v\n", err)
		return 1
	}
	defer cl.Close()
	res, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools tools: %v\n", err)
		return 1
	}
	if asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	for _, t := range res.Tools {
		tier := ""
		if t.Meta != nil {
			tier, _ = t.Meta.AdditionalFields[registry.MetaTier].(string)
		}
		fmt.Fprintf(stdout, "%s\t%s\n", t.Name, tier)
	}
	return 0
}
