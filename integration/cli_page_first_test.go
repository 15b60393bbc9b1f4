package integration

import (
	"strings"
	"testing"
	"time"
)

// TestStatusPageFirstFrame: the page's first frame shows no rate yet ("–",
// not "0 rows/s": a rate needs two polls), "none" for the last error
// without the error colour, and the position in words (LSN and slot).
func TestStatusPageFirstFrame(t *testing.T) {
	browser := chromium(t)
	e := newEnv(t, "clipagefirst")
	e.exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.exec(`INSERT INTO items SELECT generate_series(1, 3)`)
	addr := freeAddr(t)
	p := e.start("run", "--config", e.writeConfig(""), "--http-addr", addr)
	p.waitFor(t, 60*time.Second, "the first checkpoint", func() bool {
		r, _ := statusJSON(t, e, e.dir+"/pipeline.yaml")
		return r.Checkpoint != nil
	})
	dom := browse(t, browser, "http://"+addr+"/", 200*time.Millisecond, "")
	for _, want := range []string{`<span id="rate">–</span>`, `<p id="error" class="none">none</p>`, "LSN ", "(slot tributary_" + e.name + ")"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the first frame lacks %s:\n%s", want, dom)
		}
	}
	p.stop(t)
}
