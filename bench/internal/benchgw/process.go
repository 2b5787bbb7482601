package benchgw

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Caddy describes a Caddy process a benchmark starts: bin runs the
// Caddyfile in Dir (its HOME and XDG dirs too, so nothing is written
// outside it), with its output in a log file there.
type Caddy struct {
	Bin, Dir   string
	Config     string   // the Caddyfile's text
	ConfigName string   // its file name in Dir
	LogName    string   // the log's file name in Dir
	Wrapper    []string // a command bin runs under (valgrind and its options), or none
	Env        []string // added to the environment
}

// Process is a running Caddy process, with its log file. It dies with the
// benchmark.
type Process struct {
	Cmd  *exec.Cmd
	Log  string        // the log file's path
	Done chan struct{} // closed when the process has exited
}

// Start writes the Caddyfile and runs the process.
func (c Caddy) Start() (*Process, error) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, c.ConfigName), []byte(c.Config), 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.Dir, c.LogName)
	logs, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logs.Close()
	args := append(append([]string{}, c.Wrapper...), c.Bin, "run", "--config", c.ConfigName, "--adapter", "caddyfile")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(append(os.Environ(), "HOME="+c.Dir, "XDG_DATA_HOME="+c.Dir, "XDG_CONFIG_HOME="+c.Dir), c.Env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Log: logPath, Done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.Done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop interrupts the process and waits for it, killing it after grace.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Done:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// LogTail is the last n bytes of the process's log, for error messages.
func (p *Process) LogTail(n int) string {
	b, _ := os.ReadFile(p.Log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// WaitFor waits until count() reaches want; it returns false after a
// minute without progress.
func WaitFor(count func() int64, want int64) bool {
	last, lastChange := count(), time.Now()
	for {
		c := count()
		if c >= want {
			return true
		}
		if c != last {
			last, lastChange = c, time.Now()
		} else if time.Since(lastChange) > time.Minute {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}
