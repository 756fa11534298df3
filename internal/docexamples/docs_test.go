package docexamples

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/internal/testserver"
)

// root is the repository's folder (two above this file's).
func root() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..")
}

// goBlocks returns every ```go block of the Markdown files, by file:line.
func goBlocks(t *testing.T) map[string]string {
	files, _ := filepath.Glob(filepath.Join(root(), "docs", "*.md"))
	files = append(files, filepath.Join(root(), "README.md"))
	blocks := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root(), f)
		var body []string
		start := 0
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case start == 0 && strings.TrimSpace(line) == "```go":
				start, body = i+1, nil
			case start != 0 && strings.TrimSpace(line) == "```":
				blocks[rel+":"+strconv.Itoa(start)] = strings.Join(body, "\n") + "\n"
				start = 0
			case start != 0:
				body = append(body, line)
			}
		}
	}
	return blocks
}

var urlLiteral = regexp.MustCompile(`"(tcp|ipc)://[^"]*"`)

// TestGoBlocks: each Go block is a whole program (package main) that go vet
// passes, and that runs to a zero exit status against a fresh server (its
// address literal replaced by the server's). The README's snippet did not
// compile before (an unused err, no imports, no ctx).
func TestGoBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs programs (a cgo link each)")
	}
	blocks := goBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("no ```go block in README.md or docs/*.md")
	}
	for where, src := range blocks {
		t.Run(where, func(t *testing.T) {
			if !strings.HasPrefix(strings.TrimSpace(src), "package main") {
				t.Fatalf("%s: a Go block must be a whole program (package main ... func main), so that it can be copied and run", where)
			}
			srv := testserver.Start(t)
			src = urlLiteral.ReplaceAllString(src, `"`+srv.URL+`"`)
			// Inside the module (a folder starting with "." is left out of
			// ./...), so the program imports the packages of this checkout.
			dir, err := os.MkdirTemp(".", ".doc-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			pkg := "./" + filepath.Base(dir)
			bin := filepath.Join(t.TempDir(), "example")
			for _, args := range [][]string{{"vet", pkg}, {"build", "-o", bin, pkg}} {
				if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
					t.Fatalf("%s: go %s: %v\n%s", where, strings.Join(args, " "), err, out)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", where, err, out)
			}
			t.Logf("%s printed: %s", where, out)
		})
	}
}
