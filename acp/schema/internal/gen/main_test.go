package main

import (
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// TestGeneratedIsCurrent: the checked-in tables are what the generator writes from the pinned
// documents (run `go generate ./acp/schema` after changing either).
func TestGeneratedIsCurrent(t *testing.T) {
	if err := schematable.Current(filepath.Join("..", ".."), output, generate); err != nil {
		t.Fatalf("acp/schema: %v", err)
	}
}
