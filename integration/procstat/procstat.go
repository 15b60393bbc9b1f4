// Package procstat reads what the tests and the benchmark observe of a
// process they started: its peak resident memory, from /proc (Linux).
package procstat

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSSMB is VmHWM, the resident set's high-water mark, in MiB.
func PeakRSSMB(pid int) (float64, error) { return statusMB(pid, "VmHWM") }

// RSSMB is VmRSS, the resident set now, in MiB.
func RSSMB(pid int) (float64, error) { return statusMB(pid, "VmRSS") }

// AnonRSSMB is RssAnon, the resident set less the mapped files (the binary's code
// pages, which processes of one binary share), in MiB.
func AnonRSSMB(pid int) (float64, error) { return statusMB(pid, "RssAnon") }

// PSSMB is Pss of /proc/<pid>/smaps_rollup, the proportional set size in MiB:
// the process's own pages plus its share of the pages it shares (a binary's
// code pages count 1/n in each of n processes running it), so the PSS of n
// processes adds up to what they hold together.
func PSSMB(pid int) (float64, error) { return fileMB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss") }

// statusMB is the field key (a size in kB) of /proc/<pid>/status, in MiB.
func statusMB(pid int, key string) (float64, error) {
	return fileMB(fmt.Sprintf("/proc/%d/status", pid), key)
}

// fileMB is the field key (a size in kB) of a /proc file of "key: n kB" lines, in MiB.
func fileMB(path, key string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}
