package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profileSeconds is the length of each profile; the load runs a little
// longer on both ends.
const profileSeconds = 10

// profile writes a CPU and an allocation profile of the gateway under each
// side's load to c.out, and says how to diff them.
func profile(c config, wrk string, g *gateway) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	warm := c.load
	warm.duration = c.warmup
	load := c.load
	load.duration = (profileSeconds + 2) * time.Second
	admin := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof", g.ports.admin)
	for _, s := range []side{g.bare, g.protected} {
		if c.warmup > 0 {
			if _, err := runWrk(wrk, warm, s); err != nil {
				return err
			}
		}
		type loaded struct {
			res wrkResult
			err error
		}
		done := make(chan loaded, 1)
		go func() {
			r, err := runWrk(wrk, load, s)
			done <- loaded{r, err}
		}()
		time.Sleep(time.Second)
		profiles := map[string]string{
			"cpu":    fmt.Sprintf("%s/profile?seconds=%d", admin, profileSeconds),
			"allocs": fmt.Sprintf("%s/allocs?seconds=%d", admin, profileSeconds),
		}
		errs := make(chan error, len(profiles))
		for kind, url := range profiles {
			go func() { errs <- fetchProfile(url, filepath.Join(c.out, kind+"-"+s.name+".pprof")) }()
		}
		for range profiles {
			if err := <-errs; err != nil {
				return err
			}
		}
		l := <-done
		if l.err != nil {
			return l.err
		}
		fmt.Printf("%-9s load: %.0f req/s, about %.0f requests in the %d s profiled\n", s.name, l.res.perSecond, l.res.perSecond*profileSeconds, profileSeconds)
	}
	fmt.Printf(`profiles in %[1]s; to compare (scale by the requests above):
	go tool pprof -top -cum -diff_base %[1]s/cpu-bare.pprof %[1]s/cpu-protected.pprof
	go tool pprof -top -sample_index=alloc_space -diff_base %[1]s/allocs-bare.pprof %[1]s/allocs-protected.pprof
	go tool pprof -top -sample_index=alloc_objects %[1]s/allocs-protected.pprof
`, c.out)
	return nil
}

// fetchProfile GETs url into path.
func fetchProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: status %d: %s", url, resp.StatusCode, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
