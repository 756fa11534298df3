package client

import (
	"context"
)

// The text commands of server string arrays (docs/protocol.md, "Strings"):
// case, character classes, strip, peel, affixes and the regular
// expressions (RE2 syntax with Python's Unicode \d \w \s; positions in
// code points). Each result is the caller's.

// Case stores each string in case c: "lower", "upper", "title" or
// "capitalize" (Python's str methods, with Go's simple case mappings).
func (s *Strs) Case(ctx context.Context, c string) (*Strs, error) {
	return s.strs(ctx, "str_case", map[string]any{"case": c})
}

// Is stores whether each string is of class (Python's str.is<class>():
// "alnum", "alpha", "decimal", "digit", "lower", "upper", "title",
// "space"; "empty": the string is "").
func (s *Strs) Is(ctx context.Context, class string) (ArrayInfo, error) {
	return s.array(ctx, "str_is", map[string]any{"class": class})
}

// Strip stores each string without the leading and trailing characters
// in chars ("" strips whitespace); side is "both", "left" or "right"
// (Python's strip, lstrip, rstrip).
func (s *Strs) Strip(ctx context.Context, chars, side string) (*Strs, error) {
	return s.strs(ctx, "str_strip", map[string]any{"chars": chars, "side": side})
}

// PeelOptions are Arkouda's peel arguments beyond the delimiter.
type PeelOptions struct {
	Times                  int // the delimiter sought (1 when 0)
	Regex                  bool
	IncludeDelimiter       bool
	KeepPartial, FromRight bool
}

// Peel cuts each string in two at its Times-th delimiter (Arkouda's peel;
// rpeel with FromRight): what comes before and what after.
func (s *Strs) Peel(ctx context.Context, delim string, o PeelOptions) (left, right *Strs, err error) {
	times := max(o.Times, 1)
	res, err := s.call(ctx, "str_peel", map[string]any{"delim": delim, "times": times, "regex": o.Regex,
		"include_delimiter": o.IncludeDelimiter, "keep_partial": o.KeepPartial, "from_right": o.FromRight})
	if err != nil {
		return nil, nil, err
	}
	if left, err = s.c.strsOf(ctx, "str_peel", res, res["left"]); err != nil {
		return nil, nil, err
	}
	if right, err = s.c.strsOf(ctx, "str_peel", res, res["right"]); err != nil {
		return nil, nil, err
	}
	return left, right, nil
}

// Affixes stores the n-code-point prefix (suffix with suffix) of each
// string longer than n (at least n long where proper is false), and which
// strings had one (bool): Arkouda's get_prefixes / get_suffixes.
func (s *Strs) Affixes(ctx context.Context, n int, suffix, proper bool) (values *Strs, origins ArrayInfo, err error) {
	res, err := s.call(ctx, "str_affix", map[string]any{"n": n, "suffix": suffix, "proper": proper})
	if err != nil {
		return nil, ArrayInfo{}, err
	}
	if origins, err = s.c.infoOf(ctx, "str_affix", res, res["origins"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	if values, err = s.c.strsOf(ctx, "str_affix", res, res["values"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	return values, origins, nil
}

// MatchResult is FindMatch's: which strings matched (bool), and for each
// matched one in order its row (Origins) and the group's span in code
// points (Starts, Ends: int64; -1 where the group took no part), with its
// text when asked for.
type MatchResult struct {
	Matched, Origins, Starts, Ends ArrayInfo
	Text                           *Strs // nil unless asked for
	Groups                         int   // the pattern's capture groups
}

// FindMatch runs re.search, re.match or re.fullmatch (kind "search",
// "match", "fullmatch") of pattern on every string, reporting capture
// group group (0: the whole match), with its text when text is true.
func (s *Strs) FindMatch(ctx context.Context, pattern, kind string, group int, text bool) (MatchResult, error) {
	const cmd = "str_match"
	res, err := s.call(ctx, cmd, map[string]any{"pattern": pattern, "kind": kind, "group": group, "text": text})
	if err != nil {
		return MatchResult{}, err
	}
	var m MatchResult
	for _, f := range []struct {
		key string
		dst *ArrayInfo
	}{{"matched", &m.Matched}, {"origins", &m.Origins}, {"starts", &m.Starts}, {"ends", &m.Ends}} {
		if *f.dst, err = s.c.infoOf(ctx, cmd, res, res[f.key]); err != nil {
			return MatchResult{}, err
		}
	}
	m.Groups = int(asInt(res["groups"]))
	if text {
		if m.Text, err = s.c.strsOf(ctx, cmd, res, res["values"]); err != nil {
			return MatchResult{}, err
		}
	}
	return m, nil
}

// FindAllResult is FindAll's: the matches per string (Counts) and, per
// match in order, its row, start and length in code points, and its text
// when asked for.
type FindAllResult struct {
	Counts, Origins, Starts, Lengths ArrayInfo
	Text                             *Strs
}

// FindAll finds every non-overlapping match of pattern (Arkouda's
// find_locations, and findall with text).
func (s *Strs) FindAll(ctx context.Context, pattern string, text bool) (FindAllResult, error) {
	const cmd = "str_findall"
	res, err := s.call(ctx, cmd, map[string]any{"pattern": pattern, "text": text})
	if err != nil {
		return FindAllResult{}, err
	}
	var f FindAllResult
	for _, k := range []struct {
		key string
		dst *ArrayInfo
	}{{"counts", &f.Counts}, {"origins", &f.Origins}, {"starts", &f.Starts}, {"lengths", &f.Lengths}} {
		if *k.dst, err = s.c.infoOf(ctx, cmd, res, res[k.key]); err != nil {
			return FindAllResult{}, err
		}
	}
	if text {
		if f.Text, err = s.c.strsOf(ctx, cmd, res, res["values"]); err != nil {
			return FindAllResult{}, err
		}
	}
	return f, nil
}

// Sub replaces the first count matches of pattern in each string (all
// with count 0) by repl, in Python's re.sub syntax (\1, \g<name>), and
// stores how many each string had (Arkouda's sub and subn).
func (s *Strs) Sub(ctx context.Context, pattern, repl string, count int) (values *Strs, counts ArrayInfo, err error) {
	res, err := s.call(ctx, "str_sub", map[string]any{"pattern": pattern, "repl": repl, "count": count})
	if err != nil {
		return nil, ArrayInfo{}, err
	}
	if counts, err = s.c.infoOf(ctx, "str_sub", res, res["counts"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	if values, err = s.c.strsOf(ctx, "str_sub", res, res["values"]); err != nil {
		return nil, ArrayInfo{}, err
	}
	return values, counts, nil
}
