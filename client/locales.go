package client

// locales.go: transfers straight to and from every locale of a server that
// spreads its arrays over several (--locales; docs/locales.md). The
// coordinator says where the blocks go or are (locate); the client then
// moves every block over that locale's own connection at once (block 0
// over its own, with "block": the coordinator's part alone) and, for an
// upload, has the coordinator record the blocks as one array (adopt). So
// an upload is bounded by the locales' memory together and uses all their
// links at once.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arktos-dev/arktos/pdarray"
)

// LocaleDirectMin is the size from which a whole array goes straight to,
// or comes straight from, every locale; smaller ones go through the
// coordinator (one request instead of L+2).
const LocaleDirectMin = 1 << 20

var localeDirectUploads, localeDirectDownloads atomic.Uint64

// LocaleDirectUploads and LocaleDirectDownloads count the transfers that
// went straight to every locale (tests check the path is taken).
func LocaleDirectUploads() uint64   { return localeDirectUploads.Load() }
func LocaleDirectDownloads() uint64 { return localeDirectDownloads.Load() }

// localeLinks are a client's connections to the other locales of its
// server, dialled at first use with the client's own options (the URL's
// token: locale 0 hands out each locale's).
type localeLinks struct {
	mu    sync.Mutex
	conns map[string]*Client
}

func (c *Client) localeClient(ctx context.Context, url string) (*Client, error) {
	c.locales.mu.Lock()
	defer c.locales.mu.Unlock()
	if lc := c.locales.conns[url]; lc != nil {
		return lc, nil
	}
	opts := c.opts
	opts.token = "" // the URL's
	lc, err := Dial(ctx, url, func(o *options) { *o = opts })
	if err != nil {
		return nil, fmt.Errorf("client: locale at %s: %w", stripToken(url), err)
	}
	if c.locales.conns == nil {
		c.locales.conns = map[string]*Client{}
	}
	c.locales.conns[url] = lc
	return lc, nil
}

func stripToken(url string) string {
	ep, _, _ := splitURL(url)
	return ep
}

func (c *Client) closeLocales() {
	c.locales.mu.Lock()
	defer c.locales.mu.Unlock()
	for _, lc := range c.locales.conns {
		lc.Close()
	}
	c.locales.conns = nil
}

// block is one locale's part of an array as locate describes it.
type block struct {
	rank, start, stop int
	name, url         string
}

func (c *Client) locate(ctx context.Context, args map[string]any) (map[string]any, []block, error) {
	res, err := c.call(ctx, "locate", args)
	if err != nil {
		return nil, nil, err
	}
	urls, _ := res["urls"].([]any)
	list, _ := res["blocks"].([]any)
	if len(list) != len(urls) || len(list) == 0 {
		return nil, nil, fmt.Errorf("client: locate answered %d blocks for %d locales", len(list), len(urls))
	}
	out := make([]block, len(list))
	for i, x := range list {
		m, _ := x.(map[string]any)
		out[i] = block{rank: i, start: int(asInt(m["start"])), stop: int(asInt(m["stop"])), name: asString(m["name"]), url: asString(urls[i])}
	}
	return res, out, nil
}

// eachLocale runs f for every block at once, with the client of its
// locale (c itself for block 0), and returns the first error.
func (c *Client) eachLocale(ctx context.Context, blocks []block, f func(lc *Client, b block) error) error {
	errs := make([]error, len(blocks))
	var wg sync.WaitGroup
	for i, b := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc := c
			if b.rank > 0 {
				var err error
				if lc, err = c.localeClient(ctx, b.url); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = f(lc, b)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// uploadDirect stores body (n elements of dt) as one array spread over the
// locales: each block straight to its locale, then adopt. On a failure
// the blocks stored are deleted.
func (c *Client) uploadDirect(ctx context.Context, dt pdarray.DType, n int, body []byte) (ArrayInfo, error) {
	_, blocks, err := c.locate(ctx, map[string]any{"size": n})
	if err != nil {
		return ArrayInfo{}, err
	}
	sz := dt.Size()
	names := make([]string, len(blocks))
	err = c.eachLocale(ctx, blocks, func(lc *Client, b block) error {
		var opts []UploadOption
		if b.rank == 0 {
			opts = append(opts, func(a map[string]any) { a["block"] = true })
		}
		info, err := lc.uploadPlain(ctx, dt, b.stop-b.start, body[b.start*sz:b.stop*sz], opts)
		names[b.rank] = info.Name
		return err
	})
	if err == nil {
		var res map[string]any
		if res, err = c.call(ctx, "adopt", map[string]any{"parts": names, "dtype": dt.String(), "size": n}); err == nil {
			localeDirectUploads.Add(1)
			return parseInfo(res)
		}
	}
	for i, name := range names {
		if name == "" {
			continue
		}
		lc := c
		if i > 0 {
			if lc, _ = c.localeClient(ctx, blocks[i].url); lc == nil {
				continue
			}
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = lc.call(dctx, "delete", map[string]any{"names": []string{name}})
		cancel()
	}
	return ArrayInfo{}, err
}

// downloadDirect reads array name, when it is spread over locales and
// LocaleDirectMin bytes or more, straight from every locale into its place
// in into (or new memory); ok false means it is not, and nothing was read.
func (c *Client) downloadDirect(ctx context.Context, name string, want pdarray.DType, into []byte) (a *pdarray.Array, ok bool, err error) {
	res, blocks, err := c.locate(ctx, map[string]any{"name": name})
	if err != nil {
		return nil, false, nil // (the plain download says what is wrong)
	}
	dt, err := pdarray.ParseDType(asString(res["dtype"]))
	if err != nil {
		return nil, false, nil
	}
	info := ArrayInfo{Name: name, DType: dt, Size: int(asInt(res["size"]))}
	info.NBytes = info.Size * dt.Size()
	if info.NBytes < LocaleDirectMin {
		return nil, false, nil
	}
	if want != pdarray.Invalid && want != dt {
		return nil, true, wrongDType(name, info, want)
	}
	if a, err = result(info, into); err != nil {
		return nil, true, err
	}
	buf, sz := a.Bytes(), dt.Size()
	err = c.eachLocale(ctx, blocks, func(lc *Client, b block) error {
		if b.stop <= b.start {
			return nil
		}
		var args map[string]any
		if b.rank == 0 {
			args = map[string]any{"block": true}
		}
		_, err := lc.download(ctx, b.name, args, dt, buf[b.start*sz:b.stop*sz])
		return err
	})
	if err != nil {
		return nil, true, err
	}
	localeDirectDownloads.Add(1)
	return a, true, nil
}
