package versioning

import (
	"errors"
	"testing"
)

func TestErrorMessages(t *testing.T) {
	tab := mustTable(t, demoConfig())
	_, err := tab.Map("/api/fulfilment/v5/products")
	if got, want := err.Error(), `unknown version "v5"; versions served: v4, v3`; got != want {
		t.Errorf("unknown version: %q, want %q", got, want)
	}
	_, err = tab.Map("/api/fulfilment/v4/products/../../x")
	var pe *PathError
	if !errors.As(err, &pe) || pe.Error() != "the path has a dot segment" {
		t.Errorf("path error: %v", err)
	}
	_, err = tab.Map("/api/fulfilment/v4")
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Error() != "no resource in the path" {
		t.Errorf("not found: %v", err)
	}
}
