package extensions

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Rule names of the issues an inventory can show.
const (
	RulePrivateKey        = "private-key"         // an agent sent a private key on the standard plane
	RuleDirection         = "direction"           // a key went the other way than catalogued
	RuleUnknownKey        = "unknown-key"         // a key the vendor's namespace does not list
	RuleUnknownMethod     = "unknown-method"      // a method the vendor's namespace does not list
	RuleRetiredKey        = "retired-key"         // a retired or producer-less key on the wire
	RuleClientPrivateKey  = "client-private-key"  // a client produced a private key (rule 6.1)
	RuleClientPrivateCall = "client-private-call" // a client called a private method (rule 6.4)
)

// Issue is a breach of a vendor's rules seen in an inventory.
type Issue struct {
	Rule    string
	Name    string // the key or method
	Vendor  string
	Seq     int64
	Pointer string
	Message string
}

// correlationKeys are the keys rule 6.3 of the CodeBuddy reference lets clients send on
// session/prompt (local names; they apply to every namespaced vendor the same way).
var correlationKeys = map[string]bool{
	"requestId": true, "messageId": true, "messageRequestId": true, "userMessageId": true,
	"promptRequestId": true, "clientRequestId": true, "sendTime": true, "traceparent": true,
}

// AgentIssues checks what the agent sent. privatePlane is true when the client itself sent
// private keys (a private channel), where private keys from the agent are expected.
func (inv *Inventory) AgentIssues(privatePlane bool) []Issue {
	var out []Issue
	for _, k := range inv.MetaKeys {
		if !k.observed(DirectionAgentToClient) {
			continue
		}
		s := firstFrom(k.Where, DirectionAgentToClient)
		switch {
		case !k.Known && k.Vendor != "":
			out = append(out, Issue{RuleUnknownKey, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is in the %s namespace but not in its catalogue (the catalogue may be stale)", k.Key, k.Vendor)})
		case !k.Known, k.Status == StatusExample:
		case k.Status == StatusRetired || k.Status == StatusNoProducer:
			out = append(out, Issue{RuleRetiredKey, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is catalogued as %s, yet the agent sent it", k.Key, k.Status)})
		case k.Class == ClassPrivate && !privatePlane:
			out = append(out, Issue{RulePrivateKey, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is a private-channel key of %s, sent to a client that sent no private _meta: the standard plane never carries it, and third-party clients must not rely on it", k.Key, k.Vendor)})
		case k.ExpectedDirection == DirectionClientToAgent:
			out = append(out, Issue{RuleDirection, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is catalogued as client-to-agent, but the agent sent it", k.Key)})
		}
	}
	for _, m := range inv.Methods {
		if !m.observedDir(DirectionAgentToClient) {
			continue
		}
		s := firstFrom(m.Where, DirectionAgentToClient)
		switch {
		case !m.Known && m.Vendor != "":
			out = append(out, Issue{RuleUnknownMethod, m.Name, m.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is in the %s namespace but not in its catalogue (the catalogue may be stale)", m.Name, m.Vendor)})
		case m.Known && m.ExpectedDirection == DirectionClientToAgent && m.Status != StatusExample:
			out = append(out, Issue{RuleDirection, m.Name, m.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is catalogued as client-to-agent, but the agent sent it", m.Name)})
		}
	}
	return out
}

// ClientIssues lints what a client sent (rules 6.1–6.4 of the CodeBuddy reference, applied to
// every catalogued vendor): no private key may be produced, no private method called; the
// correlation ids of rule 6.3 are allowed.
func (inv *Inventory) ClientIssues() []Issue {
	var out []Issue
	for _, k := range inv.MetaKeys {
		if !k.observed(DirectionClientToAgent) || !k.Known {
			continue
		}
		s := firstFrom(k.Where, DirectionClientToAgent)
		local := k.Key[strings.LastIndex(k.Key, "/")+1:]
		switch {
		case k.Class == ClassPrivate:
			out = append(out, Issue{RuleClientPrivateKey, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("the client produced %s, a private key of %s: it is issued by the vendor's own composition root and rejected from anyone else (rule 6.1)", k.Key, k.Vendor)})
		case correlationKeys[local] && s.Method == "session/prompt":
			// rule 6.3: correlation ids on session/prompt are welcome
		case k.ExpectedDirection == DirectionAgentToClient:
			out = append(out, Issue{RuleDirection, k.Key, k.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is catalogued as agent-to-client, but the client sent it", k.Key)})
		}
	}
	for _, m := range inv.Methods {
		if !m.observedDir(DirectionClientToAgent) || !m.Known {
			continue
		}
		s := firstFrom(m.Where, DirectionClientToAgent)
		switch {
		case m.Class == ClassPrivate:
			out = append(out, Issue{RuleClientPrivateCall, m.Name, m.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("the client called %s, a private method of %s; on the standard plane it is rejected (rule 6.4)", m.Name, m.Vendor)})
		case m.ExpectedDirection == DirectionAgentToClient:
			out = append(out, Issue{RuleDirection, m.Name, m.Vendor, s.Seq, s.Pointer,
				fmt.Sprintf("%s is catalogued as agent-to-client, but the client sent it", m.Name)})
		}
	}
	return out
}

// SentPrivate reports whether the given side sent any private key (a private-channel client).
func (inv *Inventory) SentPrivate(d Direction) bool {
	for _, k := range inv.MetaKeys {
		if k.Class == ClassPrivate && k.observed(d) {
			return true
		}
	}
	return false
}

func (k SeenKey) observed(d Direction) bool {
	for _, x := range k.Observed {
		if x == d {
			return true
		}
	}
	return false
}

func (m SeenMethod) observedDir(d Direction) bool {
	for _, x := range m.Observed {
		if x == d {
			return true
		}
	}
	return false
}

// metadataDemand matches an error that says a request lacked metadata.
var metadataDemand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)missing\s+(?:_meta\[?["']?)?([A-Za-z0-9_.\-/]+?)["']?\]?\s+(?:_meta\s+)?meta(?:data)?\b|requires?\s+(?:_meta\s+)?([A-Za-z0-9_.\-/]+)\s+(?:_meta|metadata)`)
})

// MetadataDemand reports whether an error message demands `_meta` the standard plane never
// sends, and names the key (e.g. "ACP Session request is missing sessionAdmissionV2 metadata"
// names sessionAdmissionV2). The key is resolved against the catalogue when it can be.
func (c *Catalogue) MetadataDemand(message string) (key string, ok bool) {
	m := metadataDemand().FindStringSubmatch(message)
	if m == nil {
		return "", false
	}
	key = m[1]
	if key == "" {
		key = m[2]
	}
	if _, found := c.LookupMetaKey(key); !found {
		for _, v := range c.Vendors() {
			if v.Namespaced {
				if _, found := c.LookupMetaKey(v.Namespace + "/" + key); found {
					return v.Namespace + "/" + key, true
				}
			}
		}
	}
	return key, true
}

// CredentialKeys are the catalogued keys whose values are credentials (they must never be
// written anywhere): the private keys marked credential in their vendor's file.
func (c *Catalogue) CredentialKeys() []string {
	var out []string
	for _, k := range c.keys {
		if k.Credential {
			out = append(out, k.Name)
		}
	}
	return out
}
