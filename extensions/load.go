package extensions

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/internal/safeio"
)

//go:embed catalogue/*.json
var embedded embed.FS

// embeddedName is how errors name an embedded file: its path in the repository.
func embeddedName(name string) string { return "extensions/" + name }

// maxLine bounds a one-line text (description, why, where) in runes.
const maxLine = 240

// ValidationError is one problem in one catalogue file. Load and LoadDir return every
// problem found, joined with errors.Join; use errors.As to reach the first one.
type ValidationError struct {
	// File names the file: "extensions/catalogue/<ns>.json" for embedded files, the path
	// under the user directory otherwise.
	File string
	// Entry names the entry, e.g. `metaKeys[3] "requestId"`; empty for file-level problems.
	Entry string
	// Problem says what is wrong.
	Problem string
}

// Error formats the problem as "extensions: FILE: ENTRY: PROBLEM".
func (e *ValidationError) Error() string {
	if e.Entry == "" {
		return "extensions: " + e.File + ": " + e.Problem
	}
	return "extensions: " + e.File + ": " + e.Entry + ": " + e.Problem
}

// Load reads and validates the embedded catalogue (one file per vendor under catalogue/).
// Each call returns a new Catalogue. Default is the same catalogue, read at build time.
func Load() (*Catalogue, error) { return load("") }

// LoadDir loads the embedded catalogue and then every *.json file directly inside dir (other
// files and subdirectories are ignored), in name order, and merges them. A user file follows
// the embedded format and must be named <namespace>.json.
//
// A user file for a namespace that is not embedded adds a vendor and must be complete (name,
// source, namespaced). A user file for an embedded namespace extends and overrides it: name,
// source, namespaced and forms replace the embedded values when given; notes are appended;
// a group, key, method, non-key or auth method type with the same identity (group id, key
// name, method name, token, type) replaces the embedded entry in place, any other is added.
// Nothing can be deleted; mark an entry retired instead. The merged result is validated as a
// whole, and every problem names the file and entry it comes from.
func LoadDir(dir string) (*Catalogue, error) {
	if dir == "" {
		return nil, errors.New("extensions: LoadDir: empty directory name")
	}
	return load(dir)
}

func load(dir string) (*Catalogue, error) {
	b := &builder{vendors: map[string]*vendorBuild{}}
	names, err := fs.Glob(embedded, "catalogue/*.json")
	if err != nil {
		return nil, fmt.Errorf("extensions: embedded catalogue: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		data, err := embedded.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("extensions: embedded catalogue: %w", err)
		}
		b.addFile(embeddedName(name), path.Base(name), data)
	}
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("extensions: catalogue directory: %w", err)
		}
		if len(entries) > maxDirEntries {
			return nil, fmt.Errorf("extensions: catalogue directory %s has %d entries, more than the %d a catalogue may have", dir, len(entries), maxDirEntries)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			file := filepath.Join(dir, e.Name())
			data, err := safeio.ReadFile(file, MaxFileSize)
			if err != nil {
				b.errf(file, "", "cannot read: %v", err)
				continue
			}
			b.addFile(file, e.Name(), data)
		}
	}
	c := b.finish()
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return c, nil
}

// The on-disk format. Enumerations decode as plain strings and are checked afterwards, so
// that a problem names its entry.
type fileDoc struct {
	Schema          string         `json:"schema"`
	Namespace       string         `json:"namespace"`
	Name            string         `json:"name"`
	Source          string         `json:"source"`
	Namespaced      *bool          `json:"namespaced"`
	UnderscoreKeys  *bool          `json:"underscoreKeys"`
	Forms           []Form         `json:"forms"`
	Notes           []string       `json:"notes"`
	Groups          []fileGroup    `json:"groups"`
	MetaKeys        []fileMetaKey  `json:"metaKeys"`
	Methods         []fileMethod   `json:"methods"`
	NonKeys         []fileNonKey   `json:"nonKeys"`
	AuthMethodTypes []fileAuthType `json:"authMethodTypes"`
}

type fileGroup struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	StatedCount int    `json:"statedCount"`
}

type fileMetaKey struct {
	Name        string    `json:"name"`
	Group       string    `json:"group"`
	Direction   Direction `json:"direction"`
	Class       Class     `json:"class"`
	Status      Status    `json:"status"`
	Where       []string  `json:"where"`
	Description string    `json:"description"`
	Credential  bool      `json:"credential"`
	Source      string    `json:"source"`
}

type fileMethod struct {
	Name        string    `json:"name"`
	Direction   Direction `json:"direction"`
	Kind        Kind      `json:"kind"`
	Class       Class     `json:"class"`
	Status      Status    `json:"status"`
	Description string    `json:"description"`
	Source      string    `json:"source"`
	AuthStatus  bool      `json:"authStatus"`
	ServedBy    []string  `json:"servedBy"`
}

type fileNonKey struct {
	Token  string `json:"token"`
	Group  string `json:"group"`
	Bucket Bucket `json:"bucket"`
	Why    string `json:"why"`
}

type fileAuthType struct {
	Type        string    `json:"type"`
	Fields      []string  `json:"fields"`
	Direction   Direction `json:"direction"`
	Class       Class     `json:"class"`
	Status      Status    `json:"status"`
	Where       []string  `json:"where"`
	Description string    `json:"description"`
	Source      string    `json:"source"`
}

// entry is a validated entry with the file and label it came from, for later errors.
type entry[T any] struct {
	file, label string
	v           T
}

type vendorBuild struct {
	ns                        string
	name, source              string
	namespaced, underscore    *bool
	forms                     []Form
	formsFile                 string
	notes, files              []string
	groups                    []entry[Group]
	keys                      []entry[MetaKey]
	methods                   []entry[Method]
	nonKeys                   []entry[NonKey]
	authTypes                 []entry[AuthMethodType]
	groupIdx, keyIdx, methIdx map[string]int
	nonKeyIdx, authIdx        map[string]int
}

type builder struct {
	vendors map[string]*vendorBuild
	seq     map[string]int // file -> load order
	errs    []error
}

func (b *builder) errf(file, entry, format string, args ...any) {
	b.errs = append(b.errs, &ValidationError{File: file, Entry: entry, Problem: fmt.Sprintf(format, args...)})
}

// decode parses one file strictly: unknown members and trailing data are errors.
func decode(data []byte) (*fileDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, err)
		case errors.As(err, &typ):
			line, col := position(data, typ.Offset)
			return nil, fmt.Errorf("wrong type at line %d, column %d: %s must be %s, not JSON %s", line, col, typ.Field, typ.Type, typ.Value)
		case errors.Is(err, io.EOF):
			return nil, errors.New("empty file, want a JSON object")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("invalid JSON: unexpected end of file")
		}
		return nil, fmt.Errorf("invalid catalogue file: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level object")
	}
	return &doc, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return line, col
}

// addFile decodes, validates and merges one file. base is the file's base name.
func (b *builder) addFile(file, base string, data []byte) {
	if b.seq == nil {
		b.seq = map[string]int{}
	}
	b.seq[file] = len(b.seq)
	doc, err := decode(data)
	if err != nil {
		b.errf(file, "", "%v", err)
		return
	}
	if doc.Schema != SchemaVersion {
		b.errf(file, "", "schema is %q, want %q", doc.Schema, SchemaVersion)
	}
	if p := identProblem(doc.Namespace); p != "" {
		b.errf(file, "", "namespace %q: %s", doc.Namespace, p)
		return
	}
	if strings.Contains(doc.Namespace, "/") || strings.HasPrefix(doc.Namespace, "_") {
		b.errf(file, "", "namespace %q must not contain '/' or start with '_'", doc.Namespace)
		return
	}
	if want := doc.Namespace + ".json"; base != want {
		b.errf(file, "", "file for namespace %q must be named %s", doc.Namespace, want)
		return
	}
	v := b.vendors[doc.Namespace]
	if v == nil {
		v = &vendorBuild{ns: doc.Namespace,
			groupIdx: map[string]int{}, keyIdx: map[string]int{}, methIdx: map[string]int{},
			nonKeyIdx: map[string]int{}, authIdx: map[string]int{}}
		b.vendors[doc.Namespace] = v
	}
	v.files = append(v.files, file)

	if doc.Name != "" {
		if p := lineProblem(doc.Name); p != "" {
			b.errf(file, "", "name: %s", p)
		}
		v.name = doc.Name
	}
	if doc.Source != "" {
		v.source = doc.Source
	}
	if doc.Namespaced != nil {
		v.namespaced = doc.Namespaced
	}
	if doc.UnderscoreKeys != nil {
		v.underscore = doc.UnderscoreKeys
	}
	if doc.Forms != nil {
		seen := map[Form]bool{}
		for i, f := range doc.Forms {
			if f != FormFlat && f != FormNested && f != FormBare {
				b.errf(file, fmt.Sprintf("forms[%d]", i), "form %q is not one of flat, nested, bare", f)
			}
			if seen[f] {
				b.errf(file, fmt.Sprintf("forms[%d]", i), "form %q listed twice", f)
			}
			seen[f] = true
		}
		v.forms, v.formsFile = doc.Forms, file
	}
	for i, n := range doc.Notes {
		if strings.TrimSpace(n) == "" {
			b.errf(file, fmt.Sprintf("notes[%d]", i), "empty note")
			continue
		}
		v.notes = append(v.notes, n)
	}

	seen := map[string]bool{}
	dup := func(kind, id, label string) bool {
		if seen[kind+"\x00"+id] {
			b.errf(file, label, "duplicate %s %q in this file", kind, id)
			return true
		}
		seen[kind+"\x00"+id] = true
		return false
	}
	for i, g := range doc.Groups {
		label := fmt.Sprintf("groups[%d] %q", i, g.ID)
		if b.checkGroup(file, label, g) && !dup("group", g.ID, label) {
			put(&v.groups, v.groupIdx, g.ID, entry[Group]{file, label, Group(g)})
		}
	}
	for i, k := range doc.MetaKeys {
		label := fmt.Sprintf("metaKeys[%d] %q", i, k.Name)
		if mk, ok := b.checkMetaKey(file, label, doc.Namespace, k); ok && !dup("key", k.Name, label) {
			put(&v.keys, v.keyIdx, k.Name, entry[MetaKey]{file, label, mk})
		}
	}
	for i, m := range doc.Methods {
		label := fmt.Sprintf("methods[%d] %q", i, m.Name)
		if mm, ok := b.checkMethod(file, label, doc.Namespace, m); ok && !dup("method", m.Name, label) {
			put(&v.methods, v.methIdx, m.Name, entry[Method]{file, label, mm})
		}
	}
	for i, n := range doc.NonKeys {
		label := fmt.Sprintf("nonKeys[%d] %q", i, n.Token)
		if nk, ok := b.checkNonKey(file, label, doc.Namespace, n); ok && !dup("token", n.Token, label) {
			put(&v.nonKeys, v.nonKeyIdx, n.Token, entry[NonKey]{file, label, nk})
		}
	}
	for i, a := range doc.AuthMethodTypes {
		label := fmt.Sprintf("authMethodTypes[%d] %q", i, a.Type)
		if at, ok := b.checkAuthType(file, label, doc.Namespace, a); ok && !dup("type", a.Type, label) {
			put(&v.authTypes, v.authIdx, a.Type, entry[AuthMethodType]{file, label, at})
		}
	}
}

// put adds e under id, replacing an earlier entry with the same id in place.
func put[T any](list *[]entry[T], idx map[string]int, id string, e entry[T]) {
	if i, ok := idx[id]; ok {
		(*list)[i] = e
		return
	}
	idx[id] = len(*list)
	*list = append(*list, e)
}

func (b *builder) checkGroup(file, label string, g fileGroup) bool {
	ok := true
	if p := identProblem(g.ID); p != "" {
		b.errf(file, label, "id: %s", p)
		ok = false
	}
	if p := lineProblem(g.Title); p != "" {
		b.errf(file, label, "title: %s", p)
		ok = false
	}
	if g.StatedCount < 0 {
		b.errf(file, label, "statedCount %d is negative", g.StatedCount)
		ok = false
	}
	return ok
}

// checkUse validates the direction/class/status (and kind, for methods) of an entry and
// returns the status with its default applied.
func (b *builder) checkUse(file, label string, d Direction, c Class, s Status, kind *Kind) (Status, bool) {
	ok := true
	if s == "" {
		s = StatusActive
	}
	switch s {
	case StatusActive, StatusRetired, StatusNoProducer, StatusPlaceholder, StatusExample, StatusLegacy:
	default:
		b.errf(file, label, "status %q is not one of active, retired, no-producer, placeholder, example, legacy", s)
		return s, false
	}
	switch d {
	case DirectionAgentToClient, DirectionClientToAgent, DirectionBoth:
		if s == StatusPlaceholder {
			b.errf(file, label, "a placeholder has direction none, not %q", d)
			ok = false
		}
	case DirectionNone:
		if s != StatusRetired && s != StatusNoProducer && s != StatusPlaceholder {
			b.errf(file, label, "direction none is only for retired, no-producer or placeholder entries (status is %s)", s)
			ok = false
		}
	case "":
		b.errf(file, label, "direction is required (agent-to-client, client-to-agent, both, none)")
		ok = false
	default:
		b.errf(file, label, "direction %q is not one of agent-to-client, client-to-agent, both, none", d)
		ok = false
	}
	switch c {
	case ClassPublic, ClassPrivate:
		if s == StatusPlaceholder {
			b.errf(file, label, "a placeholder has no class, not %q", c)
			ok = false
		}
	case ClassNone:
		if s != StatusPlaceholder {
			b.errf(file, label, "class is required (public, private)")
			ok = false
		}
	default:
		b.errf(file, label, "class %q is not one of public, private", c)
		ok = false
	}
	if kind != nil {
		switch *kind {
		case KindRequest, KindNotification:
			if s == StatusPlaceholder {
				b.errf(file, label, "a placeholder has no kind, not %q", *kind)
				ok = false
			}
		case KindNone:
			if s != StatusPlaceholder {
				b.errf(file, label, "kind is required (request, notification)")
				ok = false
			}
		default:
			b.errf(file, label, "kind %q is not one of request, notification", *kind)
			ok = false
		}
	}
	return s, ok
}

func (b *builder) checkWhere(file, label string, where []string) bool {
	if len(where) == 0 {
		b.errf(file, label, "where is required (e.g. \"any _meta\", \"authMethods[]._meta\")")
		return false
	}
	ok := true
	for i, w := range where {
		if p := lineProblem(w); p != "" {
			b.errf(file, label, "where[%d]: %s", i, p)
			ok = false
		}
		if slices.Index(where, w) != i {
			b.errf(file, label, "where[%d] %q listed twice", i, w)
			ok = false
		}
	}
	return ok
}

// checkSource checks an entry's optional source: one line when given.
func (b *builder) checkSource(file, label, s string) bool {
	return s == "" || b.checkText(file, label, "source", s)
}

func (b *builder) checkText(file, label, field, s string) bool {
	if p := lineProblem(s); p != "" {
		b.errf(file, label, "%s: %s", field, p)
		return false
	}
	return true
}

func (b *builder) checkMetaKey(file, label, ns string, k fileMetaKey) (MetaKey, bool) {
	ok := true
	if p := identProblem(k.Name); p != "" {
		b.errf(file, label, "name: %s", p)
		ok = false
	} else if strings.Contains(k.Name, "/") {
		b.errf(file, label, "name must be the local name without '/' (the namespace prefix is added)")
		ok = false
	}
	st, okUse := b.checkUse(file, label, k.Direction, k.Class, k.Status, nil)
	okWhere := b.checkWhere(file, label, k.Where)
	okText := b.checkText(file, label, "description", k.Description) && b.checkSource(file, label, k.Source)
	if k.Credential && k.Class != ClassPrivate {
		b.errf(file, label, "a credential key must be private")
		ok = false
	}
	return MetaKey{Name: k.Name, Vendor: ns, Group: k.Group, Direction: k.Direction, Class: k.Class,
		Status: st, Where: slices.Clone(k.Where), Description: k.Description, Credential: k.Credential, Source: k.Source}, ok && okUse && okWhere && okText
}

func (b *builder) checkMethod(file, label, ns string, m fileMethod) (Method, bool) {
	ok := true
	if p := identProblem(m.Name); p != "" {
		b.errf(file, label, "name: %s", p)
		ok = false
	} else if name := strings.TrimPrefix(m.Name, "_"); name == "" || strings.HasPrefix(m.Name, "$/") || (name == m.Name && !strings.Contains(name, "/")) {
		b.errf(file, label, "an extension method name starts with '_' and is not empty after it (a vendor method named without it, as seen on the wire, has a '/': \"authentication/status\")")
		ok = false
	}
	st, okUse := b.checkUse(file, label, m.Direction, m.Class, m.Status, &m.Kind)
	okText := b.checkText(file, label, "description", m.Description) && b.checkSource(file, label, m.Source)
	for i, a := range m.ServedBy {
		okText = b.checkText(file, label, fmt.Sprintf("servedBy[%d]", i), a) && okText
	}
	if m.AuthStatus && (m.Kind != KindRequest || m.Direction != DirectionClientToAgent || st != StatusActive || len(m.ServedBy) == 0) {
		b.errf(file, label, "authStatus is for an active client-to-agent request with the agents that serve it in servedBy")
		ok = false
	}
	return Method{Name: m.Name, Vendor: ns, Direction: m.Direction, Kind: m.Kind, Class: m.Class,
		Status: st, Description: m.Description, Source: m.Source, AuthStatus: m.AuthStatus,
		ServedBy: slices.Clone(m.ServedBy)}, ok && okUse && okText
}

func (b *builder) checkNonKey(file, label, ns string, n fileNonKey) (NonKey, bool) {
	ok := true
	if p := identProblem(n.Token); p != "" {
		b.errf(file, label, "token: %s", p)
		ok = false
	}
	if n.Bucket != BucketNamespaceNotation && n.Bucket != BucketURLPath {
		b.errf(file, label, "bucket %q is not one of namespace-notation, url-path", n.Bucket)
		ok = false
	}
	okText := b.checkText(file, label, "why", n.Why)
	return NonKey{Token: n.Token, Vendor: ns, Group: n.Group, Bucket: n.Bucket, Why: n.Why}, ok && okText
}

func (b *builder) checkAuthType(file, label, ns string, a fileAuthType) (AuthMethodType, bool) {
	ok := true
	if p := identProblem(a.Type); p != "" {
		b.errf(file, label, "type: %s", p)
		ok = false
	}
	for i, f := range a.Fields {
		if p := identProblem(f); p != "" {
			b.errf(file, label, "fields[%d]: %s", i, p)
			ok = false
		}
	}
	st, okUse := b.checkUse(file, label, a.Direction, a.Class, a.Status, nil)
	okWhere := b.checkWhere(file, label, a.Where)
	okText := b.checkText(file, label, "description", a.Description) && b.checkSource(file, label, a.Source)
	return AuthMethodType{Type: a.Type, Vendor: ns, Fields: slices.Clone(a.Fields), Direction: a.Direction,
			Class: a.Class, Status: st, Where: slices.Clone(a.Where), Description: a.Description, Source: a.Source},
		ok && okUse && okWhere && okText
}

// identProblem checks a name, token or id: non-empty, no spaces or control characters.
func identProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Sprintf("%q contains a space or control character", s)
		}
	}
	return ""
}

// lineProblem checks a one-line text: non-blank, one line, at most maxLine runes.
func lineProblem(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is empty"
	case strings.ContainsAny(s, "\r\n"):
		return "must be one line"
	case utf8.RuneCountInString(s) > maxLine:
		return fmt.Sprintf("is longer than %d characters", maxLine)
	case strings.TrimSpace(s) != s:
		return "has leading or trailing space"
	}
	return ""
}

// finish checks what needs every file (vendor completeness, group references, the canonical
// keys, uniqueness across vendors) and builds the Catalogue. When two files claim the same
// name, the problem is reported against the one loaded later (a user file, not the embedded
// one).
func (b *builder) finish() *Catalogue {
	nss := make([]string, 0, len(b.vendors))
	for ns := range b.vendors {
		nss = append(nss, ns)
	}
	slices.Sort(nss)

	c := &Catalogue{vendors: make([]Vendor, len(nss))}
	prefixes := map[string]bool{} // the namespaces that are prefixes on the wire
	for _, ns := range nss {
		if v := b.vendors[ns]; v.namespaced != nil && *v.namespaced {
			prefixes[ns] = true
		}
	}

	type claimant struct{ file, label string }
	claims := map[string]claimant{}
	claim := func(kind, id, file, label string) {
		k, cur := kind+"\x00"+id, claimant{file, label}
		prev, taken := claims[k]
		if !taken {
			claims[k] = cur
			return
		}
		first, second := prev, cur
		if b.seq[cur.file] < b.seq[prev.file] {
			first, second = cur, prev
			claims[k] = cur
		}
		b.errf(second.file, second.label, "%s %s is already catalogued by %s %s", kind, id, first.file, first.label)
	}

	for vi, ns := range nss {
		v := b.vendors[ns]
		first := v.files[0]
		if v.name == "" {
			b.errf(first, "", "name is required")
		}
		if strings.TrimSpace(v.source) == "" {
			b.errf(first, "", "source is required")
		}
		namespaced := false
		if v.namespaced == nil {
			b.errf(first, "", "namespaced is required (true or false)")
		} else {
			namespaced = *v.namespaced
			for _, f := range v.forms {
				if namespaced && f == FormBare {
					b.errf(v.formsFile, "forms", "a namespaced vendor uses the flat or nested form, not bare")
				}
				if !namespaced && f != FormBare {
					b.errf(v.formsFile, "forms", "a vendor that is not namespaced uses the bare form only, not %s", f)
				}
			}
		}
		groups := map[string]bool{}
		underscore := v.underscore != nil && *v.underscore
		if underscore && !namespaced {
			b.errf(first, "", "underscoreKeys is for a namespaced vendor")
		}
		vend := Vendor{Namespace: ns, Name: v.name, Source: v.source, Notes: v.notes, Namespaced: namespaced,
			UnderscoreKeys: underscore, Forms: v.forms, Files: v.files}
		for _, g := range v.groups {
			groups[g.v.ID] = true
			vend.Groups = append(vend.Groups, g.v)
		}
		c.vendors[vi] = vend

		for _, e := range v.keys {
			k := e.v
			k.Key = k.Name
			if namespaced {
				k.Key = ns + "/" + k.Name
				if underscore {
					k.Key = "_" + k.Key
				}
			} else if prefixes[k.Name] {
				b.errf(e.file, e.label, "bare key equals the namespace of vendor %s", k.Name)
			}
			if k.Group != "" && !groups[k.Group] {
				b.errf(e.file, e.label, "group %q is not among the vendor's groups", k.Group)
			}
			claim("key", k.Key, e.file, e.label)
			c.keys = append(c.keys, k)
		}
		for _, e := range v.methods {
			m := e.v
			owner, _, _ := strings.Cut(m.Name[1:], "/")
			if !strings.HasPrefix(m.Name, "_") {
				// A vendor method named without the '_': in no namespace, the protocol's or
				// the vendor's; the wire shows it as a departure (protocol.unknown-method).
			} else if namespaced && (owner != ns || len(m.Name) == len(ns)+2) {
				b.errf(e.file, e.label, "a method of namespace %s is named _%s/<method>", ns, ns)
			} else if prefixes[owner] && owner != ns {
				b.errf(e.file, e.label, "method lies in the namespace of vendor %s", owner)
			}
			claim("method", m.Name, e.file, e.label)
			c.methods = append(c.methods, m)
		}
		for _, e := range v.nonKeys {
			n := e.v
			if n.Group != "" && !groups[n.Group] {
				b.errf(e.file, e.label, "group %q is not among the vendor's groups", n.Group)
			}
			claim("non-key", n.Token, e.file, e.label)
			c.nonKeys = append(c.nonKeys, n)
		}
		for _, e := range v.authTypes {
			claim("auth method type", e.v.Type, e.file, e.label)
			c.authTypes = append(c.authTypes, e.v)
		}
	}
	// A non-key cannot also be a key or a method.
	for _, ns := range nss {
		for _, e := range b.vendors[ns].nonKeys {
			for _, kind := range []string{"key", "method"} {
				if prev, ok := claims[kind+"\x00"+e.v.Token]; ok {
					b.errf(e.file, e.label, "token is catalogued as a %s by %s %s", kind, prev.file, prev.label)
				}
			}
		}
	}
	return c.index()
}

// MaxFileSize bounds one catalogue file (CodeBuddy's, the largest, is about 60 KiB).
const MaxFileSize = 4 << 20

// maxDirEntries bounds the entries of a catalogue directory (one file per namespace).
const maxDirEntries = 1024
