package schematable

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Formats are asserted only in draft-07 documents (2020-12 makes format an annotation) and in
// those that ask (Doc.AssertFormats), and only those Compile accepts: uri and date-time, with
// jsonschema/v6's rules and messages.

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
	case "date-time":
		return dateTimeError(s)
	}
	return nil
}

// Formats lists the formats the validator asserts.
var Formats = []string{"uri", "date-time"}

// dateTimeError says why s is not an RFC 3339 date-time (section 5.6): a full date, "T", and a
// full time whose offset is Z or ±hh:mm. A leap second (:60) is accepted only at 23:59 UTC.
func dateTimeError(s string) error {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return errors.New("less than 20 characters long")
	}
	if s[10] != 't' && s[10] != 'T' {
		return errors.New("11th character must be t or T")
	}
	if _, err := time.Parse("2006-01-02", s[:10]); err != nil {
		return fmt.Errorf("invalid date element: %v", err)
	}
	if err := timeError(s[11:]); err != nil {
		return fmt.Errorf("invalid time element: %v", err)
	}
	return nil
}

// timeError says why s is not an RFC 3339 full-time: hh:mm:ss, an optional fraction, an offset.
func timeError(s string) error {
	if len(s) < len("15:04:05Z") {
		return errors.New("less than 9 characters long")
	}
	if s[2] != ':' || s[5] != ':' {
		return errors.New("missing colon in correct place")
	}
	var hms [3]int
	for i, tok := range strings.SplitN(s[:8], ":", 3) {
		n, err := strconv.Atoi(tok)
		if err != nil {
			return errors.New("invalid hour/min/sec")
		}
		if n < 0 {
			return errors.New("non-positive hour/min/sec")
		}
		hms[i] = n
	}
	h, m, sec := hms[0], hms[1], hms[2]
	if h > 23 || m > 59 || sec > 60 {
		return errors.New("hour/min/sec out of range")
	}
	s = s[8:]
	if frac, ok := strings.CutPrefix(s, "."); ok {
		digits := len(frac) - len(strings.TrimLeft(frac, "0123456789"))
		if digits == 0 {
			return errors.New("no digits in second fraction")
		}
		s = frac[digits:]
	}
	if s != "z" && s != "Z" {
		if len(s) != 6 {
			return errors.New("offset must be 6 characters long")
		}
		var sign int
		switch s[0] {
		case '+':
			sign = -1
		case '-':
			sign = 1
		default:
			return errors.New("offset must begin with plus/minus")
		}
		if s[3] != ':' {
			return errors.New("missing colon in offset in correct place")
		}
		var zhm [2]int
		for i, tok := range strings.SplitN(s[1:], ":", 2) {
			n, err := strconv.Atoi(tok)
			if err != nil {
				return errors.New("invalid hour/min in offset")
			}
			if n < 0 {
				return errors.New("non-positive hour/min in offset")
			}
			zhm[i] = n
		}
		if zhm[0] > 23 || zhm[1] > 59 {
			return errors.New("hour/min in offset out of range")
		}
		// The leap second is judged in UTC.
		hm := h*60 + m + sign*(zhm[0]*60+zhm[1])
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	if sec >= 60 && (h != 23 || m != 59) {
		return errors.New("invalid leap second")
	}
	return nil
}
