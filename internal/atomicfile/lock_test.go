package atomicfile

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestLockSerializesAndForgets(t *testing.T) {
	ctx := context.Background()
	unlock, err := Lock(ctx, "/r/b", "/r/a", "/r/a")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := Lock(short, "/r/a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock of a held file: %v, want a deadline error", err)
	}
	// Overlapping sets taken in opposite orders cannot deadlock.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); u, _ := Lock(ctx, "/r/x", "/r/y"); u() }()
		go func() { defer wg.Done(); u, _ := Lock(ctx, "/r/y", "/r/x"); u() }()
	}
	unlock()
	unlock() // a second call is harmless
	wg.Wait()
	noLockEntries(t, "every holder released")
}

// noLockEntries fails the test if the table of held paths keeps an entry
// after what: an entry no one holds would grow the table for ever.
func noLockEntries(t *testing.T, after string) {
	t.Helper()
	locks.mu.Lock()
	n := len(locks.m)
	locks.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d lock entries left after %s", n, after)
	}
}

// N2: the lock other processes see is an flock on the file's folder (on
// the nearest folder that exists, for a file in folders yet to be made),
// held until release.
func TestLockHoldsFolderFlock(t *testing.T) {
	dir := t.TempDir()
	for _, target := range []string{filepath.Join(dir, "f.txt"), filepath.Join(dir, "new", "sub", "f.txt")} {
		unlock, err := Lock(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			t.Errorf("%s: another open of the folder could lock it while Lock held it: %v", target, err)
		}
		unlock()
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Errorf("%s: the folder is still locked after release: %v", target, err)
		}
		unix.Close(fd)
	}
	// A lock that waits on another holder gives up when its context ends.
	fd, _ := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	defer unix.Close(fd)
	unix.Flock(fd, unix.LOCK_EX)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(short, filepath.Join(dir, "f.txt")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock while another holds the folder: %v, want a deadline error", err)
	}
	noLockEntries(t, "a lock gave up")
	// With no deadline of its own, the wait still ends (a holder stopped
	// mid-write must not hold every writer there forever).
	defer func(old time.Duration) { MaxLockWait = old }(MaxLockWait)
	MaxLockWait = 200 * time.Millisecond
	if _, err := Lock(context.Background(), filepath.Join(dir, "f.txt")); err == nil || !strings.Contains(err.Error(), "held the lock for 200ms") {
		t.Fatalf("Lock with no deadline while another holds the folder: %v", err)
	}
}
