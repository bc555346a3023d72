package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverCPU returns the CPU time used so far by the PostgreSQL server whose
// data directory is dir (its postmaster, its live children and the children
// it has reaped), or 0 when it cannot be read (another machine). The
// machine may be shared: wall times then say less than CPU times.
func serverCPU(dir string) time.Duration {
	if dir == "" {
		return 0
	}
	// A backend whose client has just closed may not have exited and
	// been reaped yet: its time would then be missed.
	time.Sleep(500 * time.Millisecond)
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	total := procCPU(pid, true)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if f := procStat(e.Name()); len(f) > 3 && f[3] == pid {
			total += procCPU(e.Name(), false)
		}
	}
	return total
}

// procStat returns the fields of /proc/PID/stat after the command name.
func procStat(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	// Fields from the state on: state is field 3 of stat; keep the
	// numbering of proc(5) by padding the first two.
	return append([]string{"", ""}, strings.Fields(s[i+1:])...)
}

// procCPU returns utime+stime (and the reaped children's when children) of
// a process.
func procCPU(pid string, children bool) time.Duration {
	f := procStat(pid)
	if len(f) < 17 {
		return 0
	}
	idx := []int{13, 14}
	if children {
		idx = append(idx, 15, 16)
	}
	var ticks int64
	for _, i := range idx {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
