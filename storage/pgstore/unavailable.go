package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fulfilgate/fulfilgate/webhooks"
)

// unavailable wraps err with webhooks.ErrUnavailable when it says the
// server could not be reached or the connection to it was lost, so the
// callers can answer "try again" instead of reporting an internal error.
// Other errors are returned as they are.
func unavailable(err error) error {
	if err == nil || !connectionLost(err) {
		return err
	}
	return fmt.Errorf("%w: %w", webhooks.ErrUnavailable, err)
}

// connectionLost reports whether err is a failure to connect, a lost
// connection, or the server refusing work while it shuts down or starts
// (SQLSTATE class 08, 57P01-57P03).
func connectionLost(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOENT)
}
