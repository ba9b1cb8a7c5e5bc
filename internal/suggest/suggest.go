// Package suggest finds the names nearest a mistyped one, for "did you mean"
// hints on unknown commands, flags, tools and JSON keys. It is the one
// implementation; callers format the hint in their own words.
package suggest

import (
	"sort"
	"strings"
)

// Close are the names within a small edit distance of name (case folded),
// or that contain it or are contained in it (3 letters or more), nearest
// first, ties by name; at most 5.
func Close(name string, names []string) []string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	low := strings.ToLower(name)
	limit := max(2, len([]rune(low))/3)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		ln := strings.ToLower(n)
		d := Distance(low, ln)
		if d <= limit || (len(low) >= 3 && len(ln) >= 3 && (strings.Contains(ln, low) || strings.Contains(low, ln))) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].n < cs[j].n
	})
	var out []string
	for i := 0; i < len(cs) && i < 5; i++ {
		out = append(out, cs[i].n)
	}
	return out
}

// Closest is the nearest of names (Close's first), or "" when none is close.
func Closest(name string, names []string) string {
	if c := Close(name, names); len(c) > 0 {
		return c[0]
	}
	return ""
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
