//go:build !linux

package fulfilment

import "errors"

// otherListeners cannot tell which process owns a socket outside Linux.
func otherListeners(listenAddress) ([]string, error) {
	return nil, errors.New("finding other processes on a port needs Linux's /proc")
}
