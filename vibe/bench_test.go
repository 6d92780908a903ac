package vibe

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/vibe/runner"
)

// BenchmarkTrivialWorker is spawn to vibe_wait's return for a worker that
// prints one line; BenchmarkProcessAlone is the same command run straight
// with os/exec. The difference is the roster's overhead.
func BenchmarkTrivialWorker(b *testing.B) {
	r, err := New(Config{StateDir: b.TempDir(), Dir: b.TempDir(), Backends: map[string]runner.Backend{"fast": runner.Command{Line: "echo ok"}}, MaxRunning: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in, err := r.Spawn(SpawnRequest{Brief: "x"})
		if err != nil {
			b.Fatal(err)
		}
		done, _, err := r.Wait(context.Background(), WaitRequest{IDs: []string{in.ID}, Timeout: time.Minute})
		if err != nil || done[0].Status != Succeeded {
			b.Fatalf("%v %+v", err, done)
		}
	}
}

func BenchmarkProcessAlone(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command("/bin/sh", "-c", "echo ok").Output(); err != nil || string(out) != "ok\n" {
			b.Fatal(err)
		}
	}
}

// BenchmarkList100 is vibe_list's data with 100 ended workers.
func BenchmarkList100(b *testing.B) {
	r, err := New(Config{StateDir: b.TempDir(), Dir: b.TempDir(), Backends: map[string]runner.Backend{"fast": runner.Command{Line: "echo ok"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var ids []string
	for i := 0; i < 100; i++ {
		in, _ := r.Spawn(SpawnRequest{Brief: "job " + strconv.Itoa(i)})
		ids = append(ids, in.ID)
	}
	r.Wait(context.Background(), WaitRequest{IDs: ids, All: true, Timeout: time.Minute})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(r.List()) != 100 {
			b.Fatal("not 100")
		}
		r.Unread()
	}
}
