package cli

import (
	"context"
	"os"
	"strings"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
)

// ExtensionsOptions are the options of acpprobe extensions: print the vendor catalogue.
type ExtensionsOptions struct {
	IO Stdio
	// Catalogue is the catalogue to print (the built-in one when nil).
	Catalogue *extensions.Catalogue
	// Vendor, when set, prints only this vendor namespace.
	Vendor string
	// JSON prints the catalogue as JSON.
	JSON bool
}

func newExtensionsOptions(args []string, stdio Stdio) (*ExtensionsOptions, error) {
	fs := newFlagSet("extensions")
	vendor := fs.String("vendor", "", "only this vendor namespace (e.g. codebuddy.ai)")
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	if err := parseFlags(fs, args, "acpprobe extensions [--vendor NS] [--json] [--catalogue DIR]", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return nil, err
	}
	return &ExtensionsOptions{IO: stdio, Catalogue: cat, Vendor: *vendor, JSON: *asJSON}, nil
}

// extensionsRun prints the vendor catalogue: every vendor, or the one asked for.
func extensionsRun(_ context.Context, opts *ExtensionsOptions) error {
	cat := catalogueOr(opts.Catalogue)
	var vendors []extensions.Vendor
	for _, v := range cat.Vendors() {
		if opts.Vendor == "" || v.Namespace == opts.Vendor {
			vendors = append(vendors, v)
		}
	}
	if len(vendors) == 0 {
		var names []string
		for _, v := range cat.Vendors() {
			names = append(names, v.Namespace)
		}
		return usagef("no vendor %q (have %s)", opts.Vendor, strings.Join(names, ", "))
	}
	docs := render.VendorDocs(cat, vendors)
	var err error
	if opts.JSON {
		err = render.JSON(opts.IO.Out, docs)
	} else {
		err = render.Catalogue(render.ScreenOf(opts.IO.Out, os.Getenv), docs)
	}
	if err != nil {
		return writeError("the catalogue", err)
	}
	return nil
}
