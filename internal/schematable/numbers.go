package schematable

import (
	"strings"
)

// JSON numbers are compared exactly, as decimals, without big arithmetic: an agent's
// 1e999999999 costs what its text costs.

// decimal is a JSON number as sign × 0.digits × 10^exp, digits without leading or trailing
// zeros (zero has no digits).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds exponents: beyond it every number is out of any bound the schemas state, and
// the comparison stays exact because such exponents are saturated on both sides alike.
const maxExp = 1 << 40

// parseDecimal reads a JSON number (the decoder has checked its syntax).
func parseDecimal(s string) decimal {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	var exp int64
	if expText != "" {
		neg := false
		switch expText[0] {
		case '-':
			neg, expText = true, expText[1:]
		case '+':
			expText = expText[1:]
		}
		for i := 0; i < len(expText); i++ {
			if exp < maxExp {
				exp = exp*10 + int64(expText[i]-'0')
			}
		}
		exp = min(exp, maxExp)
		if neg {
			exp = -exp
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	// 0.digits × 10^(len(intPart)+exp), then drop the leading zeros of digits.
	point := int64(len(intPart)) + exp
	trimmed := strings.TrimLeft(digits, "0")
	point -= int64(len(digits) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	d.exp = point
	if d.digits == "" {
		d.neg, d.exp = false, 0
	}
	return d
}

// compareNumbers compares two JSON numbers by value: -1, 0 or +1.
func compareNumbers(a, b string) int {
	x, y := parseDecimal(a), parseDecimal(b)
	sign := func(d decimal) int {
		switch {
		case d.digits == "":
			return 0
		case d.neg:
			return -1
		}
		return 1
	}
	sx, sy := sign(x), sign(y)
	if sx != sy || sx == 0 {
		return cmpInt(sx, sy)
	}
	// Same sign: compare magnitudes, then flip for negatives.
	m := cmpInt64(x.exp, y.exp)
	if m == 0 {
		m = strings.Compare(x.digits, y.digits) // no trailing zeros: lexical order is numeric order
	}
	return m * sx
}

// isInteger reports whether a JSON number has no fractional part (1.0 and 1e2 are integers).
func isInteger(s string) bool {
	d := parseDecimal(s)
	return d.digits == "" || int64(len(d.digits)) <= d.exp
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
