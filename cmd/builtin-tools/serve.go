package main

import (
	"fmt"
	"io"
)

func cmdServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	fs := flagSet("serve", "serve [flags]\n\nServes one run over stdin/stdout to the MCP client that started this process.", stderr)
	c.register(fs, "elicit")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "builtin-tools serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	r, mode, err := c.newRun(stdin, stdout, true)
	if err != nil {
		fmt.Fprintf(stderr, "builtin-tools serve: %v\n", err)
		return 2
	}
	defer r.Close()
	ctx, cancel := signalContext()
	defer cancel()
	if err := r.ServeStdio(ctx, mode, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "builtin-tools serve: %v\n", err)
		return 1
	}
	return 0
}
