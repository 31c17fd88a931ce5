// Package ui is the agent's web UI: static pages, scripts and styles
// embedded in the binary and served under /ui/.
//
// Where it sits in the data flow: it is beside the HTTP API, not in front
// of it. The browser loads the assets from here and then reads the same
// /v1 endpoints the CLI does (blocking queries for live updates, the log
// stream for live logs), sending the ACL token the user entered as
// X-Nomad-Token. Nothing in this package reads cluster state.
//
// Files: handler.go serves the assets (content types, caching, the
// Content-Security-Policy, the fallback to index.html for the pages'
// own routes) and Mount puts the UI beside the API on one listener;
// assets/ holds the UI itself, plain JavaScript modules and CSS with no
// build step (docs/ui.md describes the pages, docs/decisions.md why there
// is no framework).
package ui
