// Package demosite is a small site the crawler serves itself, so that
// `make run` shows a real crawl with no network beyond loopback: pages,
// relative links, a redirect, a missing page, a feed and non-HTML files.
package demosite

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed site
var files embed.FS

// Handler serves the demo site.
func Handler() http.Handler {
	root, _ := fs.Sub(files, "site")
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(root))
	mux.Handle("/old-home", http.RedirectHandler("/", http.StatusMovedPermanently))
	return mux
}
