package framing_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/google/go-dap"
)

// A debug adapter's output, read frame by frame and decoded by go-dap. The
// adapter printed a banner line before its first frame.
func ExampleReader() {
	var out bytes.Buffer
	out.WriteString("DAP server listening at: stdio\n")
	w := framing.NewWriter(&out)
	ev, _ := json.Marshal(&dap.InitializedEvent{
		Event: dap.Event{ProtocolMessage: dap.ProtocolMessage{Seq: 1, Type: "event"}, Event: "initialized"},
	})
	_ = w.Write(ev)

	r := framing.NewReader(&out)
	body, err := r.Read()
	if err != nil {
		fmt.Println(err)
		return
	}
	msg, err := dap.DecodeProtocolMessage(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%T\n", msg)
	fmt.Printf("%q\n", r.Banner())
	// Output:
	// *dap.InitializedEvent
	// ["DAP server listening at: stdio"]
}

// Content-Length framing errors are typed, so callers can tell a peer that
// is not speaking the protocol from one that sent too much.
func ExampleHeaderError() {
	r := framing.NewReader(strings.NewReader("Content-Length: 999999\r\n\r\n{}"), framing.WithMaxBody(1024))
	_, err := r.Read()
	fmt.Println(errors.Is(err, framing.ErrTooLarge))
	// Output: true
}
