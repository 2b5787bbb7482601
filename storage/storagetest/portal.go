package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/portal"
	"github.com/fulfilgate/fulfilgate/tokens"
)

var portalBehaviours = []Behaviour{
	{"portal/a link is kept by id and survives a restart", func(t *testing.T, b Backend) {
		l := portal.LinkRecord{ID: "pl1", Partner: "P1", Hash: bytes.Repeat([]byte{1}, 32), Created: t0, Expires: t0.Add(15 * time.Minute)}
		if err := b.Portal.PutLink(l); err != nil {
			t.Fatal(err)
		}
		got, err := b.Reopen(t).Portal.Link("pl1")
		if err != nil || got.Partner != "P1" || !bytes.Equal(got.Hash, l.Hash) || !got.Created.Equal(t0) || !got.Expires.Equal(l.Expires) {
			t.Fatalf("Link(pl1) after a restart = %+v, %v; want the stored link", got, err)
		}
	}},
	{"portal/an unknown link is ErrNotFound", func(t *testing.T, b Backend) {
		if _, err := b.Portal.Link("pl-none"); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("Link(unknown) = %v, want portal.ErrNotFound", err)
		}
		if err := b.Portal.DeleteLink("pl-none"); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("DeleteLink(unknown) = %v, want portal.ErrNotFound", err)
		}
	}},
	{"portal/of concurrent deletions of one link exactly one succeeds", func(t *testing.T, b Backend) {
		if err := b.Portal.PutLink(portal.LinkRecord{ID: "pl1", Partner: "P1", Hash: make([]byte, 32), Created: t0, Expires: t0}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = b.Portal.DeleteLink("pl1") })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, portal.ErrNotFound):
				t.Fatalf("DeleteLink: %v, want nil or portal.ErrNotFound", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of %d concurrent deletions of one link succeeded, want exactly 1 (a link serves once)", ok, len(errs))
		}
		if links, err := b.Portal.Links(); err != nil || len(links) != 0 {
			t.Fatalf("Links() after the deletion = %+v, %v; want none", links, err)
		}
	}},
	{"portal/a session is kept, touched and deleted", func(t *testing.T, b Backend) {
		s := portal.SessionRecord{ID: "ps1", Partner: "P1", Hash: bytes.Repeat([]byte{2}, 32), Created: t0, LastSeen: t0,
			Expires: t0.Add(12 * time.Hour), Idle: 30 * time.Minute, Addr: "127.0.0.1", UserAgent: "test"}
		if err := b.Portal.PutSession(s); err != nil {
			t.Fatal(err)
		}
		if err := b.Portal.TouchSession("ps1", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		got, err := r.Portal.Session("ps1")
		if err != nil || got.Partner != "P1" || !bytes.Equal(got.Hash, s.Hash) || !got.LastSeen.Equal(t0.Add(time.Minute)) ||
			!got.Expires.Equal(s.Expires) || got.Idle != s.Idle || got.Addr != "127.0.0.1" || got.UserAgent != "test" {
			t.Fatalf("Session(ps1) = %+v, %v; want the stored session with the touched last use", got, err)
		}
		if all, err := r.Portal.Sessions(); err != nil || len(all) != 1 || all[0].ID != "ps1" {
			t.Fatalf("Sessions() = %+v, %v; want [ps1]", all, err)
		}
		if err := r.Portal.DeleteSession("ps1"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Portal.Session("ps1"); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("Session after DeleteSession = %v, want portal.ErrNotFound", err)
		}
	}},
	{"portal/touching a deleted session does not bring it back", func(t *testing.T, b Backend) {
		if err := b.Portal.TouchSession("ps-gone", t0); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("TouchSession(unknown) = %v, want portal.ErrNotFound", err)
		}
		if _, err := b.Portal.Session("ps-gone"); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("Session after touching an unknown one = %v, want portal.ErrNotFound (a revoked session stays revoked)", err)
		}
		if err := b.Portal.DeleteSession("ps-gone"); !errors.Is(err, portal.ErrNotFound) {
			t.Fatalf("DeleteSession(unknown) = %v, want portal.ErrNotFound", err)
		}
	}},
	{"portal/the audit log is read newest first, by partner, since a time, up to a limit", func(t *testing.T, b Backend) {
		for i := range 6 {
			p := "P1"
			if i%2 == 1 {
				p = "P2"
			}
			r := portal.AuditRecord{At: t0.Add(time.Duration(i) * time.Minute), Partner: p, Actor: portal.ActorPartner,
				Session: "ps1", Action: fmt.Sprintf("a%d", i), Target: "c1", Outcome: "ok", Detail: "d"}
			if err := b.Portal.AppendAudit(r); err != nil {
				t.Fatal(err)
			}
		}
		r := b.Reopen(t)
		all, err := r.Portal.Audit("", time.Time{}, 100)
		if err != nil || actions(all) != "a5 a4 a3 a2 a1 a0" {
			t.Fatalf("Audit(all) = %q, %v; want a5 a4 a3 a2 a1 a0", actions(all), err)
		}
		if all[0].Partner != "P2" || all[0].Actor != portal.ActorPartner || all[0].Session != "ps1" || all[0].Target != "c1" ||
			all[0].Outcome != "ok" || all[0].Detail != "d" || !all[0].At.Equal(t0.Add(5*time.Minute)) {
			t.Fatalf("Audit record = %+v, want every field as appended", all[0])
		}
		if got, _ := r.Portal.Audit("P1", time.Time{}, 100); actions(got) != "a4 a2 a0" {
			t.Fatalf("Audit(P1) = %q, want a4 a2 a0", actions(got))
		}
		if got, _ := r.Portal.Audit("", t0.Add(3*time.Minute), 100); actions(got) != "a5 a4 a3" {
			t.Fatalf("Audit(since a3) = %q, want a5 a4 a3", actions(got))
		}
		if got, _ := r.Portal.Audit("", time.Time{}, 2); actions(got) != "a5 a4" {
			t.Fatalf("Audit(limit 2) = %q, want a5 a4", actions(got))
		}
		if err := r.Portal.DeleteAuditBefore(t0.Add(4 * time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Portal.Audit("", time.Time{}, 100); actions(got) != "a5 a4" {
			t.Fatalf("Audit after DeleteAuditBefore(a4) = %q, want a5 a4", actions(got))
		}
	}},
	{"tokens/a client's hint and previous secret survive a restart", func(t *testing.T, b Backend) {
		c := tokens.ClientRecord{ID: "c1", Partner: "P1", Hash: bytes.Repeat([]byte{3}, 32), Version: "v1", OpaqueVersion: true,
			Active: true, Created: t0, Hint: "wxyz", PrevHash: bytes.Repeat([]byte{4}, 32), PrevUntil: t0.Add(24 * time.Hour)}
		if err := b.Tokens.PutClient(c); err != nil {
			t.Fatal(err)
		}
		r := b.Reopen(t)
		cs, err := r.Tokens.Clients()
		if err != nil || len(cs) != 1 || cs[0].Hint != "wxyz" || !bytes.Equal(cs[0].PrevHash, c.PrevHash) || !cs[0].PrevUntil.Equal(c.PrevUntil) {
			t.Fatalf("Clients() = %+v, %v; want the hint and the previous secret's hash and end", cs, err)
		}
		c.PrevHash, c.PrevUntil = nil, time.Time{}
		if err := r.Tokens.PutClient(c); err != nil {
			t.Fatal(err)
		}
		cs, _ = r.Tokens.Clients()
		if len(cs) != 1 || len(cs[0].PrevHash) != 0 || !cs[0].PrevUntil.IsZero() {
			t.Fatalf("Clients() after clearing the previous secret = %+v, want none", cs)
		}
	}},
	{"tokens/DeleteClient deletes one client", func(t *testing.T, b Backend) {
		for _, id := range []string{"c1", "c2"} {
			if err := b.Tokens.PutClient(tokens.ClientRecord{ID: id, Partner: "P1", Hash: make([]byte, 32), Version: "v", Active: true, Created: t0}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Tokens.DeleteClient("c1"); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.DeleteClient("c-none"); err != nil {
			t.Fatalf("DeleteClient(unknown) = %v, want nil", err)
		}
		cs, err := b.Reopen(t).Tokens.Clients()
		if err != nil || len(cs) != 1 || cs[0].ID != "c2" {
			t.Fatalf("Clients() = %+v, %v; want only c2", cs, err)
		}
	}},
	{"tokens/a client's last use is kept and only moves forward", func(t *testing.T, b Backend) {
		if err := b.Tokens.TouchClient("c1", t0); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.TouchClient("static-client", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := b.Tokens.TouchClient("c1", t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		u, err := b.Reopen(t).Tokens.ClientUsage()
		if err != nil || len(u) != 2 || !u["c1"].Equal(t0.Add(2*time.Hour)) || !u["static-client"].Equal(t0.Add(time.Hour)) {
			t.Fatalf("ClientUsage() = %v, %v; want c1 at t0+2h and static-client at t0+1h", u, err)
		}
	}},
}

// actions lists the actions of audit records, space-separated.
func actions(rs []portal.AuditRecord) string {
	var b bytes.Buffer
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.Action)
	}
	return b.String()
}
