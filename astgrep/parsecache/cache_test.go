package parsecache

import (
	"fmt"
	"testing"
	"time"
)

// fakeTree stands for a parse: the cache looks only at its bytes.
type fakeTree struct{ src []byte }

func (t *fakeTree) Source() []byte { return t.src }

func TestCacheAdmissionKeepsFirstEntriesOfAScan(t *testing.T) {
	c := New[*fakeTree](1000)
	u := c.User()
	st := Stamp{size: 100, mtime: 1, ctime: 1}
	key := func(i int) Key { return Key{Path: fmt.Sprint(i), Lang: "go"} }
	cost := int64(100 + 128)
	for i := 0; i < 20; i++ {
		r := u.Lookup(key(i), st, 1)
		if r.Claim == nil {
			t.Fatalf("file %d: no claim on a miss", i)
		}
		if c.Admit(cost, 1) {
			u.Fill(r.Claim, &fakeTree{src: make([]byte, 100)}, cost, 1, false)
		} else {
			c.Abandon(r.Claim)
		}
	}
	if c.used > c.limit {
		t.Fatalf("used %d over limit %d", c.used, c.limit)
	}
	if r := u.Lookup(key(0), st, 2); !r.Found {
		t.Fatal("the first entry of a scan was evicted by the same scan")
	}
	// A later query may evict entries it has not used.
	if !c.Admit(cost, 2) {
		t.Fatal("a new query could not evict an old query's entries")
	}
}

// Every part of the stamp counts: a file that changed in any of them is
// parsed again.
func TestCacheStampMismatchMisses(t *testing.T) {
	c := New[*fakeTree](1 << 20)
	u := c.User()
	key := Key{Path: "/x/a.go", Lang: "go"}
	base := Stamp{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5}
	put := func(st Stamp) {
		r := u.Lookup(key, st, 1)
		if r.Claim == nil {
			t.Fatalf("%+v: no claim", st)
		}
		if !c.Admit(10, 1) {
			t.Fatal("not admitted")
		}
		u.Fill(r.Claim, &fakeTree{}, 10, 1, false)
	}
	put(base)
	for _, change := range []func(*Stamp){
		func(s *Stamp) { s.dev++ },
		func(s *Stamp) { s.ino++ },
		func(s *Stamp) { s.size++ },
		func(s *Stamp) { s.mtime++ },
		func(s *Stamp) { s.ctime++ },
	} {
		st := base
		change(&st)
		r := u.Lookup(key, st, 2)
		if r.Found {
			t.Fatalf("stamp %+v served the tree of %+v", st, base)
		}
		c.Abandon(r.Claim)
		put(base)
	}
	if r := u.Lookup(key, base, 3); !r.Found {
		t.Fatal("the same stamp missed")
	}
	// Another grammar for the same id is another key.
	other := key
	other.Grammar = 1
	if r := u.Lookup(other, base, 3); r.Found {
		t.Fatal("another grammar's tree was served")
	}
}

// A search that finds a file being parsed by another waits for that
// parse instead of parsing again; an abandoned parse lets it claim.
func TestCachePendingParseIsWaitedFor(t *testing.T) {
	c := New[*fakeTree](1 << 20)
	a, b := c.User(), c.User()
	key := Key{Path: "/x/a.go", Lang: "go"}
	st := Stamp{size: 1}
	ra := a.Lookup(key, st, 1)
	rb := b.Lookup(key, st, 2)
	if ra.Claim == nil || rb.Wait == nil {
		t.Fatalf("first %+v, second %+v: want a claim, then a wait", ra, rb)
	}
	// Another version of the file is not waited for.
	if r := b.Lookup(key, Stamp{size: 2}, 2); r.Wait != nil || r.Claim != nil || r.Found {
		t.Fatalf("another version: %+v, want nothing", r)
	}
	c.Abandon(ra.Claim)
	<-rb.Wait
	rb = b.Lookup(key, st, 2)
	if rb.Claim == nil {
		t.Fatalf("after the abandon: %+v, want a claim", rb)
	}
	tr := &fakeTree{}
	if !c.Admit(10, 2) {
		t.Fatal("not admitted")
	}
	ra = a.Lookup(key, st, 1)
	b.Fill(rb.Claim, tr, 10, 2, false)
	<-ra.Wait
	if r := a.Lookup(key, st, 1); r.Tree != tr {
		t.Fatal("the filled tree was not served to the waiter")
	}
}

// Closing an engine evicts the trees only it used and keeps those another
// open engine used.
func TestCacheCloseKeepsTreesOthersUse(t *testing.T) {
	c := New[*fakeTree](1 << 20)
	a, b := c.User(), c.User()
	st := Stamp{size: 1}
	add := func(u *User[*fakeTree], path string) {
		r := u.Lookup(Key{Path: path}, st, 1)
		if r.Claim == nil {
			if !r.Found {
				t.Fatalf("%s: %+v", path, r)
			}
			return
		}
		if !c.Admit(10, 1) {
			t.Fatal("not admitted")
		}
		u.Fill(r.Claim, &fakeTree{}, 10, 1, false)
	}
	add(a, "shared")
	add(b, "shared")
	add(a, "only-a")
	add(b, "only-b")
	a.Release()
	if _, ok := c.byKey[Key{Path: "only-a"}]; ok {
		t.Error("a tree only the closed engine used is still cached")
	}
	for _, p := range []string{"shared", "only-b"} {
		if _, ok := c.byKey[Key{Path: p}]; !ok {
			t.Errorf("%s was evicted by another engine's Close", p)
		}
	}
	b.Release()
	if len(c.byKey) != 0 || c.used != 0 || c.lru.Len() != 0 {
		t.Errorf("after both closed: %d entries, %d bytes", len(c.byKey), c.used)
	}
}

func TestCacheBudget(t *testing.T) {
	c := New[*fakeTree](1 << 20)
	c.Ask(100)
	c.Ask(200) // only the first engine that names a budget sets it
	if c.limit != 100 {
		t.Fatalf("limit %d, want 100", c.limit)
	}
	c.SetLimit(0)
	if c.limit != 1<<20 {
		t.Fatalf("SetLimit(0): limit %d, want the budget New gave", c.limit)
	}
	c.Ask(5) // ignored once set
	if c.limit != 1<<20 {
		t.Fatalf("Ask changed a budget SetLimit set: %d", c.limit)
	}
}

// A file whose change time is older than the window is trusted.
func TestRacyWindow(t *testing.T) {
	now := time.Now()
	if Racy(Stamp{ctime: now.Add(-3 * time.Second).UnixNano()}, now) || !Racy(Stamp{ctime: now.UnixNano()}, now) {
		t.Error("Racy misjudges the window")
	}
}
