package main

import (
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// TestGeneratedIsCurrent: the checked-in table is what the generator writes from the schemas
// (run `go generate ./registry` after changing either).
func TestGeneratedIsCurrent(t *testing.T) {
	if err := schematable.Current(filepath.Join("..", ".."), output, generate); err != nil {
		t.Fatalf("registry: %v", err)
	}
}
