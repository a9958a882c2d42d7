package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent: the checked-in tables are what the generator writes from the pinned
// documents (run `go generate ./acp/schema` after changing either).
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
		t.Fatalf("acp/schema/%s is not what the generator writes from the pinned schemas: run go generate ./acp/schema", output)
	}
}
