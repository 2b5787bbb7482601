package fulfilment

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// instance identifies this gateway process in its logs and on the admin API
// (GET /fulfilment), so that two processes serving the same ports or data
// can be told apart.
var instance = newInstanceInfo()

// InstanceInfo identifies a gateway process.
type InstanceInfo struct {
	ID        string    `json:"instance"` // random, new for every process
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
}

func newInstanceInfo() InstanceInfo {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics instead)
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	return InstanceInfo{ID: hex.EncodeToString(b), PID: os.Getpid(), Host: host, StartedAt: time.Now().UTC()}
}

// portWarnings are the last check's findings of other processes serving this
// process's ports, for GET /fulfilment.
var portWarnings struct {
	mu   sync.Mutex
	list []string
}

func PortWarnings() []string {
	portWarnings.mu.Lock()
	defer portWarnings.mu.Unlock()
	return append([]string{}, portWarnings.list...)
}

// checkSharedPorts looks for other processes listening on the TCP addresses
// of this config's HTTP servers and logs each at error level. Caddy listens
// with SO_REUSEPORT, so a second gateway started on the same ports (by the
// same user) binds them without an error, and the kernel then hands each
// new connection to one of the two at random: with different data dirs,
// tokens issued by one are refused by the other. The check runs at every
// start of the app (a process is told when it is the second one); where the
// operating system does not tell (only Linux's /proc does), it says so at
// debug level.
func (a *App) checkSharedPorts() {
	addrs := a.httpListenAddresses()
	var found []string
	for _, addr := range addrs {
		others, err := otherListeners(addr)
		if err != nil {
			a.logger.Debug("cannot check for other processes on the listen address", zap.String("address", addr.String()), zap.Error(err))
			continue
		}
		for _, o := range others {
			msg := fmt.Sprintf("another process (%s) is already listening on %s: Caddy listens with SO_REUSEPORT, so both accept connections and each one goes to either process at random (with different data dirs, tokens of one are refused by the other); stop one of them or give them different ports",
				o, addr)
			found = append(found, msg)
			a.logger.Error("another process serves this gateway's port",
				zap.String("address", addr.String()), zap.String("other", o), zap.String("problem", msg))
		}
	}
	portWarnings.mu.Lock()
	portWarnings.list = found
	portWarnings.mu.Unlock()
}

// listenAddress is one TCP address (host may be empty: every address).
type listenAddress struct {
	Host string
	Port uint
}

func (l listenAddress) String() string {
	if strings.Contains(l.Host, ":") {
		return fmt.Sprintf("[%s]:%d", l.Host, l.Port)
	}
	return fmt.Sprintf("%s:%d", l.Host, l.Port)
}

// maxCheckedPorts bounds the ports checked for one listen address (a port
// range may be large).
const maxCheckedPorts = 64

// httpListenAddresses returns the TCP addresses of this config's HTTP
// servers. The http app is provisioned by the time the apps start.
func (a *App) httpListenAddresses() []listenAddress {
	if a.ctx.Context == nil {
		return nil
	}
	v, err := a.ctx.AppIfConfigured("http")
	if err != nil {
		return nil
	}
	httpApp, ok := v.(*caddyhttp.App)
	if !ok {
		return nil
	}
	var out []listenAddress
	seen := map[listenAddress]bool{}
	for _, srv := range httpApp.Servers {
		for _, l := range srv.Listen {
			na, err := caddy.ParseNetworkAddress(l)
			if err != nil || (na.Network != "tcp" && na.Network != "tcp4" && na.Network != "tcp6") {
				continue
			}
			for p := na.StartPort; p <= na.EndPort && p < na.StartPort+maxCheckedPorts; p++ {
				la := listenAddress{Host: na.Host, Port: p}
				if !seen[la] {
					seen[la] = true
					out = append(out, la)
				}
			}
		}
	}
	return out
}

// Instance identifies this gateway process (the same id is in the log line
// "fulfilment app started").
func Instance() InstanceInfo { return instance }
