package cmdutil

import (
	"sort"
	"strings"
)

// nearMatches returns up to 5 of candidates that look like name (any
// case): prefixes, names that contain it, and those a few edits away,
// closest first. Bad names on the command line list them ("did you
// mean").
func nearMatches(name string, candidates []string) []string {
	type scored struct {
		s    string
		dist int
	}
	low := strings.ToLower(name)
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(low, lc)
		switch {
		case low != "" && (strings.HasPrefix(lc, low) || strings.Contains(lc, low) || strings.Contains(low, lc)):
			d = min(d, 1)
		case d > max(2, len(low)/3):
			continue
		}
		found = append(found, scored{c, d})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	var out []string
	for _, f := range found {
		if len(out) == 5 {
			break
		}
		out = append(out, f.s)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
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

// DidYouMean ends a complaint about name with the near matches, or with
// every candidate when none is near (they are few enough for one line).
func DidYouMean(name string, candidates []string) string {
	if near := nearMatches(name, candidates); len(near) > 0 {
		return "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return "; one of: " + strings.Join(candidates, ", ")
}
