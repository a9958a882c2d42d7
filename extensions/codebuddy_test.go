package extensions

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The numbers CodeBuddy's "ACP Extension Namespace Reference" states (seed 001, section
// numbers are the page's). Every count below is computed from the catalogue data and
// compared with these; nothing is summed by hand.
const (
	cbNamespace         = "codebuddy.ai"
	statedKeys          = 142 // section 3 title; bucket A
	statedPublicKeys    = 131 // "The remaining 131 items are public optional extensions."
	statedPrivateKeys   = 10  // "Private key subtotal (10 items)"
	statedNeverStandard = 11  // the 10 private keys "together with accessToken"
	statedMethodTokens  = 44  // section 4 title; bucket B
	statedMethodRows    = 46  // "The 46 rows in the table = 44 grep tokens + two subpaths"
	statedSubpathRows   = 2   // session/rollbackFiles, session/previewFileRollback
	statedNonKeys       = 9   // section 5 title
	statedNotation      = 3   // bucket C, section 5.1
	statedURLPaths      = 6   // bucket D, section 5.2
	statedGrepTokens    = 195 // canonical git grep, deduplicated
)

// cbGrep is the page's canonical token pattern: git grep -ohE "codebuddy\.ai/[A-Za-z0-9_.-]*".
// Its character class has no '/', so "_codebuddy.ai/session/rollback" yields "codebuddy.ai/session".
var cbGrep = regexp.MustCompile(`codebuddy\.ai/[A-Za-z0-9_.-]*`)

func cbData(t *testing.T) (Vendor, []MetaKey, []Method, []NonKey) {
	t.Helper()
	c := mustLoad(t)
	v, ok := c.Vendor(cbNamespace)
	if !ok {
		t.Fatalf("vendor %s is not catalogued", cbNamespace)
	}
	var keys []MetaKey
	for _, k := range c.MetaKeys() {
		if k.Vendor == cbNamespace {
			keys = append(keys, k)
		}
	}
	var methods []Method
	for _, m := range c.Methods() {
		if m.Vendor == cbNamespace {
			methods = append(methods, m)
		}
	}
	var nonKeys []NonKey
	for _, n := range c.NonKeys() {
		if n.Vendor == cbNamespace {
			nonKeys = append(nonKeys, n)
		}
	}
	return v, keys, methods, nonKeys
}

func TestCodeBuddyKeyCounts(t *testing.T) {
	v, keys, _, nonKeys := cbData(t)
	if len(keys) != statedKeys {
		t.Errorf("%d keys, the reference states %d", len(keys), statedKeys)
	}

	// Each section-3 group holds the number of keys its title states, and the stated group
	// sizes add up to the stated total; the same for the section-5 groups of non-keys.
	perGroup := map[string]int{}
	for _, k := range keys {
		if k.Group == "" {
			t.Errorf("key %s has no group", k.Key)
		}
		perGroup[k.Group]++
	}
	for _, n := range nonKeys {
		perGroup[n.Group]++
	}
	statedSum := map[string]int{}
	for _, g := range v.Groups {
		if g.StatedCount == 0 {
			t.Errorf("group %s has no stated count", g.ID)
		}
		if perGroup[g.ID] != g.StatedCount {
			t.Errorf("group %s %q: %d entries, the reference states %d", g.ID, g.Title, perGroup[g.ID], g.StatedCount)
		}
		section, _, _ := strings.Cut(g.ID, ".")
		statedSum[section] += g.StatedCount
	}
	if statedSum["3"] != statedKeys {
		t.Errorf("stated sizes of groups 3.x add up to %d, the section title states %d", statedSum["3"], statedKeys)
	}
	if statedSum["5"] != statedNonKeys {
		t.Errorf("stated sizes of groups 5.x add up to %d, the section title states %d", statedSum["5"], statedNonKeys)
	}

	// 142 = 131 public + 10 private + accessToken.
	var public, private, noProducer []string
	for _, k := range keys {
		switch {
		case k.Status == StatusNoProducer:
			noProducer = append(noProducer, k.Name)
		case k.Class == ClassPublic:
			public = append(public, k.Name)
		case k.Class == ClassPrivate:
			private = append(private, k.Name)
		default:
			t.Errorf("key %s: class %q", k.Key, k.Class)
		}
	}
	if len(public) != statedPublicKeys {
		t.Errorf("%d public keys, the reference states %d", len(public), statedPublicKeys)
	}
	if len(private) != statedPrivateKeys {
		t.Errorf("%d private keys, the reference states %d", len(private), statedPrivateKeys)
	}
	if !slices.Equal(noProducer, []string{"accessToken"}) {
		t.Errorf("keys without a producer: %v, want [accessToken]", noProducer)
	}
	if got := len(private) + len(noProducer); got != statedNeverStandard {
		t.Errorf("%d keys never on the standard plane, the reference states %d", got, statedNeverStandard)
	}
	if got := len(public) + len(private) + len(noProducer); got != statedKeys {
		t.Errorf("public + private + no-producer = %d, want %d", got, statedKeys)
	}
	// The page names its private subtotal explicitly.
	wantPrivate := []string{"sessionAdmissionV2", "sessionGrantV1", "completionDispatchGrantV1", "authSession",
		"productConfig", "runtimeTransportCredential", "runtimeSessionBindingV2", "runtimeBindingToken",
		"runtimeAuthority", "ownerSnapshotHistoryReplay"}
	if !sameSet(private, wantPrivate) {
		t.Errorf("private keys %v, the reference lists %v", private, wantPrivate)
	}
	// homeDir is counted among the 131 public although it is retired.
	var retired []string
	for _, k := range keys {
		if k.Status == StatusRetired {
			retired = append(retired, k.Name)
		}
	}
	if !slices.Equal(retired, []string{"homeDir"}) {
		t.Errorf("retired keys %v, want [homeDir]", retired)
	}
}

func TestCodeBuddyMethodCounts(t *testing.T) {
	_, _, methods, _ := cbData(t)
	if len(methods) != statedMethodRows {
		t.Errorf("%d method rows, the reference's table has %d", len(methods), statedMethodRows)
	}
	tokens := map[string][]string{}
	for _, m := range methods {
		tok := cbGrep.FindString(m.Name)
		if tok == "" || !strings.HasPrefix(m.Name, "_"+tok) {
			t.Errorf("method %s: grep token %q", m.Name, tok)
		}
		tokens[tok] = append(tokens[tok], m.Name)
	}
	if len(tokens) != statedMethodTokens {
		t.Errorf("%d method grep tokens, the reference states %d", len(tokens), statedMethodTokens)
	}
	var shared []string
	for tok, names := range tokens {
		if len(names) > 1 {
			shared = append(shared, tok)
		}
	}
	if !slices.Equal(shared, []string{"codebuddy.ai/session"}) || len(tokens["codebuddy.ai/session"]) != 1+statedSubpathRows {
		t.Errorf("tokens shared by several rows: %v (session rows %v); the reference names only codebuddy.ai/session with two subpaths",
			shared, tokens["codebuddy.ai/session"])
	}
	if got := len(methods) - len(tokens); got != statedSubpathRows {
		t.Errorf("rows - tokens = %d, the reference says %d subpaths", got, statedSubpathRows)
	}

	var public, private, placeholder []string
	for _, m := range methods {
		switch {
		case m.Status == StatusPlaceholder:
			placeholder = append(placeholder, m.Name)
		case m.Class == ClassPublic:
			public = append(public, m.Name)
		case m.Class == ClassPrivate:
			private = append(private, m.Name)
		}
	}
	if !slices.Equal(placeholder, []string{"_codebuddy.ai/example"}) {
		t.Errorf("placeholder methods %v, want [_codebuddy.ai/example]", placeholder)
	}
	if got := len(public) + len(private) + len(placeholder); got != statedMethodRows {
		t.Errorf("public + private + placeholder = %d, want %d", got, statedMethodRows)
	}
	// Section 6.4 says nine methods are private and names them; the section-4 table marks a
	// tenth, activateWorkbuddyOwnerRuntime (added in C3). The catalogue follows the table; this
	// pins the discrepancy (also in the data file's notes).
	section64 := []string{"admitControl", "runtimeCredentialUpdate", "runtimeControlCredentialUpdate",
		"runtimeOwnerCredentialUpdate", "activateCompletionRuntime", "completionDispatch",
		"completionRuntimeDiagnostics", "disposeEphemeralSession", "disposePersistentSession"}
	if len(section64) != 9 {
		t.Fatal("section 6.4 names nine")
	}
	want := []string{"_codebuddy.ai/activateWorkbuddyOwnerRuntime"}
	for _, n := range section64 {
		want = append(want, "_codebuddy.ai/"+n)
	}
	if !sameSet(private, want) {
		t.Errorf("private methods %v, want section 6.4's nine plus activateWorkbuddyOwnerRuntime", private)
	}
	if len(public) != statedMethodRows-len(want)-1 {
		t.Errorf("%d public methods", len(public))
	}
}

// TestCodeBuddyReconciliation recomputes the reference's canonical grep count from the
// catalogue: 195 tokens = 142 keys (A) + 44 method tokens (B) + 3 namespace notations (C)
// + 6 URL paths (D), the four buckets being disjoint.
func TestCodeBuddyReconciliation(t *testing.T) {
	_, keys, methods, nonKeys := cbData(t)
	buckets := map[string]map[string]bool{"A": {}, "B": {}, "C": {}, "D": {}}
	for _, k := range keys {
		tok := cbGrep.FindString(k.Key)
		if tok != k.Key {
			t.Errorf("key %s would be found by the grep as %q", k.Key, tok)
		}
		buckets["A"][tok] = true
	}
	for _, m := range methods {
		buckets["B"][cbGrep.FindString(m.Name)] = true
	}
	for _, n := range nonKeys {
		if tok := cbGrep.FindString(n.Token); tok != n.Token {
			t.Errorf("non-key %s would be found by the grep as %q", n.Token, tok)
		}
		switch n.Bucket {
		case BucketNamespaceNotation:
			buckets["C"][n.Token] = true
		case BucketURLPath:
			buckets["D"][n.Token] = true
		default:
			t.Errorf("non-key %s: bucket %q", n.Token, n.Bucket)
		}
	}
	want := map[string]int{"A": statedKeys, "B": statedMethodTokens, "C": statedNotation, "D": statedURLPaths}
	all := map[string]string{}
	sum := 0
	for _, name := range []string{"A", "B", "C", "D"} {
		if len(buckets[name]) != want[name] {
			t.Errorf("bucket %s: %d tokens, the reference states %d", name, len(buckets[name]), want[name])
		}
		sum += len(buckets[name])
		for tok := range buckets[name] {
			if other, dup := all[tok]; dup {
				t.Errorf("token %s is in bucket %s and bucket %s", tok, other, name)
			}
			all[tok] = name
		}
	}
	if len(nonKeys) != statedNonKeys {
		t.Errorf("%d non-keys, the reference states %d", len(nonKeys), statedNonKeys)
	}
	if sum != statedGrepTokens || len(all) != statedGrepTokens {
		t.Errorf("A+B+C+D = %d (%d distinct), the reference states %d", sum, len(all), statedGrepTokens)
	}
}

func sameSet(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}
