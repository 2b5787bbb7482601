package fulfilhttp

// testHeaders are the default header names of a guard, as the handlers
// after it see them through the identity it attaches.
func testHeaders() *IdentityHeaders {
	return &IdentityHeaders{Identity: "X-Partner-Id", Protected: []string{"X-Partner-Id", "X-Request-Id"}}
}
