package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arktos-dev/arktos/arrowio"
	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// Checkpoints: every stored array saved to one directory (a manifest and a
// file per array, each checksummed), written beside the last one and
// swapped in whole, so a crash at any moment leaves the last complete
// checkpoint to restore. save_all writes one where a client says;
// --checkpoint names the server's own, saved at a clean shutdown, on demand
// (the checkpoint command) and every --checkpoint-interval, and restored at
// start (cmd_io.go). A checkpoint of --checkpoint hard-links the files of
// arrays unchanged since the one before instead of writing them again.

// savedFile is an array as a checkpoint saved it: which array (its
// identity and write count, as the store had them) in which file.
type savedFile struct {
	a      *pdarray.Array
	writes uint64
	entry  arrowio.ManifestEntry
}

// savedSet is a checkpoint this process wrote, by array name: what the next
// one of the same directory links from. dir is relative to the root the
// checkpoint was written under.
type savedSet struct {
	dir   string
	files map[string]savedFile
}

// saveStats says what a checkpoint did.
type saveStats struct {
	arrays  int
	bytes   int64 // the arrays' bytes
	written int64 // bytes written (the rest linked from the last checkpoint)
	linked  int   // arrays whose file was linked
}

// saveAll writes every stored array to the checkpoint directory rel under
// root: into a fresh temporary directory first, which then replaces rel.
// With prev (the last checkpoint of rel this process wrote), an array that
// is the same array, not written since, keeps its file: a hard link to
// prev's, with prev's checksum.
func (s *Server) saveAll(root *os.Root, rel string, prev *savedSet) (saveStats, *savedSet, error) {
	var st saveStats
	if err := checkpointReplaceable(root, rel, rel); err != nil {
		return st, nil, err
	}
	type held struct {
		name    string
		a       *pdarray.Array
		writes  uint64
		release func()
	}
	var arrays []held
	defer func() {
		for _, h := range arrays {
			h.release()
		}
	}()
	for _, in := range s.store.list() {
		a, writes, release, err := s.store.acquireWrites(in.name)
		if err != nil {
			continue // deleted meanwhile
		}
		arrays = append(arrays, held{in.name, a, writes, release})
	}
	dir, base := path.Split(rel)
	if dir != "" {
		if err := root.MkdirAll(path.Clean(dir), 0o755); err != nil {
			return st, nil, err
		}
	}
	tmp := path.Join(dir, "."+base+".tmp-"+tempSuffix())
	if err := root.Mkdir(tmp, 0o755); err != nil {
		return st, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			root.RemoveAll(tmp)
		}
	}()
	m := &arrowio.Manifest{Arrays: make([]arrowio.ManifestEntry, len(arrays))}
	errs := make([]error, len(arrays))
	linked := make([]bool, len(arrays))
	var next atomic.Int64
	var g par.Group // a worker's panic reaches runRecovered
	// Files are written in parallel; each checksum runs while another
	// file's bytes go to the kernel.
	for w := 0; w < max(1, min(s.cfg.Workers, len(arrays))); w++ {
		g.Go(func() {
			var scratch []byte // writeCopied's block, this worker's
			for {
				i := int(next.Add(1) - 1)
				if i >= len(arrays) {
					return
				}
				h := arrays[i]
				file := fmt.Sprintf("%d.bin", i)
				if prev != nil {
					if old, ok := prev.files[h.name]; ok && old.a == h.a && old.writes == h.writes &&
						root.Link(path.Join(prev.dir, old.entry.File), path.Join(tmp, file)) == nil {
						m.Arrays[i] = old.entry
						m.Arrays[i].File = file
						linked[i] = true
						continue
					} // else changed, new, or not linkable (written again)
				}
				m.Arrays[i] = arrowio.ManifestEntry{Name: h.name, DType: h.a.DType().String(), Size: h.a.Len(), NBytes: h.a.NBytes(), File: file}
				var sum uint64
				if h.writes == 0 {
					// Never handed out for writing, so no write in place
					// runs now; unless one starts meanwhile (below), the
					// file and its checksum agree.
					sum = arrowio.Checksum(h.a.Bytes(), 1)
					errs[i] = writeSynced(root, path.Join(tmp, file), h.a.Bytes())
				}
				if h.writes > 0 || errs[i] == nil && s.store.writesOf(h.name, h.a) != h.writes {
					// It may be written in place while it is read: each
					// block is copied first, then hashed and written, so
					// the checksum is the file's (a concurrent write lands
					// before or after a block, never between its hash and
					// its write).
					if h.writes == 0 {
						root.Remove(path.Join(tmp, file))
					}
					if scratch == nil {
						scratch = make([]byte, arrowio.ChecksumBlock)
					}
					sum, errs[i] = writeCopied(root, path.Join(tmp, file), h.a.Bytes(), scratch)
				}
				m.Arrays[i].Checksum = arrowio.FormatChecksum(sum)
			}
		})
	}
	g.Wait()
	saved := &savedSet{dir: rel, files: make(map[string]savedFile, len(arrays))}
	for i, err := range errs {
		if err != nil {
			return st, nil, fmt.Errorf("checkpoint: array '%s': %w", arrays[i].name, err)
		}
		nb := int64(arrays[i].a.NBytes())
		st.bytes += nb
		if linked[i] {
			st.linked++
		} else {
			st.written += nb
		}
		saved.files[arrays[i].name] = savedFile{a: arrays[i].a, writes: arrays[i].writes, entry: m.Arrays[i]}
	}
	st.arrays = len(arrays)
	if err := writeSynced(root, path.Join(tmp, arrowio.ManifestName), arrowio.EncodeManifest(m)); err != nil {
		return st, nil, err
	}
	// Swap: the old checkpoint (if any) moves aside, the new one takes its
	// name, the old one goes. A crash in between leaves the old one aside
	// and the new one complete: the start-up restore takes the newest
	// complete one (recoverCheckpoint).
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	if err := checkpointReplaceable(root, rel, rel); err != nil {
		return st, nil, err // (made meanwhile by another request)
	}
	old := ""
	if _, err := root.Lstat(rel); err == nil {
		old = path.Join(dir, "."+base+".old-"+tempSuffix())
		if err := root.Rename(rel, old); err != nil {
			return st, nil, err
		}
	}
	if err := root.Rename(tmp, rel); err != nil {
		if old != "" {
			root.Rename(old, rel)
		}
		return st, nil, err
	}
	ok = true
	syncDir(root, dir) // the renames last through a power cut too
	if old != "" {
		root.RemoveAll(old)
	}
	return st, saved, nil
}

// writeCopied writes b to the new file name under root block by block, each
// copied into scratch (ChecksumBlock bytes) and hashed there before it is
// written, and returns the checksum of what it wrote.
func writeCopied(root *os.Root, name string, b, scratch []byte) (uint64, error) {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	w := newWritebackFile(f)
	sums := make([]uint64, 0, (len(b)+arrowio.ChecksumBlock-1)/arrowio.ChecksumBlock)
	for lo := 0; lo < len(b); lo += arrowio.ChecksumBlock {
		blk := scratch[:copy(scratch, b[lo:min(len(b), lo+arrowio.ChecksumBlock)])]
		sums = append(sums, arrowio.BlockChecksum(blk))
		if _, err := w.Write(blk); err != nil {
			f.Close()
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	return arrowio.CombineChecksums(sums), f.Close()
}

// syncDir fsyncs the directory dir under root (best effort).
func syncDir(root *os.Root, dir string) {
	if dir == "" {
		dir = "."
	}
	if d, err := root.Open(path.Clean(dir)); err == nil {
		d.Sync()
		d.Close()
	}
}

// recoverCheckpoint makes base, under root, the newest complete checkpoint
// a crash may have left aside: saveAll moves the old one to .base.old-*
// before it renames the new one in, so a crash between the two leaves no
// base. A directory aside that holds a manifest is then the last complete
// checkpoint (the new one, .base.tmp-*, may lack files: it is never
// loaded). Unfinished .tmp- directories are removed.
func (s *Server) recoverCheckpoint(root *os.Root, base string) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	_, statErr := root.Stat(path.Join(base, arrowio.ManifestName))
	haveBase := statErr == nil
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "."+base+".tmp-"):
			s.log.Warn("removing an unfinished checkpoint a stop left behind", "dir", n)
			root.RemoveAll(n)
		case strings.HasPrefix(n, "."+base+".old-"):
			if _, err := root.Stat(path.Join(n, arrowio.ManifestName)); err != nil || haveBase {
				root.RemoveAll(n) // superseded (its swap finished) or incomplete
				continue
			}
			if _, err := root.Lstat(base); err == nil {
				if err := root.RemoveAll(base); err != nil { // an empty or partial directory
					return err
				}
			}
			if err := root.Rename(n, base); err != nil {
				return err
			}
			haveBase = true
			s.log.Warn("restored the last complete checkpoint, which a crash during the next one had left aside", "checkpoint", s.cfg.Checkpoint)
		}
	}
	return nil
}

// checkpointNow saves every array to --checkpoint, one checkpoint at a time.
// Unless force, nothing is written when no array changed since the last one
// (the result says skipped).
func (s *Server) checkpointNow(why string, force bool) (map[string]any, error) {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	if s.restorePending.Load() {
		return nil, transfer.Errorf(transfer.Restoring, "the checkpoint %s is still being restored; it is saved over only once the restore is done", s.cfg.Checkpoint)
	}
	start := time.Now()
	if !force && s.ckptLast != nil && s.unchangedSince(s.ckptLast) {
		return map[string]any{"path": s.cfg.Checkpoint, "skipped": true, "arrays": len(s.ckptLast.files)}, nil
	}
	root, base, err := s.checkpointRoot()
	if err != nil {
		return nil, fmt.Errorf("--checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	defer root.Close()
	prev := s.ckptLast
	if prev != nil && prev.dir != base {
		prev = nil
	}
	st, saved, err := s.saveAll(root, base, prev)
	if err != nil {
		s.log.Error("checkpoint failed", "checkpoint", s.cfg.Checkpoint, "why", why, "err", err)
		return nil, fmt.Errorf("checkpoint to %s failed: %w", s.cfg.Checkpoint, err)
	}
	s.ckptLast = saved
	s.ckptCount.Add(1)
	took := time.Since(start)
	s.log.Info("saved checkpoint", "checkpoint", s.cfg.Checkpoint, "why", why, "arrays", st.arrays, "bytes", st.bytes,
		"written", st.written, "linked", st.linked, "took", took)
	return map[string]any{"path": s.cfg.Checkpoint, "skipped": false, "arrays": st.arrays, "bytes": st.bytes,
		"written": st.written, "linked": st.linked, "seconds": took.Seconds()}, nil
}

// seedLastCheckpoint makes the checkpoint just restored (base, whose
// manifest is m) the last one, so the next checkpoint links the files of
// the arrays still unchanged instead of writing every array again. It runs
// before any request: every array is as its verified file holds it.
func (s *Server) seedLastCheckpoint(base string, m *arrowio.Manifest) {
	set := &savedSet{dir: base, files: make(map[string]savedFile, len(m.Arrays))}
	for _, e := range m.Arrays {
		a, writes, release, err := s.store.acquireWrites(e.Name)
		if err != nil {
			return // (cannot happen: nothing deleted it) — no seed, a full checkpoint next
		}
		release()
		set.files[e.Name] = savedFile{a: a, writes: writes, entry: e}
	}
	s.ckptMu.Lock()
	s.ckptLast = set
	s.ckptMu.Unlock()
}

// unchangedSince says whether the store holds exactly the arrays of set,
// none written since.
func (s *Server) unchangedSince(set *savedSet) bool {
	list := s.store.list()
	if len(list) != len(set.files) {
		return false
	}
	for _, in := range list {
		f, ok := set.files[in.name]
		if !ok || f.a != in.a {
			return false
		}
		a, writes, release, err := s.store.acquireWrites(in.name)
		if err != nil {
			return false
		}
		release()
		if a != f.a || writes != f.writes {
			return false
		}
	}
	return true
}

// saveCheckpoint saves every array to --checkpoint at a clean shutdown.
func (s *Server) saveCheckpoint() error {
	if s.cfg.Checkpoint == "" {
		return nil
	}
	if s.restorePending.Load() {
		s.log.Warn("checkpoint not saved: its restore did not finish, so the one there stays as it was", "checkpoint", s.cfg.Checkpoint)
		return nil
	}
	if _, err := s.checkpointNow("shutdown", false); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// cmdCheckpoint saves every array to --checkpoint now (ak.checkpoint()).
func (s *Server) cmdCheckpoint(r *request) (*response, error) {
	force := r.args.OptBool("force", false)
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	if s.cfg.Checkpoint == "" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "this server has no checkpoint directory: start arktos-server with --checkpoint DIR (and --checkpoint-interval to save it periodically), or save the arrays somewhere with save_all")
	}
	res, err := s.checkpointNow("request", force)
	if err != nil {
		var te *transfer.Error
		if errors.As(err, &te) {
			return nil, err
		}
		return nil, transfer.Errorf(transfer.Internal, "%v; the last complete checkpoint stays as it was", err)
	}
	return &response{result: res}, nil
}

// checkpointEvery saves --checkpoint every interval while anything changed,
// until ctx ends or the server stops.
func (s *Server) checkpointEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopped:
			return
		case <-t.C:
		}
		if s.restore.Load() != nil || s.closing.Load() {
			continue
		}
		func() {
			defer par.Recover(s.logPanic("panic in a periodic checkpoint"))
			if _, err := s.checkpointNow("interval", false); err != nil && !errors.Is(err, fs.ErrClosed) {
				s.log.Error("periodic checkpoint failed; the last complete one stays", "err", err)
			}
		}()
	}
}
