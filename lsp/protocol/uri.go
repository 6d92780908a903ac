package protocol

import (
	"net/url"
	"path/filepath"
)

// FileURI turns an absolute path into a file:// URI.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// URIPath turns a file:// URI back into a path; ok is false for other
// schemes.
func URIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}
