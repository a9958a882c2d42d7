package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
)

// runExtensions prints the vendor catalogue: every vendor, or one with --vendor.
func runExtensions(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("extensions")
	vendor := fs.String("vendor", "", "only this vendor namespace (e.g. codebuddy.ai)")
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	if err := parseFlags(fs, args, "acpprobe extensions [--vendor NS] [--json] [--catalogue DIR]", stdio.Out); err != nil {
		return failUsage(stdio, "extensions", err)
	}
	if fs.NArg() > 0 {
		return failUsage(stdio, "extensions", usagef("unexpected arguments %q", fs.Args()))
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return failUsage(stdio, "extensions", err)
	}
	var vendors []extensions.Vendor
	for _, v := range cat.Vendors() {
		if *vendor == "" || v.Namespace == *vendor {
			vendors = append(vendors, v)
		}
	}
	if len(vendors) == 0 {
		var names []string
		for _, v := range cat.Vendors() {
			names = append(names, v.Namespace)
		}
		return failUsage(stdio, "extensions", usagef("no vendor %q (have %s)", *vendor, strings.Join(names, ", ")))
	}
	type vendorDoc struct {
		extensions.Vendor
		MetaKeys        []extensions.MetaKey        `json:"metaKeys"`
		Methods         []extensions.Method         `json:"methods"`
		NonKeys         []extensions.NonKey         `json:"nonKeys"`
		AuthMethodTypes []extensions.AuthMethodType `json:"authMethodTypes"`
	}
	var docs []vendorDoc
	for _, v := range vendors {
		d := vendorDoc{Vendor: v, MetaKeys: []extensions.MetaKey{}, Methods: []extensions.Method{}, NonKeys: []extensions.NonKey{}, AuthMethodTypes: []extensions.AuthMethodType{}}
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
	if *asJSON {
		if err := render.JSON(stdio.Out, docs); err != nil {
			return ExitNotProbed
		}
		return ExitOK
	}
	for _, d := range docs {
		fmt.Fprintf(stdio.Out, "\n%s — %s (%d keys, %d methods)\n  source: %s\n", d.Namespace, d.Name, len(d.MetaKeys), len(d.Methods), d.Source)
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		if len(d.MetaKeys) > 0 {
			fmt.Fprintln(tw, "  KEY\tGROUP\tDIRECTION\tCLASS\tDESCRIPTION")
			for _, k := range d.MetaKeys {
				class := string(k.Class)
				if k.Status != "" && k.Status != extensions.StatusActive {
					class += " (" + string(k.Status) + ")"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", k.Key, k.Group, arrow(k.Direction), class, k.Description)
			}
		}
		if len(d.Methods) > 0 {
			fmt.Fprintln(tw, "  METHOD\t\tDIRECTION\tCLASS\tDESCRIPTION")
			for _, m := range d.Methods {
				class := string(m.Class)
				if m.Status != "" && m.Status != extensions.StatusActive {
					class = strings.TrimSpace(class + " (" + string(m.Status) + ")")
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, arrow(m.Direction), class, m.Description)
			}
		}
		for _, a := range d.AuthMethodTypes {
			fmt.Fprintf(tw, "  authMethods[].type=%s\t%s\t%s\t%s\t%s\n", a.Type, strings.Join(a.Fields, ","), arrow(a.Direction), a.Class, a.Description)
		}
		for _, n := range d.NonKeys {
			fmt.Fprintf(tw, "  %s\t(not a key)\t\t\t%s\n", n.Token, n.Why)
		}
		tw.Flush()
	}
	return ExitOK
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
