package record

// LastSegment is a qualified name's last name: after its last "." or ":".
func LastSegment(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' || s[i] == ':' {
			return s[i+1:]
		}
	}
	return s
}

// IsIdent says s is one identifier.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
