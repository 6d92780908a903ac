// Package fileread reads the files of a structural search, each whole into
// a buffer its worker reuses, only through the run's path guard: on Linux
// a worker's Reader keeps the folder it read last open and opens the next
// file of that folder beneath it (one system call where a path from the
// root costs one per folder); whatever is not plainly a regular file goes
// the guard's way, which says why it is refused. It does not walk folders,
// decide which files a search reads, or parse them.
package fileread
