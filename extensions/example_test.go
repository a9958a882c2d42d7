package extensions_test

import (
	"fmt"

	"github.com/acpprobe/acpprobe/extensions"
)

func ExampleLookupMetaKey() {
	// The flat form, as a member name of a _meta object …
	k, _ := extensions.LookupMetaKey("codebuddy.ai/requestId")
	fmt.Println(k.Key, k.Group, k.Direction, k.Class)
	// … and the nested form, the vendor's namespace object and then the key.
	k, _ = extensions.LookupMetaKey("claudeCode", "promptQueueing")
	fmt.Println(k.Key, k.Where)
	// A bare key, meaningful in authMethods[]._meta.
	k, _ = extensions.LookupMetaKey("api-key")
	fmt.Println(k.Vendor, k.Where)
	// Output:
	// codebuddy.ai/requestId 3.2 both public
	// claudeCode/promptQueueing [agentCapabilities._meta]
	// gemini [authMethods[]._meta]
}

func ExampleVendorFor() {
	for _, name := range []string{"codebuddy.ai/notYetCatalogued", "_zed.dev/workspace/buffers", "mystery/key"} {
		v, ok := extensions.VendorFor(name)
		fmt.Printf("%s: %q %v\n", name, v.Namespace, ok)
	}
	// Output:
	// codebuddy.ai/notYetCatalogued: "codebuddy.ai" true
	// _zed.dev/workspace/buffers: "zed.dev" true
	// mystery/key: "" false
}

func ExampleLookupMethod() {
	m, _ := extensions.LookupMethod("_codebuddy.ai/session/previewFileRollback")
	fmt.Println(m.Direction, m.Kind, m.Class)
	// Output: client-to-agent request public
}

func ExampleLoadDir() {
	// --catalogue DIR: the embedded vendors plus DIR/*.json, one file per namespace.
	c, err := extensions.LoadDir("testdata/user-catalogue")
	if err != nil {
		fmt.Println(err)
		return
	}
	k, _ := c.LookupMetaKey("example.org", "traceLevel")
	fmt.Println(k.Key, k.Direction)
	// Output: example.org/traceLevel client-to-agent
}
