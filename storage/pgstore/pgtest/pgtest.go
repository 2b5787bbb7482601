// Package pgtest runs a real, throwaway PostgreSQL server for a test
// binary: one cluster per binary (started by Main from TestMain, in a
// temporary directory, listening on a unix socket in that directory only)
// and a fresh database per test (Database).
//
// Without the PostgreSQL server binaries the tests that ask for a database
// are skipped with a message naming the package to install; when the
// environment variable CI is set (to anything but "", "0" or "false"), a
// missing PostgreSQL fails the test binary instead, so CI never passes by
// skipping.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	cluster    *Cluster
	skipReason string
	dbSeq      atomic.Int64
	adminMu    sync.Mutex
	admin      *pgx.Conn
)

// Main starts the cluster, runs the tests and stops the cluster; it does
// not return. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main for a TestMain that does more: it returns the exit code.
func Run(m *testing.M) int {
	bins, err := findBinaries()
	if err != nil {
		if InCI() {
			fmt.Fprintf(os.Stderr, "pgtest: %v: CI is set, so the PostgreSQL tests fail instead of being skipped; %s\n", err, InstallHint)
			return 1
		}
		skipReason = fmt.Sprintf("PostgreSQL tests skipped: %v; %s", err, InstallHint)
		fmt.Fprintln(os.Stderr, "pgtest: "+skipReason)
		return m.Run()
	}
	cluster, err = startCluster(bins, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: starting PostgreSQL: %v\n", err)
		return 1
	}
	code := m.Run()
	adminMu.Lock()
	if admin != nil {
		admin.Close(context.Background())
	}
	adminMu.Unlock()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// InCI reports whether the environment variable CI asks for a CI run.
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// Server returns the running cluster, skipping t when there is none
// because PostgreSQL is not installed. It fails t when Main was not called.
func Server(t testing.TB) *Cluster {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if cluster == nil {
		t.Fatal("pgtest: no cluster: the package's TestMain must call pgtest.Main(m)")
	}
	return cluster
}

// Database creates a fresh, empty database for t on the shared cluster
// and returns the superuser's connection URL to it. The database is
// dropped when t ends (its remaining sessions are ended first).
func Database(t testing.TB) string {
	t.Helper()
	return Server(t).Database(t)
}

// NewCluster starts a cluster of t's own, stopped when t ends: for a test
// that stops and starts its server (Halt, Resume). It is skipped or fails
// as Server does when PostgreSQL is missing.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	Server(t)
	bins, err := findBinaries()
	if err != nil {
		t.Fatal(err)
	}
	c, err := startCluster(bins, false)
	if err != nil {
		t.Fatalf("pgtest: starting a cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// Database creates a fresh, empty database on c for t and returns the
// superuser's connection URL to it; it is dropped when t ends, if the
// server is running then.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	c.exec(t, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		select {
		case <-c.exited: // halted: the whole cluster goes at the end
		default:
			c.exec(t, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
	})
	return c.DSN(name)
}

// exec runs sql as the superuser on c's postgres database.
func (c *Cluster) exec(t testing.TB, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connecting as the superuser: %v", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Exec runs sql as the superuser on the cluster's postgres database,
// failing t on error: for statements a test needs outside any test
// database (CREATE ROLE, CREATE DATABASE).
func Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	c := Server(t)
	adminMu.Lock()
	defer adminMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if admin == nil || admin.IsClosed() {
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err != nil {
			t.Fatalf("pgtest: connecting as the superuser: %v", err)
		}
		admin = conn
	}
	if _, err := admin.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}
