package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arktos-dev/arktos/transfer"
)

// TestWritesKeepOthersFiles: save_all and --checkpoint replace only a
// checkpoint (a directory holding manifest.json) or an empty directory;
// the file writers only a file; readers refuse a directory, and load_all
// a file, as the caller's mistake (ARGUMENT_VALUE). Before, save_all over
// a folder of the user's files moved it aside and deleted it whole (and
// --checkpoint, an operator's path outside the data directory, did the
// same at shutdown); a writer aimed at a directory wrote the whole file
// before failing with INTERNAL, and the readers failed with INTERNAL.
func TestWritesKeepOthersFiles(t *testing.T) {
	s, dir := ioServer(t)
	opPut(t, s, []int64{1, 2, 3})
	os.MkdirAll(filepath.Join(dir, "mine"), 0o755)
	os.WriteFile(filepath.Join(dir, "mine", "keep.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("mine"), 0o644)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	refused := func(cmd string, args map[string]any, what string) {
		t.Helper()
		if _, err := opRun(t, s, cmd, args); opCode(err) != transfer.ArgumentValue || !strings.Contains(err.Error(), what) {
			t.Errorf("%s %v: %v; want ARGUMENT_VALUE saying %q", cmd, args, err, what)
		}
	}
	refused("save_all", map[string]any{"path": "mine"}, "holds files but no manifest.json")
	refused("save_all", map[string]any{"path": "plain"}, "is a file, not a checkpoint directory")
	refused("save_all", map[string]any{"path": "plain/sub"}, "not a directory")
	for _, cmd := range []string{"to_parquet", "to_arrow_file"} {
		refused(cmd, map[string]any{"path": "mine", "names": []any{"arr_1"}}, "is a directory")
	}
	refused("read_parquet", map[string]any{"path": "mine"}, "is a directory")
	refused("read_arrow", map[string]any{"path": "mine"}, "is a directory")
	refused("load_all", map[string]any{"path": "plain"}, "not a directory")
	for _, f := range []string{"mine/keep.txt", "plain"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); string(b) != "mine" {
			t.Errorf("%s afterwards: %q %v", f, b, err)
		}
	}
	// An empty directory, then the checkpoint it became, are replaced.
	for range 2 {
		if _, err := opRun(t, s, "save_all", map[string]any{"path": "empty"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "empty", "manifest.json")); err != nil {
		t.Fatal(err)
	}

	// --checkpoint at a folder of the operator's files: the server does
	// not start, and a shutdown does not save over it.
	s.cfg.Checkpoint = filepath.Join(dir, "mine")
	if err := restore(s); err == nil || !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("start with --checkpoint at a folder of files: %v", err)
	}
	if err := s.saveCheckpoint(); err == nil || !strings.Contains(err.Error(), "no manifest.json") {
		t.Errorf("checkpoint to a folder of files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "mine", "keep.txt")); string(b) != "mine" {
		t.Errorf("keep.txt after the checkpoint: %q %v", b, err)
	}
}
