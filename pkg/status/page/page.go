// Package page is the local status page `tributary run --http-addr` serves
// at /: one HTML file, a script and a style sheet, embedded in the binary
// (no build step, no external assets). The script polls /status.json,
// the report `tributary status --json` prints, and draws it.
package page

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html app.js style.css
var files embed.FS

// Handler serves the page's files.
func Handler() http.Handler {
	sub, _ := fs.Sub(files, ".") // "." always exists
	return http.FileServerFS(sub)
}
