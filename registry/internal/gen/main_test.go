package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent: the checked-in table is what the generator writes from the schemas
// (run `go generate ./registry` after changing either).
func TestGeneratedIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..")
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("registry/%s is not what the generator writes from the schemas: run go generate ./registry", output)
	}
}
