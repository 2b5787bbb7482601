// Package procstat reads a process's CPU time from Linux's /proc, for the
// benchmarks that run the gateway in a process of its own and report its
// CPU time per request.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Clock reads a process's CPU time so far; a nil Clock reads nothing.
type Clock func() (time.Duration, error)

// Read returns the CPU time so far, or an error (always, for a nil Clock).
func (c Clock) Read() (time.Duration, error) {
	if c == nil {
		return 0, errors.New("no CPU clock")
	}
	return c()
}

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's times
// (100 on every Linux architecture Go supports).
const clockTicks = 100

// ProcessCPU returns a clock of the process pid's user and system CPU time
// (all its threads, those ended included), from /proc/<pid>/stat: 10 ms
// steps, so it means something only summed over many requests.
func ProcessCPU(pid int) Clock {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	return func() (time.Duration, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		return ParseStat(string(b))
	}
}

// ParseStat returns utime + stime of a /proc/<pid>/stat line. The command
// name (field 2) is in parentheses and may hold spaces and ')', so the
// fields are counted from the last ')': utime and stime are fields 14 and
// 15 of the line, the 12th and 13th after it.
func ParseStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, errors.New("stat: too few fields")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("stat: CPU time %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
