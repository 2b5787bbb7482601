package procstat

import (
	"os"
	"testing"
	"time"
)

// utime and stime are counted from the last ')', so a command name with
// spaces and ')' in it does not shift them.
func TestParseStatSumsUserAndSystemTime(t *testing.T) {
	// A command name with a space and a ')' in it; utime 1234, stime 66.
	stat := "4242 (cad dy) x) S 1 4242 4242 0 -1 4194560 9 0 0 0 1234 66 0 0 20 0 12 0 99 0 0\n"
	got, err := ParseStat(stat)
	if err != nil || got != 13*time.Second {
		t.Fatalf("ParseStat = %v, %v; want 13s (1300 ticks of 10 ms)", got, err)
	}
}

func TestParseStatRefusesMalformedLines(t *testing.T) {
	for _, bad := range []string{"", "4242 (caddy S 1", "4242 (caddy) S 1 2 3", "4242 (caddy) S 1 4242 4242 0 -1 4194560 9 0 0 0 x 66 0"} {
		if _, err := ParseStat(bad); err == nil {
			t.Errorf("ParseStat(%q) gave no error, want one", bad)
		}
	}
}

func TestProcessCPUMovesWhileTheProcessRuns(t *testing.T) {
	cpu := ProcessCPU(os.Getpid())
	t0, err := cpu.Read()
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if t1, _ := cpu.Read(); t1 > t0 {
			return
		}
	}
	t.Fatal("the process's CPU time did not move in 5 s of spinning")
}

func TestNilClockReadsNothing(t *testing.T) {
	if _, err := Clock(nil).Read(); err == nil {
		t.Fatal("a nil Clock read a time, want an error")
	}
}
