package client_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
)

// The text commands (strs_text.go) against Go references on the same
// strings (ASCII-classed patterns, where RE2's and Python's classes agree).
func TestStrsText(t *testing.T) {
	srv := testserver.Start(t)
	c := dial(t, srv.URL)
	ctx := ctxT(t)
	values := strsCorpus(20_000, 5)
	s := uploadStrs(t, c, values)

	title, err := s.Case(ctx, "upper")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "Case upper", strsOf(t, title), mapStrs(values, strings.ToUpper))
	alpha := fetch[bool](t, c)(s.Is(ctx, "alpha"))
	wantEqual(t, "Is alpha", alpha, mapStrs(values, func(v string) bool {
		return v != "" && strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
	}))
	stripped, err := s.Strip(ctx, "a,", "right")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "Strip", strsOf(t, stripped), mapStrs(values, func(v string) string { return strings.TrimRight(v, "a,") }))
	left, right, err := s.Peel(ctx, ",", client.PeelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "Peel left", strsOf(t, left), mapStrs(values, func(v string) string {
		if a, _, ok := strings.Cut(v, ","); ok {
			return a
		}
		return ""
	}))
	wantEqual(t, "Peel right", strsOf(t, right), mapStrs(values, func(v string) string {
		if _, b, ok := strings.Cut(v, ","); ok {
			return b
		}
		return v
	}))
	pre, origins, err := s.Affixes(ctx, 1, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var wantPre []string
	for _, v := range values {
		if r := []rune(v); len(r) > 1 {
			wantPre = append(wantPre, string(r[:1]))
		}
	}
	wantEqual(t, "Affixes", strsOf(t, pre), wantPre)
	wantEqual(t, "Affixes origins", fetch[bool](t, c)(origins, nil), mapStrs(values, func(v string) bool { return len([]rune(v)) > 1 }))

	re := regexp.MustCompile(`(a|b)(B)?`)
	m, err := s.FindMatch(ctx, re.String(), "search", 1, true)
	if err != nil {
		t.Fatal(err)
	}
	var wantGroup []string
	for _, v := range values {
		if g := re.FindStringSubmatch(v); g != nil {
			wantGroup = append(wantGroup, g[1])
		}
	}
	if m.Groups != 2 {
		t.Errorf("groups %d", m.Groups)
	}
	wantEqual(t, "FindMatch matched", fetch[bool](t, c)(m.Matched, nil), mapStrs(values, re.MatchString))
	wantEqual(t, "FindMatch text", strsOf(t, m.Text), wantGroup)
	f, err := s.FindAll(ctx, `ab|B`, true)
	if err != nil {
		t.Fatal(err)
	}
	var wantAll []string
	for _, v := range values {
		wantAll = append(wantAll, regexp.MustCompile(`ab|B`).FindAllString(v, -1)...)
	}
	wantEqual(t, "FindAll counts", fetch[int64](t, c)(f.Counts, nil), mapStrs(values, func(v string) int64 {
		return int64(len(regexp.MustCompile(`ab|B`).FindAllString(v, -1)))
	}))
	wantEqual(t, "FindAll text", strsOf(t, f.Text), wantAll)
	subbed, counts, err := s.Sub(ctx, `(a)(b)`, `\2\1`, 0)
	if err != nil {
		t.Fatal(err)
	}
	ab := regexp.MustCompile(`(a)(b)`)
	wantEqual(t, "Sub", strsOf(t, subbed), mapStrs(values, func(v string) string { return ab.ReplaceAllString(v, "${2}${1}") }))
	wantEqual(t, "Sub counts", fetch[int64](t, c)(counts, nil), mapStrs(values, func(v string) int64 { return int64(len(ab.FindAllString(v, -1))) }))
	if _, _, err := s.Sub(ctx, `(a)`, `\2`, 0); err == nil || !strings.Contains(err.Error(), "refers to group 2") {
		t.Errorf("bad replacement: %v", err)
	}
}
