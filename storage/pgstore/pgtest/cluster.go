package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the name of the cluster's superuser.
const Superuser = "postgres"

// port is the cluster's port number. The server listens on a unix socket
// in the cluster's own directory only (no TCP), so the number is part of
// the socket's name and never collides with another server.
const port = 5432

// maxSocketDir keeps the socket path (dir + "/.s.PGSQL.5432") under the
// 107 bytes a unix socket address holds.
const maxSocketDir = 90

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir      string // removed by Stop
	password string
	postgres string              // the server binary
	cred     *syscall.Credential // the user it runs as (nil: this process's)
	durable  bool                // fsync and full-page writes on (Start with Durable)
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the server process has exited
	waitErr  error         // the server's exit, set before exited is closed
}

// startCluster creates a cluster in a new temporary directory and starts
// its server. initdb and postgres refuse to run as root, so when the tests
// run as root both run as the postgres user (which Debian's package
// creates), owning the directory.
func startCluster(bins binaries, durable bool) (_ *Cluster, err error) {
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, postgres: bins.postgres, cred: cred, durable: durable}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	pw := make([]byte, 16)
	rand.Read(pw) // never fails
	c.password = hex.EncodeToString(pw)
	pwFile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwFile, []byte(c.password+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing the password file: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("handing %s to the postgres user: %w", dir, err)
		}
		if err := os.Chown(pwFile, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("handing the password file to the postgres user: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(bins.initdb, "-D", data, "-U", Superuser, "--pwfile", pwFile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = serverEnv()
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

// start runs the server on the cluster's data and waits until it accepts
// connections.
func (c *Cluster) start() error {
	logFile, err := os.OpenFile(filepath.Join(c.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the server log: %w", err)
	}
	defer logFile.Close()
	// The settings favour speed over durability (the cluster is thrown away),
	// unless it is durable (for benchmarks: every commit is flushed to disk,
	// as in production), and leave room for several gateway instances' pools.
	flush := "off"
	if c.durable {
		flush = "on"
	}
	c.cmd = exec.Command(c.postgres, "-D", filepath.Join(c.dir, "data"), "-k", c.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=",
		"-c", "fsync="+flush,
		"-c", "full_page_writes="+flush,
		"-c", "synchronous_commit=on",
		"-c", "shared_buffers=32MB",
		"-c", "max_connections=300",
		"-c", "log_min_messages=warning")
	// Pdeathsig: if the test binary dies without stopping the server, the
	// server is told to shut down (SIGINT, a fast shutdown) rather than left
	// running.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGINT}
	c.cmd.Env = serverEnv()
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan struct{})
	c.exited = exited
	cmd := c.cmd
	go func() { c.waitErr = cmd.Wait(); close(exited) }()
	if err := c.waitReady(60 * time.Second); err != nil {
		return fmt.Errorf("%w\nserver log:\n%s", err, c.logTail())
	}
	return nil
}

// serverCredential is the postgres user's when the tests run as root, nil
// (the current user) otherwise.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("the tests run as root and PostgreSQL refuses to: no postgres user to run it as (%w); %s", err, InstallHint)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("the postgres user has a non-numeric uid %q or gid %q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// tempDir makes the cluster's directory, short enough to hold the socket.
func tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err == nil && len(dir) > maxSocketDir {
		os.Remove(dir)
		dir, err = os.MkdirTemp("/tmp", "pgtest-")
	}
	if err != nil {
		return "", fmt.Errorf("creating the cluster directory: %w", err)
	}
	return dir, nil
}

// serverEnv is the environment of initdb and postgres: the caller's
// without libpq's variables, which would otherwise redirect them.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) >= 2 && kv[:2] == "PG" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

// waitReady connects until the server answers, it exits, or timeout.
func (c *Cluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("postgres exited at start: %v", c.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %s: %w", timeout, err)
		}
	}
}

// DSN is the superuser's connection URL for database db.
func (c *Cluster) DSN(db string) string {
	return c.DSNFor(Superuser, c.password, db)
}

// DSNFor is the connection URL of role with password on database db.
func (c *Cluster) DSNFor(role, password, db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(role, password), Path: "/" + db,
		RawQuery: url.Values{"host": {c.dir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}.Encode()}
	return u.String()
}

// Stop shuts the server down and removes the cluster's directory.
func (c *Cluster) Stop() error {
	err := c.Halt()
	if e := os.RemoveAll(c.dir); e != nil {
		err = errors.Join(err, fmt.Errorf("removing the cluster directory: %w", e))
	}
	return err
}

// Halt shuts the server down (a fast shutdown: sessions are ended),
// keeping its data; Resume starts it again. In between, connections are
// refused, as when a database goes away.
func (c *Cluster) Halt() error {
	var err error
	if c.cmd != nil && c.cmd.Process != nil {
		select {
		case <-c.exited:
		default:
			if e := c.cmd.Process.Signal(syscall.SIGINT); e != nil && !errors.Is(e, os.ErrProcessDone) {
				err = fmt.Errorf("stopping postgres: %w", e)
			}
			select {
			case <-c.exited:
			case <-time.After(30 * time.Second):
				c.cmd.Process.Kill()
				<-c.exited
				err = errors.Join(err, errors.New("postgres did not stop within 30s and was killed"))
			}
		}
	}
	return err
}

// Resume starts the server again after Halt.
func (c *Cluster) Resume() error { return c.start() }

// logTail returns the end of the server's log.
func (c *Cluster) logTail() string {
	b, err := os.ReadFile(filepath.Join(c.dir, "server.log"))
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(bytes.TrimSpace(b))
}
