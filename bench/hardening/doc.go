// Package hardening reruns the reproductions of the attack reports against
// a built builtin-tools binary — defects D1–D15 of the first attack
// (6b63fa9), N1–N26 of the second (39e7bea) and issue 17, R1–R17 of the
// third (3d51568), each a row of docs/HARDENING.md under its attack's
// section — as tests under the build tag hardening (Linux only):
//
//	cd bench && go test -tags hardening ./hardening/ [-run TestN4] [-v]
//	    [-bin PATH | BUILTIN_TOOLS_BIN=PATH] [-pending N1,N7 | -pending all]
//
// Each case is a TestD… or TestN… function with a subtest per measurement.
// A measurement logs one line, "case | measurement | now | before: …"
// (-v prints the table), where before is the 6b63fa9 report's figure for a
// D case and the figure measured at 39e7bea for an N case; it fails when
// the fixed behaviour is gone. Without -bin the tests build
// ./cmd/builtin-tools of the root module into a temp folder. Cases whose
// fix has not reached main yet are listed in pending and skipped unless
// -pending (or HARDENING_PENDING) names them.
//
// Every case works in fresh temp folders (a root and an "outside" sibling,
// and the TMPDIR of what it starts), puts a tag in the environment of every
// process it starts, and at its end kills what still carries the tag and
// removes the folders. Cases that blew memory up at 39e7bea run serve
// under a 4 GiB address-space limit (prlimit).
//
// Cases of the third attack (R…) give the figure measured at 3d51568 as
// before. R2 and R14 link the library instead of
// running the binary, as that attack's harness did: Run.ServeDebug has no
// command of its own.
package hardening
