package schematable

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Formats are asserted only in draft-07 documents (2020-12 makes format an annotation), and
// only those Compile accepts: uri, with jsonschema/v6's rules and messages.

// formatError says why v is not of the format (nil when it is, or is not a string).
func formatError(format string, v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	switch format {
	case "uri":
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		// url.Parse does not check an IPv6 host.
		if host := u.Hostname(); strings.Contains(host, ":") {
			if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
				return errors.New("ipv6 address not enclosed in brackets")
			}
			addr, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("invalid ipv6 address: %v", err)
			}
			if addr.Zone() != "" {
				return errors.New("invalid ipv6 address: zone id is not a part of ipv6 address")
			}
		}
		if !u.IsAbs() {
			return errors.New("relative url")
		}
	}
	return nil
}

// Formats lists the formats the validator asserts.
var Formats = []string{"uri"}
