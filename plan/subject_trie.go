package plan

import (
	"context"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// subjectTrie finds the pairs of subject patterns that collide, as
// server.SubjectsCollide decides: some subject matches both. Comparing every pair is
// quadratic, and a stream with tens of thousands of subjects under one first token
// took minutes. The trie holds the patterns token by token and is walked against
// itself: a pair of nodes is visited only when the paths leading to them can match
// the same subject, so the cost grows with the number of tokens and of colliding
// pairs, not with the number of all pairs. Patterns of one group (a stream's own
// subjects) are never paired, and the walk skips a pair of subtrees that holds
// nothing else, so one large stream costs no more than inserting it.
//
// The server's sublist is no help here: it matches a literal subject against
// patterns, and collision is between two patterns.
//
// Wide levels matched against a "*" still cost a visit per child, so patterns built
// to collide almost everywhere (many streams of "x.<id>.*" against "x.*.<id>") remain
// quadratic in the worst case; real subject spaces share prefixes, not that shape.
type subjectTrie struct {
	root  *trieNode
	items []trieItem
	// odd are the items whose subject is not a valid subject: they are compared with
	// every item, as the server would, since the trie only models valid subjects.
	odd []int32
}

// trieItem is one subject pattern and who declared it.
type trieItem struct {
	subject string
	// group owns the subject (a stream); two items of one group are never paired.
	group int32
	// flagged items are the ones asked about: a pair where neither is flagged is
	// never reported (two live streams that natsplan does not manage).
	flagged bool
	// odd is set when the subject is not valid (see subjectTrie.odd).
	odd bool
}

// Summary values of trieNode.group besides a group number.
const (
	trieEmpty = -1 // no item at or below the node
	trieMixed = -2 // items of more than one group at or below the node
)

// trieNode is one token position. Its path is the tokens from the root to it.
type trieNode struct {
	lits map[string]*trieNode
	star *trieNode
	// ends are the items whose pattern is the path; rest are the items whose pattern
	// is the path followed by ">".
	ends, rest []int32
	// group and flagged summarise every item at or below the node, so that a pair of
	// subtrees that can yield nothing is skipped without descending.
	group   int32
	flagged bool
}

func newTrieNode() *trieNode { return &trieNode{group: trieEmpty} }

func newSubjectTrie() *subjectTrie { return &subjectTrie{root: newTrieNode()} }

// note adds one item's group and flag to the node's summary.
func (n *trieNode) note(it trieItem) {
	switch n.group {
	case trieEmpty:
		n.group = it.group
	case it.group, trieMixed:
	default:
		n.group = trieMixed
	}
	n.flagged = n.flagged || it.flagged
}

// add inserts a subject pattern of group.
func (t *subjectTrie) add(subject string, group int32, flagged bool) {
	it := trieItem{subject: subject, group: group, flagged: flagged, odd: !server.IsValidSubject(subject)}
	id := int32(len(t.items))
	t.items = append(t.items, it)
	if it.odd {
		t.odd = append(t.odd, id)
		return
	}
	n := t.root
	n.note(it)
	for rest := subject; ; {
		tok, more, found := strings.Cut(rest, ".")
		switch tok {
		case ">":
			// Valid subjects have ">" last only.
			n.rest = append(n.rest, id)
			return
		case "*":
			if n.star == nil {
				n.star = newTrieNode()
			}
			n = n.star
		default:
			next := n.lits[tok]
			if next == nil {
				if n.lits == nil {
					n.lits = map[string]*trieNode{}
				}
				next = newTrieNode()
				n.lits[tok] = next
			}
			n = next
		}
		n.note(it)
		if !found {
			break
		}
		rest = more
	}
	n.ends = append(n.ends, id)
}

// checkEvery is how many node visits pass between two looks at the context: often
// enough to stop within milliseconds, rarely enough to cost nothing measurable.
const checkEvery = 1 << 12

// pairWalk is one run of pairs.
type pairWalk struct {
	t     *subjectTrie
	ctx   context.Context
	fn    func(x, y int32)
	steps int
	err   error
}

// pairs calls fn once for every unordered pair of items of different groups, at least
// one of them flagged, whose subjects collide. The order of the calls is not defined.
// It stops early with ctx's error when ctx ends.
func (t *subjectTrie) pairs(ctx context.Context, fn func(x, y int32)) error {
	w := &pairWalk{t: t, ctx: ctx, fn: fn}
	w.join(t.root, t.root)
	for _, x := range t.odd {
		if w.err != nil {
			break
		}
		for y := range int32(len(t.items)) {
			if y == x || t.items[y].odd && y < x {
				continue // an odd pair is seen from its first item only
			}
			w.tick()
			if w.wanted(x, y) && server.SubjectsCollide(t.items[x].subject, t.items[y].subject) {
				fn(x, y)
			}
		}
	}
	return w.err
}

// tick counts a step and looks at the context every checkEvery steps.
func (w *pairWalk) tick() {
	w.steps++
	if w.steps%checkEvery == 0 && w.err == nil {
		w.err = w.ctx.Err()
	}
}

// wanted reports whether a pair of items is to be reported at all.
func (w *pairWalk) wanted(x, y int32) bool {
	a, b := w.t.items[x], w.t.items[y]
	return a.group != b.group && (a.flagged || b.flagged)
}

// worth reports whether a pair of subtrees can hold a wanted pair.
func worth(u, v *trieNode) bool {
	if u.group == trieEmpty || v.group == trieEmpty || !u.flagged && !v.flagged {
		return false
	}
	return u.group == trieMixed || u.group != v.group
}

// join reports the wanted colliding pairs of items at or below u and v: two nodes at
// the same depth whose paths can match the same subject. u == v pairs a subtree with
// itself, each unordered pair once.
func (w *pairWalk) join(u, v *trieNode) {
	if w.err != nil || !worth(u, v) {
		return
	}
	w.tick()
	// Equal-length patterns with compatible tokens collide; "p.>" collides with
	// "q.>" and with every longer pattern below q, but not with q itself.
	if u == v {
		w.within(u.ends)
		w.within(u.rest)
		w.restBelow(u.rest, u)
	} else {
		w.cross(u.ends, v.ends)
		w.cross(u.rest, v.rest)
		w.restBelow(u.rest, v)
		w.restBelow(v.rest, u)
	}
	if u == v {
		for _, c := range u.lits {
			w.join(c, c)
			if u.star != nil {
				w.join(c, u.star)
			}
		}
		if u.star != nil {
			w.join(u.star, u.star)
		}
		return
	}
	small, large := u, v
	if len(small.lits) > len(large.lits) {
		small, large = large, small
	}
	for tok, c := range small.lits {
		if d := large.lits[tok]; d != nil {
			w.join(c, d)
		}
	}
	if v.star != nil {
		for _, c := range u.lits {
			w.join(c, v.star)
		}
	}
	if u.star != nil {
		for _, d := range v.lits {
			w.join(u.star, d)
		}
		if v.star != nil {
			w.join(u.star, v.star)
		}
	}
}

// within pairs the items of one list, whose patterns are equal.
func (w *pairWalk) within(ids []int32) {
	for i, x := range ids {
		for _, y := range ids[i+1:] {
			if w.wanted(x, y) {
				w.fn(x, y)
			}
		}
	}
}

// cross pairs every item of xs with every item of ys.
func (w *pairWalk) cross(xs, ys []int32) {
	for _, x := range xs {
		for _, y := range ys {
			if w.wanted(x, y) {
				w.fn(x, y)
			}
		}
	}
}

// restBelow pairs each "p.>" item of rs with every item strictly below v: the
// patterns with at least one more token, which ">" covers.
func (w *pairWalk) restBelow(rs []int32, v *trieNode) {
	for _, r := range rs {
		for _, c := range v.lits {
			w.subtree(r, c)
		}
		if v.star != nil {
			w.subtree(r, v.star)
		}
	}
}

// subtree pairs item r with every item at or below n.
func (w *pairWalk) subtree(r int32, n *trieNode) {
	it := w.t.items[r]
	if w.err != nil || n.group == trieEmpty || n.group == it.group || !it.flagged && !n.flagged {
		return
	}
	w.tick()
	for _, list := range [][]int32{n.ends, n.rest} {
		for _, y := range list {
			if w.wanted(r, y) {
				w.fn(r, y)
			}
		}
	}
	for _, c := range n.lits {
		w.subtree(r, c)
	}
	if n.star != nil {
		w.subtree(r, n.star)
	}
}

// collidingSets returns every pair (i, j) such that a subject of as[i] collides with
// a subject of bs[j], without comparing every pair of sets.
func collidingSets(ctx context.Context, as, bs map[int][]string) (map[[2]int]bool, error) {
	hits := map[[2]int]bool{}
	if len(as) == 0 || len(bs) == 0 {
		return hits, nil
	}
	// An a-set and a b-set with one key are different groups; only pairs with an
	// a-side (flagged) are walked, and pairs of two a-sides are dropped below.
	t := newSubjectTrie()
	var keys []int
	for i, subjects := range as {
		for _, s := range subjects {
			t.add(s, int32(2*len(keys)), true)
		}
		keys = append(keys, i)
	}
	for j, subjects := range bs {
		for _, s := range subjects {
			t.add(s, int32(2*len(keys)+1), false)
		}
		keys = append(keys, j)
	}
	err := t.pairs(ctx, func(x, y int32) {
		gx, gy := t.items[x].group, t.items[y].group
		if gx%2 == 1 {
			gx, gy = gy, gx
		}
		if gx%2 == 0 && gy%2 == 1 {
			hits[[2]int{keys[gx/2], keys[gy/2]}] = true
		}
	})
	if err != nil {
		return nil, err
	}
	return hits, nil
}
