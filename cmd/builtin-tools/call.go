package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

func cmdCall(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	outDir := "."
	fs := flagSet("call", "call [flags] TOOL [JSON]\n\nRuns one call in a fresh run and prints the result's text. JSON is the argument object\n(default {}; - reads it from stdin). Images in the result are written to files named on stdout.\nExit status: 0 success, 1 the result is an error or the call was refused, 2 bad usage.", stderr)
	c.register(fs, "terminal")
	fs.StringVar(&outDir, "out", ".", "folder for images in the result")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "builtin-tools call: want TOOL and an optional JSON object of arguments")
		fs.Usage()
		return 2
	}
	tool := fs.Arg(0)
	raw := "{}"
	if fs.NArg() == 2 {
		raw = fs.Arg(1)
	}
	if raw == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "builtin-tools call: reading arguments from stdin: %v\n", err)
			return 2
		}
		raw = string(b)
	}
	var argObj map[string]any
	if err := json.Unmarshal([]byte(raw), &argObj); err != nil || argObj == nil {
		fmt.Fprintf(stderr, "builtin-tools call: arguments must be a JSON object such as '{\"path\": \"README.md\"}' (%v)\n", errOrNull(err))
		return 2
	}
	r, mode, err := c.newRun(stdin, stdout, raw == "-")
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools call: %v\n", err)
		return 2
	}
	defer r.Close()
	ctx, cancel := signalContext()
	defer cancel()
	cl, err := r.Client(ctx, mode)
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools call: %v\n", err)
		return 1
	}
	defer cl.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = argObj
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools call: %v\n", err)
		return 1
	}
	images := 0
	for _, content := range res.Content {
		switch v := content.(type) {
		case mcp.TextContent:
			fmt.Fprintln(stdout, v.Text)
		case mcp.ImageContent:
			images++
			path, err := writeImage(outDir, tool, images, v)
			if err != nil {
				fmt.Fprintf(stderr, "builtin-tools call: writing image: %v\n", err)
				return 1
			}
			fmt.Fprintf(stdout, "[image %s written to %s]\n", v.MIMEType, path)
		default:
			b, _ := json.Marshal(content)
			fmt.Fprintln(stdout, string(b))
		}
	}
	if res.IsError {
		return 1
	}
	return 0
}

func errOrNull(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

func writeImage(dir, tool string, n int, img mcp.ImageContent) (string, error) {
	data, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		return "", err
	}
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(img.MIMEType); len(exts) > 0 {
		ext = exts[len(exts)-1]
		if img.MIMEType == "image/jpeg" {
			ext = ".jpg"
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d%s", strings.ReplaceAll(tool, "/", "_"), n, ext))
	return name, os.WriteFile(name, data, 0o644)
}
