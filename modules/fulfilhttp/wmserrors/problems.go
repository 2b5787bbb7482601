package wmserrors

import "net/http"

// keptUpstreamHeaders are the headers of an upstream error answer that
// still mean something to a partner; every other header the WMS sent (its
// Server, Content-Type, Content-Length, ETag, ...) is dropped. Headers the
// gateway set before proxying (the request id under its configured name,
// the deprecation headers) are kept too.
var keptUpstreamHeaders = []string{"Allow", "Retry-After"}

// upstreamProblem is the problem a partner gets for an upstream status.
// An upstream 401 or 403 concerns the gateway's own access to the WMS, not
// the partner's token, so it becomes 502.
func upstreamProblem(status int) (int, string, string) {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return http.StatusBadGateway, "upstream-error", "the warehouse system refused the gateway"
	case status == http.StatusNotFound:
		return status, "not-found", "no such resource"
	case status == http.StatusMethodNotAllowed:
		return status, "method-not-allowed", "this method is not allowed on this resource"
	case status == http.StatusTooManyRequests:
		return status, "rate-limited", "the warehouse system is busy; retry later"
	case status < 500:
		return status, "rejected", "the warehouse system rejected the request"
	case status == http.StatusServiceUnavailable || status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return status, "upstream-unavailable", "the warehouse system is unavailable; retry later"
	default:
		return status, "upstream-error", "the warehouse system failed to answer the request"
	}
}
