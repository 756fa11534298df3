package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/arrowio"
	"github.com/arktos-dev/arktos/pdarray"
)

// TestCheckpointCommand: checkpoint saves --checkpoint on demand; with
// nothing changed it writes nothing; an array unchanged since the last one
// keeps its file (a hard link: the fast path, counted in "linked"), a
// written one is written again; what is saved loads back bit for bit.
func TestCheckpointCommand(t *testing.T) {
	s := opServer(t, 64<<20)
	s.cfg.Checkpoint = filepath.Join(t.TempDir(), "ckpt")
	a := opPut(t, s, []int64{1, 2, 3})
	b := opPut(t, s, []float64{0.5, -1})
	res, err := opRun(t, s, "checkpoint", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res["arrays"] != 2 || res["linked"] != 0 || res["written"] != int64(40) || res["skipped"] != false {
		t.Fatalf("first checkpoint: %v", res)
	}
	if res, err = opRun(t, s, "checkpoint", nil); err != nil || res["skipped"] != true {
		t.Fatalf("nothing changed: %v %v, want skipped", res, err)
	}
	if res, err = opRun(t, s, "checkpoint", map[string]any{"force": true}); err != nil || res["linked"] != 2 || res["written"] != int64(0) {
		t.Fatalf("forced, nothing changed: %v %v, want both linked", res, err)
	}
	if _, err := opRun(t, s, "setitem", map[string]any{"a": a, "index": int64(0), "value_scalar": int64(7)}); err != nil {
		t.Fatal(err)
	}
	c := opPut(t, s, []bool{true})
	if res, err = opRun(t, s, "checkpoint", nil); err != nil || res["arrays"] != 3 || res["linked"] != 1 || res["written"] != int64(25) {
		t.Fatalf("after a setitem and an upload: %v %v, want b linked, a and c written", res, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.cfg.Checkpoint))
	if len(entries) != 1 {
		t.Errorf("the checkpoint's parent holds %d entries, want the checkpoint alone", len(entries))
	}
	// A fresh server restores what the last checkpoint holds.
	r := opServer(t, 64<<20)
	r.cfg.Checkpoint = s.cfg.Checkpoint
	if err := r.prepareRestore(); err != nil {
		t.Fatal(err)
	}
	if err := r.restoreCheckpoint(r.restore.Load()); err != nil {
		t.Fatal(err)
	}
	// The restored checkpoint counts as the last one: nothing to write, and
	// a forced one links every file.
	if res, err := opRun(t, r, "checkpoint", nil); err != nil || res["skipped"] != true {
		t.Fatalf("checkpoint right after the restore: %v %v, want skipped", res, err)
	}
	if res, err := opRun(t, r, "checkpoint", map[string]any{"force": true}); err != nil || res["linked"] != 3 || res["written"] != int64(0) {
		t.Fatalf("forced checkpoint after the restore: %v %v, want all 3 linked", res, err)
	}
	for name, want := range map[string]*pdarray.Array{a: pdarray.FromSlice([]int64{7, 2, 3}),
		b: pdarray.FromSlice([]float64{0.5, -1}), c: pdarray.FromSlice([]bool{true})} {
		arr, release, err := r.store.acquire(name)
		if err != nil {
			t.Fatalf("%s not restored: %v", name, err)
		}
		if arr.DType() != want.DType() || !bytes.Equal(arr.Bytes(), want.Bytes()) {
			t.Errorf("%s restored as %v %x, want %v %x", name, arr.DType(), arr.Bytes(), want.DType(), want.Bytes())
		}
		release()
	}
}

func TestCheckpointNeedsDirectory(t *testing.T) {
	s := opServer(t, 64<<20)
	_, err := opRun(t, s, "checkpoint", nil)
	if err == nil || !strings.Contains(err.Error(), "--checkpoint DIR") {
		t.Fatalf("checkpoint without --checkpoint: %v, want an error naming --checkpoint DIR", err)
	}
}

// TestCheckpointRecoversAside: a crash between the swap's two renames
// leaves the last complete checkpoint aside (.ckpt.old-*) and the next one
// unfinished (.ckpt.tmp-*); the start-up restore takes the complete one
// and removes the unfinished one.
func TestCheckpointRecoversAside(t *testing.T) {
	ckpt := checkpointWith(t, []int64{4, 5, 6})
	parent := filepath.Dir(ckpt)
	if err := os.Rename(ckpt, filepath.Join(parent, ".ckpt.old-123")); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(parent, ".ckpt.tmp-456")
	if err := os.Mkdir(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, "0.bin"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := opServer(t, 64<<20)
	r.cfg.Checkpoint = ckpt
	if err := r.prepareRestore(); err != nil {
		t.Fatal(err)
	}
	st := r.restore.Load()
	if st == nil {
		t.Fatal("no restore pending: the checkpoint left aside was not found")
	}
	if err := r.restoreCheckpoint(st); err != nil {
		t.Fatal(err)
	}
	if _, _, _, n := r.store.usage(); n != 1 {
		t.Fatalf("%d arrays restored, want 1", n)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "ckpt" {
		t.Errorf("after the restore %s holds %v, want ckpt alone", parent, entries)
	}
	if _, err := os.Stat(filepath.Join(ckpt, arrowio.ManifestName)); err != nil {
		t.Error(err)
	}
}

// TestWriteCopiedChecksum: the copying writer's checksum is Checksum's of
// the same bytes, over several blocks and a partial last one.
func TestWriteCopiedChecksum(t *testing.T) {
	b := make([]byte, 2*arrowio.ChecksumBlock+12345)
	for i := range b {
		b[i] = byte(i * 7)
	}
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	sum, err := writeCopied(root, "f.bin", b, make([]byte, arrowio.ChecksumBlock))
	if err != nil {
		t.Fatal(err)
	}
	if want := arrowio.Checksum(b, 2); sum != want {
		t.Fatalf("checksum %x, want %x", sum, want)
	}
	got, err := root.ReadFile("f.bin")
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("file differs (%v)", err)
	}
	empty, err := writeCopied(root, "e.bin", nil, make([]byte, arrowio.ChecksumBlock))
	if err != nil || empty != arrowio.Checksum(nil, 1) {
		t.Fatalf("empty: %x %v, want %x", empty, err, arrowio.Checksum(nil, 1))
	}
}
