// Package wmssim is a believable legacy warehouse management system for the
// demo and the end-to-end tests: its own (non-partner) paths, JSON resources,
// a change feed and a control surface. It is a Caddy handler module so the
// demo binary serves it; production builds leave it out.
package wmssim
