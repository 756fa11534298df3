package par

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestStop(t *testing.T) {
	var nilStop *Stop
	nilStop.Check() // a nil Stop never stops
	if nilStop.Cancel("x") || nilStop.Stopped() || !nilStop.Disarm() || nilStop.Err() != nil {
		t.Fatal("nil Stop")
	}
	s := &Stop{}
	s.Check()
	if !s.Cancel("the client cancelled it") || s.Cancel("again") {
		t.Fatal("Cancel should take effect once")
	}
	if s.Disarm() {
		t.Fatal("Disarm after Cancel must report the cancel")
	}
	func() {
		defer func() {
			c, ok := AsCanceled(recover())
			if !ok || c.Why != "again" && c.Why != "the client cancelled it" {
				t.Fatalf("Check panicked with %v", c)
			}
		}()
		s.Check()
		t.Fatal("Check did not unwind")
	}()
	d := &Stop{}
	first, again := d.Disarm(), d.Disarm() // (disarming twice is fine)
	if !first || !again || d.Cancel("late") || d.Stopped() {
		t.Fatal("a disarmed Stop must not stop")
	}
	// Carried as a worker's *Panic, or wrapped in an error, it is still found.
	var g Group
	g.Go(func() { s.Check() })
	func() {
		defer func() {
			if _, ok := AsCanceled(recover()); !ok {
				t.Fatal("a worker's cancel was not found in its *Panic")
			}
		}()
		g.Wait()
	}()
	if _, ok := AsCanceled(fmt.Errorf("read: %w", s.Err())); !ok {
		t.Fatal("a wrapped *Canceled was not found")
	}
	if _, ok := AsCanceled(errors.New("other")); ok {
		t.Fatal("another error taken for a cancel")
	}
}

// TestStopCancelOrDisarm: with Cancel and Disarm racing, exactly one wins.
func TestStopCancelOrDisarm(t *testing.T) {
	for range 1000 {
		s := &Stop{}
		var canceled, disarmed bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); canceled = s.Cancel("c") }()
		go func() { defer wg.Done(); disarmed = s.Disarm() }()
		wg.Wait()
		if canceled == disarmed {
			t.Fatalf("cancel %v, disarm %v: exactly one must win", canceled, disarmed)
		}
	}
}
