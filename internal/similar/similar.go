// Package similar measures how alike two names are, for the "did you
// mean" suggestions of a misspelt argument, tool or symbol.
package similar

import "strings"

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the name of known nearest to s, ignoring case, within an edit
// distance of 2; "" when none is that near.
func Closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := Distance(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
