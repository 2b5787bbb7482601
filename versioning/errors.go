package versioning

import (
	"fmt"
	"strings"
)

// UnknownVersionError is returned by Table.Map for a path that names a
// version the table does not serve (for example "v2", "v5" or "vX"). The
// HTTP glue answers it with 404 and the list of versions served.
type UnknownVersionError struct {
	// Version is the version segment as the request spelled it (escaped).
	Version string
	// Served lists the versions served, in configuration order.
	Served []string
}

func (e *UnknownVersionError) Error() string {
	return fmt.Sprintf("unknown version %q; versions served: %s", e.Version, strings.Join(e.Served, ", "))
}

// NotFoundError is returned by Table.Map for a path that names no served
// resource: outside the base path, no resource segment, a resource name that
// is not a plain name, or a resource that is neither mapped nor exposed
// (unless PassUnmapped is set). The HTTP glue answers it with 404.
type NotFoundError struct {
	// Reason says what is missing, for the problem's detail.
	Reason string
}

func (e *NotFoundError) Error() string { return e.Reason }

// PathError is returned by Table.Map for a path that is refused for safety:
// a dot segment, an encoded slash or backslash, an empty segment, a control
// character, a malformed escape, and so on (see the rules in path.go). The
// HTTP glue answers it with 400.
type PathError struct {
	// Reason says which rule the path broke; it never echoes the path.
	Reason string
}

func (e *PathError) Error() string { return e.Reason }
