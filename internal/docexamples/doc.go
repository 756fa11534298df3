// Package docexamples holds the test that compiles and runs every Go code
// block of README.md and docs/*.md against a real server (docs_test.go);
// it has no code of its own.
package docexamples
