package webhooks

import (
	"net/url"
	"strings"
)

// sameURLKey is the form of a notification URL that decides whether two
// subscriptions are the same: scheme and host are case-insensitive
// (RFC 3986 §6.2.2.1), the rest is compared in the URL's escaped form.
func sameURLKey(u *url.URL) string {
	k := *u
	k.Scheme, k.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return k.String()
}

// SubscriptionUniqueKey is what makes a subscription unique: partner, event
// and the URL's comparison form (sameURLKey; a URL that no longer parses
// counts in its raw form), joined by NUL. A storage backend's uniqueness
// index is on it.
func SubscriptionUniqueKey(sub Subscription) string {
	u, err := url.Parse(sub.NotificationURL)
	if err != nil {
		return sub.PartnerID + "\x00" + sub.Event + "\x00" + sub.NotificationURL
	}
	return sub.PartnerID + "\x00" + sub.Event + "\x00" + sameURLKey(u)
}
