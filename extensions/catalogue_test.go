package extensions

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustLoad(t *testing.T) *Catalogue {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// TestDefaultIsCurrent: the catalogue built into the binary (catalogue_gen.go) is what Load
// reads from the embedded files, lookup maps included. It fails after a change to
// catalogue/*.json until go generate ./extensions runs.
func TestDefaultIsCurrent(t *testing.T) {
	if got, want := Default(), mustLoad(t); !reflect.DeepEqual(got, want) {
		t.Fatal("extensions/catalogue_gen.go is not the embedded catalogue: run go generate ./extensions")
	}
	if n := len(Default().MetaKeys()); n < 150 {
		t.Fatalf("Default has %d meta keys; the embedded files hold more than 150 (CodeBuddy alone 142)", n)
	}
}

// TestEmbeddedFilesValid loads every embedded file on its own, so that a problem is pinned to
// one file, and then checks the invariants of the whole catalogue.
func TestEmbeddedFilesValid(t *testing.T) {
	names, err := fs.Glob(embedded, "catalogue/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded files (%v)", err)
	}
	var nss []string
	for _, name := range names {
		data, err := embedded.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		b := &builder{vendors: map[string]*vendorBuild{}}
		b.addFile(embeddedName(name), path.Base(name), data)
		b.finish()
		for _, e := range b.errs {
			t.Errorf("%v", e)
		}
		nss = append(nss, strings.TrimSuffix(path.Base(name), ".json"))
	}
	want := []string{"account", "acpprobe", "auth", "claude", "claude-agent-acp", "claudeCode", "codebuddy.ai", "codex", "codex-acp", "diff", "gemini",
		"jetbrains", "jetbrains.air", "legacy-auth", "qwen", "session", "zed", "zed.dev"}
	if slices.Sort(nss); !slices.Equal(nss, want) {
		t.Errorf("embedded vendors %v, want %v", nss, want)
	}

	c := mustLoad(t)
	var got []string
	for _, v := range c.Vendors() {
		got = append(got, v.Namespace)
		if v.Name == "" || v.Source == "" || len(v.Files) != 1 || v.Files[0] != "extensions/catalogue/"+v.Namespace+".json" {
			t.Errorf("vendor %s: name %q, source %q, files %v", v.Namespace, v.Name, v.Source, v.Files)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Vendors() = %v, want %v", got, want)
	}

	seen := map[string]bool{}
	for _, k := range c.MetaKeys() {
		if seen[k.Key] {
			t.Errorf("key %s catalogued twice", k.Key)
		}
		seen[k.Key] = true
		if !validDirection(k.Direction) || !validClass(k.Class, k.Status) || !validStatus(k.Status) {
			t.Errorf("key %s: direction %q class %q status %q", k.Key, k.Direction, k.Class, k.Status)
		}
		if strings.TrimSpace(k.Description) == "" || len(k.Where) == 0 {
			t.Errorf("key %s: description %q, where %v", k.Key, k.Description, k.Where)
		}
		v, _ := c.Vendor(k.Vendor)
		if want := k.Name; v.Namespaced {
			if want = v.Namespace + "/" + k.Name; v.UnderscoreKeys {
				want = "_" + want
			}
			if k.Key != want {
				t.Errorf("key %s: want %s", k.Key, want)
			}
		} else if k.Key != want {
			t.Errorf("key %s: want %s", k.Key, want)
		}
	}
	seen = map[string]bool{}
	for _, m := range c.Methods() {
		if seen[m.Name] {
			t.Errorf("method %s catalogued twice", m.Name)
		}
		seen[m.Name] = true
		if v, _ := c.Vendor(m.Vendor); strings.HasPrefix(m.Name, "_") && v.Namespaced && !strings.HasPrefix(m.Name, "_"+m.Vendor+"/") {
			t.Errorf("method %s is not under _%s/", m.Name, m.Vendor)
		}
		validKind := m.Kind == KindRequest || m.Kind == KindNotification || (m.Kind == KindNone && m.Status == StatusPlaceholder)
		if !validDirection(m.Direction) || !validClass(m.Class, m.Status) || !validStatus(m.Status) || !validKind {
			t.Errorf("method %s: direction %q kind %q class %q status %q", m.Name, m.Direction, m.Kind, m.Class, m.Status)
		}
		if strings.TrimSpace(m.Description) == "" {
			t.Errorf("method %s: empty description", m.Name)
		}
	}
	for _, n := range c.NonKeys() {
		if n.Why == "" || (n.Bucket != BucketNamespaceNotation && n.Bucket != BucketURLPath) {
			t.Errorf("non-key %s: bucket %q why %q", n.Token, n.Bucket, n.Why)
		}
		if _, isKey := c.LookupMetaKey(n.Token); isKey {
			t.Errorf("non-key %s is also a key", n.Token)
		}
	}
	for _, a := range c.AuthMethodTypes() {
		if a.Description == "" || len(a.Where) == 0 || !validDirection(a.Direction) || !validStatus(a.Status) {
			t.Errorf("auth method type %s: %+v", a.Type, a)
		}
	}
}

func validDirection(d Direction) bool {
	return slices.Contains([]Direction{DirectionAgentToClient, DirectionClientToAgent, DirectionBoth, DirectionNone}, d)
}

func validClass(c Class, s Status) bool {
	return c == ClassPublic || c == ClassPrivate || (c == ClassNone && s == StatusPlaceholder)
}

func validStatus(s Status) bool {
	return slices.Contains([]Status{StatusActive, StatusRetired, StatusNoProducer, StatusPlaceholder, StatusExample, StatusLegacy}, s)
}

func TestOtherVendors(t *testing.T) {
	c := mustLoad(t)
	for _, tc := range []struct {
		path   []string
		vendor string
		dir    Direction
		status Status
		where  string
	}{
		{[]string{"claudeCode", "promptQueueing"}, "claudeCode", DirectionAgentToClient, StatusActive, "agentCapabilities._meta"},
		{[]string{"api-key"}, "gemini", DirectionAgentToClient, StatusActive, "authMethods[]._meta"},
		{[]string{"gateway"}, "gemini", DirectionBoth, StatusActive, "authenticate params._meta"},
		{[]string{"terminal-auth"}, "legacy-auth", DirectionBoth, StatusLegacy, "authMethods[]._meta"},
		{[]string{"agent-auth"}, "legacy-auth", DirectionAgentToClient, StatusLegacy, "authMethods[]._meta"},
		{[]string{"env-var-auth"}, "legacy-auth", DirectionAgentToClient, StatusLegacy, "authMethods[]._meta"},
		{[]string{"zed.dev/debugMode"}, "zed.dev", DirectionClientToAgent, StatusExample, "session/prompt params._meta"},
		{[]string{"zed.dev", "workspace"}, "zed.dev", DirectionAgentToClient, StatusExample, "agentCapabilities._meta"},
	} {
		k, ok := c.LookupMetaKey(tc.path...)
		if !ok {
			t.Errorf("LookupMetaKey(%q) not found", tc.path)
			continue
		}
		if k.Vendor != tc.vendor || k.Direction != tc.dir || k.Status != tc.status || !slices.Contains(k.Where, tc.where) || k.Class != ClassPublic {
			t.Errorf("LookupMetaKey(%q) = %+v", tc.path, k)
		}
	}
	a, ok := c.LookupAuthMethodType("env_var")
	if !ok || a.Vendor != "codex" || !slices.Equal(a.Fields, []string{"vars"}) || !slices.Equal(a.Where, []string{"authMethods[].type"}) {
		t.Errorf("LookupAuthMethodType(env_var) = %+v, %v", a, ok)
	}
	if _, ok := c.LookupMetaKey("env_var"); ok {
		t.Error("env_var is an auth method type, not a _meta key")
	}
	for _, name := range []string{"_zed.dev/workspace/buffers", "_zed.dev/file_opened"} {
		if m, ok := c.LookupMethod(name); !ok || m.Status != StatusExample || m.Vendor != "zed.dev" {
			t.Errorf("LookupMethod(%s) = %+v, %v", name, m, ok)
		}
	}
}

func TestLookupMetaKeyForms(t *testing.T) {
	c := mustLoad(t)
	flat, ok := c.LookupMetaKey("codebuddy.ai/requestId")
	if !ok {
		t.Fatal("flat form not found")
	}
	nested, ok := c.LookupMetaKey("codebuddy.ai", "requestId")
	if !ok {
		t.Fatal("nested form not found")
	}
	if flat.Key != "codebuddy.ai/requestId" || flat.Name != "requestId" || flat.Vendor != "codebuddy.ai" ||
		flat.Group != "3.2" || flat.Direction != DirectionBoth || flat.Class != ClassPublic || flat.Status != StatusActive {
		t.Errorf("flat = %+v", flat)
	}
	if flat.Key != nested.Key || flat.Description != nested.Description {
		t.Errorf("flat %+v and nested %+v differ", flat, nested)
	}
	if k, ok := c.LookupMetaKey("codebuddy.ai", "compact-limit-reached"); !ok || k.Group != "3.8" {
		t.Errorf("compact-limit-reached: %+v %v", k, ok)
	}
	if k, ok := c.LookupMetaKey("codebuddy.ai/accessToken"); !ok || k.Status != StatusNoProducer || k.Class != ClassPrivate || k.Direction != DirectionNone {
		t.Errorf("accessToken: %+v %v", k, ok)
	}
	for _, path := range [][]string{
		nil, {""}, {"requestId"}, {"codebuddy.ai"}, {"codebuddy.ai/"}, {"codebuddy.ai/nope"},
		{"codebuddy.ai", "requestId", "deeper"}, {"gemini", "api-key"}, {"claudeCode.promptQueueing"},
		{"codebuddy.ai/docs"}, // a non-key
	} {
		if k, ok := c.LookupMetaKey(path...); ok {
			t.Errorf("LookupMetaKey(%q) = %+v, want not found", path, k)
		}
	}
	// Package-level functions use the embedded catalogue.
	if k, ok := LookupMetaKey("claudeCode", "promptQueueing"); !ok || k.Key != "claudeCode/promptQueueing" {
		t.Errorf("LookupMetaKey(claudeCode, promptQueueing) = %+v %v", k, ok)
	}
}

func TestLookupMethod(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dir   Direction
		kind  Kind
		class Class
	}{
		{"_codebuddy.ai/question", DirectionAgentToClient, KindRequest, ClassPublic},
		{"_codebuddy.ai/artifact", DirectionAgentToClient, KindNotification, ClassPublic},
		{"_codebuddy.ai/session/rollbackFiles", DirectionClientToAgent, KindRequest, ClassPublic},
		{"_codebuddy.ai/session/previewFileRollback", DirectionClientToAgent, KindRequest, ClassPublic},
		{"_codebuddy.ai/delegateToolsChanged", DirectionClientToAgent, KindNotification, ClassPublic},
		{"_codebuddy.ai/admitControl", DirectionClientToAgent, KindRequest, ClassPrivate},
		{"_codebuddy.ai/example", DirectionNone, KindNone, ClassNone},
	} {
		m, ok := LookupMethod(tc.name)
		if !ok || m.Direction != tc.dir || m.Kind != tc.kind || m.Class != tc.class || m.Vendor != "codebuddy.ai" {
			t.Errorf("LookupMethod(%s) = %+v, %v", tc.name, m, ok)
		}
	}
	for _, name := range []string{"codebuddy.ai/question", "_codebuddy.ai/session", "_codebuddy.ai/nope", "session/prompt", ""} {
		if m, ok := LookupMethod(name); ok {
			t.Errorf("LookupMethod(%q) = %+v, want not found", name, m)
		}
	}
}

func TestVendorFor(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"codebuddy.ai/requestId", "codebuddy.ai"},
		{"codebuddy.ai/somethingNew", "codebuddy.ai"}, // unknown key in a catalogued namespace
		{"codebuddy.ai", "codebuddy.ai"},              // the nested form's namespace object
		{"_codebuddy.ai/question", "codebuddy.ai"},
		{"_codebuddy.ai/brandNewMethod", "codebuddy.ai"},
		{"_codebuddy.ai/session/rollback", "codebuddy.ai"},
		{"claudeCode", "claudeCode"},
		{"claudeCode/other", "claudeCode"},
		{"zed.dev/debugMode", "zed.dev"},
		{"_zed.dev/anything/else", "zed.dev"},
		{"api-key", "gemini"},
		{"gateway", "gemini"},
		{"terminal-auth", "legacy-auth"},
		{"", ""},
		{"requestId", ""},
		{"gemini/api-key", ""},      // gemini is not a wire namespace
		{"codex/anything", "codex"}, // codex-acp 2.x nests its keys under _meta.codex
		{"_claude/model", "claude"},
		{"_session/steering", "session"},
		{"jetbrains.air", "jetbrains.air"},
		{"authentication/status", "codex"}, // catalogued, although named without the '_'
		{"qwen/notify/session/model-update", "qwen"},
		{"qwen/notify/session/brand-new", ""}, // qwen is no wire namespace
		{"legacy-auth", ""},
		{"codebuddy.aiX/requestId", ""},
		{"example.com/key", ""},
		{"_unknown/method", ""},
	} {
		v, ok := VendorFor(tc.name)
		if ok != (tc.want != "") || v.Namespace != tc.want {
			t.Errorf("VendorFor(%q) = %q, %v; want %q", tc.name, v.Namespace, ok, tc.want)
		}
	}
}

// TestAccessorsCopy checks that callers cannot change the shared catalogue.
func TestAccessorsCopy(t *testing.T) {
	k, _ := LookupMetaKey("codebuddy.ai/requestId")
	k.Where[0] = "changed"
	v, _ := VendorFor("codebuddy.ai")
	v.Notes[0] = "changed"
	v.Groups[0].Title = "changed"
	Default().MetaKeys()[0].Where[0] = "changed"
	a, _ := LookupAuthMethodType("env_var")
	a.Fields[0] = "changed"

	k2, _ := LookupMetaKey("codebuddy.ai/requestId")
	v2, _ := VendorFor("codebuddy.ai")
	a2, _ := LookupAuthMethodType("env_var")
	if k2.Where[0] == "changed" || v2.Notes[0] == "changed" || v2.Groups[0].Title == "changed" ||
		Default().MetaKeys()[0].Where[0] == "changed" || a2.Fields[0] == "changed" {
		t.Error("an accessor returned shared memory")
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDirMerge(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		// Extends the embedded vendor: overrides one key, adds a key, a method and a note.
		"codebuddy.ai.json": `{"schema": "acpprobe.extensions/v1", "namespace": "codebuddy.ai",
			"notes": ["local additions"],
			"metaKeys": [
				{"name": "requestId", "group": "3.2", "direction": "agent-to-client", "class": "public", "status": "retired", "where": ["any _meta"], "description": "Overridden locally."},
				{"name": "brandNewKey", "direction": "agent-to-client", "class": "public", "where": ["any _meta"], "description": "Seen in a newer build."}
			],
			"methods": [{"name": "_codebuddy.ai/brandNew", "direction": "agent-to-client", "kind": "notification", "class": "public", "description": "Seen in a newer build."}]}`,
		// Adds a vendor.
		"example.com.json": `{"schema": "acpprobe.extensions/v1", "namespace": "example.com", "name": "Example", "source": "test",
			"namespaced": true, "forms": ["nested"],
			"metaKeys": [{"name": "flag", "direction": "both", "class": "private", "where": ["clientCapabilities._meta"], "description": "A test flag."}]}`,
		"README.txt": "not a catalogue file",
	})
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	base := mustLoad(t)

	k, ok := c.LookupMetaKey("codebuddy.ai", "requestId")
	if !ok || k.Description != "Overridden locally." || k.Status != StatusRetired || k.Direction != DirectionAgentToClient {
		t.Errorf("override: %+v %v", k, ok)
	}
	if k, _ := base.LookupMetaKey("codebuddy.ai/requestId"); k.Description == "Overridden locally." {
		t.Error("LoadDir changed the embedded catalogue")
	}
	if k, ok := c.LookupMetaKey("codebuddy.ai/brandNewKey"); !ok || k.Vendor != "codebuddy.ai" {
		t.Errorf("added key: %+v %v", k, ok)
	}
	if _, ok := c.LookupMethod("_codebuddy.ai/brandNew"); !ok {
		t.Error("added method missing")
	}
	if got, want := len(c.MetaKeys()), len(base.MetaKeys())+2; got != want {
		t.Errorf("%d keys after merge, want %d (one replaced, two added)", got, want)
	}
	// The override keeps its place in file order.
	idx := func(cat *Catalogue, key string) int {
		return slices.IndexFunc(cat.MetaKeys(), func(k MetaKey) bool { return k.Key == key })
	}
	if idx(c, "codebuddy.ai/requestId") != idx(base, "codebuddy.ai/requestId") {
		t.Error("the overridden key moved")
	}
	v, _ := c.Vendor("codebuddy.ai")
	bv, _ := base.Vendor("codebuddy.ai")
	if v.Name != bv.Name || v.Source != bv.Source || !v.Namespaced || len(v.Groups) != len(bv.Groups) {
		t.Errorf("vendor fields not inherited: %+v", v)
	}
	if len(v.Notes) != len(bv.Notes)+1 || v.Notes[len(v.Notes)-1] != "local additions" {
		t.Errorf("notes not appended: %q", v.Notes)
	}
	if want := []string{"extensions/catalogue/codebuddy.ai.json", filepath.Join(dir, "codebuddy.ai.json")}; !slices.Equal(v.Files, want) {
		t.Errorf("files %v, want %v", v.Files, want)
	}
	if k, ok := c.LookupMetaKey("example.com", "flag"); !ok || k.Key != "example.com/flag" || k.Class != ClassPrivate {
		t.Errorf("new vendor key: %+v %v", k, ok)
	}
	if v, ok := c.VendorFor("example.com/unknown"); !ok || v.Name != "Example" {
		t.Errorf("VendorFor new vendor: %+v %v", v, ok)
	}
}

func TestLoadDirMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	_, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("LoadDir(missing) = %v", err)
	}
	if _, err := LoadDir(""); err == nil {
		t.Error("LoadDir(\"\") succeeded")
	}
	// An empty directory adds nothing.
	c, err := LoadDir(t.TempDir())
	if err != nil || len(c.MetaKeys()) != len(mustLoad(t).MetaKeys()) {
		t.Errorf("LoadDir(empty) = %v", err)
	}
}

const head = `"schema": "acpprobe.extensions/v1", "namespace": "bad.example", "name": "Bad", "source": "test", "namespaced": true`

func TestLoadDirErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		want             []string // substrings of the error
	}{
		{"syntax", "bad.example.json", "{\n  \"schema\": \"acpprobe.extensions/v1\",\n  \"namespace\": oops\n}",
			[]string{"bad.example.json", "invalid JSON at line 3, column"}},
		{"truncated", "bad.example.json", `{"schema": "acpprobe.extensions/v1"`, []string{"bad.example.json", "unexpected end"}},
		{"empty", "bad.example.json", "", []string{"bad.example.json", "empty file"}},
		{"trailing", "bad.example.json", `{` + head + `} {}`, []string{"bad.example.json", "after the top-level object"}},
		{"unknown member", "bad.example.json", `{` + head + `, "metaKey": []}`, []string{"bad.example.json", `unknown field "metaKey"`}},
		{"wrong type", "bad.example.json", `{` + head + `, "metaKeys": [{"name": 7}]}`, []string{"bad.example.json", "line 1", "metaKeys.name"}},
		{"schema", "bad.example.json", `{"schema": "v0", "namespace": "bad.example", "name": "B", "source": "s", "namespaced": true}`,
			[]string{"bad.example.json", `schema is "v0"`}},
		{"file name", "other.json", `{` + head + `}`, []string{"other.json", "must be named bad.example.json"}},
		{"namespace", "bad example.json", `{"schema": "acpprobe.extensions/v1", "namespace": "bad example"}`, []string{"bad example.json", "namespace"}},
		{"incomplete vendor", "bad.example.json", `{"schema": "acpprobe.extensions/v1", "namespace": "bad.example"}`,
			[]string{"bad.example.json: name is required", "source is required", "namespaced is required"}},
		{"direction", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "a2c", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{"bad.example.json", `metaKeys[0] "k"`, `direction "a2c"`}},
		{"class", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "both", "class": "secret", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "k"`, `class "secret"`}},
		{"status", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "both", "class": "public", "status": "gone", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "k"`, `status "gone"`}},
		{"empty description", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "both", "class": "public", "where": ["any _meta"], "description": " "}]}`,
			[]string{`metaKeys[0] "k"`, "description: is empty"}},
		{"two-line description", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "both", "class": "public", "where": ["any _meta"], "description": "a\nb"}]}`,
			[]string{`metaKeys[0] "k"`, "one line"}},
		{"no where", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "both", "class": "public", "description": "d"}]}`,
			[]string{`metaKeys[0] "k"`, "where is required"}},
		{"duplicate key", "bad.example.json", `{` + head + `, "metaKeys": [
			{"name": "k", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"},
			{"name": "k", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[1] "k"`, `duplicate key "k"`}},
		{"prefixed name", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "bad.example/k", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "bad.example/k"`, "local name"}},
		{"unknown group", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "group": "9.9", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "k"`, `group "9.9"`}},
		{"none for active", "bad.example.json", `{` + head + `, "metaKeys": [{"name": "k", "direction": "none", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "k"`, "direction none is only for"}},
		{"method prefix", "bad.example.json", `{` + head + `, "methods": [{"name": "_other/m", "direction": "both", "kind": "request", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "_other/m"`, "_bad.example/<method>"}},
		{"method without _ or /", "bad.example.json", `{` + head + `, "methods": [{"name": "deleteSession", "direction": "client-to-agent", "kind": "request", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "deleteSession"`, "starts with '_'"}},
		{"protocol method", "bad.example.json", `{` + head + `, "methods": [{"name": "$/x", "direction": "both", "kind": "notification", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "$/x"`, "starts with '_'"}},
		{"two-line source", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "both", "kind": "request", "class": "public", "description": "d", "source": "a\nb"}]}`,
			[]string{`methods[0] "_bad.example/m"`, "source: must be one line"}},
		{"auth status notification", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "agent-to-client", "kind": "notification", "class": "public", "description": "d", "authStatus": true, "servedBy": ["a"]}]}`,
			[]string{`methods[0] "_bad.example/m"`, "authStatus is for an active client-to-agent request"}},
		{"auth status served by nobody", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "client-to-agent", "kind": "request", "class": "public", "description": "d", "authStatus": true}]}`,
			[]string{`methods[0] "_bad.example/m"`, "with the agents that serve it in servedBy"}},
		{"two-line servedBy", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "client-to-agent", "kind": "request", "class": "public", "description": "d", "servedBy": ["a\nb"]}]}`,
			[]string{`methods[0] "_bad.example/m"`, "servedBy[0]: must be one line"}},
		{"underscore keys of bare vendor", "bad.example.json", `{"schema": "acpprobe.extensions/v1", "namespace": "bad.example", "name": "B", "source": "s", "namespaced": false, "underscoreKeys": true}`,
			[]string{"bad.example.json", "underscoreKeys is for a namespaced vendor"}},
		{"method kind", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "both", "kind": "call", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "_bad.example/m"`, `kind "call"`}},
		{"placeholder with class", "bad.example.json", `{` + head + `, "methods": [{"name": "_bad.example/m", "direction": "none", "status": "placeholder", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "_bad.example/m"`, "placeholder has no class"}},
		{"foreign namespace", "bad.example.json", `{"schema": "acpprobe.extensions/v1", "namespace": "bad.example", "name": "B", "source": "s", "namespaced": false,
			"methods": [{"name": "_codebuddy.ai/x", "direction": "both", "kind": "request", "class": "public", "description": "d"}]}`,
			[]string{`methods[0] "_codebuddy.ai/x"`, "namespace of vendor codebuddy.ai"}},
		{"bucket", "bad.example.json", `{` + head + `, "nonKeys": [{"token": "bad.example/x", "bucket": "other", "why": "w"}]}`,
			[]string{`nonKeys[0] "bad.example/x"`, `bucket "other"`}},
		{"non-key that is a key", "bad.example.json", `{` + head + `, "nonKeys": [{"token": "codebuddy.ai/requestId", "bucket": "url-path", "why": "w"}]}`,
			[]string{`nonKeys[0] "codebuddy.ai/requestId"`, "catalogued as a key"}},
		{"key of another vendor", "bad.example.json", `{"schema": "acpprobe.extensions/v1", "namespace": "bad.example", "name": "B", "source": "s", "namespaced": false,
			"metaKeys": [{"name": "api-key", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{`metaKeys[0] "api-key"`, "already catalogued by extensions/catalogue/gemini.json"}},
		{"bare form on namespaced", "bad.example.json", `{` + head + `, "forms": ["bare"]}`, []string{"bad.example.json: forms", "not bare"}},
		{"auth type", "bad.example.json", `{` + head + `, "authMethodTypes": [{"type": "env_var", "direction": "agent-to-client", "class": "public", "where": ["authMethods[].type"], "description": "d"}]}`,
			[]string{`authMethodTypes[0] "env_var"`, "already catalogued"}},
		{"override breaks embedded", "codebuddy.ai.json", `{"schema": "acpprobe.extensions/v1", "namespace": "codebuddy.ai",
			"metaKeys": [{"name": "requestId", "group": "7.7", "direction": "both", "class": "public", "where": ["any _meta"], "description": "d"}]}`,
			[]string{"codebuddy.ai.json", `metaKeys[0] "requestId"`, `group "7.7"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{tc.file: tc.body})
			c, err := LoadDir(dir)
			if err == nil {
				t.Fatalf("LoadDir succeeded (%d keys)", len(c.MetaKeys()))
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(dir, tc.file)) {
				t.Errorf("error does not name the file %s:\n%s", filepath.Join(dir, tc.file), msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.File != filepath.Join(dir, tc.file) {
				t.Errorf("errors.As ValidationError: %+v", ve)
			}
		})
	}
}

// The side-effect-free status request is found by the agentInfo.name of an agent that serves
// it, and only then; the entry returned is a copy.
func TestAuthStatusMethod(t *testing.T) {
	c := mustLoad(t)
	m, ok := c.AuthStatusMethod("@agentclientprotocol/codex-acp")
	if !ok || m.Name != "authentication/status" || m.Vendor != "codex" || !m.AuthStatus {
		t.Fatalf("codex-acp: %+v %v", m, ok)
	}
	m.ServedBy[0] = "changed"
	if again, _ := c.AuthStatusMethod("@agentclientprotocol/codex-acp"); again.ServedBy[0] != "@agentclientprotocol/codex-acp" {
		t.Errorf("the catalogue's entry changed through a copy: %v", again.ServedBy)
	}
	for _, name := range []string{"", "@agentclientprotocol/claude-agent-acp", "codex-acp", "@zed-industries/codex-acp"} {
		if m, ok := c.AuthStatusMethod(name); ok {
			t.Errorf("%q: %+v, want none", name, m)
		}
	}
}
