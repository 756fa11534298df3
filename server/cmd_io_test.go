package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

func ioServer(t *testing.T) (*Server, string) {
	t.Helper()
	s := opServer(t, 64<<20)
	s.cfg.DataDir = t.TempDir()
	return s, s.cfg.DataDir
}

func TestPathEscapes(t *testing.T) {
	s, dir := ioServer(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.parquet"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	a := opPut(t, s, []int64{1, 2, 3})
	for _, p := range []string{"../x.parquet", "a/../../x.parquet", filepath.Join(outside, "secret.parquet"), "link/secret.parquet", "link/*.parquet", ""} {
		_, err := opRun(t, s, "read_parquet", map[string]any{"path": p})
		if opCode(err) != transfer.ArgumentValue || !strings.Contains(err.Error(), "data directory") {
			t.Errorf("read_parquet %q: %v", p, err)
		}
		_, err = opRun(t, s, "to_parquet", map[string]any{"path": p, "names": []any{a}})
		if opCode(err) != transfer.ArgumentValue {
			t.Errorf("to_parquet %q: %v", p, err)
		}
	}
	// An absolute path inside the data directory is fine.
	if _, err := opRun(t, s, "to_parquet", map[string]any{"path": filepath.Join(dir, "in.parquet"), "names": []any{a}}); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.parquet")); err == nil {
		t.Error("a file was written outside the data directory")
	}
}

func TestParquetCommands(t *testing.T) {
	s, dir := ioServer(t)
	a := opPut(t, s, []int64{5, -1, 7, 1 << 40})
	b := opPut(t, s, []float64{0.5, 1.5, -2, 3})
	res, err := opRun(t, s, "to_parquet", map[string]any{"path": "out/t.parquet", "names": []any{a, b}, "columns": []any{"k", "v"},
		"compression": "snappy", "row_group_size": uint64(3)})
	if err != nil {
		t.Fatal(err)
	}
	if res["rows"] != 4 {
		t.Errorf("result %v", res)
	}
	// No temporary file is left beside it.
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(entries) != 1 {
		t.Errorf("out/ holds %d entries", len(entries))
	}
	res, err = opRun(t, s, "read_parquet", map[string]any{"paths": []any{"out/*.parquet", "out/t.parquet"}, "columns": []any{"v", "k"}})
	if err != nil {
		t.Fatal(err)
	}
	arrays := res["arrays"].([]any)
	if len(arrays) != 2 || arrays[0].(map[string]any)["column"] != "v" {
		t.Fatalf("arrays %v", arrays)
	}
	if got := opStored[int64](t, s, arrays[1].(map[string]any)); !slices.Equal(got, []int64{5, -1, 7, 1 << 40}) {
		t.Errorf("k = %v", got)
	}
	// The read reports the process's CPU time and page faults over it.
	for _, k := range []string{"seconds", "decode_seconds", "cpu_seconds", "page_faults"} {
		if _, ok := res[k]; !ok {
			t.Errorf("read_parquet's result has no %q: %v", k, res)
		}
	}
	used, _, _, _ := s.store.usage()
	// A failing read keeps nothing reserved.
	_, err = opRun(t, s, "read_parquet", map[string]any{"path": "out/t.parquet", "columns": []any{"nope"}})
	if opCode(err) != transfer.ArgumentValue {
		t.Errorf("unknown column: %v", err)
	}
	_, err = opRun(t, s, "read_parquet", map[string]any{"path": "out/t.parquet", "nulls": "fill", "fill_value": 1.5})
	if opCode(err) != transfer.ArgumentValue {
		t.Errorf("fill 1.5 into int64: %v", err)
	}
	if u, _, _, _ := s.store.usage(); u != used {
		t.Errorf("failed reads left %d bytes reserved", u-used)
	}
	// Arrow IPC.
	if _, err := opRun(t, s, "to_arrow_file", map[string]any{"path": "t.arrow", "names": []any{a, b}, "compression": "zstd"}); err != nil {
		t.Fatal(err)
	}
	res, err = opRun(t, s, "read_arrow", map[string]any{"path": "t.arrow"})
	if err != nil {
		t.Fatal(err)
	}
	if got := opStored[float64](t, s, res["arrays"].([]any)[1].(map[string]any)); !slices.Equal(got, []float64{0.5, 1.5, -2, 3}) {
		t.Errorf("v = %v", got)
	}
	if _, err := opRun(t, s, "read_parquet", map[string]any{"path": "none*.parquet"}); opCode(err) != transfer.ArgumentValue {
		t.Errorf("glob without matches: %v", err)
	}
}

func TestCheckpoint(t *testing.T) {
	s, dir := ioServer(t)
	opPut(t, s, []int64{1, 2, 3})
	opPut(t, s, []bool{true, false})
	opPut(t, s, make([]float32, 0))
	res, err := opRun(t, s, "save_all", map[string]any{"path": "ck/one"})
	if err != nil {
		t.Fatal(err)
	}
	if res["arrays"] != 3 {
		t.Fatalf("saved %v", res)
	}
	// Saving again replaces the checkpoint.
	if _, err := opRun(t, s, "save_all", map[string]any{"path": "ck/one"}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "ck")); len(entries) != 1 {
		t.Errorf("ck/ holds %d entries, want the checkpoint only", len(entries))
	}

	s2 := opServer(t, 64<<20)
	s2.cfg.DataDir = dir
	res, err = opRun(t, s2, "load_all", map[string]any{"path": "ck/one"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res["arrays"].([]any)) != 3 {
		t.Fatalf("loaded %v", res)
	}
	x, _ := s2.store.get("arr_1")
	if !slices.Equal(pdarray.View[int64](x), []int64{1, 2, 3}) {
		t.Errorf("arr_1 = %v", pdarray.View[int64](x))
	}
	// Loading again: the names are taken, nothing changes.
	if _, err := opRun(t, s2, "load_all", map[string]any{"path": "ck/one"}); opCode(err) != transfer.NameInUse {
		t.Errorf("second load: %v", err)
	}

	// A corrupt file: a clear error, nothing loaded, nothing reserved.
	f := filepath.Join(dir, "ck", "one", "0.bin")
	b, _ := os.ReadFile(f)
	b[3] ^= 0x10
	os.WriteFile(f, b, 0o644)
	s3 := opServer(t, 64<<20)
	s3.cfg.DataDir = dir
	_, err = opRun(t, s3, "load_all", map[string]any{"path": "ck/one"})
	if opCode(err) != transfer.InvalidData || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), "nothing was loaded") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
	if used, _, _, n := s3.store.usage(); used != 0 || n != 0 {
		t.Errorf("after a failed load: %d bytes, %d arrays", used, n)
	}
	os.WriteFile(f, b[:5], 0o644)
	if _, err := opRun(t, s3, "load_all", map[string]any{"path": "ck/one"}); opCode(err) != transfer.InvalidData {
		t.Errorf("truncated file: %v", err)
	}
	if _, err := opRun(t, s3, "load_all", map[string]any{"path": "ck"}); opCode(err) != transfer.ArgumentValue {
		t.Errorf("not a checkpoint: %v", err)
	}

	// A manifest claiming two arrays of 2^62 bytes (their sum overflows
	// int64): OUT_OF_MEMORY, nothing reserved, no attempt to allocate.
	mf := filepath.Join(dir, "ck", "one", "manifest.json")
	var m map[string]any
	mb, _ := os.ReadFile(mf)
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	arrs := m["arrays"].([]any)
	e0 := arrs[0].(map[string]any)
	e0["dtype"], e0["size"], e0["nbytes"] = "int64", 1<<59, 1<<62
	e1 := map[string]any{}
	for k, v := range e0 {
		e1[k] = v
	}
	e1["name"], e1["file"] = "huge_2", "1.bin"
	m["arrays"] = []any{e0, e1}
	mb, _ = json.Marshal(m)
	os.WriteFile(mf, mb, 0o644)
	_, err = opRun(t, s3, "load_all", map[string]any{"path": "ck/one"})
	if opCode(err) != transfer.OutOfMemory || !strings.Contains(err.Error(), "needs more than the server's limit") {
		t.Errorf("manifest of 2^63 bytes: %v", err)
	}
	if used, _, _, n := s3.store.usage(); used != 0 || n != 0 {
		t.Errorf("after the refused load: %d bytes, %d arrays", used, n)
	}
}

// restore is the start-up restore of s's --checkpoint, run in place.
func restore(s *Server) error {
	if err := s.prepareRestore(); err != nil {
		return err
	}
	if st := s.restore.Load(); st != nil {
		return s.restoreCheckpoint(st)
	}
	return nil
}

// TestCheckpointOption: restoreCheckpoint brings back what saveCheckpoint
// saved; a damaged checkpoint stops the start.
func TestCheckpointOption(t *testing.T) {
	s, _ := ioServer(t)
	s.cfg.Checkpoint = filepath.Join(t.TempDir(), "ckpt")
	if err := restore(s); err != nil || s.restorePending.Load() {
		t.Fatal("no checkpoint yet:", err)
	}
	opPut(t, s, []uint16{9, 8})
	if err := s.saveCheckpoint(); err != nil {
		t.Fatal(err)
	}
	s2 := opServer(t, 1<<20)
	s2.cfg.Checkpoint = s.cfg.Checkpoint
	if err := restore(s2); err != nil || s2.restorePending.Load() || s2.restore.Load() != nil {
		t.Fatal(err)
	}
	x, err := s2.store.get("arr_1")
	if err != nil || !slices.Equal(pdarray.View[uint16](x), []uint16{9, 8}) {
		t.Fatalf("restored %v %v", x, err)
	}
	os.WriteFile(filepath.Join(s.cfg.Checkpoint, "manifest.json"), []byte("{"), 0o644)
	s3 := opServer(t, 1<<20)
	s3.cfg.Checkpoint = s.cfg.Checkpoint
	if err := restore(s3); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("damaged checkpoint: %v", err)
	}
	if err := s3.saveCheckpoint(); err != nil || !s3.restorePending.Load() {
		t.Errorf("save after a failed restore: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(s.cfg.Checkpoint, "manifest.json")); string(b) != "{" {
		t.Errorf("the damaged checkpoint was saved over: %q", b)
	}
}

// checkpointWith saves arrays to a new checkpoint directory and returns it.
func checkpointWith(t *testing.T, arrays ...[]int64) string {
	t.Helper()
	s := opServer(t, 64<<20)
	s.cfg.Checkpoint = filepath.Join(t.TempDir(), "ckpt")
	for _, a := range arrays {
		opPut(t, s, a)
	}
	if err := s.saveCheckpoint(); err != nil {
		t.Fatal(err)
	}
	return s.cfg.Checkpoint
}

// runCheckpointServer starts a real server on ckpt (ARKTOS_DEBUG_RESTORE_DELAY
// set by the caller) and a dealer on it; wait returns Run's error once Run
// returns by itself, stop ends Run and returns its error.
func runCheckpointServer(t *testing.T, ckpt string) (s *Server, d *zmq.Socket, wait, stop func() error) {
	t.Helper()
	addr := fmt.Sprintf("tcp://127.0.0.1:%d", testserver.FreePort(t))
	s, err := New(Config{Addr: addr, Workers: 2, MaxMemory: 64 << 20, FrameSize: 1 << 20, StreamPort: -1, Checkpoint: ckpt,
		TokenFile: filepath.Join(t.TempDir(), "token"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var runErr error
	finished := make(chan struct{})
	go func() {
		runErr = s.Run(ctx)
		close(finished)
	}()
	wait = func() error {
		select {
		case <-finished:
			return runErr
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
	stop = func() error {
		cancel()
		return wait()
	}
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return s, dealer(t, addr), wait, stop
}

// TestRestoreWhileServing: a server started on a checkpoint answers
// get_config (with the restore's progress) and stats while it restores,
// refuses other requests with RESTORING, and serves the arrays once they
// are back; a shutdown during the restore stops it and leaves the
// checkpoint as it was; a damaged one stops the server with an error.
func TestRestoreWhileServing(t *testing.T) {
	ckpt := checkpointWith(t, []int64{1, 2, 3}, []int64{4, 5})
	t.Run("served after", func(t *testing.T) {
		// Long enough for the three requests below on a busy machine
		// under -race (the polls after them wait out the rest).
		t.Setenv("ARKTOS_DEBUG_RESTORE_DELAY", "5s")
		s, d, _, stop := runCheckpointServer(t, ckpt)
		sendRequest(t, d, 1, "get_config", nil)
		rep := recvReply(t, d, 5*time.Second)
		if p, ok := rep.Result["restoring"].(map[string]any); rep == nil || rep.Status != 0 || !ok || p["seconds"] == nil {
			t.Fatalf("get_config while restoring: %+v", rep)
		}
		sendRequest(t, d, 2, "stats", nil)
		if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
			t.Fatalf("stats while restoring: %+v", rep)
		}
		sendRequest(t, d, 3, "list", nil)
		rep = recvReply(t, d, 5*time.Second)
		if rep == nil || rep.Code != transfer.Restoring || !strings.Contains(rep.Message, "restoring its checkpoint") || !strings.Contains(rep.Message, "'list' runs once it has") {
			t.Fatalf("list while restoring: %+v", rep)
		}
		deadline := time.Now().Add(20 * time.Second)
		for id := uint64(4); ; id++ {
			sendRequest(t, d, id, "get_config", nil)
			rep := recvReply(t, d, 5*time.Second)
			if rep == nil || rep.Status != 0 {
				t.Fatalf("get_config: %+v", rep)
			}
			if _, ok := rep.Result["restoring"]; !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("still restoring after 20 s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if x, err := s.store.get("arr_2"); err != nil || !slices.Equal(pdarray.View[int64](x), []int64{4, 5}) {
			t.Fatalf("restored %v %v", x, err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("shutdown during", func(t *testing.T) {
		t.Setenv("ARKTOS_DEBUG_RESTORE_DELAY", "1h")
		manifest, err := os.ReadFile(filepath.Join(ckpt, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		s, d, _, stop := runCheckpointServer(t, ckpt)
		sendRequest(t, d, 1, "shutdown", nil)
		if rep := recvReply(t, d, 5*time.Second); rep == nil || rep.Status != 0 {
			t.Fatalf("shutdown while restoring: %+v", rep)
		}
		if err := stop(); err != nil {
			t.Fatalf("Run after a shutdown during the restore: %v", err)
		}
		if _, _, _, n := s.store.usage(); n != 0 {
			t.Errorf("%d arrays restored after the shutdown", n)
		}
		if b, _ := os.ReadFile(filepath.Join(ckpt, "manifest.json")); !bytes.Equal(b, manifest) {
			t.Errorf("the checkpoint was saved over: %s", b)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		f := filepath.Join(ckpt, "0.bin")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[3] ^= 0x10
		os.WriteFile(f, b, 0o644)
		_, _, wait, _ := runCheckpointServer(t, ckpt)
		if err := wait(); err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), "move it away") {
			t.Errorf("Run: %v", err)
		}
		if b2, _ := os.ReadFile(f); !bytes.Equal(b2, b) {
			t.Error("the damaged checkpoint was saved over")
		}
	})
}

// TestWritebackFile: written files have their writeback started every
// writebackChunk bytes (so the final fsync waits for the tail only), and
// the bytes arrive whole, whatever the sizes of the writes.
func TestWritebackFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := make([]byte, 2*writebackChunk+12345)
	for i := range want {
		want[i] = byte(i * 31)
	}
	before := writebacksStarted.Load()
	w := newWritebackFile(f)
	for _, part := range [][]byte{want[:5<<20], want[5<<20 : 5<<20+1], want[5<<20+1:]} {
		if n, err := w.Write(part); err != nil || n != len(part) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(part), n, err)
		}
	}
	if got := writebacksStarted.Load() - before; got != 2 {
		t.Errorf("writeback started %d times for %d bytes, want 2", got, len(want))
	}
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes (err %v), want the %d written", len(got), err, len(want))
	}
}

// TestReadArrowTooBig: an Arrow file larger than the server's room is
// refused before it is read (opening one loads all its record batches),
// with nothing left reserved.
func TestReadArrowTooBig(t *testing.T) {
	s := opServer(t, 1<<20)
	s.cfg.DataDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(s.cfg.DataDir, "big.arrow"), make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := opRun(t, s, "read_arrow", map[string]any{"path": "big.arrow"})
	if opCode(err) != transfer.OutOfMemory || !strings.Contains(err.Error(), "read_arrow of big.arrow (record batches held while copying) needs 2.0 MiB") {
		t.Errorf("2 MiB file, 1 MiB server: %v", err)
	}
	if used, _, _, _ := s.store.usage(); used != 0 {
		t.Errorf("%d bytes left reserved", used)
	}
}

// TestToParquetScratchCounted: the encoded row groups a Parquet write holds
// count against --max-memory: row groups too large for the room left are
// refused, naming row_group_size; smaller ones write, and nothing stays
// reserved.
func TestToParquetScratchCounted(t *testing.T) {
	s := opServer(t, 20<<20)
	s.cfg.DataDir = t.TempDir()
	x := make([]int64, 1<<20) // 8 MiB
	for i := range x {
		x[i] = int64(i)
	}
	name := opPut(t, s, x)
	used, _, _, _ := s.store.usage()
	_, err := opRun(t, s, "to_parquet", map[string]any{"path": "big.parquet", "names": []any{name}, "row_group_size": int64(1 << 20)})
	if opCode(err) != transfer.OutOfMemory || !strings.Contains(err.Error(), "a smaller row_group_size needs less") {
		t.Fatalf("one 8 MiB row group beside 8 MiB of data under 20 MiB: %v", err)
	}
	if _, err := opRun(t, s, "to_parquet", map[string]any{"path": "ok.parquet", "names": []any{name}, "row_group_size": int64(1 << 17)}); err != nil {
		t.Fatal(err)
	}
	if u, _, _, _ := s.store.usage(); u != used {
		t.Fatalf("%d bytes left reserved", u-used)
	}
}

// TestReadParquetScratchCounted: the workers' column-chunk buffers of a
// Parquet read count against --max-memory: a file of one large row group
// is refused where the same data in smaller row groups reads, and nothing
// stays reserved.
func TestReadParquetScratchCounted(t *testing.T) {
	w, dir := ioServer(t)
	x := make([]int64, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = r.Int64() // incompressible: 8 MiB in the file too
	}
	name := opPut(t, w, x)
	for _, f := range []struct {
		path string
		rg   int64
	}{{"one.parquet", 1 << 20}, {"many.parquet", 1 << 17}} {
		if _, err := opRun(t, w, "to_parquet", map[string]any{"path": f.path, "names": []any{name}, "row_group_size": f.rg, "compression": "none"}); err != nil {
			t.Fatal(err)
		}
	}
	s := opServer(t, 20<<20)
	s.cfg.DataDir = dir
	_, err := opRun(t, s, "read_parquet", map[string]any{"path": "one.parquet"})
	if opCode(err) != transfer.OutOfMemory || !strings.Contains(err.Error(), "smaller row groups need less") {
		t.Fatalf("one 8 MiB row group under 20 MiB: %v", err)
	}
	if used, _, _, _ := s.store.usage(); used != 0 {
		t.Fatalf("%d bytes left reserved", used)
	}
	if _, err := opRun(t, s, "read_parquet", map[string]any{"path": "many.parquet"}); err != nil {
		t.Fatal(err)
	}
	if used, _, _, _ := s.store.usage(); used != 8<<20 {
		t.Fatalf("used %d after the read, want the 8 MiB array", used)
	}
}

// TestToParquetStrings: a string column goes out as its codes plus the
// arrays of its categories' bytes and lengths, and read_parquet gives the
// same three back; bad categories are refused naming the column, with
// nothing written and nothing left reserved.
func TestToParquetStrings(t *testing.T) {
	s, dir := ioServer(t)
	strs := []string{"", "Zoë", "a", "b"}
	var data []uint8
	var lens []int64
	for _, x := range strs {
		data = append(data, x...)
		lens = append(lens, int64(len(x)))
	}
	codes := opPut(t, s, []int16{2, 0, 1, 3, 2, 2})
	ids := opPut(t, s, []int64{1, 2, 3, 4, 5, 6})
	cats, clens := opPut(t, s, data), opPut(t, s, lens)
	write := func(path string, catNames, lenNames []any) error {
		_, err := opRun(t, s, "to_parquet", map[string]any{"path": path, "names": []any{ids, codes}, "columns": []any{"id", "s"},
			"categories": catNames, "category_lengths": lenNames, "row_group_size": uint64(4)})
		return err
	}
	if err := write("s.parquet", []any{"", cats}, []any{"", clens}); err != nil {
		t.Fatal(err)
	}
	res, err := opRun(t, s, "read_parquet", map[string]any{"path": "s.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	got := res["strings"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["column"] != "s" {
		t.Fatalf("strings %v", got)
	}
	e := got[0].(map[string]any)
	backCodes := opStored[int8](t, s, e["codes"].(map[string]any))
	backData := opStored[uint8](t, s, e["categories"].(map[string]any))
	backLens := opStored[int64](t, s, e["category_lengths"].(map[string]any))
	if !slices.Equal(backCodes, []int8{2, 0, 1, 3, 2, 2}) || string(backData) != "Zoëab" || !slices.Equal(backLens, lens) {
		t.Errorf("read back codes %v, categories %q %v", backCodes, backData, backLens)
	}
	badLens := opPut(t, s, []int64{0, 4, 1, 2})
	floats := opPut(t, s, []float64{0, 1, 2, 3})
	unsorted := opPut(t, s, []uint8("bab"))
	unsortedLens := opPut(t, s, []int64{1, 1, 1, 0})
	used, _, _, _ := s.store.usage()
	for _, c := range []struct {
		cats, lens []any
		code       transfer.Code
		want       string
	}{
		{[]any{"", cats}, []any{"", badLens}, transfer.ArgumentValue, `column "s": category_lengths add up to 7 bytes, categories hold 6`},
		{[]any{"", cats}, []any{"", floats}, transfer.ArgumentType, `column "s": categories must be uint8 (UTF-8 bytes) and category_lengths int64`},
		{[]any{"", cats}, []any{clens, clens}, transfer.ArgumentValue, `column "id": give both its categories and category_lengths, or neither`},
		{[]any{cats}, []any{clens}, transfer.ArgumentValue, "one entry per array"},
		{[]any{"", unsorted}, []any{"", unsortedLens}, transfer.ArgumentValue, `"s": categories 0 and 1 ("b", "a") are not distinct and sorted`},
		{[]any{"", "nope"}, []any{"", clens}, transfer.UnknownArray, "nope"},
	} {
		if err := write("bad.parquet", c.cats, c.lens); opCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %s %q: %v", c.code, c.want, err)
		}
	}
	// A code outside the categories is refused naming it (the scratch
	// estimate reads the codes before they are checked).
	outside := opPut(t, s, []int16{2, 0, 1, 3, 2, 9})
	_, err = opRun(t, s, "to_parquet", map[string]any{"path": "bad.parquet", "names": []any{outside}, "categories": []any{cats}, "category_lengths": []any{clens}})
	if opCode(err) != transfer.ArgumentValue || !strings.Contains(err.Error(), "row 5 has code 9, outside its 4 categories") {
		t.Errorf("code outside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.parquet")); err == nil {
		t.Error("a refused write left a file")
	}
	if u, _, _, _ := s.store.usage(); u != used+12 {
		t.Errorf("refused writes left %d bytes reserved", u-used-12)
	}
}

// TestReadArrowRoom: an Arrow IPC file takes its size while read (its
// batches) and its arrays', and nothing twice: a 24 MiB file reads in 64
// MiB; one whose compressed buffers claim more than the room left is
// OUT_OF_MEMORY before they are allocated.
func TestReadArrowRoom(t *testing.T) {
	s, _ := ioServer(t)         // 64 MiB
	big := make([]int64, 3<<20) // 24 MiB
	for i := range big {
		big[i] = int64(i)
	}
	name := opPut(t, s, big)
	for _, c := range []string{"none", "zstd"} {
		if _, err := opRun(t, s, "to_arrow_file", map[string]any{"path": c + ".arrow", "names": []any{name}, "compression": c}); err != nil {
			t.Fatal(err)
		}
	}
	del := func(n any) {
		t.Helper()
		if _, err := opRun(t, s, "delete", map[string]any{"names": []any{n}}); err != nil {
			t.Fatal(err)
		}
	}
	del(name)
	res, err := opRun(t, s, "read_arrow", map[string]any{"path": "none.arrow"}) // 24 held + 24 stored
	if err != nil {
		t.Fatal(err)
	}
	first := res["arrays"].([]any)[0].(map[string]any)["name"]
	other := opPut(t, s, big) // 48 stored: 16 left, less than the zstd file's batches
	_, err = opRun(t, s, "read_arrow", map[string]any{"path": "zstd.arrow"})
	if opCode(err) != transfer.OutOfMemory || !strings.Contains(err.Error(), "record batches") || !strings.Contains(err.Error(), "--max-memory") {
		t.Errorf("compressed batches past the room: %v", err)
	}
	del(other)
	del(first)
	if _, err := opRun(t, s, "read_arrow", map[string]any{"path": "zstd.arrow"}); err != nil {
		t.Errorf("the zstd file with room: %v", err)
	}
}
