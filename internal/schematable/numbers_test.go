package schematable

import (
	"math/big"
	"testing"
)

// TestCompareNumbers: JSON numbers compare by value, exactly, however they are written, and an
// exponent of any size costs nothing.
func TestCompareNumbers(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1", "1.0", 0}, {"1e2", "100", 0}, {"0.1e1", "1", 0}, {"-0", "0", 0}, {"0e999999999999", "0", 0},
		{"65535", "65535", 0}, {"65535.0000000000000000001", "65535", 1}, {"65534.99999999999999999", "65535", -1},
		{"-1", "0", -1}, {"-2", "-1", -1}, {"-1e-400", "0", -1}, {"1e-400", "0", 1}, {"1e400", "65535", 1},
		{"-1e400", "-65535", -1}, {"12", "123", -1}, {"2", "123", -1}, {"0.2", "0.123", 1}, {"1E+2", "1e2", 0},
		{"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"1e99999999999999999999999", "1e400", 1},
	}
	for _, c := range cases {
		if got := compareNumbers(c.a, c.b); got != c.want {
			t.Errorf("compareNumbers(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := compareNumbers(c.b, c.a); got != -c.want {
			t.Errorf("compareNumbers(%s, %s) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
	// And as big.Rat says, on numbers it can take.
	nums := []string{"0", "1", "-1", "1.5", "1.50", "15e-1", "0.001", "1e3", "999.999", "-0.5e1", "65535", "65536", "2.0"}
	for _, a := range nums {
		for _, b := range nums {
			x, _ := new(big.Rat).SetString(a)
			y, _ := new(big.Rat).SetString(b)
			if got, want := compareNumbers(a, b), x.Cmp(y); got != want {
				t.Errorf("compareNumbers(%s, %s) = %d, big.Rat says %d", a, b, got, want)
			}
		}
	}
}

func TestIsInteger(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-0": true, "1.0": true, "1e2": true, "1.5e1": true, "1.25e1": false,
		"1.5": false, "1e-1": false, "0.0e-5": true, "1e-99999999999999": false, "1.5e99999999999999": true, "-7": true} {
		if got := isInteger(s); got != want {
			t.Errorf("isInteger(%s) = %v, want %v", s, got, want)
		}
	}
}
