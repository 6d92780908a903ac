// Package framing reads and writes Content-Length framed messages, the base
// protocol shared by the Language Server Protocol and the Debug Adapter
// Protocol (FRM-1). It is the only code in the project that knows what a
// header is: it hands raw frame bodies ([]byte) to the JSON-RPC side (through
// [ObjectStream], a sourcegraph/jsonrpc2 ObjectStream) and to the DAP side
// (bodies go to go-dap's DecodeProtocolMessage). It knows nothing of JSON,
// JSON-RPC or DAP messages.
//
// A frame is a header block followed by a body:
//
//	Content-Length: 52\r\n
//	Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
//	\r\n
//	{"jsonrpc":"2.0","id":1,"method":"initialize",...}
//
// Rules the [Reader] applies, chosen so that it accepts what real servers
// send and rejects anything that would make it guess:
//
//   - Header names are case-insensitive; headers other than Content-Length
//     (Content-Type and any other) are ignored. Content-Length is required,
//     decimal, not negative and at most the cap set by [WithMaxBody]. Two
//     Content-Length headers with different values are rejected.
//   - Line ends: the protocol says CRLF and [Writer] always writes CRLF. The
//     Reader also accepts a bare LF as a header line end (as x/tools'
//     jsonrpc2 framer does), because the body length comes from the header and
//     a missing CR cannot make a frame ambiguous. [WithStrictCRLF] turns this
//     off.
//   - Banner: before the first frame a server may print lines of its own on
//     stdout ("Starting server v1.2: ready"). Until the first frame, every line
//     whose name part (text before the first colon) is not Content-Length is
//     skipped and kept for [Reader.Banner]; a colon alone does not make a line
//     a header. The first frame therefore starts at its Content-Length line;
//     headers sent before it in that first block (rare) are skipped like
//     banner lines, which is harmless because they are ignored anyway. After
//     the first frame nothing is skipped: a header line without a colon is an
//     error.
//   - Bounds: a header line may be at most 4 KiB and a header block 64 KiB;
//     the banner may be at most 1 MiB before the first frame. The body is
//     allocated only after its length was checked against the cap, and a very
//     large body grows as its bytes arrive rather than at the claimed size, so
//     memory follows what the peer actually sent.
//
// A Reader has one reading goroutine (Banner alone may be called from
// others); a [Writer] may be shared by any number of goroutines.
//
// Errors are sticky: once Read returns an error the stream position is lost,
// and every later Read returns the same error. Header faults are
// [*HeaderError] values wrapping one of the Err* sentinels, for errors.Is.
//
// Read does not take a context: it blocks in the underlying io.Reader, and
// the way to stop it is to close that reader (the server's stdout pipe or the
// connection), as jsonrpc2.Conn does through [ObjectStream.Close].
package framing

// DefaultMaxBody is the body cap used when [WithMaxBody] is not given. LSP
// responses for big workspaces (workspace/symbol, semantic tokens) can be
// several MiB; 64 MiB leaves room without letting a broken peer exhaust memory.
const DefaultMaxBody = 64 << 20

const (
	// maxHeaderLine bounds one header line after the first frame.
	maxHeaderLine = 4 << 10
	// maxHeaderBlock bounds all header lines of one frame together.
	maxHeaderBlock = 64 << 10
	// maxBannerBytes bounds non-frame output before the first frame.
	maxBannerBytes = 1 << 20
	// maxBannerLines and maxBannerLine bound what Banner keeps.
	maxBannerLines = 32
	maxBannerLine  = 256
	// readBufSize is the bufio buffer; it must exceed maxHeaderLine.
	readBufSize = 64 << 10
	// growChunk: bodies above this size grow as bytes arrive.
	growChunk = 1 << 20
	// maxBodyLimit is the highest cap WithMaxBody accepts; it keeps
	// lengths within a 32-bit int.
	maxBodyLimit = 1 << 30
)

// Option configures a [Reader] (and the reading half of an [ObjectStream]).
type Option func(*config)

type config struct {
	maxBody int
	strict  bool
}

func newConfig(opts []Option) config {
	c := config{maxBody: DefaultMaxBody}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithMaxBody sets the largest body the Reader accepts, in bytes. A frame
// claiming more fails with [ErrTooLarge] before anything is allocated.
// n <= 0 keeps [DefaultMaxBody]; values above 1 GiB are lowered to 1 GiB.
func WithMaxBody(n int) Option {
	return func(c *config) {
		switch {
		case n <= 0:
			c.maxBody = DefaultMaxBody
		case n > maxBodyLimit:
			c.maxBody = maxBodyLimit
		default:
			c.maxBody = n
		}
	}
}

// WithStrictCRLF makes the Reader reject header lines that end in a bare LF
// (with [ErrBareLF]) instead of tolerating them. Banner lines before the first
// frame may still end in a bare LF: they are not protocol.
func WithStrictCRLF() Option {
	return func(c *config) { c.strict = true }
}
