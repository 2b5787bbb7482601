package wmssim

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// validate checks the values of a control body: ids and statuses are short
// printable text without spaces at either end, products are distinct ids,
// numbers are in range. Absent fields are checked by decodeControl.
func validate(q *controlRequest) *opError {
	for _, f := range []struct {
		name, value string
		max         int
	}{
		{"partner", q.Partner, maxIDLen},
		{"status", q.Status, 64},
		{"orderRef", q.OrderRef, maxIDLen},
		{"asn", q.ASN, maxIDLen},
		{"carrier", q.Carrier, maxIDLen},
		{"trackingNumber", q.TrackingNumber, maxIDLen},
		{"sku", q.SKU, maxIDLen},
		{"reason", q.Reason, maxTextLen},
		{"description", q.Description, maxTextLen},
	} {
		if msg := checkText(f.value, f.max); msg != "" {
			return badRequest(f.name + " " + msg)
		}
	}
	if q.Products != nil {
		if len(q.Products) == 0 || len(q.Products) > maxProducts {
			return badRequest(fmt.Sprintf("products must list 1 to %d product ids", maxProducts))
		}
		seen := make(map[string]bool, len(q.Products))
		for i, p := range q.Products {
			if p == "" {
				return badRequest(fmt.Sprintf("products[%d] is empty", i))
			}
			if msg := checkText(p, maxIDLen); msg != "" {
				return badRequest(fmt.Sprintf("products[%d] %s", i, msg))
			}
			if seen[p] {
				return badRequest(fmt.Sprintf("products lists %q twice", p))
			}
			seen[p] = true
		}
	}
	if q.OnHand != nil && (*q.OnHand < 0 || *q.OnHand > 1_000_000_000) {
		return badRequest("onHand must be from 0 to 1000000000")
	}
	if q.Seconds != nil && (*q.Seconds < 0 || *q.Seconds > maxOutageSecs) {
		return badRequest(fmt.Sprintf("seconds must be from 0 to %d", maxOutageSecs))
	}
	return nil
}

// given reports whether a required field has a value: present, not null,
// not empty.
var given = map[string]func(*controlRequest) bool{
	"partner":  func(q *controlRequest) bool { return q.Partner != "" },
	"status":   func(q *controlRequest) bool { return q.Status != "" },
	"sku":      func(q *controlRequest) bool { return q.SKU != "" },
	"products": func(q *controlRequest) bool { return q.Products != nil },
	"seconds":  func(q *controlRequest) bool { return q.Seconds != nil },
}

// checkText explains what is wrong with s, or returns "".
func checkText(s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case len(s) > max:
		return fmt.Sprintf("is longer than %d bytes", max)
	case strings.TrimSpace(s) != s:
		return "has spaces at either end"
	case strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return "contains control characters"
	}
	return ""
}
