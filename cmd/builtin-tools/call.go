package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
)

func cmdCall(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	outDir := ""
	asJSON := false
	fs := flagSet("call", "call [flags] TOOL [JSON]\n\nRuns one call in a fresh run and prints the result's text (with --json, its structured content). JSON is the argument object\n(default {}; - reads it from stdin). Images in the result are written to files named on stdout.\nExit status: 0 success, 1 the result is an error or the call was refused, 2 bad usage.", stderr)
	c.register(fs, "terminal")
	fs.BoolVar(&asJSON, "json", false, "print the result's structuredContent (the data under the tool's outputSchema) as indented JSON instead of its text; an error still prints its text")
	fs.StringVar(&outDir, "out", "", "folder for images in the result (default: a fresh private folder under $TMPDIR); an existing file is never overwritten")
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
	if asJSON && !res.IsError && res.StructuredContent != nil {
		b, err := json.MarshalIndent(res.StructuredContent, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "builtin-tools call: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	images := 0
	for _, content := range res.Content {
		switch v := content.(type) {
		case mcp.TextContent:
			fmt.Fprintln(stdout, v.Text)
		case mcp.ImageContent:
			images++
			if outDir == "" {
				// Never the current folder: it may be the checkout, and a
				// link planted there would take the bytes anywhere.
				if outDir, err = os.MkdirTemp("", "builtin-tools-images-"); err != nil {
					fmt.Fprintf(stderr, "builtin-tools call: making a folder for images: %v\n", err)
					return 1
				}
			}
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
	// Created exclusively and never through a link: an existing name (or a
	// link planted under it) gets the next free name instead.
	base := fmt.Sprintf("%s-%d", strings.ReplaceAll(tool, "/", "_"), n)
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, base+ext)
		if i > 0 {
			name = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, i, ext))
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(name)
			return "", err
		}
		return name, f.Close()
	}
	return "", fmt.Errorf("no free name for %s%s in %s", base, ext, dir)
}
