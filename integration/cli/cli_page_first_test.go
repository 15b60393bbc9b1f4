package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestStatusPageFirstFrame: the page's first frame shows no rate yet ("–",
// not "0 rows/s": a rate needs two polls), "none" for the last error
// without the error colour, and the position in words (LSN and slot).
func TestStatusPageFirstFrame(t *testing.T) {
	browser := chromium(t)
	e := itest.NewEnv(t, "clipagefirst")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO items SELECT generate_series(1, 3)`)
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", e.WriteConfig(""), "--http-addr", addr)
	p.WaitFor(t, 60*time.Second, "the first checkpoint", func() bool {
		r, _ := itest.StatusJSON(t, e, e.Dir+"/pipeline.yaml")
		return r.Checkpoint != nil
	})
	dom := browse(t, browser, "http://"+addr+"/", 200*time.Millisecond, "")
	for _, want := range []string{`<span id="rate">–</span>`, `<p id="error" class="none">none</p>`, "LSN ", "(slot tributary_" + e.Name + ")"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the first frame lacks %s:\n%s", want, dom)
		}
	}
	p.Stop(t)
}
