// Package archtest keeps the import graph one-way (../shared/STYLE.md):
// pdarray is a leaf; ops and transfer sit on pdarray; client never imports
// server (the server talks to its other locales through client); nothing but cmd and bench imports server.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/arktos-dev/arktos/"

// allowed lists, per package, the project packages it may import.
var allowed = map[string][]string{
	"pdarray":              {},
	"ops":                  {"pdarray", "internal/par"},
	"transfer":             {"pdarray", "internal/par"},
	"transfer/zframe":      {},
	"arrowio":              {"pdarray", "internal/par"},
	"csvio":                {"pdarray", "internal/par", "internal/pyfmt"},
	"hdf5io":               {"pdarray", "internal/par"},
	"strs":                 {"pdarray", "ops", "internal/par", "internal/pyfmt"},
	"server":               {"pdarray", "client", "ops", "strs", "transfer", "transfer/zframe", "arrowio", "csvio", "hdf5io", "internal/par"},
	"client":               {"pdarray", "transfer", "transfer/zframe"},
	"cmd/arktos-server":    {"server", "internal/launch"},
	"internal/launch":      {},
	"internal/testserver":  {},
	"internal/par":         {},
	"internal/pyfmt":       {},
	"internal/archtest":    {},
	"internal/docexamples": {},
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		if strings.HasPrefix(pkg, "bench") {
			continue // end-to-end benchmarks may use anything
		}
		ok, known := allowed[pkg]
		if !known {
			t.Errorf("package %s has no entry in archtest's allowed table; add one that keeps imports one-way", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			dep := strings.TrimPrefix(imp, mod)
			found := false
			for _, a := range ok {
				found = found || a == dep
			}
			if !found {
				t.Errorf("%s imports %s, which the one-way rule forbids", pkg, dep)
			}
		}
	}
}
