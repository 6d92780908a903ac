package atomicfile

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to in the folder dfd unless to exists
// (EEXIST).
func renameNoReplace(dfd int, from, to string) error {
	return unix.Renameat2(dfd, from, dfd, to, unix.RENAME_NOREPLACE)
}

// renameExchange swaps a and b in the folder dfd.
func renameExchange(dfd int, a, b string) error {
	return unix.Renameat2(dfd, a, dfd, b, unix.RENAME_EXCHANGE)
}
