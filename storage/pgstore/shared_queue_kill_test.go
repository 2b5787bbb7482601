package pgstore

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fulfilgate/fulfilgate/storage/pgstore/pgtest"
	"github.com/fulfilgate/fulfilgate/webhooks"
)

// childDSNEnv, set, makes this test binary a gateway instance's webhook
// dispatcher on that database (TestInstanceProcess).
const childDSNEnv = "PGSTORE_TEST_INSTANCE_DSN"

// TestInstanceProcess is the instance a test starts as a process of its
// own (and kills); it does nothing in a normal run.
func TestInstanceProcess(t *testing.T) {
	dsn := os.Getenv(childDSNEnv)
	if dsn == "" {
		t.Skip("runs only as the instance process of TestAKilledInstancesDeliveriesAreDeliveredByAnother")
	}
	clock := NewTestClock(time.Now()) // its leases are in real time
	g := newGateway(t, dsn, "killed", clock, func(o *webhooks.Options) { o.Timeout = time.Minute })
	g.svc.Start()
	select {} // until killed
}

// TestAKilledInstancesDeliveriesAreDeliveredByAnother: an instance
// process claims five deliveries and is killed (SIGKILL) with its attempts
// hanging. Another instance does not attempt them while the killed one's
// leases hold, and delivers each once when they have run out.
func TestAKilledInstancesDeliveriesAreDeliveredByAnother(t *testing.T) {
	dsn := migratedPool(t).Config().ConnString()
	hang := make(chan struct{})
	rcv := newSharedReceiver(t, func(from string) int {
		if from == "killed" {
			<-hang
		}
		return http200
	})
	t.Cleanup(func() { close(hang) }) // before the receiver closes
	clock := NewTestClock(time.Now())
	b := newGateway(t, dsn, "B", clock, nil)
	b.subscribe(t, "p1", rcv.URL) // before the process starts: it loads the subscriptions then
	b.publish(t, "p1", "e1", "e2", "e3", "e4", "e5")

	child := exec.Command(os.Args[0], "-test.run=^TestInstanceProcess$", "-test.count=1")
	// No cluster of its own: it uses this test's database.
	child.Env = append(os.Environ(), childDSNEnv+"="+dsn, pgtest.BinDirEnv+"="+t.TempDir(), "CI=")
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			child.Process.Kill()
			child.Wait()
		}
	})
	rcv.await(t, 4, "the instance process's attempts") // four: the per-target cap
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed = true

	// The killed instance's lease: three attempt timeouts.
	b.takesOverAfterLease(t, rcv, clock, 3*time.Minute+time.Second, "the killed instance's")
}
