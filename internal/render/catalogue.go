package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpprobe/acpprobe/extensions"
)

// VendorDoc is one vendor of the extension catalogue with its entries: what `acpprobe
// extensions` prints, as tables (Catalogue) or, with --json, as this document.
type VendorDoc struct {
	extensions.Vendor
	MetaKeys        []extensions.MetaKey        `json:"metaKeys"`
	Methods         []extensions.Method         `json:"methods"`
	NonKeys         []extensions.NonKey         `json:"nonKeys"`
	AuthMethodTypes []extensions.AuthMethodType `json:"authMethodTypes"`
}

// VendorDocs gathers the entries of each of vendors from cat, in the catalogue's order (empty
// lists, never nil, so that the JSON has [] for a vendor without entries of a kind).
func VendorDocs(cat *extensions.Catalogue, vendors []extensions.Vendor) []VendorDoc {
	var docs []VendorDoc
	for _, v := range vendors {
		d := VendorDoc{Vendor: v, MetaKeys: []extensions.MetaKey{}, Methods: []extensions.Method{}, NonKeys: []extensions.NonKey{}, AuthMethodTypes: []extensions.AuthMethodType{}}
		for _, k := range cat.MetaKeys() {
			if k.Vendor == v.Namespace {
				d.MetaKeys = append(d.MetaKeys, k)
			}
		}
		for _, m := range cat.Methods() {
			if m.Vendor == v.Namespace {
				d.Methods = append(d.Methods, m)
			}
		}
		for _, n := range cat.NonKeys() {
			if n.Vendor == v.Namespace {
				d.NonKeys = append(d.NonKeys, n)
			}
		}
		for _, a := range cat.AuthMethodTypes() {
			if a.Vendor == v.Namespace {
				d.AuthMethodTypes = append(d.AuthMethodTypes, a)
			}
		}
		docs = append(docs, d)
	}
	return docs
}

// Catalogue writes each vendor as a heading and a table: its _meta keys (group, direction,
// class, description), its methods, the authMethods types it adds and the tokens that look
// like its keys but are not.
func Catalogue(w io.Writer, docs []VendorDoc) error {
	width := screenOf(w).lineWidth()
	t := &textWriter{w: w, width: width}
	for _, d := range docs {
		t.section(fmt.Sprintf("%s — %s (%d keys, %d methods)", d.Namespace, d.Name, len(d.MetaKeys), len(d.Methods)))
		t.line("source: " + d.Source)
		var rows [][]string
		if len(d.MetaKeys) > 0 {
			rows = append(rows, []string{"  KEY", "GROUP", "DIRECTION", "CLASS", "DESCRIPTION"})
			for _, k := range d.MetaKeys {
				class := string(k.Class)
				if k.Status != "" && k.Status != extensions.StatusActive {
					class += " (" + string(k.Status) + ")"
				}
				rows = append(rows, []string{"  " + k.Key, k.Group, arrow(k.Direction), class, k.Description})
			}
		}
		if len(d.Methods) > 0 {
			rows = append(rows, []string{"  METHOD", "", "DIRECTION", "CLASS", "DESCRIPTION"})
			for _, m := range d.Methods {
				class := string(m.Class)
				if m.Status != "" && m.Status != extensions.StatusActive {
					class = strings.TrimSpace(class + " (" + string(m.Status) + ")")
				}
				rows = append(rows, []string{"  " + m.Name, string(m.Kind), arrow(m.Direction), class, m.Description})
			}
		}
		for _, a := range d.AuthMethodTypes {
			rows = append(rows, []string{"  authMethods[].type=" + a.Type, strings.Join(a.Fields, ","), arrow(a.Direction), string(a.Class), a.Description})
		}
		for _, n := range d.NonKeys {
			rows = append(rows, []string{"  " + n.Token, "(not a key)", "", "", n.Why})
		}
		if t.err == nil {
			t.err = writeTable(w, rows, width)
		}
	}
	return t.err
}

func arrow(d extensions.Direction) string {
	switch d {
	case extensions.DirectionAgentToClient:
		return "A→C"
	case extensions.DirectionClientToAgent:
		return "C→A"
	case extensions.DirectionBoth:
		return "both"
	}
	return "-"
}

// sticky is a writer that keeps its first error and writes nothing after it, so that a
// renderer can write freely and report the error once, at the end.
type sticky struct {
	w   io.Writer
	err error
}

func (s *sticky) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}
