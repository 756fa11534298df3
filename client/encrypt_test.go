package client_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/client"
	"github.com/arktos-dev/arktos/internal/testserver"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// TestServerKey: with the server's public key a client works over an
// encrypted socket (CurveZMQ) as over a plain one; without it, or with
// another key, Dial fails at once with AUTH_FAILED saying what to do.
func TestServerKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "server_key")
	srv := testserver.Start(t, "--encrypt", "on", "--server-key-file", keyFile)
	pub, err := os.ReadFile(keyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(pub))
	ctx := ctxT(t)
	c, err := client.Dial(ctx, srv.URL, client.WithServerKey(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := randomArray(pdarray.Float64, 300_000, 9)
	info, err := client.UploadArray(ctx, c, a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := client.DownloadArray(ctx, c, info.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), a.Bytes()) {
		t.Fatal("the array came back changed over the encrypted socket")
	}
	for _, opts := range [][]client.Option{nil, {client.WithServerKey("rq:A<@-6S#rvTy/rr*bb>!&6!?*dkX2XWt!p&IVF")}} {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		start := time.Now()
		_, err := client.Dial(dctx, srv.URL, opts...)
		cancel()
		var te *transfer.Error
		if !errors.As(err, &te) || te.Code != transfer.AuthFailed || !strings.Contains(te.Message, "handshake") {
			t.Fatalf("Dial with %d options: %v, want AUTH_FAILED naming the handshake", len(opts), err)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the refusal took %v: the handshake's failure was not reported", time.Since(start))
		}
	}
	if _, err := client.Dial(ctx, srv.URL, client.WithServerKey("short")); err == nil || !strings.Contains(err.Error(), "40 Z85 characters") {
		t.Fatalf("a short key: %v", err)
	}
}
